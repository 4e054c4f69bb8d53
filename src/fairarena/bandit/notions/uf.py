"""Utilitarian fairness (``uf``): maximise total utility; all mass on ``argmax_k sum_i mu[i, k]``
(lowest index on ties). Source: the procedural-fairness paper (utilitarian notion)."""

from __future__ import annotations

import numpy as np

from fairarena.bandit.notions.batching import split_live, stack_utilities
from fairarena.bandit.notions.registry import ratio_score, register
from fairarena.bandit.vocabulary import BUILTIN_NOTIONS


def uf_value(mus, ps, o):
    return stack_utilities(mus, ps).sum(axis=-1)


@register("uf", **BUILTIN_NOTIONS["uf"], value=uf_value, score=ratio_score)
def uf_policy(mus, o):
    b, n, k = mus.shape
    out = np.zeros((b, k))
    mus0, live = split_live(mus)
    col = mus0.sum(axis=1)
    if live is not None:
        col = np.where(live, col, -np.inf)
    out[np.arange(b), col.argmax(axis=1)] = 1.0
    return out
