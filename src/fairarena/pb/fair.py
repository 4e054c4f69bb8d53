"""Feasible-set rules over stakeholder groups: the project set chosen for the groups' utilities.

Each group is one agent with a linear utility ``u_g(S) = sum_{j in S} C[g, j]`` (:mod:`fairarena.pb.groups`).

* ``utilitarian`` — the greatest sum of the groups' utilities (each group counts once, whatever its size);
* ``nash`` — the greatest product of the groups' utilities (first the most groups with a positive utility);
* ``leximin`` — the worst-off group's utility as high as possible, then the second worst-off's, ...;
* ``maxmin`` — the group max-min: the worst-off group's utility as high as possible (ties: the greater sum).

Exact by enumerating every feasible project set when the election has at most :data:`ENUMERATE_MAX` projects
(vectorised; ties: the set whose bitmask is smallest, i.e. the one funding the later-listed projects first
lose). Above that, by HiGHS MILPs: utilitarian, maxmin and leximin exact (leximin: one max-min per level,
then each group tested for a strictly higher floor); Nash approximated by 24 tangents of the logarithm
(geometric grid on [1e-4, 1]), said in the result.
"""

from __future__ import annotations

import numpy as np

from fairarena.errors import InputError, SolverError

__all__ = ["FEASIBLE_SET_RULES", "feasible_set_rule", "ENUMERATE_MAX", "feasible_sets"]

FEASIBLE_SET_RULES = ("utilitarian", "nash", "leximin", "maxmin")
ENUMERATE_MAX = 18
_TOL = 1e-9


def feasible_sets(costs: np.ndarray, budget: float) -> np.ndarray:
    """Every feasible project set as a bool matrix ``(sets, projects)`` (the empty set first)."""
    m = len(costs)
    idx = np.arange(2 ** m, dtype=np.int64)
    bits = ((idx[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)
    return bits[bits.astype(float) @ costs <= budget + 1e-9]


def _enumerate(rule: str, coef: np.ndarray, costs: np.ndarray, budget: float) -> np.ndarray:
    sets = feasible_sets(costs, budget)
    U = sets.astype(float) @ coef.T                     # (sets, groups)
    U = np.round(U, 12)
    if rule == "utilitarian":
        best = _first_max([U.sum(axis=1)])
    elif rule == "maxmin":
        best = _first_max([U.min(axis=1), U.sum(axis=1)])
    elif rule == "leximin":
        S = np.sort(U, axis=1)
        best = _first_max([S[:, g] for g in range(S.shape[1])])
    elif rule == "nash":
        pos = (U > _TOL).sum(axis=1).astype(float)
        logs = np.where(U > _TOL, np.log(np.maximum(U, _TOL)), 0.0).sum(axis=1)
        best = _first_max([pos, np.round(logs, 10)])
    else:
        raise InputError("rule", rule, f"one of {', '.join(FEASIBLE_SET_RULES)}")
    return sets[best]


def _first_max(keys: list[np.ndarray]) -> int:
    alive = np.arange(len(keys[0]))
    for k in keys:
        v = k[alive]
        top = v.max()
        alive = alive[v >= top - 1e-10 * max(1.0, abs(top))]
        if len(alive) == 1:
            break
    return int(alive[0])


def _milp(c: np.ndarray, A: list[np.ndarray], lo: list[float], hi: list[float], integral: np.ndarray,
          ub: np.ndarray) -> np.ndarray:
    from scipy.optimize import Bounds, LinearConstraint

    from fairarena.solver_console import milp

    res = milp(c, integrality=integral, bounds=Bounds(np.zeros(len(c)), ub),
               constraints=[LinearConstraint(np.array(A), lo, hi)] if A else None,
               options={"mip_rel_gap": 1e-9, "time_limit": 60})
    if res.status != 0 or res.x is None:
        raise SolverError(f"feasible-set MILP: {res.message}")
    return res.x


def _maxmin_milp(coef: np.ndarray, costs: np.ndarray, budget: float, floors: dict[int, float],
                 free: list[int], raise_one: int | None = None) -> tuple[np.ndarray, float]:
    """max t s.t. u_g >= t for g in free (or only raise_one), u_g >= floor_g for fixed g, cost <= budget."""
    G, m = coef.shape
    c = np.zeros(m + 1)
    c[-1] = -1.0
    A, lo, hi = [np.append(costs, 0.0)], [-np.inf], [budget]
    for g in range(G):
        if g in floors:
            A.append(np.append(coef[g], 0.0)); lo.append(floors[g] - 1e-9); hi.append(np.inf)
        if (raise_one is None and g in free) or g == raise_one:
            A.append(np.append(coef[g], -1.0)); lo.append(0.0); hi.append(np.inf)
    integ = np.append(np.ones(m), 0)
    x = _milp(c, A, lo, hi, integ, np.append(np.ones(m), 1.0))
    return x[:m] > 0.5, float(x[-1])


def _milp_rule(rule: str, coef: np.ndarray, costs: np.ndarray, budget: float) -> np.ndarray:
    G, m = coef.shape
    if rule == "utilitarian":
        from fairarena.pb.rules import knapsack

        return knapsack(coef.sum(axis=0), costs, budget)
    if rule == "maxmin":
        x, t = _maxmin_milp(coef, costs, budget, {}, list(range(G)))
        # ties: the greatest sum with the minimum kept
        c = -coef.sum(axis=0)
        A = [costs] + [coef[g] for g in range(G)]
        sol = _milp(c, A, [-np.inf] + [t - 1e-9] * G, [budget] + [np.inf] * G, np.ones(m), np.ones(m))
        return sol > 0.5
    if rule == "leximin":
        floors: dict[int, float] = {}
        x = np.zeros(m, dtype=bool)
        while len(floors) < G:
            free = [g for g in range(G) if g not in floors]
            x, t = _maxmin_milp(coef, costs, budget, floors, free)
            stuck = []
            for g in free:
                trial = dict(floors)
                trial.update({h: t for h in free if h != g})
                _, tg = _maxmin_milp(coef, costs, budget, trial, free, raise_one=g)
                if tg <= t + 1e-9:
                    stuck.append(g)
            for g in stuck or free:
                floors[g] = t
        return x
    if rule == "nash":
        grid = np.geomspace(1e-4, 1.0, 24)
        c = np.concatenate([np.zeros(m), -np.ones(G)])
        A, lo, hi = [np.concatenate([costs, np.zeros(G)])], [-np.inf], [budget]
        for g in range(G):
            for a in grid:   # z_g <= log a + (u_g - a) / a
                row = np.concatenate([-coef[g] / a, np.eye(G)[g]])
                A.append(row); lo.append(-np.inf); hi.append(np.log(a) - 1.0)
        ub = np.concatenate([np.ones(m), np.zeros(G)])
        from scipy.optimize import Bounds, LinearConstraint

        from fairarena.solver_console import milp

        res = milp(c, integrality=np.concatenate([np.ones(m), np.zeros(G)]),
                   bounds=Bounds(np.concatenate([np.zeros(m), np.full(G, np.log(1e-4) - 10)]), ub),
                   constraints=[LinearConstraint(np.array(A), lo, hi)], options={"mip_rel_gap": 1e-7, "time_limit": 60})
        if res.status != 0 or res.x is None:
            raise SolverError(f"nash MILP: {res.message}")
        return res.x[:m] > 0.5
    raise InputError("rule", rule, f"one of {', '.join(FEASIBLE_SET_RULES)}")


def feasible_set_rule(rule: str, coef: np.ndarray, costs: np.ndarray, budget: float) -> tuple[np.ndarray, str]:
    """The project set the rule chooses for groups with utility coefficients ``coef (G, projects)``, and how
    (``"exact: enumeration"``, ``"exact: MILP"`` or ``"approximate: ..."``)."""
    coef = np.asarray(coef, dtype=float)
    costs = np.asarray(costs, dtype=float)
    if rule not in FEASIBLE_SET_RULES:
        raise InputError("rule", rule, f"one of {', '.join(FEASIBLE_SET_RULES)}")
    if len(costs) <= ENUMERATE_MAX:
        return _enumerate(rule, coef, costs, budget), "exact: enumeration"
    how = "approximate: piecewise-linear log (24 tangents), MILP" if rule == "nash" else "exact: MILP"
    return _milp_rule(rule, coef, costs, budget), how
