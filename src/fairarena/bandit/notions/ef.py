"""Equality fairness (``ef``): utilities as equal as possible, minimising the pairwise inequality
``2/(N(N-1)) sum_{i<j} (U_i - U_j)^2`` (``ef_kind='absolute'``: ``|U_i - U_j|``, the Gini mean
difference). Source: the procedural-fairness paper (equality notion)."""

from __future__ import annotations

import numpy as np

from fairarena.bandit import solver
from fairarena.bandit.notions.batching import (
    clean_simplex,
    split_live,
    stack_utilities,
    uniform_policy,
    utilitarian_tie_break,
)
from fairarena.bandit.notions.owa import owa_policy
from fairarena.bandit.notions.registry import register
from fairarena.bandit.vocabulary import BUILTIN_NOTIONS
from fairarena.bandit.problem import inequality


def ef_value(mus, ps, o):
    return 0.0 - inequality(stack_utilities(mus, ps), o.ef_kind)


def ef_score(v: np.ndarray, opt: np.ndarray) -> np.ndarray:
    """``1 - (I - I*)`` clipped to [0, 1] (the unnormalised difference; see docs/reproduction.md)."""
    return np.clip(1.0 - (opt - v), 0.0, 1.0)


@register("ef", **BUILTIN_NOTIONS["ef"], value=ef_value, score=ef_score)
def ef_policy(mus, o):
    b, n, k = mus.shape
    if n == 1:  # no inequality at all: every policy is equally fair
        from fairarena.bandit.notions.uf import uf_policy  # (imported here: uf registers after ef)

        return uf_policy(mus, o) if o.tie_break == "utilitarian" else uniform_policy(b, k, split_live(mus)[1])
    if o.ef_kind == "absolute":
        c = 2.0 / (n * (n - 1))
        w = c * (n + 1 - 2 * np.arange(1, n + 1))
        return owa_policy(mus, w)
    mus, live = split_live(mus)
    # I(p) = p^T Q p with Q = 2/(N(N-1)) mu^T (N I - 1 1^T) mu
    cm = mus - mus.mean(axis=1, keepdims=True)  # centred utilities per arm: C mu
    Q = (2.0 / (n - 1)) * np.einsum("bik,bil->bkl", cm, cm)
    res = solver.barrier_solve(solver.QuadraticObjective(Q), uniform_policy(b, k, live), k, live=live, gap=1e-12,
                               engine=solver.engine_for(b, n, k))
    p = res.y[:, :k]
    if o.tie_break == "utilitarian":
        # every minimiser has the same centred utility vector C mu p
        p = utilitarian_tie_break(mus, p, cm)
    return clean_simplex(p)
