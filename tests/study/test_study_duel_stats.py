"""Paired statistics of duel studies on domains other than the default one (issue 21).

A participant duel (tourism stakeholders, a problem file's participants, pb voters) has no framework:
its cells are the pairs that debated (A = the first speaker, "framework"; B = "opponent") and its metrics
the domain's, with the domain's directions. Every figure here is recomputed from the records by slow
obvious code; the default domain's statistics are pinned elsewhere (tests/study, study_folder_v1)."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from fairarena.domains.protocol import metric_specs
from fairarena.domains.registry import DOMAINS
from fairarena.study.design import expand, from_dict, to_toml
from fairarena.study.store import load_results, run_study

CLI = [sys.executable, "-m", "fairarena.cli", "study"]
SEATS_FILE = str(Path(__file__).resolve().parents[2] / "src" / "fairarena" / "data" / "problems" / "school_seats.toml")
TOURISM = dict(kind="duel", domain="tourism", model_a="scripted", model_b="scripted", pois=12, cohorts=2, rounds=1,
               stakeholders=["tourists:family", "residents", "destination"], name="t")
FILE = dict(kind="duel", domain="file", problem=SEATS_FILE, model_a="scripted", model_b="scripted", cohorts=1,
            rounds=1, seeds=[0, 1], name="f")


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    """A 2-instance tourism duel (two destinations) and a 2-debate problem-file duel (two seeds of its one
    instance), every pair of participants debating on each."""
    root = tmp_path_factory.mktemp("duels")
    out = {}
    for name, spec, dom in (("tourism", TOURISM, DOMAINS.get("tourism")),
                            ("file", FILE, DOMAINS.get("file").bind(SEATS_FILE))):
        cfg = from_dict(spec)
        summary = run_study(cfg, to_toml(cfg), root / name)
        assert summary.ok == len(expand(cfg)) and summary.failed == 0
        out[name] = (root / name, cfg, dom)
    return out


def _directions(dom):
    return {k: m.direction for k, m in metric_specs(dom).items()}


def _num(d, k):
    v = (d or {}).get(k)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def _obvious(root, dom):
    """Per (opponent, framework, metric): the pairs of A's and B's final values where both are feasible
    and defined, and the feasible joint values, straight from results.jsonl."""
    cells = {}
    for r in load_results(root):
        assert r["status"] == "ok"
        t, m, f = r["task"], r["metrics"], r["feasible"]
        for k in _directions(dom):
            c = cells.setdefault((t["agent_b"], t["agent_a"], k), {"a": [], "b": [], "joint": [], "debates": 0})
            c["debates"] += 1
            a, b, j = _num(m["a"], k), _num(m["b"], k), _num(m["joint"], k)
            if f["a"] and f["b"] and not (math.isnan(a) or math.isnan(b)):
                c["a"].append(a)
                c["b"].append(b)
            if f["joint"] and not math.isnan(j):
                c["joint"].append(j)
    return cells


def _check_stats(st, root, dom):
    want = _obvious(root, dom)
    dirs = _directions(dom)
    assert st["directions"] == dirs and st["metrics"] == list(dirs)
    assert st["cells"], "no statistics"
    got = {(c["opponent"], c["framework"], c["metric"]): c for c in st["cells"]}
    assert set(got) == set(want)                       # the debated pairs only: nobody against itself
    assert all(o != f for o, f, _ in got)
    for key, w in want.items():
        c = got[key]
        a, b = np.array(w["a"]), np.array(w["b"])
        assert c["n"] == len(a) and c["direction"] == dirs[key[2]]
        assert c["n"] + c["n_excluded"] + c["n_missing"] == w["debates"] == 2   # two instances a pair
        assert c["mean_a"] == pytest.approx(a.mean(), rel=1e-12, abs=1e-15)
        assert c["mean_b"] == pytest.approx(b.mean(), rel=1e-12, abs=1e-15)
        assert c["mean_diff"] == pytest.approx((a - b).mean(), rel=1e-9, abs=1e-12)
        assert c["joint_n"] == len(w["joint"])
        assert c["joint_mean"] == pytest.approx(np.mean(w["joint"]), rel=1e-12, abs=1e-15)
        d = np.round(a - b, 12)
        if np.all(d == 0):
            assert c["p"] == 1.0 and c["winner"] == "tie"
        elif np.all(d != 0) and len(d) == 2:          # two pairs: normality not testable, so the Wilcoxon signed-rank test
            assert c["test"] == "wilcoxon"
            assert c["p"] == pytest.approx(sps.wilcoxon(a, b).pvalue, rel=1e-12)
    return got


@pytest.mark.parametrize("name", ["tourism", "file"])
def test_a_participant_duel_gets_paired_statistics_end_to_end(studies, name, tmp_path):
    root, cfg, dom = studies[name]
    r = subprocess.run([*CLI, "stats", str(root), "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    got = _check_stats(json.loads(r.stdout)["statistics"], root, dom)
    pairs = list(dict.fromkeys((t.agent_b, t.agent_a) for t in expand(cfg)))
    # tables: one row per pair that debated, its means those of the statistics
    r = subprocess.run([*CLI, "tables", str(root), "--out", str(tmp_path / "tab")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    rows = list(csv.reader((tmp_path / "tab" / "table2.csv").open(encoding="utf-8")))
    metrics = list(metric_specs(dom))
    assert rows[0][:2] == ["group", "A (first speaker)"]
    assert rows[0][2:] == [f"{m}:{side}" for m in metrics for side in ("A", "opponent", "joint")]
    assert [(row[0], row[1]) for row in rows[1:]] == [(f"A vs {o}", f) for o, f in pairs]
    for row, (o, f) in zip(rows[1:], pairs):
        for k, m in enumerate(metrics):
            c = got[(o, f, m)]
            assert [float(v) for v in row[2 + 3 * k: 5 + 3 * k]] == pytest.approx(
                [c["mean_a"], c["mean_b"], c["joint_mean"]], rel=1e-12, abs=1e-15)
    assert (tmp_path / "tab" / "table3.md").read_text(encoding="utf-8").count("A vs ") == len({o for o, _ in pairs})


def test_the_file_duel_has_a_real_difference(studies):
    """The problem-file study is not all ties: merit as A against districts differs on two metrics (so the
    p and the winner come from the test, not from the all-zero shortcut)."""
    import fairarena.study as study

    root, _, dom = studies["file"]
    data = study.load(root)
    st = data.statistics
    got = _check_stats(data.analysis.stats.to_dict(), root, dom)
    moved = [k for k, c in got.items() if c["mean_diff"] != 0]
    assert {k[:2] for k in moved} == {("districts", "merit")} and len(moved) == 2
    assert len(st) == len(got) and set(st["metric"]) == set(metric_specs(dom))
    assert len(data.tables["table2"]) == 3          # merit-equity, merit-districts, equity-districts


def test_a_pb_duel_built_by_hand_gets_paired_statistics(tmp_path):
    from fairarena.study.analysis import analyse_study

    pb = DOMAINS.get("pb")
    players = [p.name for p in pb.participants(pb.sample(0))][:2]
    cfg = from_dict(dict(kind="duel", domain="pb", stakeholders=players, model_a="scripted", model_b="scripted",
                         cohorts=2, rounds=1, name="p"))
    assert run_study(cfg, to_toml(cfg), tmp_path / "p").ok == 2
    st = analyse_study(tmp_path / "p", n_resamples=200).stats.to_dict()
    got = _check_stats(st, tmp_path / "p", pb)
    assert {k[:2] for k in got} == {(players[1], players[0])}
    assert sum(c["n"] for c in got.values()) > len(got)     # most metrics are defined on both instances


def test_compare_table_keeps_every_combination_unless_observed_only():
    from fairarena.stats import compare_table

    recs = [dict(cohort=c, framework=f, opponent=o, a={"x": 1.0 + c}, opp={"x": float(c)})
            for c in (0, 1) for f, o in (("p", "q"), ("p", "r"), ("q", "r"))]
    full = compare_table(recs, {"x": "max"}, n_resamples=50)
    assert [(c.opponent, c.framework, c.result.n) for c in full.cells] == [
        ("q", "p", 2), ("q", "q", 0), ("r", "p", 2), ("r", "q", 2)]
    seen = compare_table(recs, {"x": "max"}, n_resamples=50, observed_only=True)
    assert [(c.opponent, c.framework) for c in seen.cells] == [("q", "p"), ("r", "p"), ("r", "q")]
    # the same cells as in the full grid (each interval has its own bootstrap generator); NaN-safe via JSON
    assert json.dumps(seen.to_dict()["cells"]) == json.dumps([c for c in full.to_dict()["cells"] if c["n"]])
    assert [c["mean_diff"] for c in seen.to_dict()["cells"]] == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("name", ["tourism", "file"])
def test_a_participant_duel_gets_its_html_report(studies, name, tmp_path):
    # the report crashed on these studies (figures drawn over the triage metrics and the full grid of pairs)
    root, cfg, dom = studies[name]
    out = tmp_path / "report.html"
    r = subprocess.run([*CLI, "report", str(root), "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    html = out.read_text(encoding="utf-8")
    metrics = list(metric_specs(dom))
    assert f"{metrics[0]}: final means" in html            # the means figure of the domain's own metric
    assert html.count("<details") >= len(expand(cfg))       # every debate in the drill-down
