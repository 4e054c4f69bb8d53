"""Paired statistics for studies: tests, effect sizes, bootstrap intervals, multiple comparisons.

Pure functions on numpy arrays (scipy for the tests); no I/O, pandas only in the optional frame helpers.
The protocol and its choices are documented in :mod:`fairarena.stats.paired` and ``docs/study.md``.
"""

from fairarena.stats.bootstrap import (CI_METHODS, DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, GENERATOR,
                                       bootstrap_mean_ci, bootstrap_means_ci, resample_counts)
from fairarena.stats.multiple import CORRECTIONS, holm
from fairarena.stats.paired import (ALPHA, TEST_CHOICES, TESTS, ZERO_METHODS, PairedResult, better_word,
                                    canonical_direction, check_options, cohens_d_pooled, cohens_dz,
                                    compare_pairs, direction_sign,
                                    paired_comparison, round_differences, select_pairs)
from fairarena.stats.study import (FAMILIES, CellResult, DebateRecord, StudyStats, compare_frame,
                                   compare_table, records_from_frame)

__all__ = [
    "ALPHA", "CI_METHODS", "CORRECTIONS", "DEFAULT_LEVEL", "DEFAULT_RESAMPLES", "DEFAULT_SEED", "FAMILIES", "GENERATOR",
    "TESTS", "TEST_CHOICES", "ZERO_METHODS", "CellResult", "DebateRecord", "PairedResult", "StudyStats",
    "better_word", "bootstrap_mean_ci", "bootstrap_means_ci", "canonical_direction", "check_options",
    "cohens_d_pooled", "cohens_dz",
    "compare_frame", "compare_pairs", "compare_table", "direction_sign", "holm", "paired_comparison",
    "records_from_frame", "resample_counts", "round_differences", "select_pairs",
]
