"""Agents' utilities over allocations: one registry of objectives, normalised per agent.

An *objective* turns an allocation into one number per agent. Today every objective is an ethical
framework of :data:`fairarena.allocation.frameworks.FRAMEWORKS` (its metric and direction); the
registry is open so stakeholder objectives can be added without touching the rules.

Normalisation (``normalise="range"``, the default): an agent's utility of allocation ``x`` is

    u(x) = (m(x) - worst) / (best - worst)          for a metric to maximise,
    u(x) = (worst - m(x)) / (worst - best)          for a metric to minimise,

clipped to [0, 1], where ``best`` and ``worst`` are the best and worst values of the metric over the
problem's feasible set (:func:`utility_range`). So 1 is the agent's ideal and 0 its worst case, on every
problem; rules compare agents on one scale. When ``best == worst`` the agent is indifferent (u = 1).
``normalise="raw"`` keeps the metric itself, oriented so that higher is better (minimised metrics are
negated).

How ``best`` and ``worst`` are obtained (exact unless said otherwise):

* ESG, RMG, DW-ESG, VWCI (maximised, non-negative, 0 for the empty allocation, which is feasible):
  ``worst = 0``; ``best`` = the metric of the framework's exact optimum (its registry solver, a MILP).
* Gini of CNSS (egalitarian, minimised): ``best = 0`` (the empty allocation); ``worst = (n - 1) / n``,
  the largest Gini of n non-negative numbers, attained when exactly one patient is served, which is
  feasible whenever some patient's clinical minimum of some resource fits the capacity (else 0).
* Variance of CNSS (libertarian column of the paper, minimised): ``best = 0`` (the empty
  allocation); ``worst = floor(n/2) ceil(n/2) / n^2``, the largest variance of n numbers in [0, 1].
  This is an upper bound, not always attained on a given cohort (documented in docs/aggregation.md).
"""

from __future__ import annotations

from dataclasses import dataclass
import weakref
from typing import Literal

import numpy as np

from fairarena.allocation.frameworks import FRAMEWORKS
from fairarena.allocation.metrics import METRICS, compute_metrics_batch
from fairarena.allocation.problem import AllocationProblem
from fairarena.errors import InputError
from fairarena.registry import Registry

__all__ = ["Objective", "OBJECTIVES", "NORMALISATIONS", "utility_range", "utilities", "raw_values"]

#: the two utility scales
NORMALISATIONS: dict[str, str] = {
    "range": "(metric - worst) / (best - worst) over the feasible set, in [0, 1] (1 = the agent's ideal)",
    "raw": "the metric itself, oriented so that higher is better (minimised metrics negated)",
}


@dataclass(frozen=True)
class Objective:
    """An agent's objective: the allocation metric it cares about and the metric's direction.

    ``milp`` says how the feasible-set rules model the normalised utility: ``"linear"`` (a weighted sum
    of CNSS), ``"min"`` (the minimum CNSS), ``"gini"`` (Gini of CNSS: exact under the indicator CNSS, a binary grid under the fractional one),
    ``"var"`` (variance of CNSS: exact tangent rows under the indicator CNSS, cutting planes otherwise), or ``""`` (no form: the feasible-set rules refuse
    the objective, the candidate-set rules accept it); see :mod:`fairarena.aggregation.feasible`."""

    name: str
    metric: str
    direction: Literal["max", "min"]
    milp: str = ""


OBJECTIVES: Registry[Objective] = Registry("objective")
#: the two minimised metrics the feasible-set rules model (the Gini of CNSS exactly or on a grid, the
#: variance by tangents); the linear and max-min forms are the metric's own (:attr:`Metric.milp`)
_FEASIBLE_FORM = {"gini_cnss": "gini", "var": "var"}


def _milp_form(metric: str) -> str:
    form = METRICS.get(metric).milp
    return form if form in ("linear", "min") else _FEASIBLE_FORM.get(metric, "")


for _f in FRAMEWORKS.values():
    OBJECTIVES.add(_f.name, Objective(_f.name, _f.metric, _f.direction, _milp_form(_f.metric)),
                   title=_f.label, description=f"{_f.name} framework: {METRICS.entry(_f.metric).description} "
                   f"({'higher' if _f.direction == 'max' else 'lower'} is better)",
                   citation=FRAMEWORKS.entry(_f.name).citation, metric=_f.metric, direction=_f.direction)


def _range(problem: AllocationProblem, name: str) -> tuple[float, float]:
    obj = OBJECTIVES.get(name)
    n = problem.n
    if METRICS.get(obj.metric).milp in ("linear", "min"):   # maximised, non-negative, 0 when nobody is served
        solver = next(f for f in FRAMEWORKS.values() if f.metric == obj.metric).solve  # the metric's exact optimum
        best_x = solver(problem)
        best = float(compute_metrics_batch(problem, best_x[None], keys=[obj.metric])[obj.metric][0])
        return 0.0, best
    if obj.metric == "gini_cnss":
        fits = problem.needed & (problem.capacity[None, :] >= np.maximum(problem.threshold, 1e-12) - 1e-9)
        if problem.cnss == "fractional":
            fits = problem.needed & (problem.capacity[None, :] > 0)
        return (n - 1) / n if (n > 1 and fits.any()) else 0.0, 0.0
    if obj.metric == "var":
        return float((n // 2) * ((n + 1) // 2)) / n**2, 0.0
    raise InputError("objective", name, f"an objective with a known range (metric {obj.metric!r} has none)")


_CACHE: "weakref.WeakKeyDictionary[AllocationProblem, dict[str, tuple[float, float]]]" = weakref.WeakKeyDictionary()


def utility_range(problem: AllocationProblem, name: str) -> tuple[float, float]:
    """``(worst, best)`` metric values of objective ``name`` over the feasible set (see module doc).

    Cached per problem object (problems are immutable)."""
    per = _CACHE.setdefault(problem, {})
    if name not in per:
        per[name] = _range(problem, name)
    return per[name]


def raw_values(problem: AllocationProblem, names: list[str], xs: np.ndarray) -> np.ndarray:
    """Metric values ``(N, K)`` of ``K`` allocations ``xs (K, n, R)`` for agents with objectives ``names``."""
    metrics = [OBJECTIVES.get(nm).metric for nm in names]
    batch = compute_metrics_batch(problem, np.asarray(xs, dtype=float), keys=dict.fromkeys(metrics))
    return np.stack([np.asarray(batch[m], dtype=float) for m in metrics])


def utilities(problem: AllocationProblem, names: list[str], xs: np.ndarray, normalise: str = "range") -> np.ndarray:
    """Utilities ``(N, K)`` of ``K`` allocations for agents with objectives ``names`` (module doc)."""
    if normalise not in NORMALISATIONS:
        raise InputError("normalise", normalise, f"one of {', '.join(NORMALISATIONS)}")
    vals = raw_values(problem, names, xs)
    out = np.empty_like(vals)
    for a, nm in enumerate(names):
        obj = OBJECTIVES.get(nm)
        if normalise == "raw":
            out[a] = vals[a] if obj.direction == "max" else -vals[a]
            continue
        worst, best = utility_range(problem, nm)
        span = best - worst
        out[a] = 1.0 if abs(span) <= 1e-12 else np.clip((vals[a] - worst) / span, 0.0, 1.0)
    return out


def milp_scale(problem: AllocationProblem, name: str) -> float:
    """``1 / best`` for a maximised objective with worst 0 (the factor the MILP forms use)."""
    worst, best = utility_range(problem, name)
    return 0.0 if best - worst <= 1e-12 else 1.0 / (best - worst)

