"""Council studies (triage): six framework-aligned members debate each cohort; every rule on the same cohort.

One module-scoped run of 2 cohorts with a few rules (about 5 s); every number is compared with an
independent path: the library's council table and council debate on the same cohort, and sums by hand."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from fairarena.cli import app

RULES = ["utilitarian", "borda", "pf-lottery", "nash-bargaining"]
runner = CliRunner()


@pytest.fixture(scope="module")
def council_run(tmp_path_factory):
    from fairarena.study.design import preset, to_toml
    from fairarena.study.store import load_results, run_study

    cfg = preset("council-small", cohorts=2, rounds=2, mechanisms=RULES)
    root = tmp_path_factory.mktemp("council") / "study"
    summary = run_study(cfg, to_toml(cfg), root)
    return cfg, root, load_results(root), summary


def test_design_expands_to_one_task_per_cohort_with_stable_keys():
    from fairarena.study.design import expand, preset

    cfg = preset("council")
    tasks = expand(cfg)
    assert len(tasks) == 50 and len({t.key for t in tasks}) == 50
    assert all(t.kind == "council" and len(t.members) == 6 for t in tasks)
    # the mechanisms are post-processing: not in the keys; the rounds are
    assert [t.key for t in expand(preset("council", mechanisms=["nash"]))] == [t.key for t in tasks]
    assert expand(preset("council", rounds=2))[0].key != tasks[0].key
    # a key never depends on the task's position: cohort 3 of a study starting at seed 3 is cohort 0 here
    assert expand(preset("council", first_cohort_seed=3, cohorts=1))[0].key == tasks[3].key


def test_earlier_designs_keep_their_digest():
    from fairarena.study.design import preset

    # the paper preset's digest before council and tourism studies existed (fields at their defaults are
    # left out of the hash, so an existing study folder is not refused after an upgrade)
    assert preset("paper").digest().startswith("4cf15bffdd45")
    assert preset("paper", mechanisms=["nash"]).digest().startswith("8347090399dd")
    assert preset("paper", kind="council").digest() != preset("paper").digest()


@pytest.mark.parametrize("data, field", [
    ({"kind": "parliament"}, "study.kind"),
    ({"domain": "mars"}, "study.domain"),
    ({"kind": "council", "agent_a": ["aligned:care"]}, "study.agent_a"),
    ({"kind": "council", "agent_a": ["aligned:care", "baseline"]}, "study.agent_a[1]"),
    ({"stakeholders": ["residents"]}, "study.stakeholders"),
    ({"domain": "tourism", "kind": "duel", "model_a": "openai:m@http://127.0.0.1:9"}, "study.model_a"),
    ({"domain": "tourism", "kind": "duel", "stakeholders": ["residents", "mars"]}, "study.stakeholders[1]"),
    ({"kind": "council", "mechanisms": ["dictator"]}, "study.mechanisms"),
])
def test_bad_designs_name_the_field(data, field):
    from fairarena.errors import InputError
    from fairarena.study.design import from_dict

    with pytest.raises(InputError) as e:
        from_dict(data)
    assert e.value.field == field


def test_rows_equal_the_library_council_and_debate(council_run):
    from fairarena.arena.council import council_debate

    cfg, _, recs, summary = council_run
    assert summary.ok == 2 and summary.failed == 0
    for r in recs:
        t = r["task"]
        lib = council_debate(t["cohort_seed"], t["capacity"], rounds=2, rules=RULES, rule_seed=0)
        assert lib.joint_in_table
        rows = {row["rule"]: row for row in r["rows"]}
        assert list(rows) == [*RULES, "debate"]
        assert r["members"] == lib.council.agents
        for lib_row in lib.council.rows:
            ours = rows[lib_row["rule"]]
            assert ours["utilities"] == pytest.approx(lib_row["utilities"], abs=1e-9)
            for k, v in ours["metrics"].items():
                assert v == pytest.approx(lib_row["metrics"][k], abs=1e-9)
            assert ours["worst_off"] == lib_row["evaluation"]["worst_off"]["name"]
            assert ours["min_utility"] == pytest.approx(min(lib_row["utilities"].values()), abs=1e-12)
        # the debate's joint decision is its transcript's closing event, scored by the same metrics
        from fairarena.arena.transcript import read_transcript

        closing = [e for e in read_transcript(cfg_path(r)) if e.get("type") == "closing"][-1]
        assert rows["debate"]["metrics"]["esg"] == pytest.approx(closing["metrics"]["esg"], abs=1e-9)
        # pf-lottery is scored in expectation and counts as feasible
        assert rows["pf-lottery"]["feasible"] and "expectation" in rows["pf-lottery"]["note"]


_ROOT: dict[str, object] = {}


def cfg_path(record):
    return _ROOT["root"] / record["transcript"]


@pytest.fixture(autouse=True)
def _root(council_run):
    _ROOT["root"] = council_run[1]


def test_statistics_are_the_paired_means_by_hand(council_run):
    from fairarena.study.analysis import analyse_study, study_tables

    _, root, recs, _ = council_run
    an = analyse_study(root, n_resamples=200)
    assert an.rules == RULES and an.members == ["utilitarian", "egalitarian", "rawlsian", "prioritarian", "care",
                                                "libertarian"]
    by = {r["rule"]: r for r in an.summary}
    for rule in [*RULES, "debate"]:
        vals = [next(x for x in rec["rows"] if x["rule"] == rule) for rec in recs]
        assert by[rule]["esg"] == pytest.approx(sum(v["metrics"]["esg"] for v in vals) / 2, abs=1e-12)
        assert by[rule]["u:care"] == pytest.approx(sum(v["utilities"]["care"] for v in vals) / 2, abs=1e-12)
        assert by[rule]["min_utility"] == pytest.approx(sum(v["min_utility"] for v in vals) / 2, abs=1e-12)
    for rule in RULES:
        diffs = []
        for rec in recs:
            rows = {x["rule"]: x for x in rec["rows"]}
            diffs.append(rows["debate"]["metrics"]["rmg"] - rows[rule]["metrics"]["rmg"])
        res = an.stats.cell("debate", rule, "rmg").result
        assert res.n == 2 and res.mean_diff == pytest.approx(sum(diffs) / 2, abs=1e-12)
    calls = [sum(u["calls"] for u in rec["usage"].values()) for rec in recs]
    assert an.spent == {"calls_per_debate": sum(calls) / 2, "tokens_per_debate": 0.0}   # scripted: no tokens
    assert min(calls) >= 6 * 3                               # six members, two rounds and the finals at least
    tables = study_tables(an)
    assert [r.label for r in tables["council"].rows] == [*RULES, "debate"]
    assert [r.label for r in tables["debate_vs_rules"].rows] == RULES


def test_missing_rule_rows_are_computed_from_the_cohort(council_run, tmp_path):
    """A folder adopted with --force after the rule list grew: the new rule's rows come from the cohort,
    equal to the library's council row; nothing is rerun (the keys did not change)."""
    import shutil

    from fairarena.aggregation.council import council
    from fairarena.study.design import preset, to_toml
    from fairarena.study.analysis import analyse_study
    from fairarena.study.store import run_study

    _, root, recs, _ = council_run
    copy = tmp_path / "study"
    shutil.copytree(root, copy)
    cfg = preset("council-small", cohorts=2, rounds=2, mechanisms=[*RULES, "maximin"])
    s = run_study(cfg, to_toml(cfg), copy, force=True)
    assert s.ran == 0 and s.skipped == 2
    an = analyse_study(copy, n_resamples=100)
    lib = [council(rec["task"]["cohort_seed"], "standard", rules=["maximin"]).rows[0] for rec in recs]
    got = next(r for r in an.summary if r["rule"] == "maximin")
    assert got["esg"] == pytest.approx(sum(x["metrics"]["esg"] for x in lib) / 2, abs=1e-9)


def test_resume_runs_nothing_and_the_cli_reads_the_study(council_run, tmp_path):
    _, root, _, _ = council_run
    toml = root / "study.toml"
    res = runner.invoke(app, ["study", "run", str(toml), "--out", str(root), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["ran"] == 0
    res = runner.invoke(app, ["study", "stats", str(root), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["kind"] == "council" and [r["rule"] for r in data["summary"]] == [*RULES, "debate"]
    assert not any(math.isnan(r["esg"]) for r in data["summary"])
    out = tmp_path / "report.html"
    res = runner.invoke(app, ["study", "report", str(root), "--out", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    assert "Council (triage): every rule and the debate" in html and "Debate vs each rule" in html
    assert html.count("<svg") >= 2                           # the utility heat map and the metrics panels


def test_init_writes_a_council_design_that_loads_back(tmp_path):
    from fairarena.study.design import load_study, preset

    p = tmp_path / "council.toml"
    res = runner.invoke(app, ["study", "init", "--preset", "council", "--out", str(p)])
    assert res.exit_code == 0, res.output
    assert "50 debates" in res.output
    assert load_study(p)[0] == preset("council")


def test_a_missing_value_and_an_absent_row_are_left_out_and_counted(council_run, monkeypatch):
    """A NaN metric (a value the instance does not have) is left out of its row's mean, with the count in
    ``n_values`` and the table's notes, and dropped from the pairs as missing; a row marked ``absent`` (one the
    instance cannot have) is neither infeasible nor a value: out of the means and the pairs, counted apart."""
    import copy

    from fairarena.study import store
    from fairarena.study.council_analysis import analyse_council, council_tables

    _, root, recs, _ = council_run
    real = store.load_results

    def altered(r):
        out = copy.deepcopy(list(real(r)))
        first = min(out, key=lambda rec: rec["task"]["cohort_seed"])
        for row in first["rows"]:
            if row["rule"] == "borda":
                row["metrics"]["esg"] = float("nan")
            if row["rule"] == "utilitarian":
                row.update(metrics=None, utilities=None, feasible=False, absent=True, note="not on this instance")
        return out

    monkeypatch.setattr(store, "load_results", altered)
    an = analyse_council(root, n_resamples=50)
    by = {r["rule"]: r for r in an.summary}
    second = max(recs, key=lambda rec: rec["task"]["cohort_seed"])
    rows2 = {x["rule"]: x for x in second["rows"]}
    assert by["borda"]["n"] == 2 and by["borda"]["n_values"]["esg"] == 1
    assert by["borda"]["esg"] == pytest.approx(rows2["borda"]["metrics"]["esg"], abs=1e-12)   # not NaN
    assert by["utilitarian"]["n"] == 1 and by["utilitarian"]["absent"] == 1 and by["utilitarian"]["infeasible"] == 0
    assert by["utilitarian"]["esg"] == pytest.approx(rows2["utilitarian"]["metrics"]["esg"], abs=1e-12)
    res = an.stats.cell("debate", "borda", "esg").result
    assert res.n == 1 and res.n_missing == 1
    res = an.stats.cell("debate", "utilitarian", "esg").result
    assert res.n == 1 and res.n_excluded == 0 and res.n_missing == 0
    t = council_tables(an)["council"]
    assert any("esg: the mean over the instances that have a value (borda 1 of 2" in n for n in t.notes)
    assert "1 not recorded" in next(r for r in t.rows if r.label == "utilitarian").cells[0].text


def _shown_width(t, pn) -> int:
    """A panel's width in characters as the council tables count it: the row labels and each column's widest
    cell or own header, plus 3 a column."""
    from fairarena.report import column_chars

    return max(len(r.label) for r in t.rows) + 3 + sum(column_chars(t.columns, t.rows, k) for k in pn.columns)


def test_council_tables_come_in_panels_that_fit_a_page_and_notes_are_whole(council_run):
    """The council table (16 columns for triage: 7 metrics, 6 members, 2 evaluations, n) overflowed the
    report's page at 1,400 px with the evaluation columns behind a scrollbar; the instance table cut each
    rule's note at 80 characters, which dropped what happened on that instance (the tie, the seeded draw).
    Now each is in panels no wider than PANEL_CHARS, every column in exactly one panel and in order (CSV
    still writes them all), and the note whole in its own panel."""
    from fairarena.report import to_csv, to_markdown
    from fairarena.report import PANEL_CHARS
    from fairarena.study.council_analysis import _instance_item, analyse_council, council_tables

    _, root, recs, _ = council_run
    an = analyse_council(root, n_resamples=50)
    tables = council_tables(an)
    for name, t in tables.items():
        assert t.panels, name
        assert [k for pn in t.panels for k in pn.columns] == list(range(len(t.columns))), name
        assert all(_shown_width(t, pn) <= PANEL_CHARS for pn in t.panels), name
        head = to_csv(t).splitlines()[0].split(",")                            # CSV: one wide table
        assert head[-len(t.columns):] == [":".join(c) for c in t.columns], name
        assert to_markdown(t).count("\n\n") >= len(t.panels) - 1                   # one block per panel
    council = tables["council"]
    assert [pn.title for pn in council.panels][:1] == ["metrics (mean)"]
    assert council.panels[-1].columns[-2:] == (len(council.columns) - 2, len(council.columns) - 1)
    item = _instance_item(an, an.instances[0])
    t = item.blocks[0]
    assert t.panels[-1].title == "the rule's note" and t.panels[-1].columns == (len(t.columns) - 1,)
    inst = an.instances[0]
    long = [(lab, row["note"]) for lab, row in inst["rows"].items() if len(str(row.get("note") or "")) > 80]
    assert long                                               # the design has notes longer than the old cut
    shown = {r.label: r.cells[-1].text for r in t.rows}
    for lab, note in long:
        assert shown[lab] == (note if len(note) <= 240 else note[:239] + "\u2026")
