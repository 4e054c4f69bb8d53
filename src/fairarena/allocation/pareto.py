"""Pareto dominance in need satisfaction (CNSS): is an allocation beaten for nobody's loss?

Allocation ``y`` *dominates* ``x`` when ``CNSS_i(y) >= CNSS_i(x)`` for every patient ``i`` and
``CNSS_i(y) > CNSS_i(x)`` for some. Whether some feasible allocation dominates ``x`` is one MILP
(exact, :class:`~fairarena.allocation.milp.AllocationMILP`): maximise ``sum_i |N_i| CNSS_i`` (the
number of needs met under the indicator form; any positive weights would do) subject to
``CNSS_i >= CNSS_i(x)`` for all ``i``; ``x`` is dominated iff the maximum exceeds its own value, and the
maximiser is then an undominated allocation that dominates ``x``. The empty allocation is dominated
whenever some patient can be treated at all.

Used by the egalitarian optimum (no levelling down, :func:`fairarena.allocation.frameworks.egalitarian_allocation`)
and by the candidate-set aggregation rules (:mod:`fairarena.aggregation.rules`: dominated proposals are
set aside). See docs/aggregation.md, "No levelling down".
"""

from __future__ import annotations

import weakref

import numpy as np

from fairarena.allocation.metrics import need_satisfaction
from fairarena.allocation.milp import AllocationMILP, add_exprs
from fairarena.allocation.problem import AllocationProblem

__all__ = ["DOMINANCE_TOL", "dominating_allocation", "is_dominated", "dominated_mask", "pareto_front_mask",
           "add_not_below_cut", "add_no_idle_rows"]

DOMINANCE_TOL = 1e-7
"""A CNSS sum larger by more than this (relative to 1) counts as an improvement; under the indicator
form improvements are whole needs, so any tolerance below ``1/max|N_i|`` is exact."""


def _weights(problem: AllocationProblem) -> np.ndarray:
    return np.asarray(problem.n_needed, dtype=float)


def dominating_allocation(problem: AllocationProblem, x: np.ndarray, *, cnss: str | None = None,
                          time_limit: float | None = None) -> np.ndarray | None:
    """A feasible allocation that Pareto-dominates ``x`` in CNSS (undominated itself), or ``None`` when
    none exists (``x`` is Pareto-optimal). ``x`` may be an ``(n, R)`` allocation or an ``(n,)`` CNSS
    vector. One MILP (module doc)."""
    x = np.asarray(x, dtype=float)
    c = x if x.ndim == 1 else need_satisfaction(problem, x, cnss)
    if np.all(c >= 1.0 - 1e-12):
        return None
    m = AllocationMILP(problem, time_limit=time_limit, cnss=cnss)
    for ci, e in zip(c, m.cnss):
        if ci > 1e-12:
            m.add_row(e, lo=float(ci) - 1e-9)
    w = _weights(problem)
    value, sol = m.solve(m.weighted_cnss(w), "max")
    if value <= float(w @ c) + DOMINANCE_TOL * max(1.0, float(w @ c)):
        return None
    y = m.allocation(sol)
    cy = need_satisfaction(problem, y, cnss)
    if not (np.all(cy >= c - 1e-9) and float(w @ cy) > float(w @ c) + DOMINANCE_TOL):
        return None  # solver tolerance only: no true improvement
    return y


def is_dominated(problem: AllocationProblem, x: np.ndarray, *, cnss: str | None = None) -> bool:
    """True when some feasible allocation Pareto-dominates ``x`` in CNSS (:func:`dominating_allocation`)."""
    return dominating_allocation(problem, x, cnss=cnss) is not None


_CACHE: "weakref.WeakKeyDictionary[AllocationProblem, dict[tuple, bool]]" = weakref.WeakKeyDictionary()


def dominated_mask(problem: AllocationProblem, X: np.ndarray, *, cnss: str | None = None) -> np.ndarray:
    """``(K,)`` booleans: allocation ``X[k]`` is Pareto-dominated in CNSS by some feasible allocation.

    A candidate dominated by another candidate is decided without a MILP; the rest by one MILP per
    distinct CNSS vector, cached per problem object (problems are immutable)."""
    X = np.asarray(X, dtype=float)
    C = need_satisfaction(problem, X, cnss)
    out = pareto_front_mask(C) == 0  # dominated within the candidates themselves
    cache = _CACHE.setdefault(problem, {})
    for k in np.flatnonzero(~out):
        key = (cnss or problem.cnss, *np.round(C[k], 9))
        if key not in cache:
            cache[key] = is_dominated(problem, C[k], cnss=cnss)
        out[k] = cache[key]
    return out


def pareto_front_mask(C: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """``(K,)`` booleans over the rows of ``C (K, n)``: True where no other row dominates the row."""
    C = np.asarray(C, dtype=float)
    ge = np.all(C[:, None, :] >= C[None, :, :] - tol, axis=2)   # ge[j, k]: row j >= row k everywhere
    gt = np.any(C[:, None, :] > C[None, :, :] + tol, axis=2)    # and strictly somewhere
    return ~np.any(ge & gt, axis=0)


def add_not_below_cut(m: AllocationMILP, w: np.ndarray, step: np.ndarray) -> None:
    """Exclude from ``m`` every CNSS vector ``u <= w`` componentwise other than ``w`` itself, where ``w``
    is the CNSS vector of a feasible allocation: each excluded ``u`` is dominated by ``w``, so no
    undominated allocation is ever cut away.

    Linear form: binaries ``z_i`` (``CNSS_i >= (w_i + step_i) z_i``: patient ``i`` above ``w_i``) and
    ``y`` (``CNSS_i >= w_i y`` for all ``i``: at least ``w``), with ``sum_i z_i + y >= 1``. Under the
    indicator form ``step_i = 1/|N_i|`` (one more need met) makes the cut exact."""
    pick: dict[int, float] = {}
    for i, (wi, e) in enumerate(zip(w, m.cnss)):
        target = float(wi) + float(step[i])
        if target > 1.0 + 1e-9:
            continue
        z = m.add_var(0.0, 1.0, integer=True)
        m.add_row(add_exprs((1.0, e), (-(target - 1e-9), {z: 1.0})), lo=0.0)
        pick[z] = 1.0
    y = m.add_var(0.0, 1.0, integer=True)
    for wi, e in zip(w, m.cnss):
        if wi > 1e-12:
            m.add_row(add_exprs((1.0, e), (-(float(wi) - 1e-9), {y: 1.0})), lo=0.0)
    pick[y] = 1.0
    m.add_row(pick, lo=1.0)


def add_no_idle_rows(m: AllocationMILP) -> None:
    """Rows every undominated allocation satisfies: no capacity is left idle that would meet someone's
    unmet need (under the fractional form: that would raise someone below their need).

    For resource ``r`` whose thresholds all fit (``sum_i threshold[i, r] <= capacity[r]``) every need
    of ``r`` is met (serving everyone at the threshold changes no other CNSS). Otherwise, for each
    patient ``i`` needing ``r``: if ``i``'s need of ``r`` is unmet (indicator ``z = 0``) the idle amount
    ``capacity[r] - sum_j x[j, r]`` is below ``threshold[i, r]`` (at most ``threshold - 1`` for an
    indivisible resource): else giving ``i`` its threshold from the idle amount would dominate. Only
    dominated allocations are removed, so a search for the least unequal undominated allocation may add
    them (they spare it most dominance checks)."""
    p = m.problem
    if m.form != "indicator":
        # fractional form: a resource whose needs do not all fit is used up (an idle amount could raise
        # someone below their need: a whole unit of an indivisible one, since needs are whole there);
        # one whose needs all fit serves every need in full
        for r in range(p.n_resources):
            ks = [k for k, (_, rr) in enumerate(m.pairs) if rr == r]
            if not ks:
                continue
            if sum(float(p.need[i, r]) for i, _ in (m.pairs[k] for k in ks)) <= float(p.capacity[r]) + 1e-9:
                for k in ks:
                    m.lb[k] = m.ub[k]
            else:
                m.add_row({k: 1.0 for k in ks}, lo=float(p.capacity[r]) - 1e-9)
        return
    for r in range(p.n_resources):
        ks = [k for k, (_, rr) in enumerate(m.pairs) if rr == r]
        if not ks:
            continue
        cap = float(p.capacity[r])
        if sum(float(p.threshold[i, r]) for i, _ in (m.pairs[k] for k in ks)) <= cap + 1e-9:
            for k in ks:
                m.lb[m.z[k]] = 1.0
            continue
        used = {k: 1.0 for k in ks}
        for k in ks:
            i = m.pairs[k][0]
            floor = cap - float(p.threshold[i, r]) + (1.0 if p.indivisible[r] else 0.0)
            if floor <= 0:
                continue
            # z = 1, or the resource's total use is at least `floor` (z may be x itself: then trivially so)
            m.add_row(add_exprs((1.0, used), (floor, {m.z[k]: 1.0})), lo=floor)
