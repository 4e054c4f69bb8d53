"""Metrics pinned on hand-computed allocations, including a cohort-32-style infeasible case."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest

from fairarena.allocation import AllocationProblem, compute_metrics_batch, gini
from fairarena.triage import (
    FRAMEWORKS,
    METRIC_KEYS,
    as_allocation,
    check_feasibility,
    cohort_weights,
    compute_metrics,
    parse_cohort,
    sample_cohort,
    survival_label,
)


def _patient(pid, survival, needs, **kw):
    base = dict(id=pid, age=40, gender="male", race="White", ses="middle", citizenship="citizen",
                occupation="clerk", family="single", condition="x", survival=survival, urgency="high",
                needs=needs)
    base.update(kw)
    return base


W = [1, 2, 3, 4, 1, 2, 3, 4]
V = [2, 1, 1, 4, 1, 1, 1, 1]

# A hand-made cohort in the style of the paper's cohort 32: tight capacities, and a final allocation
# that hands out 50 units of medication A when only 45 exist.
COHORT32 = {
    "patients": [
        _patient("P1", 0.9, {"ICU": 1, "Ventilator": 1, "Nursing": 12}),
        _patient("P2", 0.4, {"MedA": 10, "MedB": 10, "Nursing": 10}),
        _patient("P3", 0.6, {"Surgery": 1, "MedA": 15, "Nursing": 10, "ICU": 1}),
        _patient("P4", 0.3, {"Surgery": 1, "MedA": 10, "Nursing": 12}),
        _patient("P5", 0.7, {"ICU": 1, "MedB": 10, "Nursing": 8}),
        _patient("P6", 0.5, {"ICU": 1, "Ventilator": 1, "MedA": 10, "Nursing": 12}),
        _patient("P7", 0.6, {"ICU": 1, "MedB": 15, "Nursing": 8}),
        _patient("P8", 0.95, {"Surgery": 1, "MedA": 10, "Nursing": 6}),
    ],
    "capacity": {"ICU": 2, "Ventilator": 1, "MedA": 45, "MedB": 35, "Nursing": 60, "Surgery": 2},
}
for _p, _w, _v in zip(COHORT32["patients"], W, V):
    _p["disadvantage_weight"] = _w
    _p["vulnerability_weight"] = _v

FINAL32 = {
    "P1": {"ICU": 1, "Ventilator": 1, "Nursing": 12},
    "P2": {"MedA": 10, "MedB": 10, "Nursing": 5},
    "P3": {"Surgery": 1, "MedA": 15, "Nursing": 10, "ICU": 1},
    "P4": {"Surgery": 1, "MedA": 10, "Nursing": 6},
    "P5": {"MedB": 10, "Nursing": 8},
    "P6": {"MedA": 5, "Nursing": 6},
    "P7": {"MedB": 15, "Nursing": 8},
    "P8": {"MedA": 10, "Nursing": 5},
}


def test_handmade_final_allocation_metrics_and_medA_overshoot_fractional():
    cohort = parse_cohort(COHORT32)
    m = compute_metrics(cohort, FINAL32, cnss="fractional")
    # CNSS by hand: P2 (1 + 1 + 5/10)/3, P5 (0 + 1 + 1)/3, P6 (0+0+5/10+6/12)/4, P8 (0 + 1 + 5/6)/3
    assert m["cnss"] == pytest.approx([1, 5 / 6, 1, 5 / 6, 2 / 3, 1 / 4, 2 / 3, 11 / 18])
    assert m["esg"] == pytest.approx(329 / 90)
    assert m["rmg"] == pytest.approx(1 / 4)
    assert m["var"] == pytest.approx(4351 / 82944)
    assert m["dw_esg"] == pytest.approx(1549 / 3600)
    assert m["vwci"] == pytest.approx(337 / 432)
    # nursing hours 12,5,10,6,8,6,8,5 -> sum_i (2i-9) x_(i) = 82 over 8 * 60
    assert m["gini"] == pytest.approx(82 / 480)
    assert m["feasible"] is False
    assert m["violations"] == ["MedA total 50 exceeds capacity 45"]
    assert m["waste"] == {}


def test_violations_spelled_out_for_each_kind():
    cohort = parse_cohort(COHORT32)
    alloc = copy.deepcopy(FINAL32)
    alloc["P5"]["ICU"] = 0.5  # fractional bed
    alloc["P2"]["Ventilator"] = 1  # waste and over capacity (2 > 1)
    v = check_feasibility(cohort, alloc)
    assert "ICU for P5 is 0.5, not an integer (indivisible resource)" in v
    assert "Ventilator total 2 exceeds capacity 1" in v
    assert "ICU total 2.5 exceeds capacity 2" in v
    assert "MedA total 50 exceeds capacity 45" in v
    assert len(v) == 4
    m = compute_metrics(cohort, alloc, cnss="fractional")
    assert m["waste"] == {"Ventilator": 1.0}
    assert m["cnss"][4] == pytest.approx((0.5 + 1 + 1) / 3)
    # indicator: half a bed is below the one-unit clinical minimum, so the ICU need is not met
    assert compute_metrics(cohort, alloc)["cnss"][4] == pytest.approx(2 / 3)


def test_overallocation_is_capped_at_full_satisfaction():
    cohort = parse_cohort(COHORT32)
    alloc = {"P1": {"Nursing": 30}}  # 2.5x the need counts as 1, the rest is waste
    m = compute_metrics(cohort, alloc)
    assert m["cnss"][0] == pytest.approx(1 / 3)
    assert m["waste"] == {"Nursing": 18.0}


def test_gini_formula_and_edge_cases():
    assert gini(np.zeros(4)) == 0.0
    assert gini(np.ones(5)) == pytest.approx(0.0)
    assert gini(np.array([0, 0, 0, 10.0])) == pytest.approx(3 / 4)  # (n-1)/n for one holder
    assert gini(np.array([1, 2, 3, 4.0])) == pytest.approx((-3 - 2 + 3 + 12) / (4 * 10))
    batch = gini(np.array([[0, 0, 0, 0.0], [1, 2, 3, 4.0]]))
    assert batch == pytest.approx([0.0, 0.25])


def test_batched_metrics_equal_single_metrics():
    cohort = sample_cohort(3, "standard")
    p = cohort.to_problem()
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1.3, size=(50, p.n, p.n_resources)) * p.need
    X[..., p.indivisible] = np.round(X[..., p.indivisible])
    batch = compute_metrics_batch(p, X)
    for b in (0, 17, 49):
        single = compute_metrics(p, X[b])
        for k in METRIC_KEYS:
            assert batch[k][b] == pytest.approx(single[k])
        assert batch["cnss"][b] == pytest.approx(single["cnss"])
        assert bool(batch["feasible"][b]) == single["feasible"]


def test_weight_rules_by_hand():
    pats = [
        _patient("A", 0.5, {"Nursing": 1}, ses="low", citizenship="undocumented", age=8, gender="female",
                 family="dependent child"),  # d = 1+2+1.5 = 4.5 ; v = 1+1.5+0.5+1 = 4
        _patient("B", 0.5, {"Nursing": 1}, ses="high", citizenship="citizen", age=40, gender="male",
                 family="single"),  # d = 1 ; v = 1
        _patient("C", 0.5, {"Nursing": 1}, ses="middle", citizenship="refugee", age=70, gender="male",
                 family="married, no children"),  # d = 1+1+1 = 3 ; v = 1+1+0+1 ("children") = 3
    ]
    cohort = parse_cohort({"patients": pats, "capacity": COHORT32["capacity"]})
    w, v = cohort_weights(cohort, "points")
    assert w == pytest.approx(np.array([4.5, 1, 3]) / 8.5)
    assert v == pytest.approx(np.array([4, 1, 3]) / 8)
    # the paper's rule (default): 1 / rank on the SES scale refugee 1, low 2, ..., middle 5, ..., high 8
    w, _ = cohort_weights(cohort)
    assert w == pytest.approx(np.array([1 / 2, 1 / 8, 1 / 5]) / (1 / 2 + 1 / 8 + 1 / 5))
    # the rank within the cohort (option): low = rank 1, middle = 2, high = 3
    w, _ = cohort_weights(cohort, "ses-rank")
    assert w == pytest.approx(np.array([1, 1 / 3, 1 / 2]) / (11 / 6))


def test_explicit_weights_win_and_are_normalised():
    p = parse_cohort(COHORT32).to_problem()
    assert p.disadvantage == pytest.approx(np.array(W) / sum(W))
    assert p.vulnerability == pytest.approx(np.array(V) / sum(V))


def test_survival_labels():
    assert [survival_label(s) for s in (0.0, 0.19, 0.2, 0.49, 0.5, 0.69, 0.7, 1.0)] == [
        "Acute", "Acute", "Low", "Low", "Mid", "Mid", "High", "High"]


def test_framework_registry():
    assert set(FRAMEWORKS) == {"utilitarian", "egalitarian", "rawlsian", "prioritarian", "care", "libertarian"}
    # every framework's own metric is a metric; the nursing Gini is the paper's (Table 2) egalitarian column
    assert {f.metric for f in FRAMEWORKS.values()} == set(METRIC_KEYS) - {"gini"}
    assert FRAMEWORKS["egalitarian"].metric == "gini_cnss" and FRAMEWORKS["egalitarian"].paper_metric == "gini"
    assert FRAMEWORKS["egalitarian"].direction == "min" and FRAMEWORKS["libertarian"].direction == "min"
    assert FRAMEWORKS["egalitarian"].better(0.1, 0.2) and FRAMEWORKS["utilitarian"].better(2, 1)


def test_array_allocation_shape_checked():
    cohort = parse_cohort(COHORT32)
    with pytest.raises(ValueError, match="allocation"):
        as_allocation(cohort, np.zeros((3, 6)))


def test_generic_problem_validation():
    ok = dict(ids=["a", "b"], resources=["R", "S"], capacity=[1, 2], need=[[1, 0], [0, 2]],
              indivisible=[True, False], survival=[0.5, 0.5], urgency=[0, 1], disadvantage=[0.5, 0.5],
              vulnerability=[0.5, 0.5], gini_resource="S")
    AllocationProblem(**ok)
    for key, bad, field in [("ids", ["a", "a"], "ids"), ("survival", [0.5, 1.5], "survival"),
                            ("need", [[0.5, 0], [0, 2]], "need[a].R"), ("capacity", [1, float("nan")], "capacity"),
                            ("disadvantage", [0.2, 0.2], "disadvantage"), ("need", [[0, 0], [0, 2]], "need[a]")]:
        with pytest.raises(ValueError) as exc:
            AllocationProblem(**{**ok, key: bad})
        assert exc.value.field == field


def test_nursing_gini_is_undefined_when_nobody_gets_nursing_and_unused_capacity_is_reported():
    cohort = parse_cohort(COHORT32)
    p = cohort.to_problem()
    x = p.zeros()
    x[0, p.resources.index("ICU")] = 1
    m = compute_metrics(p, x)
    assert math.isnan(m["gini"])  # 0/0: not perfect equality
    assert m["gini_cnss"] == pytest.approx(compute_metrics_batch(p, x[None])["gini_cnss"][0])
    assert m["unused"] == {r: float(c - (1 if r == "ICU" else 0)) for r, c in zip(p.resources, p.capacity)}
    empty = compute_metrics(p, p.zeros())
    assert math.isnan(empty["gini"]) and empty["gini_cnss"] == 0.0 and empty["rmg"] == 0.0
    batch = compute_metrics_batch(p, np.stack([p.zeros(), p.need]))
    assert math.isnan(batch["gini"][0]) and not math.isnan(batch["gini"][1])
    over = p.need * 10
    assert all(v == 0 for v in compute_metrics(p, over)["unused"].values())


def test_metrics_cli_prints_undefined_and_json_null(tmp_path):
    from typer.testing import CliRunner

    from fairarena.cli import app

    path = tmp_path / "c.json"
    path.write_text(json.dumps(COHORT32))
    alloc = tmp_path / "a.json"
    alloc.write_text(json.dumps({"allocation": {}}))
    runner = CliRunner()
    r = runner.invoke(app, ["triage", "metrics", "--cohort", str(path), "--allocation", str(alloc), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["gini"] is None and doc["unused"]["Nursing"] == COHORT32["capacity"]["Nursing"]
    r = runner.invoke(app, ["triage", "metrics", "--cohort", str(path), "--allocation", str(alloc)])
    assert r.exit_code == 0 and "undefined" in r.output and "unused capacity" in r.output


def test_each_metric_has_one_milp_form_that_scores_like_the_metric():
    """The linear and max-min metrics' MILP expressions (AllocationMILP.metric_expr, read from the metric
    registry) have the metric's value at the MILP's optimum; the others have no linear form."""
    from fairarena.allocation.metrics import METRICS, metrics_with_form
    from fairarena.allocation.milp import AllocationMILP
    from fairarena.errors import InputError

    assert metrics_with_form("linear") == ("esg", "dw_esg", "vwci")
    assert metrics_with_form("min") == ("rmg",) and metrics_with_form("gini") == ("gini", "gini_cnss")
    assert metrics_with_form("") == ("var",)
    for seed in (0, 3):
        problem = sample_cohort(seed, capacity="standard").to_problem()
        for key in metrics_with_form("linear", "min"):
            m = AllocationMILP(problem)
            value, sol = m.solve(m.metric_expr(key), "max")
            got = float(compute_metrics_batch(problem, m.allocation(sol)[None])[key][0])
            assert got == pytest.approx(value, abs=1e-7), (seed, key)
            if METRICS.get(key).weights is not None:   # the same weights score the metric
                c = compute_metrics_batch(problem, m.allocation(sol)[None])["cnss"][0]
                assert float(c @ METRICS.get(key).weights(problem)) == pytest.approx(got)
        for key in metrics_with_form("gini", ""):
            with pytest.raises(InputError, match="linear form"):
                AllocationMILP(problem).metric_expr(key)
