"""Multiple-comparison correction over a family of p-values (Holm's step-down; identity as "none").

Holm (1979), "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6:65-70:
sort the m p-values ascending, p_(1) <= ... <= p_(m); the adjusted value of p_(k) is
``max_{j <= k} min(1, (m - j + 1) p_(j))``. Rejecting where the adjusted p is below alpha controls the
family-wise error rate at alpha under any dependence. NaN p-values (cells with nothing to test) are
not members of the family: they stay NaN and do not count in m.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from fairarena.registry import Registry

CorrectionFn = Callable[[np.ndarray], np.ndarray]
CORRECTIONS: Registry[CorrectionFn] = Registry("correction", field="correction")


@CORRECTIONS.register("holm", title="Holm step-down", citation="Holm (1979), Scand. J. Statist. 6:65-70",
                      description="family-wise error rate control under any dependence")
def holm(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values, same order as the input; NaN entries stay NaN and are not counted."""
    p = np.asarray(pvalues, dtype=float).ravel()
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled)
    return out


@CORRECTIONS.register("none", title="no correction", description="adjusted p = raw p")
def no_correction(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    return np.asarray(pvalues, dtype=float).ravel().copy()
