"""HiGHS "Solve error" (status 4) after presolve: the MILP is solved again without presolve.

Standard cohort 44's council under HiGHS's default search fails with status 4 in the max-min stage of
ks-feasible (HiGHS's repair of a post-presolve solution); the retry without presolve must give the answer
the project's search settings give."""

from __future__ import annotations

import numpy as np


def test_status_4_is_retried_without_presolve(monkeypatch):
    import fairarena.aggregation.feasible as feasible
    from fairarena.aggregation.council import council_profile
    from fairarena.aggregation.rules import aggregate
    from fairarena.triage.archetypes import sample_cohort

    prof = council_profile(sample_cohort(44, "standard").to_problem())
    ours = aggregate(prof, "ks-feasible").utilities
    monkeypatch.setattr(feasible, "HIGHS_OPTIONS", {})           # HiGHS's default search: status 4 first
    prof = council_profile(sample_cohort(44, "standard").to_problem())
    default = aggregate(prof, "ks-feasible").utilities
    assert np.allclose(default, ours, atol=1e-9)
    assert min(ours) > 0.8
