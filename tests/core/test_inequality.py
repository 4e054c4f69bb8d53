"""The one Gini coefficient (fairarena.inequality.gini) against the textbook definition, and the places
that used to carry their own copy now being that one function."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fairarena.inequality import gini


def slow_gini(values, empty=0.0):
    """Mean absolute difference over all ordered pairs divided by twice the mean, written out."""
    v = [float(a) for a in values]
    n = len(v)
    total = sum(v)
    if n == 0 or total <= 0:
        return empty
    mad = sum(abs(a - b) for a, b in itertools.product(v, v)) / n**2
    return mad / (2 * total / n)


def _cases():
    rng = np.random.default_rng(21)
    yield np.zeros(5)
    yield np.zeros(1)
    yield np.array([3.0])
    yield np.array([0.0, 0.0, 7.0])
    yield np.full(6, 0.25)
    yield np.array([])
    yield np.array([-1.0, 2.0, 3.0])          # negatives with a positive total: the same formula
    yield np.array([-3.0, 1.0])                # total <= 0: undefined, the 'empty' value
    for n in (1, 2, 3, 5, 8, 13, 40):
        yield rng.random(n)
        yield rng.integers(0, 4, n).astype(float)                     # ties and zeros
        yield rng.exponential(size=n) * (rng.random(n) < 0.5)          # sparse


@pytest.mark.parametrize("k", range(len(list(_cases()))))
def test_gini_matches_the_pairwise_definition(k):
    v = list(_cases())[k]
    assert gini(v) == pytest.approx(slow_gini(v), abs=1e-12)
    got = gini(v, empty=np.nan)
    want = slow_gini(v, empty=np.nan)
    assert (np.isnan(got) and np.isnan(want)) or got == pytest.approx(want, abs=1e-12)


def test_known_values():
    assert gini(np.array([1.0, 1.0, 1.0])) == 0.0
    assert gini(np.array([0.0, 0.0, 0.0, 1.0])) == pytest.approx(3 / 4)   # (n - 1) / n
    assert gini(np.array([1.0, 3.0])) == pytest.approx(0.25)
    assert gini(np.zeros(4)) == 0.0 and np.isnan(gini(np.zeros(4), empty=np.nan))


def test_stacks_are_row_by_row():
    rng = np.random.default_rng(3)
    X = rng.random((4, 3, 6)) * (rng.random((4, 3, 6)) < 0.7)
    X[0, 0] = 0.0
    G = gini(X)
    assert G.shape == (4, 3)
    for i, j in np.ndindex(4, 3):
        assert G[i, j] == pytest.approx(gini(X[i, j]), abs=1e-15)


def test_every_former_copy_is_the_one_function():
    from fairarena.allocation import metrics
    from fairarena.bandit.notions import gini_coefficient
    from fairarena.tourism import metrics as tourism_metrics

    assert metrics.gini is gini and tourism_metrics.gini is gini
    rng = np.random.default_rng(5)
    U = rng.random((7, 5))
    assert np.array_equal(gini_coefficient(U), gini(U))
