"""Hospital triage: cohorts of patients with built-in ethical tensions, six scarce resources, the six
framework metrics, framework-optimal allocations and the non-degeneracy check."""

from __future__ import annotations

from fairarena.lazy import lazy_exports

# name -> module; imported on first use, so importing the package loads nothing heavy
_LAZY = {
    "NonDegeneracyReport": "fairarena.allocation.nondegeneracy",
    "allocation_to_mapping": "fairarena.allocation.problem",
    "ARCHETYPES": "fairarena.triage.archetypes",
    "Archetype": "fairarena.triage.archetypes",
    "ConditionVariant": "fairarena.triage.archetypes",
    "load_archetypes": "fairarena.triage.archetypes",
    "sample_cohort": "fairarena.triage.archetypes",
    "DISADVANTAGE_RULES": "fairarena.triage.cohort",
    "SES_LEVELS": "fairarena.triage.cohort",
    "SURVIVAL_LABEL_SCHEMES": "fairarena.triage.cohort",
    "METRICS": "fairarena.triage.metrics",
    "CAPACITY_VARIANTS": "fairarena.triage.cohort",
    "INDIVISIBLE": "fairarena.triage.cohort",
    "RESOURCES": "fairarena.triage.cohort",
    "URGENCY_LEVELS": "fairarena.triage.cohort",
    "Cohort": "fairarena.triage.cohort",
    "Patient": "fairarena.triage.cohort",
    "TriageProblem": "fairarena.triage.cohort",
    "cohort_weights": "fairarena.triage.cohort",
    "load_cohort": "fairarena.triage.cohort",
    "parse_cohort": "fairarena.triage.cohort",
    "save_cohort": "fairarena.triage.cohort",
    "survival_label": "fairarena.triage.cohort",
    "FRAMEWORKS": "fairarena.triage.metrics",
    "METRIC_KEYS": "fairarena.triage.metrics",
    "Framework": "fairarena.triage.metrics",
    "as_allocation": "fairarena.triage.metrics",
    "check_feasibility": "fairarena.triage.metrics",
    "check_nondegenerate": "fairarena.triage.metrics",
    "compute_metrics": "fairarena.triage.metrics",
    "compute_metrics_batch": "fairarena.triage.metrics",
    "framework_optima": "fairarena.triage.metrics",
    "get_framework": "fairarena.triage.metrics",
    "load_allocation": "fairarena.triage.metrics",
    "optimal_allocation": "fairarena.triage.metrics",
}

__all__ = [
    "ARCHETYPES", "CAPACITY_VARIANTS", "INDIVISIBLE", "RESOURCES", "URGENCY_LEVELS", "Cohort", "Patient",
    "TriageProblem", "cohort_weights", "load_cohort", "parse_cohort", "sample_cohort", "save_cohort",
    "survival_label", "FRAMEWORKS", "METRIC_KEYS", "Framework", "as_allocation", "check_feasibility",
    "check_nondegenerate", "compute_metrics", "compute_metrics_batch", "framework_optima", "get_framework",
    "load_allocation", "optimal_allocation", "allocation_to_mapping", "NonDegeneracyReport", "METRICS",
    "Archetype", "ConditionVariant", "load_archetypes", "DISADVANTAGE_RULES", "SES_LEVELS",
    "SURVIVAL_LABEL_SCHEMES",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
