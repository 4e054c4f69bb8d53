"""The OWA family shared by ``ggi``, ``maximin`` and the absolute-difference ``ef``: an ordered weighted
average of utilities ``sum_m w_m U_(m)`` (utilities ascending, ``w`` non-increasing), solved by the
barrier solver in batches and exactly by one HiGHS LP per instance (:func:`owa_lp`, the last step of
the fallback chain)."""

from __future__ import annotations

import numpy as np

from fairarena.bandit import solver
from fairarena.bandit.notions.batching import clean_simplex, split_live, stack_utilities, uniform_policy


def owa_policy(mus: np.ndarray, w: np.ndarray) -> np.ndarray:
    """OWA-optimal policies ``(B, K)`` for a stack (barrier solver; the centre of the optimal face)."""
    b, n, k = mus.shape
    mus, live = split_live(mus)
    obj = solver.OWAObjective(mus, w)
    res = solver.barrier_solve(obj, obj.start(uniform_policy(b, k, live)), k, live=live, n_barrier=obj.n_barrier,
                               gap=1e-9, engine=solver.engine_for(b, n, k))
    return clean_simplex(res.y[:, :k])


def owa_value(mus: np.ndarray, ps: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_m w_m U_(m)`` with utilities sorted ascending."""
    return (np.sort(stack_utilities(mus, ps), axis=-1) * w).sum(axis=-1)


def owa_lp(mu: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Exact OWA-optimal policy by one LP (HiGHS): maximise ``sum_m w_m U_(m)`` (ascending, ``w``
    non-increasing) written as ``sum_m (w_m - w_{m+1}) L_m(U)`` with ``L_m`` the sum of the ``m``
    smallest utilities, ``L_m(U) = max_t m t - sum_i max(0, t - U_i)``."""
    from scipy.optimize import linprog

    from fairarena.errors import SolverError

    n, k = mu.shape
    c_m = w - np.append(w[1:], 0.0)
    # variables: p (k), t (n), d (n * n) with d[m, i] >= t_m - mu_i p, d >= 0
    nv = k + n + n * n
    c = np.zeros(nv)
    c[k:k + n] = -c_m * np.arange(1, n + 1)
    c[k + n:] = np.repeat(c_m, n)
    a_ub = np.zeros((n * n, nv))
    for m in range(n):
        rows = slice(m * n, (m + 1) * n)
        a_ub[rows, :k] = -mu
        a_ub[rows, k + m] = 1.0
        a_ub[rows, k + n + m * n:k + n + (m + 1) * n] = -np.eye(n)
    a_eq = np.zeros((1, nv))
    a_eq[0, :k] = 1.0
    bounds = [(0, None)] * k + [(None, None)] * n + [(0, None)] * (n * n)
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(n * n), A_eq=a_eq, b_eq=[1.0], bounds=bounds, method="highs")
    if res.status != 0:
        raise SolverError(f"OWA LP failed: {res.message}")
    p = np.clip(res.x[:k], 0.0, None)
    return p / p.sum()
