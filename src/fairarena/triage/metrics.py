"""Triage metrics and framework optima on cohorts: thin wrappers over :mod:`fairarena.allocation`
that accept a :class:`~fairarena.triage.cohort.Cohort` or a problem, and allocations as arrays or as
``{patient_id: {resource: amount}}`` mappings (the allocation file format)."""

from __future__ import annotations

import os
from typing import Any, Mapping, Union

import numpy as np

from fairarena.allocation import frameworks, metrics, nondegeneracy, problem as allocation_problem
from fairarena.allocation.frameworks import FRAMEWORKS, Framework, get_framework
from fairarena.allocation.metrics import METRIC_KEYS, METRICS
from fairarena.allocation.problem import AllocationProblem, allocation_from_mapping, allocation_to_mapping
from fairarena.errors import InputError
from fairarena.triage.cohort import Cohort, as_problem, read_json

__all__ = [
    "FRAMEWORKS",
    "METRIC_KEYS",
    "METRICS",
    "Framework",
    "get_framework",
    "as_allocation",
    "load_allocation",
    "allocation_to_mapping",
    "compute_metrics",
    "compute_metrics_batch",
    "check_feasibility",
    "optimal_allocation",
    "framework_optima",
    "check_nondegenerate",
]

ProblemLike = Union[Cohort, AllocationProblem]
AllocationLike = Union[np.ndarray, Mapping[str, Mapping[str, Any]]]


def as_allocation(problem: ProblemLike, allocation: AllocationLike) -> np.ndarray:
    """An ``(n, R)`` array from an array or an ``{id: {resource: amount}}`` mapping (validated);
    a mapping wrapped as ``{"allocation": {...}}`` (the file format) is accepted too."""
    p = as_problem(problem)
    if isinstance(allocation, Mapping):
        if set(allocation) == {"allocation"}:
            return allocation_from_mapping(p, allocation["allocation"])
        return allocation_from_mapping(p, allocation)
    x = np.asarray(allocation, dtype=float)
    if x.shape != (p.n, p.n_resources):
        raise InputError("allocation", x.shape, f"shape {(p.n, p.n_resources)}")
    return x


def load_allocation(path: str | os.PathLike[str], problem: ProblemLike) -> np.ndarray:
    """Read an allocation file ``{"allocation": {PATIENT_ID: {RESOURCE: amount}}}``."""
    data = read_json(path, "allocation")
    if not isinstance(data, Mapping) or "allocation" not in data:
        raise InputError("allocation", data if not isinstance(data, Mapping) else list(data),
                         'an object {"allocation": {PATIENT_ID: {RESOURCE: amount}}}')
    extra = set(data) - {"allocation", "meta"}
    if extra:
        raise InputError(sorted(extra)[0], data[sorted(extra)[0]], 'only the keys "allocation" and "meta"')
    return allocation_from_mapping(as_problem(problem), data["allocation"])


def compute_metrics(problem: ProblemLike, allocation: AllocationLike, *, cnss: str | None = None) -> dict[str, Any]:
    """``{"esg", "rmg", "var", "dw_esg", "vwci", "gini", "gini_cnss", "cnss", "feasible", "violations",
    "waste"}`` (:func:`fairarena.allocation.compute_metrics`); ``cnss`` overrides the CNSS form."""
    p = as_problem(problem)
    return metrics.compute_metrics(p, as_allocation(p, allocation), cnss=cnss)


def compute_metrics_batch(problem: ProblemLike, allocations: np.ndarray, *,
                          cnss: str | None = None) -> dict[str, np.ndarray]:
    """Vectorised metrics for a stack ``(B, n, R)``; see :func:`fairarena.allocation.compute_metrics_batch`."""
    return metrics.compute_metrics_batch(as_problem(problem), allocations, cnss=cnss)


def check_feasibility(problem: ProblemLike, allocation: AllocationLike) -> list[str]:
    """Violation strings such as ``"MedA total 50 exceeds capacity 45"`` (empty when feasible)."""
    p = as_problem(problem)
    return allocation_problem.check_feasibility(p, as_allocation(p, allocation))


def optimal_allocation(problem: ProblemLike, framework: str, **kwargs: Any) -> np.ndarray:
    """The allocation ``framework`` would choose alone (exact MILP; libertarian: entitlement rule)."""
    return frameworks.optimal_allocation(as_problem(problem), framework, **kwargs)


def framework_optima(problem: ProblemLike, names: list[str] | None = None, **kwargs: Any) -> dict[str, np.ndarray]:
    """``{framework: optimal allocation}`` (default: all six)."""
    return frameworks.framework_optima(as_problem(problem), names, **kwargs)


def check_nondegenerate(problem: ProblemLike, frameworks: list[str] | None = None,
                        **kwargs: Any) -> nondegeneracy.NonDegeneracyReport:
    """Exact non-degeneracy check with loss matrix and conflicting pairs."""
    return nondegeneracy.check_nondegenerate(as_problem(problem), frameworks, **kwargs)
