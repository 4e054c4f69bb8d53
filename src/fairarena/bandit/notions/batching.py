"""Batching helpers shared by the notions: NaN-padded stacks of mixed arm counts, starting points,
projection of solver output onto the simplex, and the utilitarian tie-break on an optimal face."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from fairarena.bandit import solver
from fairarena.bandit.problem import utilities

SUPPORT_TOL = 1e-7  # below this an interior-point coordinate is taken as 0 (it is ~1/t there)


def uniform_policy(b: int, k: int, live: np.ndarray | None = None) -> np.ndarray:
    """``(b, k)`` uniform policies (over the live arms of each row when ``live`` is given)."""
    if live is None:
        return np.full((b, k), 1.0 / k)
    return live / live.sum(axis=1, keepdims=True)


def split_live(mus: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Stacks may mix arm counts by padding with all-NaN columns (see :func:`pad_stack`).

    Returns the stack with padding replaced by 0 and the ``(B, K)`` mask of real arms (``None``
    when nothing is padded). Padded arms get probability exactly 0 and never change a result."""
    pad = np.isnan(mus)
    if not pad.any():
        return mus, None
    live = ~pad.all(axis=-2)
    return np.where(pad, 0.0, mus), live


def pad_stack(instances: Sequence[np.ndarray]) -> np.ndarray:
    """Stack reward matrices with the same N and different K, padding missing arms with NaN."""
    n = {np.shape(m)[0] for m in instances}
    if len(n) != 1:
        raise ValueError("pad_stack needs instances with the same number of agents")
    k = max(np.shape(m)[1] for m in instances)
    out = np.full((len(instances), n.pop(), k), np.nan)
    for i, m in enumerate(instances):
        out[i, :, : np.shape(m)[1]] = m
    return out



def stack_utilities(mus: np.ndarray, ps: np.ndarray) -> np.ndarray:
    """Utilities ``(B, N)`` of policies ``ps (B, K)`` on a (possibly NaN-padded) stack."""
    return utilities(split_live(mus)[0], ps)


def clean_simplex(p: np.ndarray) -> np.ndarray:
    """Project solver output onto the simplex exactly (clip round-off, renormalise)."""
    p = np.where(p < 1e-11, 0.0, p)
    return p / p.sum(axis=1, keepdims=True)


def utilitarian_tie_break(mus: np.ndarray, p_hat: np.ndarray, face: np.ndarray) -> np.ndarray:
    """Among policies ``p`` in the simplex with ``face @ p = face @ p_hat`` (the notion's optimal
    face, on which every optimum shares these linear statistics), the one with the largest total
    utility (then the centre of what remains tied)."""
    b, n, k = mus.shape
    # The interior-point p_hat lies in the relative interior of the optimal face, so its support
    # is the face's support: arms at ~0 stay at 0 (numerically they are ~1/t).
    live = p_hat > SUPPORT_TOL
    p0 = np.where(live, p_hat, 0.0)
    p0 /= p0.sum(axis=1, keepdims=True)
    E = np.concatenate([face, np.ones((b, 1, k))], axis=1)
    # The face is a single point (nothing to break) when its support columns of E are independent.
    sv = np.linalg.svd(E * live[:, None, :], compute_uv=False)
    rank = (sv > 1e-9 * np.maximum(sv[:, :1], 1e-300)).sum(axis=1)
    todo = np.flatnonzero(rank < live.sum(axis=1))
    out = p0.copy()
    if todo.size == 0:
        return out
    c = -mus.sum(axis=1)  # minimise minus total utility
    res = solver.barrier_solve(solver.LinearObjective(c[todo]), p0[todo], k, E=E[todo], live=live[todo],
                               gap=1e-11, on_fail="mask", engine=solver.engine_for(b, n, k))
    out[todo] = res.y[:, :k]
    for j in np.flatnonzero(res.failed):  # ill-conditioned faces: the same LP exactly with HiGHS
        i = todo[j]
        out[i] = face_lp(c[i], E[i], p0[i], live[i])
    return out


def face_lp(c: np.ndarray, E: np.ndarray, p0: np.ndarray, live: np.ndarray) -> np.ndarray:
    """min c.p s.t. E p = E p0, p >= 0, p = 0 off ``live`` (HiGHS; status checked)."""
    from scipy.optimize import linprog

    from fairarena.errors import SolverError

    bounds = [(0, None) if lv else (0, 0) for lv in live]
    res = linprog(c, A_eq=E, b_eq=E @ p0, bounds=bounds, method="highs")
    if res.status != 0:
        raise SolverError(f"tie-break LP failed: {res.message}")
    p = np.clip(res.x, 0.0, None)
    return p / p.sum()

