"""Paired statistics for studies: tests, effect sizes, bootstrap intervals, multiple comparisons.

Pure functions on numpy arrays (scipy for the tests); no I/O, pandas only in the optional frame helpers.
The protocol and its choices are documented in :mod:`fairarena.stats.paired` and ``docs/study.md``.

Names are imported lazily (:mod:`fairarena.lazy`): importing this package, or a module of it that needs no
test (:mod:`fairarena.stats.transcripts`, used by a study's workers), loads no scipy.
"""

from __future__ import annotations

from fairarena.lazy import lazy_exports

_BOOTSTRAP = ("CI_METHODS", "DEFAULT_LEVEL", "DEFAULT_RESAMPLES", "DEFAULT_SEED", "GENERATOR", "bootstrap_mean_ci",
              "bootstrap_means_ci", "resample_counts")
_MULTIPLE = ("CORRECTIONS", "holm")
_PAIRED = ("ALPHA", "TEST_CHOICES", "TESTS", "ZERO_METHODS", "PairedResult", "better_word", "canonical_direction",
           "check_options", "cohens_d_pooled", "cohens_dz", "compare_pairs", "direction_sign", "paired_comparison",
           "round_differences", "select_pairs")
_STUDY = ("FAMILIES", "CellResult", "DebateRecord", "StudyStats", "compare_frame", "compare_table",
          "records_from_frame")
_LAZY = {**{n: "fairarena.stats.bootstrap" for n in _BOOTSTRAP}, **{n: "fairarena.stats.multiple" for n in _MULTIPLE},
         **{n: "fairarena.stats.paired" for n in _PAIRED}, **{n: "fairarena.stats.study" for n in _STUDY}}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
