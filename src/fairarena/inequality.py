"""The Gini coefficient: the one implementation every layer uses (allocation metrics, the tourism
exposure Gini, the bandit ``ggi`` notion's ``gini`` reading, stakeholder evaluation).

Numpy only and domain-free, so the bandit core, the allocation metrics and the domains can all import
it without importing each other.

For values ``v_1..v_n`` with a positive total, sorted ascending ``v_(1) <= ... <= v_(n)``::

    G(v) = sum_i (2i - n - 1) v_(i) / (n sum_i v_i)
         = sum_{i<j} |v_i - v_j| / (n sum_i v_i)          (the mean absolute difference over 2 x mean)

0 for equal values, ``(n - 1) / n`` when one entry holds everything. Where the total is not positive
(all zeros, no values, or negatives outweighing positives) the ratio is undefined and ``empty`` is
returned (0 by default; ``nan`` where the caller reports it as undefined).
"""

from __future__ import annotations

import numpy as np

__all__ = ["gini"]


def gini(values: np.ndarray, *, empty: float = 0.0) -> np.ndarray | float:
    """Gini over the last axis: ``sum_i (2i - n - 1) x_(i) / (n sum_i x_i)`` (module doc).

    One vector gives a float, a stack ``(..., n)`` an array ``(...)``. ``empty`` is the value where the
    total is not positive (the formula's 0/0): 0 by default (objectives and utilities), ``nan`` for
    the reported resource Gini of the allocation metrics (undefined)."""
    v = np.sort(np.asarray(values, dtype=float), axis=-1)
    n = v.shape[-1]
    coef = 2.0 * np.arange(1, n + 1) - n - 1.0
    num = v @ coef
    den = n * v.sum(axis=-1)
    g = np.divide(num, den, out=np.full(np.shape(num), float(empty)), where=den > 0)
    return float(g) if np.ndim(g) == 0 else g
