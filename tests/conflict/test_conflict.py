"""Conflict audit: the Pareto filter by brute force, the summary on hand-made frontiers, and the exact
triage frontier against every feasible allocation of a tiny problem."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fairarena.evaluation.conflict import audit_triage, conflict_summary, pareto_front
from fairarena.tourism.conflict import audit_tourism
from fairarena.tourism.destination import generate


def test_pareto_front_brute_force():
    rng = np.random.default_rng(0)
    X, Y = rng.integers(0, 6, 40).astype(float), rng.integers(0, 6, 40).astype(float)
    keep = set(map(tuple, np.c_[X, Y][pareto_front(X, Y, "max", "min")]))
    brute = {(x, y) for x, y in zip(X, Y)
             if not any(a >= x and b <= y and (a > x or b < y) for a, b in zip(X, Y))}
    assert keep == brute


def test_no_conflict_and_price_of_fairness():
    s = conflict_summary(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]), "max", "max", 1e-9)
    assert s["no_conflict"] and s["price_of_fairness_x"] == 0 and s["price_of_fairness_y"] == 0
    s = conflict_summary(np.array([4.0, 2.0]), np.array([0.5, 0.0]), "max", "min", 1e-9)
    assert not s["no_conflict"]
    assert s["price_of_fairness_x"] == pytest.approx(0.5)     # x falls from 4 to 2 at the best y
    assert s["price_of_fairness_y"] == pytest.approx(0.5)     # absolute when the best y is 0


def _tiny_problem():
    from fairarena.allocation.problem import AllocationProblem

    return AllocationProblem(ids=("a", "b", "c"), resources=("Bed", "Nursing"), capacity=[2, 2],
                             need=[[1, 1], [1, 0], [1, 2]], indivisible=[True, True],
                             survival=[0.9, 0.5, 0.3], urgency=[1, 2, 3], disadvantage=[1 / 3] * 3,
                             vulnerability=[1 / 3] * 3, gini_resource="Nursing")


def test_exact_triage_frontier_equals_brute_force():
    from fairarena.allocation.metrics import compute_metrics_batch
    from fairarena.allocation.problem import is_feasible

    p = _tiny_problem()
    res = audit_triage(p, "esg", "rmg", points=20)
    xs = [np.array(v, float).reshape(3, 2) for v in itertools.product(range(3), repeat=6)]
    X = np.stack([x for x in xs if is_feasible(p, x)])
    m = compute_metrics_batch(p, X)
    keep = pareto_front(m["esg"], m["rmg"], "max", "max")
    brute = sorted({(round(float(m["esg"][i]), 9), round(float(m["rmg"][i]), 9)) for i in keep})
    got = sorted({(round(a, 9), round(b, 9)) for a, b in res["points"]})
    assert got == brute


def test_tourism_alternative_definition_reported():
    d = generate(0, 15)
    res = audit_tourism(d, "satisfaction", "exposure_gini", points=10, k=3)
    assert res["alternatives"] and res["alternatives"][0]["attention"] == "position"
    assert res["alternatives"][0]["verdict"] in ("vanishes", "shrinks", "stays or grows")
    res2 = audit_tourism(d, "satisfaction", "popularity_mean", points=10, k=3)
    assert res2["alternatives"] == []     # popularity does not depend on attention


def test_reusing_an_optimum_that_meets_the_bound_gives_the_same_frontier():
    from fairarena.triage import sample_cohort

    p = sample_cohort(seed=1).to_problem()
    a = audit_triage(p, "rmg", "esg", points=12)
    b = audit_triage(p, "rmg", "esg", points=12, reuse=False)
    assert b["solved"] == 12 and a["solved"] <= 12
    assert np.allclose(sorted(a["points"]), sorted(b["points"]), atol=1e-9)


def _two_poi(d0: float, d1: float):
    from fairarena.tourism.destination import POI, Destination, Group

    def poi(i, hood, dist, cap):
        return POI(id=f"P{i}", category="museum", neighbourhood=hood, popularity=0.5, capacity=cap,
                   baseline_load=[0.0], price_level=1, provider="local", distance_km=dist, transport="walk")

    return Destination(slots=["day"], pois=[poi(0, "centre", d0, 2), poi(1, "residential", d1, 5)],
                       groups=[Group(id="g", persona="culture", size=3)])


def test_flows_frontier_against_brute_force():
    from fairarena.tourism.conflict import audit_tourism_flows
    from fairarena.tourism.metrics import flow_metrics, satisfaction

    # the centre POI is nearer: satisfaction and residents agree (2 visitors there, 1 in the residential one)
    res = audit_tourism_flows(_two_poi(1.0, 4.0), "satisfaction", "crowding_residential", points=5)
    assert res["no_conflict"] and res["price_of_fairness_x"] == 0
    # the residential POI is nearer: a real conflict; every split (a at P0, 3 - a at P1), a = 0..2
    d = _two_poi(4.0, 1.0)
    res = audit_tourism_flows(d, "satisfaction", "crowding_residential", points=5)
    pts = []
    for a_ in range(3):
        F = np.array([[[a_], [3 - a_]]], float)
        m = flow_metrics(d, F)
        pts.append((satisfaction(d, m, None, "flows"), m["crowding_residential"]))
    X, Y = np.array(pts).T
    keep = pareto_front(X, Y, "max", "min")
    assert not res["no_conflict"]
    assert res["x_best"] == pytest.approx(X.max()) and res["y_best"] == pytest.approx(Y.min())
    # weighted sums reach the supported points: here both ends of the brute-force frontier
    ends = {tuple(np.round(p, 9)) for p in res["points"]}
    assert {tuple(np.round((X[i], Y[i]), 9)) for i in keep[[0, -1]]} <= ends


# ------------------------------------------------------------------ every registered triage metric

def _brute(p):
    """Every feasible integer allocation of the tiny problem within needs (the audit's decision space)."""
    from fairarena.allocation.metrics import compute_metrics_batch
    from fairarena.allocation.problem import is_feasible

    ranges = [range(int(p.need[i, r]) + 1) for i in range(p.n) for r in range(p.n_resources)]
    xs = [np.array(v, float).reshape(p.n, p.n_resources) for v in itertools.product(*ranges)]
    X = np.stack([x for x in xs if is_feasible(p, x)])
    m = compute_metrics_batch(p, X)
    m["nursed"] = X[..., p.gini_index].sum(axis=-1) > 0        # the nursing Gini is undefined without nursing
    return m


def _brute_front(m, x, y):
    from fairarena.allocation.metrics import METRICS

    ok = m["nursed"] if "gini" in (x, y) else np.ones(m[x].shape, bool)
    vx, vy = m[x][ok], m[y][ok]
    keep = pareto_front(vx, vy, METRICS.entry(x).direction, METRICS.entry(y).direction)
    return sorted({(round(float(vx[i]), 9), round(float(vy[i]), 9)) for i in keep})


def _tiny_nursing_problem(cnss="indicator"):
    from fairarena.allocation.problem import AllocationProblem

    return AllocationProblem(ids=("a", "b", "c", "d"), resources=("Bed", "Nursing"), capacity=[2, 4],
                             need=[[1, 3], [1, 0], [1, 2], [0, 2]], indivisible=[True, True],
                             survival=[0.9, 0.5, 0.3, 0.6], urgency=[1, 2, 3, 1], disadvantage=[0.1, 0.2, 0.3, 0.4],
                             vulnerability=[0.4, 0.3, 0.2, 0.1], gini_resource="Nursing", cnss=cnss)


@pytest.mark.parametrize("cnss", ["indicator", "fractional"])
@pytest.mark.parametrize("x, y", [("esg", "gini"), ("gini", "rmg"), ("gini", "gini_cnss"), ("vwci", "gini_cnss")])
def test_exact_frontier_with_the_nursing_gini_equals_brute_force(x, y, cnss):
    p = _tiny_nursing_problem(cnss)
    brute = _brute_front(_brute(p), x, y)
    res = audit_triage(p, x, y, points=12)
    assert res["exact"] and res["method"].startswith("exact")
    got = sorted({(round(a, 9), round(b, 9)) for a, b in res["points"]})
    # every point is on the true frontier, both ends included (a grid may step over points between them)
    assert set(got) <= set(brute) and got[0] == brute[0] and got[-1] == brute[-1]
    dense = audit_triage(p, x, y, points=60)
    assert {(round(a, 9), round(b, 9)) for a, b in dense["points"]} <= set(brute)


def test_min_gini_is_the_brute_force_minimum():
    from fairarena.allocation.milp import AllocationMILP
    from fairarena.evaluation.conflict import _defined_row, min_gini

    p = _tiny_nursing_problem("fractional")
    m = _brute(p)
    for metric in ("gini", "gini_cnss"):
        milp = AllocationMILP(p)
        _defined_row(milp)
        value, _ = min_gini(milp, metric)
        defined = m["nursed"]                                   # the row: somebody gets nursing
        assert value == pytest.approx(float(m[metric][defined].min()), abs=1e-7)


def test_var_is_sampled_and_every_point_is_achievable():
    p = _tiny_nursing_problem()
    res = audit_triage(p, "esg", "var", points=10, samples=50, seed=3)
    assert not res["exact"] and res["method"].startswith("sampled") and "var has no linear form" in res["method"]
    m = _brute(p)
    achievable = {(round(float(a), 9), round(float(b), 9)) for a, b in zip(m["esg"], m["var"])}
    assert res["points"] and all((round(a, 9), round(b, 9)) in achievable for a, b in res["points"])
    assert res == audit_triage(p, "esg", "var", points=10, samples=50, seed=3)          # seeded


def test_every_registered_metric_is_accepted_and_unknown_ones_refused():
    from fairarena.allocation.metrics import METRICS
    from fairarena.errors import InputError

    p = _tiny_nursing_problem()
    for x in METRICS:
        y = "esg" if x != "esg" else "gini"
        assert audit_triage(p, x, y, points=4, samples=10)["points"]
    with pytest.raises(InputError) as e:
        audit_triage(p, "esg", "nope")
    assert e.value.field == "--y"
    nobody = _tiny_problem()
    nobody = type(nobody)(**{**{f: getattr(nobody, f) for f in ("ids", "resources", "capacity", "indivisible",
                                                                 "survival", "urgency", "disadvantage",
                                                                 "vulnerability", "gini_resource")},
                             "need": [[1, 0], [1, 0], [1, 0]]})
    with pytest.raises(InputError) as e:
        audit_triage(nobody, "esg", "gini")
    assert e.value.field == "--y" and "Nursing" in str(e.value)
