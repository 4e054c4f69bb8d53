"""The long-form study table: every cell equals the one-cell comparison; Holm over the family; errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairarena.errors import InputError
from fairarena.stats import DebateRecord, compare_frame, compare_table, holm, paired_comparison

METRICS = {"esg": "max", "var": "min", "gini": "min"}
FRAMEWORKS = ["utilitarian", "rawlsian", "egalitarian"]
OPPONENTS = ["baseline", "adversarial"]


def make_records(n_cohorts=12, seed=0):
    rng = np.random.default_rng(seed)
    recs = []
    for opp in OPPONENTS:
        for k, fw in enumerate(FRAMEWORKS):
            for c in range(n_cohorts):
                base = {m: float(rng.normal(10 + k, 2)) for m in METRICS}
                a = {m: v + float(rng.normal(0.5 * (k - 1), 1)) for m, v in base.items()}
                joint = {m: (a[m] + base[m]) / 2 for m in METRICS}
                recs.append(DebateRecord(cohort=c, framework=fw, opponent=opp, a=a, opp=base,
                                         a_feasible=bool(rng.random() > 0.1), opp_feasible=bool(rng.random() > 0.1),
                                         joint=joint, joint_feasible=bool(rng.random() > 0.2)))
    return recs


def cell_arrays(recs, opp, fw, metric):
    rs = [r for r in recs if r.opponent == opp and r.framework == fw]
    return (np.array([r.a[metric] for r in rs]), np.array([r.opp[metric] for r in rs]),
            np.array([r.a_feasible for r in rs]), np.array([r.opp_feasible for r in rs]), rs)


def test_every_cell_equals_the_single_comparison():
    recs = make_records()
    st = compare_table(recs, METRICS)
    assert st.opponents == tuple(OPPONENTS) and st.frameworks == tuple(FRAMEWORKS)
    assert len(st.cells) == len(OPPONENTS) * len(FRAMEWORKS) * len(METRICS)
    for c in st.cells:
        a, b, fa, fb, rs = cell_arrays(recs, c.opponent, c.framework, c.metric)
        ref = paired_comparison(a, b, feasible_a=fa, feasible_b=fb, direction=METRICS[c.metric])
        got = c.result
        assert (got.n, got.n_excluded, got.test, got.winner) == (ref.n, ref.n_excluded, ref.test, ref.winner)
        assert got.p == ref.p and got.cohens_d == ref.cohens_d
        assert got.ci_a == pytest.approx(ref.ci_a, rel=1e-12) and got.ci_b == pytest.approx(ref.ci_b, rel=1e-12)
        assert got.n_excluded == int(np.sum(~(fa & fb)))
        j = np.array([r.joint[c.metric] for r in rs if r.joint_feasible])
        assert c.joint_n == j.size and c.joint_mean == pytest.approx(j.mean())


def test_holm_over_all_cells_and_per_opponent():
    recs = make_records(seed=1)
    raw = compare_table(recs, METRICS)
    allfam = compare_table(recs, METRICS, correction="holm")
    p = np.array([c.result.p for c in raw.cells])
    adj = holm(p)
    for c, q, r in zip(allfam.cells, adj, raw.cells):
        assert c.result.p == r.result.p and c.result.p_adjusted == pytest.approx(q)
        assert c.result.correction == "holm"
        assert c.result.significant == (q < 0.05)
    per = compare_table(recs, METRICS, correction="holm", family="opponent")
    for opp in OPPONENTS:
        idx = [k for k, c in enumerate(raw.cells) if c.opponent == opp]
        q = holm(p[idx])
        assert [per.cells[k].result.p_adjusted for k in idx] == pytest.approx(list(q))
    assert all(c.result.p_adjusted is None for c in raw.cells)


def test_holm_can_turn_a_winner_into_a_tie():
    recs = make_records(seed=1)
    raw = compare_table(recs, METRICS)
    cor = compare_table(recs, METRICS, correction="holm")
    assert sum(c.result.winner != "tie" for c in cor.cells) <= sum(c.result.winner != "tie" for c in raw.cells)
    changed = [(r, c) for r, c in zip(raw.cells, cor.cells) if r.result.winner != c.result.winner]
    assert len(changed) == 3          # this seed: three raw winners (p 0.003, 0.020, 0.028), none after Holm
    for r, c in changed:
        assert c.result.winner == "tie" and r.result.p < 0.05 <= c.result.p_adjusted


def test_mappings_and_pandas_frames_give_the_same_cells():
    pd = pytest.importorskip("pandas")
    recs = make_records(n_cohorts=8, seed=2)
    dicts = [dict(cohort=r.cohort, framework=r.framework, opponent=r.opponent, a=r.a, opp=r.opp,
                  a_feasible=r.a_feasible, opp_feasible=r.opp_feasible, joint=r.joint,
                  joint_feasible=r.joint_feasible) for r in recs]
    rows = []
    for r in recs:
        row = dict(cohort=r.cohort, framework=r.framework, opponent=r.opponent, a_feasible=r.a_feasible,
                   opp_feasible=r.opp_feasible, joint_feasible=r.joint_feasible)
        row.update({f"a_{m}": v for m, v in r.a.items()})
        row.update({f"opp_{m}": v for m, v in r.opp.items()})
        row.update({f"joint_{m}": v for m, v in r.joint.items()})
        rows.append(row)
    a = compare_table(recs, METRICS).to_records()
    b = compare_table(dicts, METRICS).to_records()
    c = compare_frame(pd.DataFrame(rows), METRICS).to_records()
    assert a == b
    assert [x["p"] for x in a] == [x["p"] for x in c] and [x["joint_ci"] for x in a] == [x["joint_ci"] for x in c]
    frame = compare_table(recs, METRICS).to_frame()
    assert list(frame["metric"][:3]) == list(METRICS) and len(frame) == 18


def test_duplicate_cohort_and_missing_metric_are_input_errors():
    recs = make_records(n_cohorts=4)
    with pytest.raises(InputError, match="appears twice"):
        compare_table(recs + [recs[0]], METRICS)
    with pytest.raises(InputError, match="gini"):
        compare_table([DebateRecord(0, "u", "b", {"esg": 1.0}, {"esg": 1.0})], {"gini": "min"})
    with pytest.raises(InputError) as e:
        compare_table(recs, METRICS, correction="bonferroni")
    assert e.value.field == "correction"
    with pytest.raises(InputError) as e:
        compare_table(recs, {"esg": "sideways"})
    assert e.value.field == "direction"


def test_requested_order_and_empty_cells():
    recs = make_records(n_cohorts=5)
    st = compare_table(recs, METRICS, opponents=["adversarial"], frameworks=["egalitarian", "nobody"])
    assert [(c.opponent, c.framework) for c in st.cells[::3]] == [("adversarial", "egalitarian"),
                                                                   ("adversarial", "nobody")]
    empty = st.cell("adversarial", "nobody", "esg")
    assert empty.result.n == 0 and math.isnan(empty.result.p) and empty.result.winner == "tie"
    assert math.isnan(empty.joint_ci[0])


def test_json_round_trip():
    import json

    st = compare_table(make_records(n_cohorts=6) + [DebateRecord(0, "lonely", "baseline", {m: 1.0 for m in METRICS},
                                                                 {m: 1.0 for m in METRICS})],
                       METRICS, correction="holm")
    text = json.dumps(st.to_dict())
    back = type(st).from_dict(json.loads(text))
    assert json.dumps(back.to_dict()) == text
    assert back.cell("baseline", "rawlsian", "var").result == st.cell("baseline", "rawlsian", "var").result
    assert set(st.directions.values()) | {c["direction"] for c in st.to_dict()["cells"]} == {"max", "min"}


def test_a_stored_file_with_the_legacy_direction_words_reads_as_max_min():
    import json

    st = compare_table(make_records(n_cohorts=6), METRICS, correction="holm")
    old = st.to_dict()   # as written before the one vocabulary: higher / lower
    legacy = {"max": "higher", "min": "lower"}
    old["directions"] = {m: legacy[d] for m, d in old["directions"].items()}
    for c in old["cells"]:
        c["direction"] = legacy[c["direction"]]
    back = type(st).from_dict(json.loads(json.dumps(old)))
    assert json.dumps(back.to_dict()) == json.dumps(st.to_dict())
    with pytest.raises(InputError):   # a direction is given as max/min: the old words are refused
        compare_table(make_records(n_cohorts=6), {"esg": "higher"})


def test_records_without_metrics_count_as_excluded_or_missing():
    ok = {"esg": 1.0, "var": 2.0, "gini": 0.1}
    recs = [dict(cohort=c, framework="f", opponent="o", a={m: v + c for m, v in ok.items()}, opp=ok)
            for c in range(6)]
    recs.append(dict(cohort=6, framework="f", opponent="o", a=None, opp=ok, a_feasible=False))   # failed side
    recs.append(dict(cohort=7, framework="f", opponent="o", a=None, opp=ok))                      # no metrics
    recs.append(dict(cohort=8, framework="f", opponent="o", a=ok, opp=ok, joint=None))
    r = compare_table(recs, METRICS).cell("o", "f", "esg")
    assert (r.result.n, r.result.n_excluded, r.result.n_missing) == (7, 1, 1) and r.joint_n == 0
