"""label_permutation_test draws its permutations in chunks: the same p as the one (B, k, m) draw of before."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.stats.noise import ROUND_DECIMALS, label_permutation_test


def one_draw_p(table: np.ndarray, n_permutations: int, seed: int) -> float:
    """The earlier implementation, kept as the reference: every permutation from one draw."""
    x = np.round(np.asarray(table, dtype=float), ROUND_DECIMALS)
    x = x[~np.isnan(x).any(axis=1)]
    k, m = x.shape
    thr = float(x.mean(axis=0).var()) - 1e-15
    rng = np.random.default_rng(seed)
    idx = np.argsort(rng.random((n_permutations, k, m)), axis=2)
    y = np.take_along_axis(np.broadcast_to(x, (n_permutations, k, m)), idx, axis=2)
    stats = y.mean(axis=1).var(axis=1)
    return float((1 + (stats >= thr).sum()) / (1 + n_permutations))


@pytest.mark.parametrize("k,m,B,seed", [(40, 6, 1000, 0), (167, 6, 600, 42), (9, 3, 777, 5), (25, 2, 1, 1)])
def test_chunked_draws_give_the_one_draw_p(k, m, B, seed):
    rng = np.random.default_rng(k * m + seed)
    table = rng.normal(size=(k, m)) + np.linspace(0, 0.3, m)   # a small real column effect
    table[0, 0] = np.nan                                        # rows with a NaN are dropped first
    obs, p = label_permutation_test(table, n_permutations=B, seed=seed)
    assert p == one_draw_p(table, B, seed)
    assert obs == pytest.approx(float(np.round(table[1:], ROUND_DECIMALS).mean(axis=0).var()))


def test_kept_permutations_serve_the_next_table_of_the_same_shape():
    from fairarena.stats import noise

    rng = np.random.default_rng(11)
    tables = [rng.normal(size=(30, 6)) + np.linspace(0, s, 6) for s in (0.0, 0.2, 0.5)]
    noise._permutations.cache_clear()
    got = [label_permutation_test(t, n_permutations=900, seed=4)[1] for t in tables]
    assert noise._permutations.cache_info().hits == 2          # drawn once, reused by the next two
    assert got == [one_draw_p(t, 900, 4) for t in tables]
    big = noise.PERM_CACHE_CELLS
    try:                                                         # past the cache's size: drawn on the fly
        noise.PERM_CACHE_CELLS = 10
        assert label_permutation_test(tables[1], n_permutations=900, seed=4)[1] == got[1]
    finally:
        noise.PERM_CACHE_CELLS = big
