"""Generalized Gini welfare (``ggi``).

Default (``ggi_kind='owa'``): maximise the generalized Gini social welfare ``sum_m w_m U_(m)``,
utilities ascending, ``w_m = 2^-(m-1)`` unless ``ggi_weights`` are given (Weymark 1981; GGI bandits:
Busa-Fekete, Szorenyi, Weng & Mannor, ICML 2017).

Alternative reading (``ggi_kind='gini'``): minimise the Gini coefficient of the utilities,
``G(U) = sum_{i<j} |U_i - U_j| / (N sum_i U_i)``. The procedural-fairness paper names its policy
"GGI" without giving weights in our copy, and its Table 1 row for it looks like an equality policy;
``docs/reproduction.md`` compares both readings on the full grid. ``G`` is a ratio of a convex
piecewise-linear function and a linear one, so its minimiser is one LP after the Charnes-Cooper
change of variables ``q = p / sum_i U_i(p)``; among the minimisers (often a whole face, e.g. every
policy with equal utilities) the one with the largest total utility is returned (a second LP). Its
value is ``1 - G`` (higher is better). Solved instance by instance with HiGHS.
"""

from __future__ import annotations

import numpy as np

from fairarena.bandit.notions.batching import split_live, stack_utilities
from fairarena.bandit.notions.owa import owa_lp, owa_policy, owa_value
from fairarena.bandit.notions.registry import ratio_score, register
from fairarena.bandit.vocabulary import BUILTIN_NOTIONS
from fairarena.errors import SolverError
from fairarena.inequality import gini


def gini_coefficient(u: np.ndarray) -> np.ndarray:
    """Gini coefficient of each row of utilities ``(..., N)``: ``sum_{i<j} |U_i - U_j| / (N sum U)``
    (0 for all-equal utilities; 0 where the total is 0). The one Gini, :func:`fairarena.inequality.gini`."""
    return np.asarray(gini(u))


def ggi_value(mus, ps, o):
    if o.ggi_kind == "gini":
        return 1.0 - gini_coefficient(stack_utilities(mus, ps))
    return owa_value(mus, ps, o.ggi_w(mus.shape[-2]))


def min_gini_policy(mu: np.ndarray, live: np.ndarray | None = None) -> np.ndarray:
    """The policy minimising the Gini coefficient of utilities for one instance ``(N, K)``, the most
    utilitarian among the minimisers (two HiGHS LPs)."""
    from scipy.optimize import linprog

    n, k = mu.shape
    live = np.ones(k, bool) if live is None else np.asarray(live, bool)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    npair = len(pairs)
    col = mu.sum(axis=0)  # total utility per arm
    if npair == 0 or not (col[live] > 0).any():
        p = np.zeros(k)
        p[int(np.argmax(np.where(live, col, -np.inf)))] = 1.0
        return p
    diff = np.array([mu[i] - mu[j] for i, j in pairs])  # (P, K)
    # stage 1 (Charnes-Cooper): variables (q (K), d (P)); min sum d / N, d >= +-(diff q), col . q = 1
    nv = k + npair
    a_ub = np.zeros((2 * npair, nv))
    a_ub[:npair, :k] = diff
    a_ub[npair:, :k] = -diff
    a_ub[:npair, k:] = -np.eye(npair)
    a_ub[npair:, k:] = -np.eye(npair)
    c = np.concatenate([np.zeros(k), np.full(npair, 1.0 / n)])
    a_eq = np.concatenate([col, np.zeros(npair)])[None]
    bounds = [(0, None) if lv else (0, 0) for lv in live] + [(0, None)] * npair
    r1 = linprog(c, A_ub=a_ub, b_ub=np.zeros(2 * npair), A_eq=a_eq, b_eq=[1.0], bounds=bounds, method="highs")
    if r1.status != 0:
        raise SolverError(f"Gini LP failed: {r1.message}")
    g_star = float(r1.fun)
    # stage 2: variables (p (K), d (P)); max col . p s.t. sum d / N - g* col . p <= slack, simplex
    slack_row = np.concatenate([-(g_star + 1e-9) * col, np.full(npair, 1.0 / n)])[None]
    a2 = np.vstack([a_ub, slack_row])
    b2 = np.concatenate([np.zeros(2 * npair), [1e-12]])
    eq2 = np.concatenate([np.ones(k), np.zeros(npair)])[None]
    r2 = linprog(np.concatenate([-col, np.zeros(npair)]), A_ub=a2, b_ub=b2, A_eq=eq2, b_eq=[1.0],
                 bounds=bounds, method="highs")
    if r2.status == 0:
        p = np.clip(r2.x[:k], 0.0, None)
    else:  # the tie-break LP is only a refinement: fall back to the stage-1 minimiser
        p = np.clip(r1.x[:k], 0.0, None)
    return p / p.sum()


def ggi_exact(mu: np.ndarray, o) -> np.ndarray:
    if o.ggi_kind == "gini":
        return min_gini_policy(mu)
    return owa_lp(mu, o.ggi_w(mu.shape[0]))


@register("ggi", **BUILTIN_NOTIONS["ggi"], value=ggi_value, score=ratio_score, exact=ggi_exact)
def ggi_policy(mus, o):
    if o.ggi_kind == "gini":
        mus0, live = split_live(mus)
        return np.stack([min_gini_policy(m, None if live is None else lv)
                         for m, lv in zip(mus0, live if live is not None else [None] * len(mus0))])
    return owa_policy(mus, o.ggi_w(mus.shape[1]))
