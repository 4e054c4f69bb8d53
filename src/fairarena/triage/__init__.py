"""Hospital triage: cohorts of patients with built-in ethical tensions, six scarce resources, the six
framework metrics, framework-optimal allocations and the non-degeneracy check."""

from fairarena.allocation.nondegeneracy import NonDegeneracyReport
from fairarena.allocation.problem import allocation_to_mapping
from fairarena.triage.cohort import (
    ARCHETYPES,
    CAPACITY_VARIANTS,
    INDIVISIBLE,
    RESOURCES,
    URGENCY_LEVELS,
    Cohort,
    Patient,
    TriageProblem,
    cohort_weights,
    load_cohort,
    parse_cohort,
    sample_cohort,
    save_cohort,
    survival_label,
)
from fairarena.triage.metrics import (
    FRAMEWORKS,
    METRIC_KEYS,
    Framework,
    as_allocation,
    check_feasibility,
    check_nondegenerate,
    compute_metrics,
    compute_metrics_batch,
    framework_optima,
    get_framework,
    load_allocation,
    optimal_allocation,
)

__all__ = [
    "ARCHETYPES", "CAPACITY_VARIANTS", "INDIVISIBLE", "RESOURCES", "URGENCY_LEVELS", "Cohort", "Patient",
    "TriageProblem", "cohort_weights", "load_cohort", "parse_cohort", "sample_cohort", "save_cohort",
    "survival_label", "FRAMEWORKS", "METRIC_KEYS", "Framework", "as_allocation", "check_feasibility",
    "check_nondegenerate", "compute_metrics", "compute_metrics_batch", "framework_optima", "get_framework",
    "load_allocation", "optimal_allocation", "allocation_to_mapping", "NonDegeneracyReport",
]
