"""The emergence measures on hand-made traces with known answers; the transcript -> trace reading; the
study stats/tables/report commands on a real (tiny, scripted) study folder."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys

import pytest

from fairarena.stats.emergence import (age_band, feasibility, framework_bias, joint_beats_both, moderation,
                                       patching, worst_served)

CLI = [sys.executable, "-m", "fairarena.cli", "study"]
DIRS = {"esg": "max", "gini": "min"}
PATIENTS = [{"id": "P1", "age": 10, "gender": "female", "race": "X", "ses": "low", "citizenship": "citizen"},
            {"id": "P2", "age": 70, "gender": "male", "race": "Y", "ses": "high", "citizenship": "refugee"},
            {"id": "P3", "age": 30, "gender": "female", "race": "Y", "ses": "low", "citizenship": "citizen"}]


def turn(agent, stage, esg, gini, cnss, feasible=True, repairs=0, violations=()):
    return {"agent": agent, "stage": stage, "metrics": {"esg": esg, "gini": gini, "cnss": list(cnss)},
            "feasible": feasible, "repairs": repairs, "violations": list(violations)}


def trace(opp="baseline", fw="utilitarian", joint=(5.0, 0.1, (1, 1, 1)), **turns):
    t = {"key": f"{opp}-{fw}", "cohort": 0, "framework": fw, "opponent": opp, "patients": PATIENTS,
         "turns": list(turns.values())}
    t["joint"] = None if joint is None else {"metrics": {"esg": joint[0], "gini": joint[1], "cnss": list(joint[2])},
                                             "feasible": True}
    return t


def two_debates():
    # debate 1: joint (5, 0.1) beats both openings (3/0.3, 4/0.2) and both finals (4.5/0.15, 4.9/0.12) on both metrics
    d1 = trace(a1=turn("A", "r1", 3, 0.3, (0.5, 0.5, 0.5)), b1=turn("B", "r1", 4, 0.2, (1.0, 0.0, 0.0)),
               a2=turn("A", "r2", 4, 0.2, (0.5, 0.5, 1.0)), b2=turn("B", "r2", 4, 0.2, (1.0, 0.5, 0.0)),
               af=turn("A", "final", 4.5, 0.15, (0.5, 1.0, 1.0)), bf=turn("B", "final", 4.9, 0.12, (0.5, 0.5, 0.5)))
    # debate 2: joint ties A's final on esg (not strictly better), worse than B's opening on gini
    d2 = trace(opp="adversarial", joint=(6.0, 0.25, (0.0, 1.0, 1.0)),
               a1=turn("A", "r1", 2, 0.3, (0.0, 0.0, 0.0)), b1=turn("B", "r1", 5, 0.2, (0.25, 1.0, 0.5)),
               af=turn("A", "final", 6.0, 0.3, (0.25, 1.0, 1.0)), bf=turn("B", "final", 5, 0.3, (0.25, 1.0, 0.5), repairs=2))
    return [d1, d2]


def test_joint_beats_both_counts_strict_wins():
    rows = {(r["opponent"], r["metric"]): r for r in joint_beats_both(two_debates(), DIRS)}
    assert rows[("baseline", "esg")]["vs_round1"] == 1.0 and rows[("baseline", "esg")]["vs_final"] == 1.0
    assert rows[("adversarial", "esg")]["vs_round1"] == 1.0 and rows[("adversarial", "esg")]["vs_final"] == 0.0
    assert rows[("adversarial", "gini")]["vs_round1"] == 0.0 and rows[("adversarial", "gini")]["vs_final"] == 1.0
    allesg = rows[("all", "esg")]
    assert (allesg["n_round1"], allesg["beats_round1"], allesg["n_final"], allesg["beats_final"]) == (2, 2, 2, 1)


def test_joint_beats_both_skips_infeasible_comparators():
    d = two_debates()
    d[0]["turns"][1]["feasible"] = False                       # B's opening in debate 1
    rows = {(r["opponent"], r["metric"]): r for r in joint_beats_both(d, DIRS)}
    assert rows[("all", "esg")]["n_round1"] == 1 and rows[("all", "esg")]["n_final"] == 2


def test_patching_worst_served_and_attributes():
    assert worst_served([1.0, 0.0, 0.0]) == [1, 2] and worst_served([0.3, 0.3 + 1e-12, 0.5]) == [0, 1]
    res = patching(two_debates())
    # debate 1: W = {P2, P3}; A r2 gains (0.5, 1.0) -> 0.75; final (1.0, 1.0) -> 1.0; joint (1, 1) -> 1.0
    # debate 2: W = {P1}; final 0.25 - 0.25 = 0; joint 0 - 0.25 = -0.25
    d1, d2 = res["per_debate"]
    assert d1["worst"] == ["P2", "P3"] and d1["gain"] == pytest.approx({"r2": 0.75, "final": 1.0, "joint": 1.0})
    assert d2["worst"] == ["P1"] and d2["gain"] == pytest.approx({"final": 0.0, "joint": -0.25})
    assert res["stages"] == ["r2", "final", "joint"]
    assert res["overall"] == pytest.approx({"r2": 0.75, "final": 0.5, "joint": 0.375})
    by = {(r["attribute"], r["value"], r["stage"]): (r["n"], r["gain"]) for r in res["by_attribute"]}
    # joint gains: P2 (male, 65+) +1, P3 (female, 18-39) +1, P1 (female, <18) -0.25
    assert by[("gender", "female", "joint")] == (2, pytest.approx(0.375))
    assert by[("gender", "male", "joint")] == (1, pytest.approx(1.0))
    assert by[("age band", "<18", "joint")] == (1, pytest.approx(-0.25))
    assert by[("citizenship", "refugee", "final")] == (1, pytest.approx(1.0))
    assert [age_band(a) for a in (0, 17.9, 18, 39, 40, 64, 65, None)] == \
        ["<18", "<18", "18-39", "18-39", "40-64", "40-64", "65+", "unknown"]


def test_moderation_is_mean_absolute_cnss_change_from_the_opening():
    rows = {(r["opponent"], r["stage"]): r["movement"] for r in moderation(two_debates())}
    assert rows[("baseline", "r2")] == pytest.approx(0.5 / 3)
    assert rows[("baseline", "final")] == pytest.approx((0.5 + 0.5 + 0.5) / 3)
    assert rows[("adversarial", "final")] == pytest.approx(0.0)


def test_framework_bias_names_the_best_alignment_and_the_owner():
    means = {("b", "utilitarian", "esg"): 10.0, ("b", "prioritarian", "esg"): 12.0,
             ("c", "utilitarian", "esg"): 11.0, ("c", "prioritarian", "esg"): 11.0,
             ("b", "utilitarian", "gini"): 0.2, ("b", "prioritarian", "gini"): 0.3,
             ("c", "utilitarian", "gini"): 0.4, ("c", "prioritarian", "gini"): 0.3}
    rows = {(r["metric"], r["opponent"]): r for r in
            framework_bias(means, DIRS, {"esg": "utilitarian", "gini": "egalitarian"})}
    assert rows[("esg", "b")]["best"] == "prioritarian" and not rows[("esg", "b")]["owner_best"]
    assert rows[("esg", "c")]["best"] == "utilitarian" and rows[("esg", "c")]["owner_best"]     # a tie: owner
    assert rows[("esg", "all")]["best"] == "prioritarian" and rows[("esg", "all")]["best_mean"] == 11.5
    assert rows[("gini", "all")]["best"] in ("utilitarian", "prioritarian")
    assert rows[("gini", "b")]["best"] == "utilitarian" and math.isnan(rows[("gini", "b")]["owner_mean"])


def test_feasibility_counts_by_stage_and_resource():
    d = two_debates()
    d[0]["turns"][0].update(feasible=False, repairs=2, violations=["ICU total 3 exceeds capacity 2",
                                                                     "Surgery for P1 is 0.5, not an integer"])
    rows = {(r["agent"], r["stage"]): r for r in feasibility(d)}
    assert rows[("A", "r1")] == {"agent": "A", "stage": "r1", "proposals": 2, "infeasible": 1, "repairs": 2,
                                 "violations": {"ICU": 1, "Surgery": 1}}
    assert rows[("B", "final")]["repairs"] == 2 and rows[("B", "r2")]["proposals"] == 1


def test_trace_of_reads_the_last_attempt_and_counts_repairs():
    from fairarena.study.analysis import trace_of

    rec = {"key": "k", "task": {"cohort": 3, "framework": "rawlsian", "agent_b": "adversarial", "opponent_role": "C"}}
    m = {"esg": 1.0, "cnss": [0.0], "feasible": True}
    ev = [{"type": "header", "cohort": {"patients": [{"id": "P1", "age": 5}]}},
          {"type": "turn", "agent": "A", "phase": "round", "round": 1, "attempt": 0, "valid": False,
           "metrics": {**m, "feasible": False}, "violations": ["ICU total 2 exceeds capacity 1"]},
          {"type": "turn", "agent": "A", "phase": "round", "round": 1, "attempt": 1, "valid": True, "metrics": m},
          {"type": "turn", "agent": "B", "phase": "final", "round": 1, "attempt": 0, "valid": True, "metrics": m},
          {"type": "turn", "agent": "A", "phase": "draft", "round": 1, "attempt": 0, "valid": True, "metrics": m},
          {"type": "closing", "metrics": {"esg": 2.0}, "feasible": True}]
    t = trace_of(rec, ev)
    assert (t["cohort"], t["framework"], t["opponent"], t["patients"]) == (3, "rawlsian", "adversarial", [{"id": "P1", "age": 5}])
    assert [(x["agent"], x["stage"], x["feasible"], x["repairs"], x["violations"]) for x in t["turns"]] == \
        [("A", "r1", True, 1, []), ("B", "final", True, 0, [])]
    assert t["joint"] == {"metrics": {"esg": 2.0}, "feasible": True}


# ----------------------------------------------------------------------------------------- real folder

@pytest.fixture
def study_dir(tiny_run, tmp_path):
    """A private copy of the shared tiny run (the analysis writes its trace cache into the folder)."""
    return shutil.copytree(tiny_run[1], tmp_path / "study")


def test_stats_json_equals_the_library_on_the_study_records(study_dir):
    from fairarena.study.analysis import load_traces
    from fairarena.study.store import comparison_records
    from fairarena.stats import compare_table
    from fairarena.stats.emergence import joint_beats_both

    r = subprocess.run([*CLI, "stats", str(study_dir), "--json", "--test", "ttest", "--holm"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"]["ok"] == out["status"]["total"] == 8
    st = out["statistics"]
    assert st["settings"]["test"] == "ttest" and st["settings"]["correction"] == "holm"
    assert len(st["cells"]) == 2 * 2 * 7                         # opponents x frameworks x metrics
    lib = compare_table(comparison_records(study_dir), st["directions"], test="ttest", correction="holm")
    got = {(c["opponent"], c["framework"], c["metric"]): c for c in st["cells"]}
    for c in lib.cells:
        g = got[(c.opponent, c.framework, c.metric)]
        assert g["mean_a"] == pytest.approx(c.result.mean_a, nan_ok=True)
        assert g["p"] == pytest.approx(c.result.p, nan_ok=True)
    traces = load_traces(study_dir)
    assert len(traces) == 8 and all(len(t["patients"]) == 8 for t in traces)
    # both agents' proposals at every stage of every debate (the adversary is "B" in the transcript)
    assert all(sorted((x["agent"], x["stage"]) for x in t["turns"]) ==
               [("A", "final"), ("A", "r1"), ("B", "final"), ("B", "r1")] for t in traces)
    assert {r["opponent"] for r in out["emergence"]["moderation"]} == {"baseline", "adversarial"}
    jb = joint_beats_both(traces, st["directions"])
    assert json.loads(json.dumps(jb)) == out["emergence"]["joint_beats_both"]
    # the trace cache is used only while the transcripts are the same
    assert (study_dir / "traces.json").is_file()
    data = json.loads((study_dir / "traces.json").read_text())
    data["traces"] = []
    (study_dir / "traces.json").write_text(json.dumps(data))
    assert load_traces(study_dir) == []                           # same digest: the cache is read
    data["digest"] = "0"
    (study_dir / "traces.json").write_text(json.dumps(data))
    assert len(load_traces(study_dir)) == 8                       # digest differs: recomputed


def test_tables_writes_markdown_latex_csv_and_emergence(study_dir, tmp_path):
    dest = tmp_path / "tables"
    r = subprocess.run([*CLI, "tables", str(study_dir), "--out", str(dest)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    names = {p.name for p in dest.iterdir()}
    assert {"emergence.json", "table2.csv", "table2.md", "table2.tex", "table3.csv", "table3.md", "table3.tex"} <= names
    # beside them: the figures against their nulls and the transcript analyses (tests/study/test_study_noise.py)
    assert {"noise.json", "nulls.md", "copies.md", "convergence.md", "contestation.md"} <= names
    md = (dest / "table2.md").read_text()
    # the paper's layout: panels of three metrics, per metric A, B (A vs baseline) and A, C (A vs adversary)
    assert "*ESG (Util), Gini (Egal), RMG (Rawls)*" in md and "*Var (Liber), DW-ESG (Priori), VWCI (Care)*" in md
    assert "| Framework | A | B | A | C | A | B | A | C | A | B | A | C |" in md and "*Joint recommendation*" in md
    rows = (dest / "table2.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 and rows[0].startswith("group,Framework,ESG (Util):A vs B:A,ESG (Util):A vs B:B,"
                                                     "ESG (Util):A vs C:A,ESG (Util):A vs C:C,")
    assert "| Framework | p | d | p | d |" in (dest / "table3.md").read_text()
    assert "\\begin{tabular}" in (dest / "table2.tex").read_text()


def test_plain_stats_prints_table2_and_table3(study_dir):
    r = subprocess.run([*CLI, "stats", str(study_dir)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Table 2: mean per framework" in r.stdout and "Table 3: paired tests" in r.stdout
    assert r.stdout.index("Table 2") < r.stdout.index("Table 3")
    assert "| Framework | A | B | A | C |" in r.stdout and "nan" not in r.stdout.lower()


def test_unfinished_or_missing_folders_are_refused(study_dir, tmp_path):
    (study_dir / "traces.json").unlink()            # the run's cache: a refused command must not write one
    r = subprocess.run([*CLI, "report", str(study_dir), "--out", str(tmp_path / "no" / "r.html")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "existing folder" in r.stderr and not (study_dir / "traces.json").exists()
    for cmd, jobs in (("report", "0"), ("report", "3"), ("report", "-1"), ("stats", "3"), ("tables", "0")):
        out = ["--out", str(tmp_path / ("r.html" if cmd == "report" else "t"))] if cmd != "stats" else []
        r = subprocess.run([*CLI, cmd, str(study_dir), *out, "--jobs", jobs],   # 1 or 2, checked before any work
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 2 and r.stderr.strip() == f"error: --jobs = {jobs}: expected an integer from 1 to 2 " \
            "processes" and not (tmp_path / "r.html").exists() and not (tmp_path / "t").exists()
        assert not (study_dir / "traces.json").exists()
    r = subprocess.run([*CLI, "stats", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "study.json" in r.stderr and "Traceback" not in r.stderr
    rec = next((study_dir / "debates").glob("*/*.json"))
    rec.unlink()
    r = subprocess.run([*CLI, "stats", str(study_dir)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "7 of 8 debates ok, 1 pending" in r.stderr
    r = subprocess.run([*CLI, "report", str(study_dir), "--out", str(tmp_path / "r.html")], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 2 and not (tmp_path / "r.html").exists()
    r = subprocess.run([*CLI, "stats", str(study_dir), "--allow-partial", "--json"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and json.loads(r.stdout)["status"]["pending"] == 1
    r = subprocess.run([*CLI, "stats", str(study_dir), "--test", "anova"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "anova" in r.stderr
