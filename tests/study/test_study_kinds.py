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


def test_the_registry_gives_each_kind_its_steps():
    from fairarena.study.analysis import StudyAnalysis
    from fairarena.study.council_analysis import CouncilAnalysis
    from fairarena.study.design import STUDY_KINDS, CouncilTask, DebateTask, expand, preset
    from fairarena.study.kinds import KINDS, kind_of_analysis, kind_of_task, study_kind

    assert list(KINDS) == list(STUDY_KINDS) == ["duel", "council"]
    duel, council = expand(preset("tiny")), expand(preset("council-small"))
    assert all(isinstance(t, DebateTask) and kind_of_task(t).name == "duel" for t in duel)
    assert all(isinstance(t, CouncilTask) and kind_of_task(t).name == "council" for t in council)
    assert study_kind("duel").mechanisms(preset("tiny", mechanisms=["nash"])) == ["nash"]
    assert study_kind("council").mechanisms(preset("council-small")) == preset("council-small").council_rules()
    assert kind_of_analysis(StudyAnalysis.__new__(StudyAnalysis)).name == "duel"
    assert kind_of_analysis(CouncilAnalysis.__new__(CouncilAnalysis)).name == "council"
    # a failed record's empty fields are fresh per call (never shared between records)
    a, b = study_kind("duel").failed_fields(), study_kind("duel").failed_fields()
    assert a == {"rounds": [], "final": {}, "feasible": {}, "metrics": {}} and a["rounds"] is not b["rounds"]
    with pytest.raises(Exception, match="study.kind"):
        study_kind("tournament")


def test_the_analysis_and_the_expansion_do_not_test_the_kind():
    """The generic analysis and expansion dispatch through the registry: no ``kind == "council"`` left."""
    import re
    from pathlib import Path

    import fairarena.study.analysis as analysis
    import fairarena.study.design as design

    src = Path(analysis.__file__).read_text() + Path(design.__file__).read_text().split("def expand(", 1)[1]
    assert not re.findall(r"""kind\s*[!=]=\s*["']council|_is_council|isinstance\(an, StudyAnalysis\)""", src)


def test_a_council_studys_analysis_tables_files_and_report_come_from_its_kind(council_records, tmp_path):
    import json

    from fairarena.study.analysis import analyse_study, build_study_report, study_tables, write_study_tables
    from fairarena.study.council_analysis import (CouncilAnalysis, analyse_council, build_council_report,
                                                  council_tables)

    _, root, _ = council_records
    an = analyse_study(root)
    assert isinstance(an, CouncilAnalysis)
    direct = analyse_council(root)
    mine, theirs = an.to_dict(), direct.to_dict()
    mine.pop("seconds"), theirs.pop("seconds")      # the analysis's own timing
    assert json.dumps(mine, sort_keys=True, default=str) == json.dumps(theirs, sort_keys=True, default=str)
    assert list(study_tables(an)) == list(council_tables(direct))
    assert build_study_report(root).title == build_council_report(root).title
    paths = write_study_tables(root, tmp_path / "tables")
    assert (tmp_path / "tables" / "council.json") in paths and not (tmp_path / "tables" / "emergence.json").exists()
