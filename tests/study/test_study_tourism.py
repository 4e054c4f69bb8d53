"""The tourism study preset through the study runner, statistics, tables and report (a council study over
seeded destinations). Each record is compared with the tourism domain's own task function called directly,
and the statistics with sums by hand."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fairarena.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def tourism_run(tmp_path_factory):
    from fairarena.study.design import preset, to_toml
    from fairarena.study.store import load_results, run_study

    cfg = preset("tourism-small", cohorts=3, pois=16, seeds=[0, 1])
    root = tmp_path_factory.mktemp("tourism") / "study"
    summary = run_study(cfg, to_toml(cfg), root)
    return cfg, root, load_results(root), summary


def test_design_and_keys():
    from fairarena.study.design import expand, preset

    cfg = preset("tourism")
    tasks = expand(cfg)
    assert len(tasks) == 50 and len({t.key for t in tasks}) == 50
    assert all(t.domain == "tourism" and t.capacity == "flows" and t.pois == 40 for t in tasks)
    assert tasks[0].members == ("tourists:family", "residents", "local-business", "destination")
    # the destination's data, the decision and k are in the key; the mechanisms are not
    assert expand(preset("tourism", pois=41))[0].key != tasks[0].key
    assert expand(preset("tourism", decision="lists"))[0].key != tasks[0].key
    assert expand(preset("tourism", decision="lists", k=4))[0].key != expand(preset("tourism", decision="lists"))[0].key
    assert expand(preset("tourism", mechanisms=["nash"]))[0].key == tasks[0].key


@pytest.mark.parametrize("data, field", [
    ({"stakeholders": ["residents"]}, "study.stakeholders"),
    ({"stakeholders": ["tourists:family", "aliens"]}, "study.stakeholders"),
    ({"decision": "tours"}, "study.decision"),
    ({"closing": ["mean"]}, "study.closing"),                 # a repair rule: no stakeholder utilities
    ({"mechanisms": ["pav"], "decision": "flows"}, "study.mechanisms"),        # pav: lists only
    ({"decision": "lists", "k": 99, "pois": 20}, "study.k"),
])
def test_bad_tourism_designs_name_the_field(data, field):
    from fairarena.errors import InputError
    from fairarena.study.design import presets, from_dict

    with pytest.raises(InputError) as e:
        from_dict({**presets()["tourism-small"], **data})
    assert e.value.field == field


def test_records_equal_the_domain_task_called_directly(tourism_run, tmp_path):
    from fairarena.tourism.study import clear_caches, council_task

    cfg, _, recs, summary = tourism_run
    assert summary.ok == 6 and summary.failed == 0
    rules = cfg.council_rules()
    clear_caches()
    for r in recs:
        t = r["task"]
        direct = council_task(destination_seed=t["cohort_seed"], pois=16, stakeholders=list(cfg.stakeholders),
                              decision="flows", k=5, rounds=cfg.rounds, closing=cfg.closing[0], seed=t["seed"],
                              model="scripted", rules=rules, transcript=tmp_path / f"{r['key']}.jsonl")
        assert r["rows"] == json.loads(json.dumps(direct["rows"]))
        assert [row["rule"] for row in r["rows"]] == [*rules, "debate"]


def test_statistics_pair_the_debate_with_each_rule(tourism_run):
    from fairarena.study.analysis import analyse_study

    cfg, root, recs, _ = tourism_run
    an = analyse_study(root, n_resamples=100)
    assert an.domain == "tourism" and an.members == list(cfg.stakeholders)
    first = [r for r in recs if r["task"]["seed"] == 0]          # the statistics use the design's first seed
    assert len(first) == 3
    by = {r["rule"]: r for r in an.summary}
    for rule in cfg.council_rules():
        rows = [{x["rule"]: x for x in rec["rows"]} for rec in first]
        diffs = [rw["debate"]["metrics"]["exposure_gini"] - rw[rule]["metrics"]["exposure_gini"] for rw in rows]
        assert an.stats.cell("debate", rule, "exposure_gini").result.mean_diff == pytest.approx(sum(diffs) / 3, abs=1e-12)
        assert by[rule]["u:residents"] == pytest.approx(sum(rw[rule]["utilities"]["residents"] for rw in rows) / 3,
                                                        abs=1e-12)
    assert an.directions["exposure_gini"] == "min" and an.directions["satisfaction"] == "max"


def test_cli_stats_tables_and_report(tourism_run, tmp_path):
    _, root, _, _ = tourism_run
    res = runner.invoke(app, ["study", "stats", str(root)])
    assert res.exit_code == 0, res.output
    assert "Council (tourism)" in res.output and "Debate vs each rule" in res.output
    res = runner.invoke(app, ["study", "tables", str(root), "--out", str(tmp_path / "t")])
    assert res.exit_code == 0, res.output
    import csv

    rows = list(csv.DictReader((tmp_path / "t" / "council.csv").open(encoding="utf-8")))
    assert [r["rule"] for r in rows][-1] == "debate" and float(rows[-1][":n"]) == 3
    assert float(rows[-1]["member utility (mean):residents"]) >= 0.0
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["study", "report", str(root), "--out", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    assert "tourists:family" in html and "Per instance" in html


def test_results_frame_has_one_row_per_record_and_rule(tourism_run):
    from fairarena.study.store import results_frame

    cfg, root, recs, _ = tourism_run
    f = results_frame(root)
    assert len(f) == sum(len(r["rows"]) for r in recs) == len(recs) * (len(cfg.council_rules()) + 1)
    r0 = recs[0]
    row = next(x for x in r0["rows"] if x["rule"] == "nash")
    got = f[(f["key"] == r0["key"]) & (f["rule"] == "nash")].iloc[0]
    assert got["metric_exposure_gini"] == row["metrics"]["exposure_gini"]
    assert got["u_residents"] == row["utilities"]["residents"] and got["row_kind"] == "rule"
