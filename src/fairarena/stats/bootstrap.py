"""Percentile bootstrap confidence intervals of a mean, one sample or many at once.

The resampling scheme (one scheme, stated so a reader can reproduce it):

* generator: numpy's PCG64 through ``numpy.random.default_rng(seed)`` (default seed 42);
* a fresh generator per interval, so every interval is reproducible on its own and does not depend on
  which other cells were computed before it;
* the resampled indices are one draw ``rng.integers(0, n, size=(n_resamples, n))`` — the exact draw
  :func:`scipy.stats.bootstrap` makes for one sample with ``rng=default_rng(seed)``, so
  ``bootstrap_mean_ci`` equals ``scipy.stats.bootstrap(..., method="percentile")`` (pinned in a test);
* the interval is the percentile interval: the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of
  the resampled means, linear interpolation (numpy's default ``np.percentile`` method, also scipy's).

Because the index matrix depends only on ``(seed, n, n_resamples)``, every sample of the same size shares
it: :func:`bootstrap_means_ci` draws it once per distinct size and gets all resampled means of that size
as one matrix product ``X @ counts.T / n`` (numpy's einsum loop) (``counts[b, j]`` = times observation ``j`` is drawn in
resample ``b``). A study's 200 cells therefore cost a handful of BLAS calls instead of 200 loops.

Sharing the index matrix between the two sides of a paired comparison also makes the two intervals a
paired (cohort-resampling) bootstrap, which is the natural scheme for cohort-paired data.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from fairarena.errors import InputError

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 42
DEFAULT_LEVEL = 0.95
GENERATOR = "numpy PCG64 via numpy.random.default_rng(seed), one generator per interval"
CI_METHODS = ("percentile", "basic", "bca")


def _check(n_resamples: int, level: float) -> None:
    if int(n_resamples) != n_resamples or n_resamples < 1:
        raise InputError("n_resamples", n_resamples, "a positive integer")
    if not 0.0 < level < 1.0:
        raise InputError("level", level, "a confidence level strictly between 0 and 1")


def resample_counts(n: int, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``(n_resamples, n)`` counts: how often each observation appears in each resample."""
    return _counts(int(n), int(n_resamples), int(seed)).copy()


@functools.lru_cache(maxsize=16)
def _counts(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """:func:`resample_counts`, read-only and kept per ``(n, n_resamples, seed)``: a study's cells share a few
    sizes (one per number of cohorts), and each interval used to redraw and recount the same matrix. The
    counts are one ``bincount`` of the flattened ``resample * n + index`` (the same numbers as adding 1 at
    every drawn index, ``np.add.at``, which took 4x as long)."""
    idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    idx += (np.arange(n_resamples, dtype=idx.dtype) * n)[:, None]
    counts = np.bincount(idx.ravel(), minlength=n_resamples * n).reshape(n_resamples, n).astype(np.float64)
    counts.setflags(write=False)
    return counts


def bootstrap_mean_ci(x: Sequence[float] | np.ndarray, *, n_resamples: int = DEFAULT_RESAMPLES,
                      seed: int = DEFAULT_SEED, level: float = DEFAULT_LEVEL,
                      method: str = "percentile") -> tuple[float, float]:
    """Bootstrap interval of the mean of ``x`` (NaN, NaN for an empty sample)."""
    lo, hi = bootstrap_means_ci([np.asarray(x, dtype=float)], n_resamples=n_resamples, seed=seed, level=level,
                                method=method)[0]
    return float(lo), float(hi)


def bootstrap_means_ci(samples: Sequence[Sequence[float] | np.ndarray], *, n_resamples: int = DEFAULT_RESAMPLES,
                       seed: int = DEFAULT_SEED, level: float = DEFAULT_LEVEL, method: str = "percentile") -> np.ndarray:
    """Bootstrap intervals of the means of many samples (of any sizes), vectorised.

    Returns an array of shape ``(len(samples), 2)`` (lower, upper); each row equals
    :func:`bootstrap_mean_ci` of that sample alone (same generator and seed per interval). Empty
    samples give NaN. Samples of equal size are grouped and resampled with one matrix product.

    ``method``: ``"percentile"`` (default), ``"basic"`` (``2 mean - `` the reflected percentiles), both
    vectorised on the same resamples; ``"bca"`` (bias-corrected and accelerated) delegates each sample
    to :func:`scipy.stats.bootstrap` with the same generator and seed (slower; undefined for constant
    samples, which get the point interval).
    """
    _check(n_resamples, level)
    if method not in CI_METHODS:
        raise InputError("ci_method", method, "one of " + ", ".join(CI_METHODS))
    if method == "bca":
        return _bca(samples, n_resamples, seed, level)
    arrays = [np.asarray(s, dtype=float).ravel() for s in samples]
    out = np.full((len(arrays), 2), np.nan)
    q = [100 * (1 - level) / 2, 100 * (1 + level) / 2]
    by_size: dict[int, list[int]] = {}
    for i, a in enumerate(arrays):
        if a.size:
            by_size.setdefault(a.size, []).append(i)
    for n, rows in by_size.items():
        counts = _counts(n, int(n_resamples), int(seed))
        X = np.stack([arrays[i] for i in rows])                    # (m, n)
        # einsum's own C loop, not BLAS: a multi-threaded BLAS on a busy machine is 10-20x slower here
        means = np.einsum("ij,bj->ib", X, counts) / n              # (m, B)
        # a resampled mean lies in [min, max]; clip the last-bit rounding of the matrix product
        means = np.clip(means, X.min(axis=1, keepdims=True), X.max(axis=1, keepdims=True))
        ci = np.percentile(means, q, axis=1).T
        if method == "basic":
            centre = X.mean(axis=1, keepdims=True)
            ci = 2 * centre - ci[:, ::-1]
        out[rows] = ci
    return out


def _bca(samples: Sequence[Sequence[float] | np.ndarray], n_resamples: int, seed: int, level: float) -> np.ndarray:
    from scipy import stats as sps

    out = np.full((len(samples), 2), np.nan)
    for i, s in enumerate(samples):
        a = np.asarray(s, dtype=float).ravel()
        if a.size == 0:
            continue
        if np.ptp(a) == 0.0:
            out[i] = a[0]
            continue
        ci = sps.bootstrap((a,), np.mean, n_resamples=n_resamples, confidence_level=level, method="BCa",
                           rng=np.random.default_rng(seed), vectorized=True).confidence_interval
        out[i] = ci.low, ci.high
    return out
