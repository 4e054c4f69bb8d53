"""The pb council study's own rows (fairarena.pb.study): the PB rules, the feasible-set rules and the city's
actual outcome beside the candidate-set rules, paired with the debate; their values equal `pb compare`'s; the
city's row only where the file records it; means over the elections that have a value; the pool's cache;
the pb duel design."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from fairarena.errors import InputError
from fairarena.pb.domain import PB, POOL_CACHE, POOL_ENV, pool_files
from fairarena.pb.study import CITY, PB_ROWS

COMPARE_NAMES = {"pb:greedy": "greedy", "pb:equal-shares": "equal-shares", "pb:phragmen": "phragmen",
                 "pb:max-utilitarian": "max-utilitarian", "set:utilitarian": "utilitarian", "set:nash": "nash",
                 "set:leximin": "leximin", "set:maxmin": "maxmin", CITY: "actual"}


@pytest.fixture(autouse=True)
def _no_pool_env(monkeypatch, tmp_path):
    monkeypatch.delenv(POOL_ENV, raising=False)
    monkeypatch.setenv("FAIRARENA_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def pb_run(tmp_path_factory):
    from fairarena.study.design import preset, to_toml
    from fairarena.study.store import load_results, run_study

    os.environ.pop(POOL_ENV, None)
    cfg = preset("pb-small")
    root = tmp_path_factory.mktemp("pbstudy") / "study"
    summary = run_study(cfg, to_toml(cfg), root)
    return cfg, root, load_results(root), summary


def test_rows_are_the_pb_rules_and_the_city_where_recorded(pb_run):
    cfg, _, recs, summary = pb_run
    assert summary.ok == 3 and summary.failed == 0
    rules = cfg.council_rules()
    assert rules[-len(PB_ROWS):] == list(PB_ROWS) and "leximin" in rules      # the candidate-set rules stay
    by_seed = {int(r["task"]["cohort_seed"]): r for r in recs}
    assert sorted(by_seed) == [0, 1, 2]
    for seed, r in by_seed.items():
        rows = {x["rule"]: x for x in r["rows"]}
        assert [x["rule"] for x in r["rows"]] == [*rules, "debate"]
        for name in ("pb:greedy", "pb:equal-shares", "pb:phragmen"):
            assert rows[name]["feasible"] and rows[name]["metrics"]["budget_used"] <= 1 + 1e-9
        recorded = PB.sample(seed).selected is not None
        assert recorded == (seed == 0)           # Falenica records its outcome; Krakow and Gdansk do not
        city = rows[CITY]
        if recorded:
            assert city["feasible"] and city["metrics"]["vs_city"] == 0.0 and not city.get("absent")
        else:                                    # no fake row: no metrics, absent, and the note says why
            assert city["metrics"] is None and city["absent"] and "no outcome recorded" in city["note"]
            assert math.isnan(rows["pb:greedy"]["metrics"]["vs_city"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_values_equal_pb_compare_on_the_same_election(pb_run, seed):
    from fairarena.pb.compare import compare

    _, _, recs, _ = pb_run
    rec = next(r for r in recs if int(r["task"]["cohort_seed"]) == seed)
    rows = {x["rule"]: x for x in rec["rows"]}
    res = compare(pool_files()[seed], groups="clusters:3", debate=False, aggregation=False)
    theirs = {r["rule"]: r for r in res["rows"]}
    assert ("actual" in theirs) == (seed == 0)
    for ours, name in COMPARE_NAMES.items():
        if name not in theirs:
            assert rows[ours].get("absent")
            continue
        mine = rows[ours]["metrics"]
        for k, v in theirs[name]["metrics"].items():
            assert mine[k] == pytest.approx(v, abs=1e-12), (ours, k)
        assert rows[ours]["projects"] == theirs[name]["projects"]
        if "distance" in theirs[name]:
            assert mine["vs_city"] == pytest.approx(theirs[name]["distance"]["budget"], abs=1e-12)
            assert mine["vs_city_projects"] == theirs[name]["distance"]["projects"]


def test_stats_pair_the_debate_with_every_row_and_means_skip_missing_values(pb_run):
    from fairarena.study.council_analysis import analyse_council, council_tables

    cfg, root, recs, _ = pb_run
    an = analyse_council(root, n_resamples=50)
    for rule in cfg.council_rules():
        assert an.stats.cell("debate", rule, "approvals").result.n == (1 if rule == CITY else 3)
    # vs_city: only Falenica (seed 0) records an outcome -- one pair, the others missing, not a NaN mean
    cell = an.stats.cell("debate", "pb:greedy", "vs_city").result
    assert cell.n == 1 and cell.n_missing == 2
    rec0 = next(r for r in recs if int(r["task"]["cohort_seed"]) == 0)
    rows0 = {x["rule"]: x for x in rec0["rows"]}
    summ = {s["rule"]: s for s in an.summary}
    for lab in ("debate", "pb:equal-shares", "leximin"):
        assert summ[lab]["vs_city"] == pytest.approx(rows0[lab]["metrics"]["vs_city"], abs=1e-12)
        assert summ[lab]["n_values"]["vs_city"] == 1 and summ[lab]["n"] == 3
        by_hand = np.mean([{x["rule"]: x for x in r["rows"]}[lab]["metrics"]["approvals"] for r in recs])
        assert summ[lab]["approvals"] == pytest.approx(by_hand, abs=1e-12)
    assert summ[CITY]["n"] == 1 and summ[CITY]["absent"] == 2 and summ[CITY]["infeasible"] == 0
    deb = rows0["debate"]["metrics"]["approvals"] - rows0[CITY]["metrics"]["approvals"]
    assert an.stats.cell("debate", CITY, "approvals").result.mean_diff == pytest.approx(deb, abs=1e-12)
    t = council_tables(an)["council"]
    notes = " ".join(t.notes)
    assert "vs_city: the mean over the instances that have a value" in notes and "pb:greedy 1 of 3" in notes
    city_row = next(r for r in t.rows if r.label == CITY)
    assert "2 not recorded" in city_row.cells[0].text


def test_missing_pb_rows_are_computed_from_the_election(pb_run):
    from fairarena.study.council_analysis import record_rows

    cfg, _, recs, _ = pb_run
    rec = next(r for r in recs if int(r["task"]["cohort_seed"]) == 1)
    stored = {x["rule"]: x for x in rec["rows"]}
    trimmed = dict(rec, rows=[x for x in rec["rows"] if x["rule"] not in ("pb:phragmen", CITY)])
    again = record_rows(trimmed, cfg.council_rules())
    assert json.dumps(again["pb:phragmen"], sort_keys=True) == json.dumps(stored["pb:phragmen"], sort_keys=True)
    assert again[CITY]["absent"]


def test_bad_pb_designs_name_the_field():
    from fairarena.study.design import preset

    with pytest.raises(InputError) as exc:
        preset("pb-small", mechanisms=["pb:nope"])
    assert exc.value.field == "study.mechanisms[0]"
    with pytest.raises(InputError) as exc:
        preset("pb-small", closing=["joint-draft", "nope"])
    assert exc.value.field == "study.closing[1]"
    with pytest.raises(InputError) as exc:
        preset("pb-small", model_a="openai:m@http://h:1/v1")
    assert exc.value.field == "study.model_a"
    assert preset("pb-small", mechanisms=["pb:greedy", CITY, "borda"]).council_rules() == ["pb:greedy", CITY, "borda"]


def test_pool_verdicts_are_cached_per_file(monkeypatch, tmp_path):
    from fairarena.pb import domain as dom
    from fairarena.pb import election

    shipped = list(pool_files())
    orig = election.read_election
    calls: list[str] = []

    def spy(path, *a, **k):
        calls.append(str(path))
        return orig(path, *a, **k)

    monkeypatch.setattr(election, "read_election", spy)
    path = tmp_path / "cache" / POOL_CACHE
    dom._pool.cache_clear()
    try:
        assert dom._pool("") == tuple(shipped) and len(calls) == len(shipped)     # every file read, verdicts kept
        cache = json.loads(path.read_text())
        assert sorted(cache["files"]) == sorted(str(p.resolve()) for p in shipped)
        assert all(v[1] is True for v in cache["files"].values())
        dom._pool.cache_clear()
        calls.clear()
        assert dom._pool("") == tuple(shipped) and calls == []                    # from the cache: none read
        # a verdict counts only for its file's size and time: a stale one is read again (and corrected)
        cache["files"][str(shipped[0].resolve())] = ["0:0", False]
        path.write_text(json.dumps(cache))
        dom._pool.cache_clear()
        assert dom._pool("") == tuple(shipped) and calls == [str(shipped[0])]
        assert json.loads(path.read_text())["files"][str(shipped[0].resolve())][1] is True
        # an unreadable cache is ignored; a cache folder that cannot be written costs only the re-reading
        path.write_text("{not json")
        dom._pool.cache_clear()
        calls.clear()
        assert dom._pool("") == tuple(shipped) and len(calls) == len(shipped)
        blocker = tmp_path / "not-a-folder"
        blocker.write_text("x")
        monkeypatch.setenv("FAIRARENA_CACHE", str(blocker))
        dom._pool.cache_clear()
        assert dom._pool("") == tuple(shipped) and blocker.read_text() == "x"
    finally:
        dom._pool.cache_clear()


def test_duel_design_runs(tmp_path):
    from fairarena.conformance.kit import check

    design = PB.study_design("duel")
    assert design["kind"] == "duel" and design["domain"] == "pb"
    report = check(PB, checks=["duel-study"])
    assert report.status("duel-study") == "pass", report.result("duel-study").detail
