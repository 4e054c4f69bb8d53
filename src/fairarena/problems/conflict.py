"""The conflict audit of two metrics of a problem file (``fairarena audit conflict --problem FILE``).

The same audit as triage's (:mod:`fairarena.evaluation.conflict`: the Pareto frontier, no conflict, the price
of fairness both ways) over the file's metrics:

* **exact** when one metric is ``sum``, ``min`` or ``group_min`` (a linear MILP form, optimised) and the other
  too or ``gini`` (kept as a bound: ``Gini(s) <= g`` as ``sum_{i<j} d_ij <= g n sum_i s_i``; ``g = 0`` as
  equal satisfaction): the epsilon-constraint method, each point one MILP of
  :class:`~fairarena.allocation.milp.AllocationMILP` (HiGHS);
* **sampled** otherwise (a ``variance``, or two inequality measures): the stakeholders' optima and seeded
  random valid allocations, an inner approximation (every point is achieved).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairarena.errors import InputError
from fairarena.problems.schema import DeclaredProblem

__all__ = ["audit_problem", "check_metrics", "RANDOM_SAMPLES"]

RANDOM_SAMPLES = 200
BOUND_SLACK = 1e-9


def check_metrics(problem: DeclaredProblem, x: str, y: str, points: int = 50) -> None:
    """Both metrics declared and different, ``points`` in 2..1000 (InputError naming the option)."""
    for f, v in (("--x", x), ("--y", y)):
        if v not in problem.metrics:
            raise InputError(f, v, f"a metric of the problem file ({', '.join(problem.metrics)})")
    if x == y:
        raise InputError("--y", y, "a metric other than --x")
    if isinstance(points, bool) or not isinstance(points, int) or not 2 <= points <= 1000:
        raise InputError("--points", points, "an integer in 2..1000")


def _random(problem: DeclaredProblem, count: int, seed: int) -> list[np.ndarray]:
    """Seeded random valid allocations: recipients in random order, each needed resource served with a
    random probability (its whole need, or a random share of it when divisible) while capacity lasts."""
    rng = np.random.default_rng(seed)
    p = problem.allocation_problem
    out = []
    for _ in range(count):
        left = p.capacity.astype(float).copy()
        x = p.zeros()
        share = rng.random()
        for i in rng.permutation(p.n):
            for r in range(p.n_resources):
                if not p.needed[i, r] or rng.random() >= share:
                    continue
                amt = float(p.need[i, r]) if p.indivisible[r] else float(rng.uniform(0.0, p.need[i, r]))
                amt = min(amt, left[r])
                if p.indivisible[r]:
                    amt = float(np.floor(amt))
                x[i, r] = amt
                left[r] -= amt
        out.append(x)
    return out


def _exact(problem: DeclaredProblem, obj: str, con: str, points: int) -> tuple[list[np.ndarray], int]:
    """Epsilon-constraint allocations: ``obj`` (linear) maximised with ``con`` no worse than a grid of bounds
    from its value at ``obj``'s optimum to its own optimum."""
    from fairarena.allocation.milp import AllocationMILP, InfeasibleMILP, add_exprs, add_gini_bound
    from fairarena.problems.objectives import LINEAR_KINDS, linear_expr, metric_value

    ap = problem.allocation_problem
    ckind = problem.metrics[con].kind

    def solve(eps: float | None) -> np.ndarray | None:
        m = AllocationMILP(ap)
        if eps is not None:
            if ckind in LINEAR_KINDS:
                m.add_row(linear_expr(m, problem, con), lo=eps)
            else:
                add_gini_bound(m, max(0.0, eps))
        expr = linear_expr(m, problem, obj)
        try:
            value, _ = m.solve(expr, "max")
            m.fix(expr, value, "max")   # then the most satisfaction in total: one point per bound
            _, sol = m.solve(add_exprs(*((1.0, e) for e in m.cnss)), "max")
        except InfeasibleMILP:
            return None
        return m.allocation(sol)

    x_opt = solve(None)
    assert x_opt is not None   # the empty allocation is feasible
    c_at = metric_value(problem, con, x_opt)
    if ckind in LINEAR_KINDS:
        m = AllocationMILP(ap)
        c_opt, _ = m.solve(linear_expr(m, problem, con), "max")
    else:
        c_opt = 0.0   # equal satisfaction (the empty allocation among others) has Gini 0
    xs = [x_opt]
    solved = 1
    maximise = problem.metrics[con].direction == "max"
    for eps in np.linspace(c_at, c_opt, points)[1:]:
        e = float(eps)
        last = metric_value(problem, con, xs[-1])
        if (last >= e - 1e-9) if maximise else (last <= e + 1e-9):
            continue   # the last optimum meets the tighter bound: it stays optimal
        slack = BOUND_SLACK * max(1.0, abs(e))
        sol = solve(e - slack if maximise else e + slack)
        solved += 1
        if sol is not None:
            xs.append(sol)
    return xs, solved


def audit_problem(problem: DeclaredProblem, x: str, y: str, points: int = 50, tol: float = 1e-6,
                  samples: int = RANDOM_SAMPLES, seed: int = 0) -> dict[str, Any]:
    """The frontier between metrics ``x`` and ``y`` and the conflict summary (module doc); the result has the
    keys of :func:`fairarena.evaluation.conflict.audit_triage`'s."""
    from fairarena.evaluation.conflict import conflict_summary, pareto_front
    from fairarena.problems.objectives import optimum_of
    from fairarena.problems.objectives import LINEAR_KINDS, metric_values

    check_metrics(problem, x, y, points)
    kx, ky = problem.metrics[x].kind, problem.metrics[y].kind
    exact = (kx in LINEAR_KINDS and ky in LINEAR_KINDS + ("gini",)) or (ky in LINEAR_KINDS and kx == "gini")
    dx, dy = problem.metrics[x].direction, problem.metrics[y].direction
    if exact:
        obj, con = (x, y) if kx in LINEAR_KINDS else (y, x)
        xs, solved = _exact(problem, obj, con, points)
        method = f"exact (epsilon-constraint on {con}" + (", Gini bound as linear rows" if
                                                          problem.metrics[con].kind == "gini" else "") + ", HiGHS)"
        extra: dict[str, Any] = {"solved": solved}
    else:
        optima = [optimum_of(problem, s.name) for s in problem.stakeholders]
        xs = optima + _random(problem, samples, seed)
        method = (f"sampled ({len(optima)} stakeholder optima and {samples} random valid allocations, seed {seed}; "
                  f"{' and '.join(m for m in (x, y) if problem.metrics[m].kind in ('variance', 'gini'))} has no linear form)")
        extra = {"samples": int(samples), "seed": int(seed)}
    vals = [metric_values(problem, a) for a in xs]
    vx = np.array([v[x] for v in vals], float)
    vy = np.array([v[y] for v in vals], float)
    keep = pareto_front(vx, vy, dx, dy)
    out = {"problem": f"file: {problem.title}", "method": method, "exact": bool(exact), "x": x, "y": y,
           "directions": {x: dx, y: dy}, "points": [[float(vx[i]), float(vy[i])] for i in keep], "grid": int(points),
           **extra}
    out.update(conflict_summary(vx, vy, dx, dy, tol))
    out["alternatives"] = []
    return out
