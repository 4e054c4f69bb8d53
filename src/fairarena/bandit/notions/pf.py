"""Procedural fairness (``pf``): every agent controls an equal 1/N share of the decision, spent on its
favourite arms; among such policies the decision-share Nash welfare optimum (then the utilitarian
tie-break). Source: the procedural-fairness paper on multi-agent bandits; Nash tie-breaking as in
Bogomolnaia, Moulin & Stong (2005). See ``docs/notions/pf.md``."""

from __future__ import annotations

import numpy as np

from fairarena.bandit import solver
from fairarena.bandit.notions.batching import clean_simplex, split_live, uniform_policy, utilitarian_tie_break
from fairarena.bandit.notions.registry import register
from fairarena.bandit.vocabulary import BUILTIN_NOTIONS
from fairarena.bandit.problem import favourites

PF_SUBSET_MAX_K = 16
SMALL_ENUMERATION = 1 << 16  # instances x subsets x agents up to which the min-cut runs in numpy


def pf_score_batch(fav: np.ndarray, ps: np.ndarray) -> np.ndarray:
    """PF score: the max-flow ``max sum y[i,k]`` over favourite edges with agent capacities 1/N and
    arm capacities ``p_k``; computed by max-flow/min-cut duality as
    ``min over arm sets X of p(X) + #{i : F_i not within X} / N`` (exact; enumerates 2^K sets for
    K <= 16, HiGHS LPs beyond)."""
    fav = np.asarray(fav, dtype=bool)
    b, n, k = fav.shape
    if k > PF_SUBSET_MAX_K:
        return np.array([pf_score_lp(f, p) for f, p in zip(fav, ps)])
    masks = (fav * (1 << np.arange(k))).sum(axis=2).astype(np.int64)  # (B, N) favourite-set bitmasks
    if b * (1 << k) * n <= SMALL_ENUMERATION:
        return pf_scores_numpy(masks, np.asarray(ps, dtype=float))
    return solver.pf_scores(masks, ps)


def pf_scores_numpy(masks: np.ndarray, ps: np.ndarray) -> np.ndarray:
    """The min-cut enumeration of :func:`pf_score_batch` in plain numpy (small batches: no compiled
    kernel is loaded). ``masks`` (B, N) favourite-set bitmasks, ``ps`` (B, K)."""
    b, k = ps.shape
    n = masks.shape[1]
    sets = np.arange(1 << k, dtype=np.int64)
    px = np.zeros((b, 1))
    for j in range(k):  # p(X) for X in bit order, summed as the compiled kernel sums it
        px = np.concatenate([px, px + ps[:, j:j + 1]], axis=1)
    within = ((masks[:, None, :] & ~sets[None, :, None]) == 0).sum(axis=2)  # (B, 2^K): F_i within X
    cut = px + (n - within) / n
    return np.clip(cut.min(axis=1), 0.0, 1.0)


def pf_score_lp(fav: np.ndarray, p: np.ndarray) -> float:
    from scipy.optimize import linprog

    n, k = fav.shape
    edges = np.argwhere(fav)
    m = len(edges)
    a_ub = np.zeros((n + k, m))
    a_ub[edges[:, 0], np.arange(m)] = 1.0
    a_ub[n + edges[:, 1], np.arange(m)] = 1.0
    b_ub = np.concatenate([np.full(n, 1.0 / n), p])
    res = linprog(-np.ones(m), A_ub=a_ub, b_ub=b_ub, bounds=(0, None), method="highs")
    if res.status != 0:
        from fairarena.errors import SolverError

        raise SolverError(f"PF score LP failed: {res.message}")
    return float(min(1.0, -res.fun))


def favourite_masks(mus: np.ndarray, tol: float) -> np.ndarray:
    mus0, live = split_live(mus)
    fav = favourites(mus0, tol)
    return fav if live is None else fav & live[:, None, :]


def _pf_value(mus, ps, o):
    return pf_score_batch(favourite_masks(mus, o.tol), ps)


def pf_policy_from_favourites(fav: np.ndarray, mus: np.ndarray | None = None,
                              tie_break: str = "utilitarian", live: np.ndarray | None = None) -> np.ndarray:
    """PF policy for favourite masks ``(B, N, K)``: maximise ``sum_i log d_i(p)``.

    Closed form ``p_k = |{i : F_i = {k}}| / N`` when every favourite set is a single arm. Otherwise a
    convex program; with binary utilities its optimum always splits into a PF decomposition
    (``x[i,k] = p_k [k in F_i] / (N d_i)``), so it is PF. ``tie_break='utilitarian'`` (needs ``mus``)
    picks, among the optimal policies (all share the same decision shares), the one with the
    largest total utility.
    """
    fav = np.asarray(fav, dtype=bool)
    b, n, k = fav.shape
    out = np.empty((b, k))
    single = (fav.sum(axis=2) == 1).all(axis=1)
    if single.any():
        out[single] = fav[single].sum(axis=1) / n
    rest = np.flatnonzero(~single)
    if rest.size:
        A = fav[rest].astype(float)
        lv = None if live is None else live[rest]
        res = solver.barrier_solve(solver.NegLogSumObjective(A), uniform_policy(rest.size, k, lv), k, live=lv,
                                   gap=1e-11, engine=solver.engine_for(b, n, k))
        p = res.y[:, :k]
        if tie_break == "utilitarian" and mus is not None:
            p = utilitarian_tie_break(np.asarray(mus, float)[rest], p, A)
        out[rest] = clean_simplex(p)
    return out


@register("pf", **BUILTIN_NOTIONS["pf"], value=_pf_value, score=lambda v, o: v, score_is_value=True)
def _pf_policy(mus, o):
    mus0, live = split_live(mus)
    return pf_policy_from_favourites(favourite_masks(mus, o.tol), mus0, o.tie_break, live)


