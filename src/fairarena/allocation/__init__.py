"""Generic multi-resource allocation: problems, need-satisfaction metrics, framework registry,
exact framework-optimal allocations (HiGHS MILPs) and the non-degeneracy check."""

from fairarena.allocation.nondegeneracy import (
    CakeExample,
    NonDegeneracyReport,
    cake_division_example,
    check_nondegenerate,
    framework_losses,
    solve_cake,
)
from fairarena.allocation.optimal import entitlement_allocation, framework_optima, optimal_allocation
from fairarena.allocation.problem import (
    AllocationProblem,
    allocation_from_mapping,
    allocation_to_mapping,
    check_feasibility,
    is_feasible,
    waste,
)
from fairarena.allocation.welfare import (
    FRAMEWORKS,
    METRIC_KEYS,
    Framework,
    compute_metrics,
    compute_metrics_batch,
    get_framework,
    gini,
    need_satisfaction,
)

__all__ = [
    "AllocationProblem", "allocation_from_mapping", "allocation_to_mapping", "check_feasibility",
    "is_feasible", "waste", "FRAMEWORKS", "METRIC_KEYS", "Framework", "compute_metrics",
    "compute_metrics_batch", "get_framework", "gini", "need_satisfaction", "optimal_allocation",
    "framework_optima", "entitlement_allocation", "check_nondegenerate", "NonDegeneracyReport",
    "framework_losses", "CakeExample", "cake_division_example", "solve_cake",
]
