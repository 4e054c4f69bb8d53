"""Nash social welfare (``nsw``): maximise ``sum_i log U_i(p)`` (agents with an all-zero reward row
are left out). Source: Kaneko & Nakamura (1979); the offline target of NashUCB (Hossain, Micha &
Shah, NeurIPS 2021)."""

from __future__ import annotations

import numpy as np

from fairarena.bandit import solver
from fairarena.bandit.notions.batching import clean_simplex, split_live, stack_utilities, uniform_policy
from fairarena.bandit.notions.registry import ratio_score, register
from fairarena.bandit.vocabulary import BUILTIN_NOTIONS


def nsw_value(mus, ps, o):
    """Geometric mean of utilities (0 if any agent gets 0)."""
    u = stack_utilities(mus, ps)
    with np.errstate(divide="ignore"):
        return np.exp(np.log(np.maximum(u, 0.0)).mean(axis=-1))


@register("nsw", **BUILTIN_NOTIONS["nsw"], value=nsw_value, score=ratio_score)
def nsw_policy(mus, o):
    b, n, k = mus.shape
    mus, live = split_live(mus)
    w = (mus.max(axis=2) > 0).astype(float)
    res = solver.barrier_solve(solver.NegLogSumObjective(mus, w), uniform_policy(b, k, live), k, live=live,
                               gap=1e-11, engine=solver.engine_for(b, n, k))
    return clean_simplex(res.y[:, :k])
