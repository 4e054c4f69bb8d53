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


# ------------------------------------------------------------------------------------------------
# A council on a problem file (domain = "file")
# ------------------------------------------------------------------------------------------------

SEATS_RULES = ["utilitarian", "borda", "pf-lottery"]


def _seats_design(**kw):
    from fairarena.problems.domain import example_path
    from fairarena.study.design import from_dict

    return from_dict(dict(name="seats", kind="council", domain="file", problem=str(example_path("school-seats")),
                          cohorts=1, rounds=1, closing=["joint-draft", "mean-repair"], model_a="scripted",
                          mechanisms=SEATS_RULES, **kw))


def test_a_problem_file_council_runs_each_closing_and_records_the_files_metrics():
    from fairarena.problems.domain import SEATS
    from fairarena.problems.run import council
    from fairarena.study.design import expand
    from fairarena.study.store import RunOptions, execute_task

    cfg = _seats_design()
    assert cfg.members == ["merit", "equity", "districts"]           # the file's stakeholders
    tasks = expand(cfg)
    assert [t.closing for t in tasks] == ["joint-draft", "mean-repair"] and len({t.key for t in tasks}) == 2
    lib = council(SEATS, SEATS.sample(0), SEATS_RULES, seed=0)       # the problems package's council, directly
    metrics = set(SEATS.sample(0).metrics)
    for t in tasks:
        rec, transcript = execute_task(t, RunOptions(mechanisms=tuple(SEATS_RULES)))
        assert rec["status"] == "ok", rec.get("error")
        assert transcript and rec["task"]["problem"] == cfg.problem
        rows = {r["rule"]: r for r in rec["rows"]}
        assert list(rows) == [*SEATS_RULES, "debate"]
        for lib_row in lib["rows"]:
            assert rows[lib_row["rule"]]["metrics"] == pytest.approx(lib_row["metrics"], abs=1e-12)
            assert rows[lib_row["rule"]]["utilities"] == pytest.approx(lib_row["utilities"], abs=1e-12)
        joint = rows["debate"]
        assert set(joint["metrics"]) == metrics and joint["feasible"]
        assert set(joint["utilities"]) == set(cfg.members)
        assert joint["min_utility"] == pytest.approx(min(joint["utilities"].values()))
        # the debate's finals: each member's and the joint's metrics of the file
        assert list(rec["debate"]["final"]) == [*cfg.members, "joint"]
        assert rec["debate"]["final"]["joint"] == pytest.approx(joint["metrics"])


def test_a_problem_file_is_in_the_task_keys_and_other_digests_stay(tmp_path):
    from fairarena.problems.domain import example_path
    from fairarena.study.design import expand, preset

    keys = [t.key for t in expand(_seats_design())]
    edited = tmp_path / "seats.toml"                                  # same problem elsewhere: same keys
    edited.write_text(example_path("school-seats").read_text())
    from fairarena.study.design import from_dict

    moved = from_dict({**_seats_design().model_dump(), "problem": str(edited)})
    assert [t.key for t in expand(moved)] == keys
    text = edited.read_text()
    edited.write_text(text.replace("capacity = 4", "capacity = 3", 1))
    assert "capacity = 4" in text
    from fairarena.study.design import file_problem

    file_problem.cache_clear()
    changed = from_dict({**_seats_design().model_dump(), "problem": str(edited)})
    assert not set(t.key for t in expand(changed)) & set(keys)       # a changed problem: new debates
    assert preset("paper").digest().startswith("4cf15bffdd45")       # designs without a problem: as before
    assert "problem" not in expand(preset("council-small"))[0].to_dict()


@pytest.mark.parametrize("change, field", [
    (dict(problem=""), "study.problem"),
    (dict(cohorts=2), "study.cohorts"),
    (dict(kind="duel"), "study.mechanisms"),   # a duel of the file's stakeholders runs, without mechanisms
    (dict(stakeholders=["merit", "nobody"]), "study.stakeholders[1]"),
    (dict(mechanisms=["nash-bargaining"]), "study.mechanisms[0]"),
])
def test_a_bad_problem_file_design_names_the_field(change, field):
    from fairarena.errors import InputError

    with pytest.raises(InputError) as exc:
        data = {**_seats_design().model_dump(), **change}
        from fairarena.study.design import from_dict

        from_dict(data)
    assert exc.value.field == field


def test_a_problem_file_council_study_runs_through_the_store_and_its_stats(tmp_path):
    """End to end as 'study run' does it: the records pass the record schema (task.problem), the folder's
    status counts them, and the statistics read the file's metrics."""
    from fairarena.study.analysis import analyse_study
    from fairarena.study.design import to_toml
    from fairarena.study.store import load_results, run_study

    cfg = _seats_design()
    root = tmp_path / "st"
    run_study(cfg, to_toml(cfg), root)
    rows = load_results(root)
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert {r["task"]["problem"] for r in rows} == {cfg.problem}
    assert analyse_study(root) is not None
