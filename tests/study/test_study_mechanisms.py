"""Deliberation against mechanisms: a tiny scripted study with two mechanisms (nash, pf-lottery)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fairarena.cli import app

MECHS = ["nash", "pf-lottery"]
runner = CliRunner()


@pytest.fixture(scope="module")
def mech_run(tmp_path_factory):
    from fairarena.study.design import preset, to_toml
    from fairarena.study.store import load_results, run_study

    cfg = preset("tiny", mechanisms=MECHS)
    root = tmp_path_factory.mktemp("mech") / "study"
    run_study(cfg, to_toml(cfg), root)
    return cfg, root, load_results(root)


def _last_attempts(events, stage):
    """Each agent's last attempt at round 1 or the final, read straight from the transcript."""
    out = {}
    for e in events:
        if e.get("type") != "turn":
            continue
        if (stage == "round1" and e["phase"] == "round" and e["round"] == 1) or (stage == "final" and e["phase"] == "final"):
            out[e["agent"]] = e
    return out


def test_mechanisms_do_not_change_keys_or_debates(mech_run):
    from fairarena.study.design import expand, preset

    cfg, _, recs = mech_run
    plain = preset("tiny")
    assert [t.key for t in expand(cfg)] == [t.key for t in expand(plain)]
    assert cfg.digest() != plain.digest()                       # a folder records which mechanisms it ran
    assert plain.digest() == preset("tiny", mechanisms=[]).digest()
    assert all(r["status"] == "ok" and set(r["mechanisms"]) == {"round1", "final"} for r in recs)


def test_record_decisions_equal_aggregate_run(mech_run, tmp_path):
    from fairarena.study.design import cohort_of
    from fairarena.study.analysis import read_transcript

    _, root, recs = mech_run
    checked = 0
    for r in recs:
        t = r["task"]
        events = read_transcript(root, r)
        cohort = cohort_of(t["cohort_seed"], t["capacity"])
        (tmp_path / "cohort.json").write_text(json.dumps(cohort.to_dict()))
        for stage in ("round1", "final"):
            turns = _last_attempts(events, stage)
            if t["agent_b"] != "baseline":
                # an adversarial opponent does not vote (as in the arena's closing): one voter, no decision
                assert all(r["mechanisms"][stage][m]["allocation"] is None for m in MECHS)
                continue
            assert all(turns[n]["valid"] for n in "AB")
            objectives = {"A": t["framework"], "B": "utilitarian"}
            props = {"agents": [{"name": n, "objective": objectives[n], "allocation": turns[n]["proposal"]["allocation"]}
                                for n in "AB"]}
            (tmp_path / "props.json").write_text(json.dumps(props))
            for m in MECHS:
                out = runner.invoke(app, ["aggregate", "run", "--problem", str(tmp_path / "cohort.json"), "--proposals",
                                          str(tmp_path / "props.json"), "--rule", m, "--seed", str(t["seed"]), "--json"])
                assert out.exit_code == 0, out.output
                doc = json.loads(out.stdout)
                mine = r["mechanisms"][stage][m]
                want = doc["decision"].get("drawn_allocation", doc["decision"]["allocation"])
                assert mine["allocation"] == want
                metrics = doc["metrics"]["drawn"] if doc["lottery"] else doc["metrics"]
                for k in ("esg", "rmg", "var", "dw_esg", "vwci", "gini"):
                    assert mine["metrics"][k] == pytest.approx(metrics[k], abs=1e-12)
                if doc["lottery"]:
                    assert mine["lottery"]["probabilities"] == pytest.approx(doc["lottery"]["probabilities"])
                    assert mine["lottery"]["draw"] == doc["lottery"]["draw"]
                checked += 1
    assert checked == 2 * 2 * 2 * len(MECHS)      # 2 cohorts x 2 frameworks vs baseline x 2 stages x mechanisms


def test_missing_mechanisms_computed_from_transcripts(mech_run, tmp_path):
    """A study run without the field: the same mechanisms computed afterwards from its transcripts equal
    the ones computed at run time."""
    from fairarena.study.design import preset, to_toml
    from fairarena.study.mechanisms import record_mechanisms
    from fairarena.study.store import load_results, run_study

    _, _, recs = mech_run
    cfg = preset("tiny")
    root = tmp_path / "plain"
    run_study(cfg, to_toml(cfg), root)
    plain = {r["key"]: r for r in load_results(root)}
    assert set(plain) == {r["key"] for r in recs}
    for r in recs:
        assert "mechanisms" not in plain[r["key"]]
        got = record_mechanisms(root, plain[r["key"]], MECHS)
        assert json.loads(json.dumps(got)) == r["mechanisms"]


def test_stats_cells_for_every_mechanism_and_metric(mech_run, tmp_path):
    from fairarena.allocation.welfare import METRIC_KEYS
    from fairarena.study.analysis import analyse_study, write_study_tables

    cfg, root, recs = mech_run
    an = analyse_study(root, n_resamples=200)
    rows = an.mechanisms["rows"]
    fws = [a.split(":")[1] for a in cfg.agent_a]
    cells = {(x["mechanism"], x["stage"], x["opponent"], x["framework"], x["metric"]): x for x in rows}
    assert len(cells) == len(rows) == len(MECHS) * 2 * len(cfg.opponents) * len(fws) * len(METRIC_KEYS)
    for (m, stage, opp, fw, metric), x in cells.items():
        sel = [r for r in recs if r["task"]["agent_b"] == opp and r["task"]["framework"] == fw]
        both = [r for r in sel if r["feasible"]["joint"] and r["mechanisms"][stage][m]["feasible"]]
        assert x["n"] == len(both), (m, stage, opp, fw, metric)
        assert x["n"] == (2 if opp == "baseline" else 0)
        if x["n"]:
            d = [r["metrics"]["joint"][metric] - r["mechanisms"][stage][m]["metrics"][metric] for r in both]
            assert x["mean_diff"] == pytest.approx(sum(d) / len(d), abs=1e-9)
        assert x["calls_per_debate"] == sum(r["usage"]["a"]["calls"] + r["usage"]["b"]["calls"] for r in sel) / len(sel)
        assert x["calls_per_debate"] > 0 and x["tokens_per_debate"] == 0      # scripted: calls, no tokens
    paths = write_study_tables(root, tmp_path / "tables")
    md = (tmp_path / "tables" / "deliberation_vs_mechanisms.md").read_text()
    assert tmp_path / "tables" / "deliberation_vs_mechanisms.csv" in paths
    assert "nash (final) vs baseline" in md and "pf-lottery (round1) vs adversarial" in md


def test_bad_mechanism_exits_2_before_any_write(tmp_path):
    study = tmp_path / "s.toml"
    study.write_text('base = "tiny"\nmechanisms = ["nash", "no-such-rule"]\n')
    out = tmp_path / "out"
    r = runner.invoke(app, ["study", "run", str(study), "--out", str(out)])
    assert r.exit_code == 2
    assert "study.mechanisms" in r.output and "no-such-rule" in r.output
    assert not out.exists()


def test_report_has_the_section_only_with_mechanisms(mech_run, tiny_run):
    from fairarena.study.analysis import build_study_report

    _, root, _ = mech_run
    titles = [s.title for s in build_study_report(root, details=0).sections]
    assert "Deliberation vs mechanisms" in titles
    assert "Deliberation vs mechanisms" not in [s.title for s in build_study_report(tiny_run[1], details=0).sections]
