"""The bootstrap's resample counts (one bincount, kept per size) against the obvious count of the same draw."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.stats.bootstrap import _counts, resample_counts


def slow_counts(n: int, n_resamples: int, seed: int) -> np.ndarray:
    idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    counts = np.zeros((n_resamples, n))
    for b in range(n_resamples):
        for j in idx[b]:
            counts[b, j] += 1
    return counts


@pytest.mark.parametrize("n,n_resamples,seed", [(1, 5, 0), (2, 50, 42), (7, 300, 3), (167, 40, 42)])
def test_counts_are_the_obvious_counts(n, n_resamples, seed):
    got = resample_counts(n, n_resamples, seed)
    assert np.array_equal(got, slow_counts(n, n_resamples, seed))
    assert got.dtype == np.float64 and (got.sum(axis=1) == n).all()


def test_the_shared_matrix_is_read_only_and_callers_get_a_copy():
    shared = _counts(9, 20, 1)
    assert not shared.flags.writeable
    mine = resample_counts(9, 20, 1)
    mine[0, 0] = -1                                   # a caller may write into its own copy
    assert _counts(9, 20, 1)[0, 0] != -1 and _counts(9, 20, 1) is shared
