"""Study kinds: what each kind's run records (a council debate's finals), and the registry of kinds that
expands, executes, analyses and reports each kind of study."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def council_records(tmp_path_factory):
    from fairarena.study.design import preset, to_toml
    from fairarena.study.store import load_results, run_study

    cfg = preset("council-small", cohorts=1, rounds=1, mechanisms=["utilitarian"],
                 agent_a=["aligned:utilitarian", "aligned:rawlsian", "aligned:care"])
    root = tmp_path_factory.mktemp("kinds") / "council"
    summary = run_study(cfg, to_toml(cfg), root)
    assert summary.ok == 1 and summary.failed == 0
    return cfg, root, load_results(root)


def test_a_council_record_holds_every_members_final_metrics(council_records):
    """``debate.final`` was all nulls (it read a "metrics" key the finals do not have): it holds each member's
    final metrics and the joint's, equal to the library's council debate on the same cohort."""
    from fairarena.arena.council import council_debate

    cfg, _, recs = council_records
    (r,) = recs
    t = r["task"]
    final = r["debate"]["final"]
    assert list(final) == ["utilitarian", "rawlsian", "care", "joint"]
    assert all(isinstance(m, dict) and isinstance(m["esg"], float) for m in final.values()), final
    lib = council_debate(t["cohort_seed"], t["capacity"], rounds=1, rules=["utilitarian"], rule_seed=0,
                         frameworks=["utilitarian", "rawlsian", "care"])
    for who, m in final.items():
        for k in ("esg", "rmg", "gini", "gini_cnss", "feasible"):
            assert m[k] == pytest.approx(lib.debate.metrics[who][k], abs=1e-12), (who, k)
    # the joint's final metrics are the debate row's
    row = next(x for x in r["rows"] if x["rule"] == "debate")
    assert final["joint"]["esg"] == pytest.approx(row["metrics"]["esg"], abs=1e-12)
