"""The one home of allocation metrics: need satisfaction (CNSS) and every metric of an allocation, for
one allocation or a stack of them (the Gini coefficient itself is :func:`fairarena.inequality.gini`).

All functions are pure and vectorised: an allocation is ``(n, R)`` or a stack ``(B, n, R)``.

Need satisfaction of individual ``i`` over the resources it needs ``N_i = {r : need[i, r] > 0}``
(the problem's ``cnss`` form, :data:`~fairarena.allocation.problem.CNSS_FORMS`):

* ``indicator`` (default, the paper's): ``sat[i, r] = 1`` if ``x[i, r] >= threshold[i, r]`` else 0, with
  ``threshold[i, r] = min(cnss_minimum[r], need[i, r])`` (the clinical minimum, default one unit);
* ``fractional``: ``sat[i, r] = min(1, x[i, r] / need[i, r])``;

and ``CNSS_i = mean_{r in N_i} sat[i, r]``. The metrics (:data:`METRICS`, in :data:`METRIC_KEYS` order):

* ``esg = sum_i s_i CNSS_i``            (utilitarian,  max: higher is better)
* ``rmg = min_i CNSS_i``                (Rawlsian,     max)
* ``var = population variance of CNSS`` (libertarian column of the paper's Table 2, min)
* ``dw_esg = sum_i w_i s_i CNSS_i``     (prioritarian, max)
* ``vwci = sum_i v_i CNSS_i``           (care ethics,  max)
* ``gini`` = Gini of the problem's ``gini_resource`` amounts (nursing hours): the paper's Gini
  (its Appendix C) and the Gini column of its Table 2 (min). **Undefined (NaN) when nobody receives
  any of that resource**: the Gini of an all-zero distribution is 0/0, not perfect equality
* ``gini_cnss`` = Gini of CNSS: what the egalitarian optimum minimises (min); 0 when every CNSS is 0
  (the value the egalitarian objective and the aggregation utilities work with)

:func:`compute_metrics` also reports ``unused``: the capacity left over per resource.

Reference: Chaki, Gourru & Velcin, "Beyond Arrow's Impossibility: Fairness as an Emergent Property of
Multi-Agent Collaboration", arXiv 2604.13705 (2026), Appendix C.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal

import numpy as np

from fairarena.allocation.problem import CNSS_FORMS, AllocationProblem, check_feasibility, is_feasible, waste
from fairarena.errors import InputError
from fairarena.inequality import gini  # the one Gini (re-exported here: fairarena.allocation.gini)
from fairarena.registry import Registry

__all__ = [
    "Metric",
    "METRICS",
    "METRIC_KEYS",
    "defined_metrics",
    "MILP_FORMS",
    "metrics_with_form",
    "need_satisfaction",
    "gini",
    "compute_metrics",
    "compute_metrics_batch",
    "unused_capacity",
]

INDICATOR_ATOL = 1e-9


def need_satisfaction(problem: AllocationProblem, x: np.ndarray, cnss: str | None = None) -> np.ndarray:
    """CNSS for an allocation ``(n, R)`` -> ``(n,)`` or a stack ``(B, n, R)`` -> ``(B, n)``.

    ``cnss`` overrides the problem's form (``"indicator"`` or ``"fractional"``).
    """
    form = problem.cnss if cnss is None else cnss
    x = np.asarray(x, dtype=float)
    if form == "indicator":
        sat = (x >= problem.threshold - INDICATOR_ATOL) & problem.needed
        return sat.sum(axis=-1) / problem.n_needed
    if form != "fractional":
        raise InputError("cnss", form, f"one of {list(CNSS_FORMS)}")
    need = problem.need
    ratio = np.divide(x, need, out=np.zeros(np.broadcast_shapes(x.shape, need.shape)), where=problem.needed)
    return np.minimum(ratio, 1.0).sum(axis=-1) / problem.n_needed


def unused_capacity(problem: AllocationProblem, x: np.ndarray) -> dict[str, float]:
    """Capacity left over per resource, ``max(0, capacity - total)`` (0 where a total exceeds it)."""
    x = np.asarray(x, dtype=float)
    left = np.maximum(problem.capacity - np.where(np.isfinite(x), x, 0.0).sum(axis=-2), 0.0)
    return {res: float(left[r]) for r, res in enumerate(problem.resources)}


#: how an exact allocation MILP models a metric (:attr:`Metric.milp`)
MILP_FORMS: dict[str, str] = {
    "linear": "a weighted sum of CNSS, sum_i weights_i CNSS_i (an objective or a row)",
    "min": "the minimum CNSS (a variable below every CNSS, maximised)",
    "gini": "a Gini coefficient: linear as a bound (sum_{i<j} d_ij <= g n sum_i v_i), minimised by Dinkelbach's method",
    "": "no linear form (a convex quadratic: tangent cuts, or sampled)",
}


@dataclass(frozen=True)
class Metric:
    """One allocation metric: key, display label, direction, formula and the batched function
    ``fn(problem, x (B, n, R), cnss (B, n)) -> (B,)``; ``milp`` is its form in an exact MILP
    (:data:`MILP_FORMS`) and ``weights(problem)`` the CNSS weights of a ``"linear"`` one (the metric is
    ``cnss @ weights(problem)``): the one place the frameworks' optima, the feasible-set rules and the
    conflict audit read a metric's linear form from (:meth:`fairarena.allocation.milp.AllocationMILP.metric_expr`)."""

    key: str
    label: str
    direction: Literal["max", "min"]
    formula: str
    fn: Callable[[AllocationProblem, np.ndarray, np.ndarray], np.ndarray]
    milp: str = ""
    weights: Callable[[AllocationProblem], np.ndarray] | None = None
    #: the optional problem fields it reads (welfare data, ``gini_resource``): a problem without one of them
    #: has no value of this metric (:func:`defined_metrics`)
    needs: tuple[str, ...] = ()

    def better(self, a: float, b: float) -> bool:
        """True when value ``a`` is strictly better than ``b``."""
        return a > b if self.direction == "max" else a < b


def _linear(key: str, label: str, formula: str, weights: Callable[[AllocationProblem], np.ndarray],
            needs: tuple[str, ...]) -> Metric:
    """A maximised weighted sum of CNSS: its value and its MILP form from the one ``weights``."""
    return Metric(key, label, "max", formula, lambda p, x, c: c @ weights(p), "linear", weights, needs)


METRICS: Registry[Metric] = Registry("metric")
for _m in (
    _linear("esg", "ESG", "sum_i s_i CNSS_i", lambda p: p.welfare("survival"), ("survival",)),
    Metric("rmg", "RMG", "max", "min_i CNSS_i", lambda p, x, c: c.min(axis=-1), "min"),
    Metric("var", "Var", "min", "population variance of CNSS", lambda p, x, c: c.var(axis=-1)),
    _linear("dw_esg", "DW-ESG", "sum_i w_i s_i CNSS_i", lambda p: p.welfare("disadvantage") * p.welfare("survival"),
            ("disadvantage", "survival")),
    _linear("vwci", "VWCI", "sum_i v_i CNSS_i", lambda p: p.welfare("vulnerability"), ("vulnerability",)),
    Metric("gini", "Gini", "min", "Gini of the gini_resource amounts (nursing hours; the paper's); "
           "undefined (NaN) when nobody receives that resource",
           lambda p, x, c: np.asarray(gini(x[..., p.gini_index], empty=np.nan)), "gini", needs=("gini_resource",)),
    Metric("gini_cnss", "Gini(CNSS)", "min", "Gini of CNSS (the egalitarian objective)",
           lambda p, x, c: np.asarray(gini(c)), "gini"),
):
    METRICS.add(_m.key, _m, title=_m.label, description=_m.formula, direction=_m.direction, milp=_m.milp)


def metrics_with_form(*forms: str) -> tuple[str, ...]:
    """The metric keys whose MILP form (:attr:`Metric.milp`) is one of ``forms``, in registry order."""
    return METRICS.names(where=lambda e: e.obj.milp in forms)


METRIC_KEYS: tuple[str, ...] = tuple(METRICS)


def defined_metrics(problem: AllocationProblem) -> tuple[str, ...]:
    """The metric keys ``problem`` has the data for, in registry order: every metric on a triage cohort; on a
    generic problem (no welfare data, no Gini resource) the ones of need satisfaction alone (``rmg``,
    ``var``, ``gini_cnss``)."""
    return tuple(k for k, m in METRICS.pairs() if all(getattr(problem, f) is not None for f in m.needs))


def compute_metrics_batch(problem: AllocationProblem, x: np.ndarray, *, cnss: str | None = None,
                          keys: Any = None) -> dict[str, np.ndarray]:
    """Metrics for a stack of allocations ``(B, n, R)``: each key of :data:`METRICS` (or only ``keys``)
    maps to a ``(B,)`` array, ``cnss`` to ``(B, n)``, ``feasible`` to ``(B,)`` bools. One pass, no Python
    loop over B. A metric that reads welfare data the problem lacks refuses it (InputError naming the
    field): ``keys`` asks only for the metrics a caller needs (e.g. ``rmg`` of any allocation problem)."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 3 or x.shape[1:] != (problem.n, problem.n_resources):
        raise InputError("allocations", x.shape, f"shape (B, {problem.n}, {problem.n_resources})")
    c = need_satisfaction(problem, x, cnss)
    wanted = METRICS.pairs() if keys is None else [(k, METRICS.get(k)) for k in keys]
    out: dict[str, np.ndarray] = {k: np.asarray(m.fn(problem, x, c)) for k, m in wanted}
    out["cnss"] = c
    out["feasible"] = np.asarray(is_feasible(problem, x))
    return out


def compute_metrics(problem: AllocationProblem, x: np.ndarray, *, cnss: str | None = None,
                    keys: Any = None) -> dict[str, Any]:
    """Every metric of one allocation (or only ``keys``, e.g. :func:`defined_metrics`), plus ``cnss``,
    ``feasible``, ``violations``, ``waste`` and ``unused`` (capacity left over per resource, every resource
    listed).

    The one allocation-metrics function of the package (triage, the arena and the negotiator call
    it). An infeasible allocation is scored as it is; ``violations`` spells out what is wrong.
    ``gini`` is NaN (undefined) when nobody receives the Gini's resource.
    ``cnss`` overrides the problem's need-satisfaction form.
    """
    x = np.asarray(x, dtype=float)
    batch = compute_metrics_batch(problem, x[None], cnss=cnss, keys=keys)
    out: dict[str, Any] = {k: float(batch[k][0]) for k in (METRIC_KEYS if keys is None else keys)}
    out["cnss"] = [float(v) for v in batch["cnss"][0]]
    violations = [] if bool(batch["feasible"][0]) else check_feasibility(problem, x)
    out["feasible"] = not violations
    out["violations"] = violations
    out["waste"] = waste(problem, x)
    out["unused"] = unused_capacity(problem, x)
    return out
