"""Generic multi-resource allocation: problems, need-satisfaction metrics, framework registry,
exact framework-optimal allocations (HiGHS MILPs) and the non-degeneracy check."""

from __future__ import annotations

from fairarena.lazy import lazy_exports

# name -> module; imported on first use, so importing the package loads nothing heavy
_LAZY = {
    "CakeExample": "fairarena.allocation.nondegeneracy",
    "NonDegeneracyReport": "fairarena.allocation.nondegeneracy",
    "cake_division_example": "fairarena.allocation.nondegeneracy",
    "check_nondegenerate": "fairarena.allocation.nondegeneracy",
    "framework_losses": "fairarena.allocation.nondegeneracy",
    "solve_cake": "fairarena.allocation.nondegeneracy",
    "entitlement_allocation": "fairarena.allocation.optimal",
    "framework_optima": "fairarena.allocation.optimal",
    "optimal_allocation": "fairarena.allocation.optimal",
    "AllocationProblem": "fairarena.allocation.problem",
    "allocation_from_mapping": "fairarena.allocation.problem",
    "allocation_to_mapping": "fairarena.allocation.problem",
    "check_feasibility": "fairarena.allocation.problem",
    "is_feasible": "fairarena.allocation.problem",
    "waste": "fairarena.allocation.problem",
    "FRAMEWORKS": "fairarena.allocation.welfare",
    "METRIC_KEYS": "fairarena.allocation.welfare",
    "Framework": "fairarena.allocation.welfare",
    "compute_metrics": "fairarena.allocation.welfare",
    "compute_metrics_batch": "fairarena.allocation.welfare",
    "get_framework": "fairarena.allocation.welfare",
    "gini": "fairarena.allocation.welfare",
    "need_satisfaction": "fairarena.allocation.welfare",
}

__all__ = [
    "AllocationProblem", "allocation_from_mapping", "allocation_to_mapping", "check_feasibility",
    "is_feasible", "waste", "FRAMEWORKS", "METRIC_KEYS", "Framework", "compute_metrics",
    "compute_metrics_batch", "get_framework", "gini", "need_satisfaction", "optimal_allocation",
    "framework_optima", "entitlement_allocation", "check_nondegenerate", "NonDegeneracyReport",
    "framework_losses", "CakeExample", "cake_division_example", "solve_cake", "CNSS_FORMS", "DEFAULT_CNSS",
    "METRICS", "Metric", "AllocationMILP", "InfeasibleMILP", "add_exprs",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
