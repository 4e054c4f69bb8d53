"""Feasible-set rules against brute force over every feasible allocation of a tiny problem."""

import numpy as np
import pytest

from fairarena.aggregation.feasible import NASH_TOL
from fairarena.aggregation.objectives import utilities, utility_range
from fairarena.aggregation.rules import Agent, Profile, aggregate
from fairarena.errors import InputError

from .conftest import all_allocations, tiny_problem

OBJ = ["utilitarian", "rawlsian", "prioritarian", "care"]


@pytest.fixture(scope="module", params=["indicator", "fractional"])
def setup(request):
    p = tiny_problem(request.param)
    X = all_allocations(p)
    U = utilities(p, OBJ, X)
    agents = [Agent(f"A{i}", o, X[k]) for i, (o, k) in enumerate(zip(OBJ, (0, 5, 9, len(X) - 1)))]
    return p, X, U, Profile.from_proposals(p, agents)


def test_ranges_are_the_feasible_extremes(setup):
    p, X, _, _ = setup
    from fairarena.aggregation.objectives import raw_values

    raw = raw_values(p, OBJ, X)
    for a, o in enumerate(OBJ):
        worst, best = utility_range(p, o)
        assert best == pytest.approx(raw[a].max(), abs=1e-9)
        assert worst == pytest.approx(raw[a].min(), abs=1e-9)


def _u(p, x):
    return utilities(p, OBJ, x[None])[:, 0]


def test_utilitarian(setup):
    p, X, U, prof = setup
    d = aggregate(prof, "utilitarian-feasible")
    assert _u(p, d.allocation).sum() == pytest.approx(U.sum(0).max(), abs=1e-7)


def test_leximin(setup):
    p, X, U, prof = setup
    d = aggregate(prof, "leximin-feasible")
    best = max(tuple(np.round(np.sort(U[:, k]), 9)) for k in range(U.shape[1]))
    assert tuple(np.round(np.sort(_u(p, d.allocation)), 9)) == best


def test_ks_and_groups(setup):
    p, X, U, prof = setup
    assert _u(p, aggregate(prof, "ks-feasible").allocation).min() == pytest.approx(U.min(0).max(), abs=1e-7)
    gprof = Profile(
        [Agent(a.name, a.objective, a.allocation, group=g) for a, g in zip(prof.agents, "xxyy")],
        prof.candidates, prof.U, prof.problem, prof.X)
    g = aggregate(gprof, "maxmin-groups")
    val = np.minimum(U[:2].mean(0), U[2:].mean(0)).max()
    u = _u(p, g.allocation)
    assert min(u[:2].mean(), u[2:].mean()) == pytest.approx(val, abs=1e-7)


def test_nash_bargaining_within_tolerance(setup):
    p, X, U, prof = setup
    d = aggregate(prof, "nash-bargaining")
    with np.errstate(divide="ignore"):
        logs = np.log(U).sum(0)
    assert np.log(_u(p, d.allocation)).sum() >= logs.max() - len(OBJ) * NASH_TOL - 1e-9


def test_feasible_decisions_are_feasible_and_integral(setup):
    p, X, U, prof = setup
    from fairarena.allocation.problem import check_feasibility

    for rule in ("utilitarian-feasible", "leximin-feasible", "nash-bargaining", "ks-feasible", "maxmin-groups",
                 "mean", "median"):
        assert check_feasibility(p, aggregate(prof, rule).allocation) == [], rule


def test_nash_is_invariant_to_the_disagreement_choice_only_through_d():
    p = tiny_problem()
    X = all_allocations(p)
    agents = [Agent(f"A{i}", o, X[k]) for i, (o, k) in enumerate(zip(OBJ, (3, 7, 11, 20)))]
    prof = Profile.from_proposals(p, agents)
    d = aggregate(prof, "nash-bargaining", disagreement="proposals")
    dpt = prof.U.min(axis=1)
    U = utilities(p, OBJ, X)
    ok = (U >= dpt[:, None] - 1e-12).all(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        best = np.log(np.clip(U[:, ok] - dpt[:, None], 0, None)).sum(0).max()
    got = np.log(np.clip(_u(p, d.allocation) - dpt, 0, None)).sum()
    assert got >= best - len(OBJ) * NASH_TOL - 1e-9


def test_objectives_without_a_milp_form_are_refused():
    from fairarena.aggregation.objectives import OBJECTIVES, Objective

    OBJECTIVES.add("toy", Objective("toy", "esg", "max", ""), description="ESG without a MILP form (test)")
    try:
        p = tiny_problem()
        X = all_allocations(p)
        prof = Profile.from_proposals(p, [Agent("A", "utilitarian", X[0]), Agent("B", "toy", X[1])])
        with pytest.raises(InputError, match=r"agents\[1\].objective"):
            aggregate(prof, "utilitarian-feasible")
        assert np.allclose(prof.U[0], prof.U[1])  # same metric, same utilities: candidate rules accept it
    finally:
        OBJECTIVES.remove("toy")


def test_infeasible_proposal_is_reported_not_repaired():
    p = tiny_problem()
    x = p.zeros()
    x[0, 0] = x[1, 0] = 1.0  # two ICU beds, capacity 1
    with pytest.raises(InputError, match=r"agents\[0\].allocation.*ICU total 2 exceeds capacity 1"):
        Profile.from_proposals(p, [Agent("A", "utilitarian", x), Agent("B", "care", p.zeros())])


ALL6 = ["utilitarian", "egalitarian", "rawlsian", "prioritarian", "care", "libertarian"]


@pytest.mark.parametrize("cnss", ["indicator", "fractional"])
def test_six_frameworks_against_brute_force(cnss):
    """Gini on a 2^-GINI_BITS grid and variance by cuts: within the stated tolerances of brute force."""
    from fairarena.aggregation.feasible import GINI_BITS

    p = tiny_problem(cnss)
    X = all_allocations(p)
    U = utilities(p, ALL6, X)
    prof = Profile.from_proposals(p, [Agent(f"A{i}", o, X[(7 * i) % len(X)]) for i, o in enumerate(ALL6)])
    tol = 2.0**-GINI_BITS + 1e-6
    u = lambda x: utilities(p, ALL6, x[None])[:, 0]  # noqa: E731
    assert u(aggregate(prof, "utilitarian-feasible").allocation).sum() >= U.sum(0).max() - tol
    assert u(aggregate(prof, "ks-feasible").allocation).min() >= U.min(0).max() - tol
    with np.errstate(divide="ignore"):
        best = np.log(U).sum(0).max()
    assert np.log(u(aggregate(prof, "nash-bargaining").allocation)).sum() >= best - 6 * (NASH_TOL + tol) - 1e-9


def test_six_frameworks_exact_gini_under_indicator():
    """Under the indicator CNSS the Gini bound is exact (no grid): every rule hits brute force to 1e-6,
    leximin included (its sorted utility vector is the lexicographic maximum over all allocations)."""
    p = tiny_problem("indicator")
    X = all_allocations(p)
    U = utilities(p, ALL6, X)
    prof = Profile.from_proposals(p, [Agent(f"A{i}", o, X[(7 * i) % len(X)]) for i, o in enumerate(ALL6)])
    u = lambda x: utilities(p, ALL6, x[None])[:, 0]  # noqa: E731
    tol = 1e-6
    assert u(aggregate(prof, "utilitarian-feasible").allocation).sum() >= U.sum(0).max() - tol
    assert u(aggregate(prof, "ks-feasible").allocation).min() >= U.min(0).max() - tol
    assert u(aggregate(prof, "maxmin-groups").allocation).min() >= U.min(0).max() - tol
    srt = np.sort(U, axis=0).T  # (K, N) ascending
    best = srt[0]
    for row in srt[1:]:  # lexicographic maximum with tolerance
        diff = np.nonzero(np.abs(row - best) > 1e-9)[0]
        if diff.size and row[diff[0]] > best[diff[0]]:
            best = row
    got = np.sort(u(aggregate(prof, "leximin-feasible").allocation))
    assert np.allclose(got, best, atol=tol), (got, best)


@pytest.mark.parametrize("d", [(0.0,) * 6, (0.1, 0.3, 0.0, 0.2, 0.5, 0.05)])
def test_max_min_ratio_matches_brute_force(d):
    """Dinkelbach's max-min (exact egalitarian ratio) from no seed but the empty allocation equals
    max_x min_a (u_a(x) - d_a) / (1 - d_a) over every allocation; off under the grid it returns None."""
    from fairarena.aggregation import feasible as F

    p = tiny_problem("indicator")
    X = all_allocations(p)
    U = utilities(p, ALL6, X)
    dd = np.asarray(d)
    best = ((U - dd[:, None]) / (1.0 - dd[:, None])).min(0).max()
    fm = F.FeasibleModel(p, ALL6, [f"A{i}" for i in range(6)])
    assert fm.max_min_ratio(dd, None) == pytest.approx(best, abs=1e-6)
    assert F.FeasibleModel(p, ALL6[:1] + ALL6[2:], list("abcde")).max_min_ratio(dd[1:], None) is None
