"""Maximin (``maximin``, Rawlsian welfare): maximise the utility of the worst-off agent; the OWA with
weights (1, 0, ..., 0). Also the exact leximin policy by a sequence of LPs. Source: Rawls (1971)."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairarena.bandit.notions.batching import stack_utilities
from fairarena.bandit.notions.owa import owa_lp, owa_policy
from fairarena.bandit.notions.registry import ratio_score, register
from fairarena.bandit.vocabulary import BUILTIN_NOTIONS
from fairarena.bandit.problem import validate_rewards


def maximin_weights(n: int) -> np.ndarray:
    w = np.zeros(n)
    w[0] = 1.0
    return w


@register("maximin", **BUILTIN_NOTIONS["maximin"],
          value=lambda mus, ps, o: stack_utilities(mus, ps).min(axis=-1), score=ratio_score,
          exact=lambda mu, o: owa_lp(mu, maximin_weights(mu.shape[0])))
def maximin_policy(mus, o):
    return owa_policy(mus, maximin_weights(mus.shape[1]))


def leximin_policy(mu: Any, tol: float = 1e-9) -> np.ndarray:
    """Leximin policy by the standard sequence of LPs (HiGHS): maximise the minimum utility, fix
    the agents that cannot do better, repeat. Exact; one instance at a time (cheap for N <= ~50)."""
    from scipy.optimize import linprog

    from fairarena.errors import SolverError

    mu = validate_rewards(mu)
    n, k = mu.shape
    fixed: dict[int, float] = {}
    p = np.full(k, 1.0 / k)
    while len(fixed) < n:
        free = [i for i in range(n) if i not in fixed]
        # variables (p, t): maximise t, U_i >= t (free), U_i >= level (fixed)
        c = np.zeros(k + 1)
        c[-1] = -1.0
        a_ub = [np.concatenate([-mu[i], [1.0]]) for i in free]
        b_ub = [0.0] * len(free)
        for i, lev in fixed.items():
            a_ub.append(np.concatenate([-mu[i], [0.0]]))
            b_ub.append(-lev + tol)
        a_eq = [np.concatenate([np.ones(k), [0.0]])]
        res = linprog(c, A_ub=np.array(a_ub), b_ub=b_ub, A_eq=a_eq, b_eq=[1.0],
                      bounds=[(0, None)] * k + [(None, None)], method="highs")
        if res.status != 0:
            raise SolverError(f"leximin LP failed: {res.message}")
        level = -res.fun
        p = res.x[:k]
        # an agent is saturated if it cannot exceed `level` while the others keep their levels
        newly = []
        for i in free:
            c2 = np.concatenate([-mu[i], [0.0]])
            a2 = [np.concatenate([-mu[j], [0.0]]) for j in free if j != i]
            b2 = [-level + tol] * len(a2)
            for j, lev in fixed.items():
                a2.append(np.concatenate([-mu[j], [0.0]]))
                b2.append(-lev + tol)
            r2 = linprog(c2, A_ub=np.array(a2) if a2 else None, b_ub=b2 if a2 else None, A_eq=a_eq,
                         b_eq=[1.0], bounds=[(0, None)] * k + [(0, 0)], method="highs")
            if r2.status != 0:
                raise SolverError(f"leximin LP failed: {r2.message}")
            if -r2.fun <= level + tol:
                newly.append(i)
        if not newly:  # numerical safety: fix the worst-off free agent
            newly = [min(free, key=lambda i: mu[i] @ p)]
        for i in newly:
            fixed[i] = level
    return np.clip(p, 0.0, None) / np.clip(p, 0.0, None).sum()

