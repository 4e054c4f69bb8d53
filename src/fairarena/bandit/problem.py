"""The bandit setting: reward matrices, favourite sets, utilities and decision shares.

Every function accepts a single instance (``mu`` of shape ``(N, K)``, ``p`` of shape ``(K,)``) or a
stack of instances (``(B, N, K)`` and ``(B, K)``) and broadcasts over the leading axis.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairarena.errors import InputError

DEFAULT_TOL = 1e-9
POLICY_SUM_TOL = 1e-9
POLICY_RENORMALISE_TOL = 1e-6
"""A policy read from a file may sum to 1 within this (other solvers return policies accurate to ~1e-8);
it is then divided by its sum and the reader says so (see :func:`renormalise_policy`)."""


def validate_rewards(mu: Any, field: str = "rewards") -> np.ndarray:
    """Check a reward matrix once, at the edge: 2-D, rectangular, finite, in [0, 1], N, K >= 1."""
    if isinstance(mu, np.ndarray):
        arr = mu
    else:
        if not isinstance(mu, (list, tuple)) or len(mu) == 0:
            raise InputError(field, mu, "expected a non-empty list of rows (N >= 1 agents)")
        lengths = []
        for i, row in enumerate(mu):
            if not isinstance(row, (list, tuple, np.ndarray)):
                raise InputError(f"{field}[{i}]", row, "expected a row (list of K numbers)")
            lengths.append(len(row))
        if len(set(lengths)) != 1:
            bad = next(i for i, n in enumerate(lengths) if n != lengths[0])
            raise InputError(f"{field}[{bad}]", mu[bad],
                             f"ragged rows: row 0 has {lengths[0]} entries, row {bad} has {lengths[bad]}")
        try:
            arr = np.asarray(mu, dtype=float)
        except (TypeError, ValueError):
            raise InputError(field, mu, "expected numbers") from None
    if arr.ndim != 2:
        raise InputError(field, arr.shape, "expected a 2-D matrix (N agents x K arms)")
    n, k = arr.shape
    if n < 1:
        raise InputError(f"{field}.N", n, "need at least one agent (N >= 1)")
    if k < 1:
        raise InputError(f"{field}.K", k, "need at least one arm (K >= 1)")
    arr = arr.astype(float, copy=True)
    bad = ~np.isfinite(arr)
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise InputError(f"{field}[{i}][{j}]", float(arr[i, j]), "must be a finite number")
    out = (arr < 0) | (arr > 1)
    if out.any():
        i, j = map(int, np.argwhere(out)[0])
        raise InputError(f"{field}[{i}][{j}]", float(arr[i, j]), "must lie in [0, 1]")
    arr.setflags(write=False)
    return arr


def validate_policy(p: Any, k: int, field: str = "policy", tol: float = POLICY_SUM_TOL) -> np.ndarray:
    """Check a policy: K finite, non-negative numbers summing to 1 (within ``tol``)."""
    try:
        arr = np.asarray(p, dtype=float)
    except (TypeError, ValueError):
        raise InputError(field, p, "expected a list of numbers") from None
    if arr.ndim != 1:
        raise InputError(field, p, "expected a flat list of K probabilities")
    if arr.shape[0] != k:
        raise InputError(f"{field}", arr.tolist(), f"has length {arr.shape[0]} but there are K = {k} arms")
    bad = ~np.isfinite(arr)
    if bad.any():
        j = int(np.argmax(bad))
        raise InputError(f"{field}[{j}]", float(arr[j]), "must be a finite number")
    if (arr < 0).any():
        j = int(np.argmax(arr < 0))
        raise InputError(f"{field}[{j}]", float(arr[j]), "probabilities must be non-negative")
    total = float(arr.sum())
    if abs(total - 1.0) > tol:
        raise InputError(f"sum({field})", total, f"probabilities must sum to 1 (within {tol:g})")
    return arr


def renormalise_policy(p: Any, k: int, field: str = "policy",
                       tol: float = POLICY_RENORMALISE_TOL) -> tuple[np.ndarray, bool]:
    """Validate a policy whose sum may be off by up to ``tol``; returns ``(policy, renormalised)``.

    Within :data:`POLICY_SUM_TOL` of 1 the policy is returned as given (``renormalised`` False);
    within ``tol`` it is divided by its sum (``renormalised`` True); beyond, :class:`InputError`."""
    arr = validate_policy(p, k, field, tol=tol)
    total = float(arr.sum())
    if abs(total - 1.0) <= POLICY_SUM_TOL:
        return arr, False
    return arr / total, True


def favourites(mu: np.ndarray, tol: float = DEFAULT_TOL) -> np.ndarray:
    """Favourite sets ``F_i = argmax_k mu[i, k]`` as a boolean mask (all ties within ``tol``)."""
    mu = np.asarray(mu, dtype=float)
    return mu >= mu.max(axis=-1, keepdims=True) - tol


def utilities(mu: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``U_i(p) = sum_k p_k mu[i, k]``; shape ``(..., N)``."""
    return np.einsum("...ik,...k->...i", np.asarray(mu, dtype=float), np.asarray(p, dtype=float))


def decision_shares(mu: np.ndarray, p: np.ndarray, tol: float = DEFAULT_TOL,
                    fav: np.ndarray | None = None) -> np.ndarray:
    """``d_i(p) = sum_{k in F_i} p_k``; shape ``(..., N)``."""
    if fav is None:
        fav = favourites(mu, tol)
    return np.einsum("...ik,...k->...i", fav.astype(float), np.asarray(p, dtype=float))


def inequality(u: np.ndarray, kind: str = "squared") -> np.ndarray:
    """Pairwise inequality of utilities, ``2/(N(N-1)) sum_{i<j} (U_i - U_j)^2`` (``kind='squared'``)
    or the same with ``|U_i - U_j|`` (``kind='absolute'``, the Gini mean difference). 0 when N = 1."""
    u = np.asarray(u, dtype=float)
    n = u.shape[-1]
    if n < 2:
        return np.zeros(u.shape[:-1])
    if kind == "squared":
        # sum_{i<j} (u_i - u_j)^2 = N * sum_i (u_i - mean)^2
        total = n * ((u - u.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
    elif kind == "absolute":
        s = np.sort(u, axis=-1)
        coef = 2 * np.arange(n) - (n - 1)  # sum_{i<j} |u_i-u_j| = sum_m (2m - n + 1) u_(m)
        total = (s * coef).sum(axis=-1)
    else:
        raise InputError("ef_kind", kind, "expected 'squared' or 'absolute'")
    return 2.0 * total / (n * (n - 1))
