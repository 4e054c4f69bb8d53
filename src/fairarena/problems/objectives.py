"""The objective vocabulary of problem files: each metric's value, linear form and MILP form, and the exact
optimum of a stakeholder's (lexicographic) objective.

Every metric is a function of need satisfaction ``s`` (:func:`fairarena.allocation.metrics.need_satisfaction`
of the file's :class:`~fairarena.allocation.problem.AllocationProblem`, ``CNSS`` in the allocation core):

* ``sum`` -- ``sum_i w_i s_i / sum_i w_i``: in a MILP the weighted CNSS (:meth:`AllocationMILP.weighted_cnss`);
  linear in ``x`` under the fractional form (or when every needed amount is one whole unit);
* ``min`` -- ``min_i s_i``: a variable below every CNSS, maximised (:meth:`AllocationMILP.min_cnss`, the
  Rawlsian framework's form);
* ``group_min`` -- ``min_g mean_{i in g} s_i``: a variable below every group's mean CNSS, maximised;
* ``gini`` -- the Gini of ``s``. As a first stage alone, the egalitarian framework's exact optimum
  (:func:`fairarena.allocation.frameworks.egalitarian_allocation`, form ``pareto``: the least Gini among
  allocations no feasible allocation Pareto-dominates in satisfaction, then the mean satisfaction; no
  levelling down). As a later stage, Dinkelbach's method on ``sum_{i<j} |s_i - s_j| - g n sum_i s_i`` with
  the earlier stages kept (the conflict audit's form), then ``Gini <= g`` kept as a linear row;
* ``variance`` -- the population variance of ``s``, ``|s - mean(s)|^2 / n``: minimised by cutting planes on the
  norm of the deviations (Kelley's method; each cut ``r >= u . (s - mean(s))`` with a unit vector ``u``), to
  1e-7 in that norm (the norm is flat at its optimum: amounts to about 1e-3 with divisible resources, exact
  with whole units); kept for later stages by the same cuts, added while a later stage's answer breaks the bound.

The optimum of a stakeholder: its stages in order, each stage's optimum kept (within 1e-9 relative) before
the next; then two tie-breaks, the total satisfaction and recipients earlier in the file first (weights
``n - i``), so that the answer is one allocation; under the indicator form a last stage serves the needs
that count as fully as capacity allows. Each solve is HiGHS through :class:`~fairarena.allocation.milp.
AllocationMILP` (status checked).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from fairarena.allocation.metrics import need_satisfaction
from fairarena.allocation.milp import AllocationMILP, Expr, add_exprs
from fairarena.errors import InputError
from fairarena.inequality import gini
from fairarena.problems.schema import DeclaredProblem, Metric, Stakeholder, group_key

__all__ = ["weights_of", "groups_of", "metric_values", "metric_value", "linear_form", "stage_value",
           "objective_value", "optimum", "LINEAR_KINDS", "VARIANCE_TOL", "GINI_TOL"]

#: kinds with a linear MILP form (a weighted CNSS, or a variable maximised below CNSS terms)
LINEAR_KINDS = ("sum", "min", "group_min")
GINI_TOL = 1e-9
VARIANCE_TOL = 1e-7   # on the norm of the deviations from the mean (HiGHS's feasibility tolerance)
MAX_CUTS = 500


def weights_of(problem: DeclaredProblem, metric: Metric) -> np.ndarray:
    """A ``sum`` metric's weights per recipient, normalised to sum 1."""
    w = metric.weights
    if isinstance(w, (int, float)):
        raw = np.ones(len(problem.recipients))
    elif isinstance(w, str):
        raw = np.array([float(r.attributes[w]) for r in problem.recipients])
    else:
        raw = np.array([w["values"].get(g, w.get("default") or 0.0) for g in problem.group_of(w["attribute"])], float)
    return raw / raw.sum()


def groups_of(problem: DeclaredProblem, metric: Metric) -> list[np.ndarray]:
    """A ``group_min`` metric's groups, as index arrays (the declared ``groups`` in order, else every group
    in order of first appearance)."""
    keys = problem.group_of(str(metric.group))
    names = list(metric.groups) if metric.groups is not None else list(dict.fromkeys(keys))
    return [np.array([i for i, k in enumerate(keys) if k == g]) for g in names]


def _values(problem: DeclaredProblem, metric: Metric, s: np.ndarray) -> np.ndarray:
    """The metric over the last axis of satisfaction ``s (..., n)``."""
    if metric.kind == "sum":
        return s @ weights_of(problem, metric)
    if metric.kind == "min":
        return s.min(axis=-1)
    if metric.kind == "group_min":
        return np.min(np.stack([s[..., g].mean(axis=-1) for g in groups_of(problem, metric)], axis=-1), axis=-1)
    if metric.kind == "gini":
        return np.asarray(gini(s))
    if metric.kind == "variance":
        return s.var(axis=-1)
    raise InputError("metric.kind", metric.kind, "a kind of the vocabulary")   # pragma: no cover (validated)


def metric_values(problem: DeclaredProblem, x: np.ndarray) -> dict[str, float]:
    """Every declared metric of allocation ``x (n, R)``."""
    s = need_satisfaction(problem.allocation_problem, np.asarray(x, dtype=float))
    return {k: float(_values(problem, m, s)) for k, m in problem.metrics.items()}


def metric_value(problem: DeclaredProblem, key: str, x: np.ndarray) -> float:
    s = need_satisfaction(problem.allocation_problem, np.asarray(x, dtype=float))
    return float(_values(problem, problem.metrics[key], s))


def satisfaction_is_linear(problem: DeclaredProblem) -> bool:
    """True when need satisfaction is linear in ``x`` on every valid allocation (no amount above the need):
    the fractional form, or the indicator form where every needed amount is one whole unit (``x`` in {0, 1})."""
    p = problem.allocation_problem
    if p.cnss == "fractional":
        return True
    ones = (p.need == 1) & p.indivisible[None, :] & (p.threshold == 1)
    return bool(np.all(ones[p.needed]))


def linear_form(problem: DeclaredProblem, key: str) -> tuple[np.ndarray, float] | None:
    """``(coef (n, R), 0)`` with the metric ``(coef * x).sum()`` on every valid allocation, for a ``sum``
    metric when satisfaction is linear (:func:`satisfaction_is_linear`); None otherwise."""
    metric = problem.metrics[key]
    if metric.kind != "sum" or not satisfaction_is_linear(problem):
        return None
    p = problem.allocation_problem
    per = np.divide(1.0, p.need * p.n_needed[:, None], out=np.zeros_like(p.need), where=p.needed)
    return weights_of(problem, metric)[:, None] * per, 0.0


def sign(problem: DeclaredProblem, key: str) -> float:
    """+1 for a metric to maximise, -1 for one to minimise."""
    return 1.0 if problem.metrics[key].direction == "max" else -1.0


def stage_value(problem: DeclaredProblem, stage: tuple[tuple[str, float], ...], values: dict[str, float]) -> float:
    """A stage's value (higher is better): ``sum_m sign_m w_m metric_m``."""
    return float(sum(sign(problem, m) * w * values[m] for m, w in stage))


def objective_value(problem: DeclaredProblem, stakeholder: Stakeholder, x: np.ndarray) -> float:
    """The stakeholder's value of ``x``: its first stage (later stages only break ties in its optimum, as a
    framework's tie-breaks do)."""
    return stage_value(problem, stakeholder.stages[0], metric_values(problem, x))


# -- MILP forms ------------------------------------------------------------------------------------------

def linear_expr(m: AllocationMILP, problem: DeclaredProblem, key: str) -> Expr:
    """A ``sum``, ``min`` or ``group_min`` metric as an expression to maximise (auxiliaries added to ``m``)."""
    metric = problem.metrics[key]
    if metric.kind == "sum":
        return m.weighted_cnss(weights_of(problem, metric))
    if metric.kind == "min":
        return m.min_cnss()
    if metric.kind == "group_min":
        t = m.add_var(-np.inf, np.inf)
        for g in groups_of(problem, metric):
            mean = add_exprs(*((1.0 / len(g), m.cnss[int(i)]) for i in g))
            m.add_row(add_exprs((1.0, mean), (-1.0, {t: 1.0})), lo=0.0)
        return {t: 1.0}
    raise InputError("metric", key, "a metric with a linear form (sum, min, group_min)")


def _value_at(expr: Expr, sol: np.ndarray) -> float:
    return float(sum(c * sol[k] for k, c in expr.items()))


def _cnss_at(m: AllocationMILP, sol: np.ndarray) -> np.ndarray:
    return np.array([_value_at(e, sol) for e in m.cnss])


class _Model:
    """An allocation MILP with the stages solved so far kept, and variance bounds kept by lazy cuts.

    A variance is kept as the norm of the deviations from the mean, ``var(s) = |s - mean(s)|^2 / n``: a cut at
    ``s0`` is ``r >= u . (s - mean(s))`` with the unit vector ``u = d0 / |d0|`` (``d0`` the deviations at ``s0``),
    well scaled however small the variance (a tangent of the variance itself vanishes there)."""

    def __init__(self, problem: DeclaredProblem) -> None:
        self.problem = problem
        self.m = AllocationMILP(problem.allocation_problem)
        self.norm_bounds: list[tuple[int, float]] = []    # (r variable, bound on |s - mean|) of kept variance stages
        self.sol: np.ndarray | None = None

    def _norm_cut(self, r: int, s0: np.ndarray) -> bool:
        """``r >= u . (s - mean(s))`` at ``s0``; False when ``s0`` has no deviation (nothing to cut)."""
        d0 = s0 - s0.mean()
        size = float(np.linalg.norm(d0))
        if size <= 1e-12:
            return False
        u = d0 / size
        coef = u - u.mean()     # u . (s - mean(s)) = (u - mean(u)) . s
        self.m.add_row(add_exprs((1.0, {r: 1.0}), *((-float(c), e) for c, e in zip(coef, self.m.cnss))), lo=0.0)
        return True

    def solve(self, objective: Expr, sense: str = "max") -> tuple[float, np.ndarray]:
        """Solve; while a kept variance bound is broken by the answer, cut it away and solve again."""
        for _ in range(MAX_CUTS):
            value, sol = self.m.solve(objective, sense)
            d = _cnss_at(self.m, sol)
            size = float(np.linalg.norm(d - d.mean()))
            broken = [r for r, b in self.norm_bounds if size > b + VARIANCE_TOL]
            if not broken:
                self.sol = sol
                return value, sol
            for r in broken:
                self._norm_cut(r, d)
        raise InputError("variance", "cuts", f"a bound kept within {MAX_CUTS} cuts")   # pragma: no cover

    def linear_stage(self, stage: tuple[tuple[str, float], ...]) -> None:
        expr = add_exprs(*((w, linear_expr(self.m, self.problem, k)) for k, w in stage))
        value, _ = self.solve(expr, "max")
        self.m.fix(expr, value, "max")

    def variance_stage(self) -> None:
        """Minimise the variance of CNSS (the norm of its deviations) by cutting planes (Kelley), then keep it."""
        r = self.m.add_var(0.0, np.inf)
        if self.sol is not None:
            self._norm_cut(r, _cnss_at(self.m, self.sol))
        for _ in range(MAX_CUTS):
            low, sol = self.solve({r: 1.0}, "min")
            s = _cnss_at(self.m, sol)
            size = float(np.linalg.norm(s - s.mean()))
            if size <= low + VARIANCE_TOL or not self._norm_cut(r, s):
                self.m.fix({r: 1.0}, max(size, low), "min")
                self.norm_bounds.append((r, size))
                return
        raise InputError("variance", "cuts", f"an optimum within {MAX_CUTS} cuts")   # pragma: no cover

    def gini_stage(self) -> None:
        """Least Gini of CNSS over the kept stages by Dinkelbach's method, then keep ``Gini <= g``. Where
        no kept allocation satisfies anyone the Gini is 0 everywhere: nothing to do."""
        m, n = self.m, self.problem.allocation_problem.n
        total = add_exprs(*((1.0, e) for e in m.cnss))
        if self.sol is None or _value_at(total, self.sol) <= 1e-12:
            best, sol = self.solve(total, "max")
            if best <= 1e-12:
                return
        assert self.sol is not None
        g = float(gini(_cnss_at(m, self.sol)))
        gaps = add_exprs(*m.pairwise_gaps())
        for _ in range(100):
            if g <= GINI_TOL:
                break
            value, sol = self.solve(add_exprs((1.0, gaps), (-g * n, total)), "min")
            if value >= -GINI_TOL * max(1.0, g * n):
                break
            s = _cnss_at(m, sol)
            if s.sum() <= 1e-12 or float(gini(s)) >= g - GINI_TOL:
                break
            g = float(gini(s))
        m.add_row(add_exprs((1.0, gaps), (-(g + GINI_TOL) * n, total)), hi=0.0)

    def allocation(self) -> np.ndarray:
        assert self.sol is not None
        return self.m.allocation(self.sol)


def optimum(problem: DeclaredProblem, stakeholder: Stakeholder) -> np.ndarray:
    """The stakeholder's exact optimum (module doc)."""
    ap = problem.allocation_problem
    first = stakeholder.stages[0]
    if problem.metrics[first[0][0]].kind == "gini":   # alone (validated): the egalitarian framework's optimum
        from fairarena.allocation.frameworks import egalitarian_allocation

        return np.asarray(egalitarian_allocation(ap, "pareto"), dtype=float)
    model = _Model(problem)
    for stage in stakeholder.stages:
        kind = problem.metrics[stage[0][0]].kind
        if kind == "gini":
            model.gini_stage()
        elif kind == "variance":
            model.variance_stage()
        else:
            model.linear_stage(stage)
    n = ap.n
    tie_breaks: list[Expr] = [model.m.weighted_cnss(np.ones(n)), model.m.weighted_cnss(np.arange(n, 0, -1, dtype=float))]
    if ap.cnss == "indicator":
        tie_breaks.append(add_exprs(*((1.0, e) for e in model.m.frac)))
    for j, expr in enumerate(tie_breaks):
        value, _ = model.solve(expr, "max")
        if j < len(tie_breaks) - 1:
            model.m.fix(expr, value, "max")
    return model.allocation()


def compromise(problem: DeclaredProblem, names: list[str], optima: dict[str, np.ndarray]) -> np.ndarray | None:
    """The compromise of the stakeholders ``names``: the allocation maximising the smallest share any of them
    keeps of its range, ``(v_k(x) - lo_k) / (hi_k - lo_k)`` with ``v_k`` its value (first stage), ``hi_k`` its
    value at its own optimum and ``lo_k`` its worst value at the others' optima (Kalai-Smorodinsky over the
    optima's box); then the total satisfaction and recipients earlier in the file first. Exact (one MILP
    per stage) over the stakeholders whose first stage is linear (``sum``, ``min``, ``group_min``); the
    others are left out. None when fewer than two stakeholders with a range remain, or when no allocation
    keeps a positive share for every one of them."""
    ap = problem.allocation_problem
    model = _Model(problem)
    m = model.m
    t = m.add_var(-np.inf, np.inf)
    kept = 0
    for k in names:
        s = problem.stakeholder(k)
        if any(problem.metrics[key].kind not in LINEAR_KINDS for key, _ in s.stages[0]):
            continue
        vals = [objective_value(problem, s, optima[o]) for o in names]
        hi, lo = objective_value(problem, s, optima[k]), min(vals)
        if hi - lo <= 1e-9:
            continue
        expr = add_exprs(*((w, linear_expr(m, problem, key)) for key, w in s.stages[0]))
        m.add_row(add_exprs((1.0, expr), (-(hi - lo), {t: 1.0})), lo=lo)
        kept += 1
    if kept < 2:
        return None
    m.ub[t] = 1.0
    value, _ = model.solve({t: 1.0}, "max")
    if value <= 1e-9:     # nothing keeps a share for every one of them: no compromise
        return None
    m.fix({t: 1.0}, value, "max")
    stages: list[Expr] = [m.weighted_cnss(np.ones(ap.n)), m.weighted_cnss(np.arange(ap.n, 0, -1, dtype=float))]
    for j, expr in enumerate(stages):
        v, _ = model.solve(expr, "max")
        if j < len(stages) - 1:
            m.fix(expr, v, "max")
    return model.allocation()


def stage_key(problem: DeclaredProblem, stakeholder: Stakeholder) -> str:
    """The objective in words: ``maximise merit, then maximise placed``."""
    def one(stage: tuple[tuple[str, float], ...]) -> str:
        return " + ".join(f"{'' if w == 1 else f'{w:g} x '}{problem.metrics[k].label}" for k, w in stage)

    parts = []
    for stage in stakeholder.stages:
        word = "maximise" if all(problem.metrics[k].direction == "max" for k, _ in stage) else "minimise"
        parts.append(f"{word} {one(stage)}")
    return ", then ".join(parts)


__all__ += ["compromise", "stage_key", "sign", "satisfaction_is_linear", "linear_expr", "group_key", "optimum_of"]


_OPTIMA: "weakref.WeakKeyDictionary[DeclaredProblem, dict[str, np.ndarray]]" = weakref.WeakKeyDictionary()


def optimum_of(instance: DeclaredProblem, name: str) -> np.ndarray:
    """The stakeholder's exact optimum, solved once per problem object (a copy is returned)."""
    cache = _OPTIMA.setdefault(instance, {})
    if name not in cache:
        cache[name] = optimum(instance, instance.stakeholder(name))
    return cache[name].copy()
