"""A batched log-barrier interior-point solver for the small convex programs behind the notions.

Every optimal policy in :mod:`fairarena.bandit.notions` is the solution of

    minimise  f(y)  subject to  p in the simplex,  G y <= h,        y = (p, r),

for a convex ``f`` over ``p`` (K arms) and a few free auxiliary variables ``r``. Instances are solved
*together*: one Newton step is a handful of numpy operations on a stack of ``B`` small KKT systems,
so 10,000 instances cost about as much as a few hundred Python-level solver calls.

Piecewise-linear objectives (generalized Gini, maximin, the absolute-difference inequality) enter as
hinge terms ``c * max(0, v)``. The slack of each hinge is minimised out of the barrier problem in
closed form (:func:`smoothed_hinge`), so the Newton system stays ``(K + M)``-dimensional instead of
growing with the number of hinges.

The method is the textbook barrier method (Boyd & Vandenberghe, *Convex Optimization*, ch. 11):
centring by damped Newton with backtracking, then ``t <- mu * t`` until the duality-gap bound
``m / t`` is below ``gap``. When the optimum is not unique the iterates converge to the centre of
the optimal face; notions that need a specific optimum add a tie-break stage (see ``notions``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np

from fairarena.errors import SolverError


class Objective(Protocol):
    """``t``-scaled objective including smoothed hinges, batched.

    Called as ``obj(y, t, derivs)``; returns ``(value (B,), grad (B, n), hess (B, n, n))``, the
    last two ``None`` when ``derivs`` is False. ``value`` is ``+inf`` outside the domain.
    ``n_barrier`` counts the log-barrier terms the objective carries (two per hinge).
    """

    n_barrier: int

    def __call__(self, y: np.ndarray, t: float, derivs: bool) -> tuple: ...


@dataclass
class BarrierResult:
    y: np.ndarray          # (B, n) solution
    iterations: int        # Newton steps taken (max over the batch)
    gap_bound: float       # m / t at exit


def smoothed_hinge(v: np.ndarray, tau: np.ndarray | float):
    """min over s > max(0, v) of ``tau*s - log(s) - log(s - v)``, with first and second derivative in v.

    Closed form: ``s = (tau v + 2 + sqrt(tau^2 v^2 + 4)) / (2 tau)``. Written with
    ``a = w + q`` and ``b = q - w`` (``w = tau v``, ``q = sqrt(w^2 + 4)``, ``a b = 4``) so that
    neither cancels for large ``|w|``.
    """
    w = tau * v
    q = np.sqrt(w * w + 4.0)
    pos = w >= 0
    with np.errstate(divide="ignore"):
        a = np.where(pos, w + q, 4.0 / (q - w))
        b = np.where(pos, 4.0 / (q + w), q - w)
    two_tau = 2.0 * tau
    value = (a + 2.0) / 2.0 - np.log((a + 2.0) / two_tau) - np.log((b + 2.0) / two_tau)
    d1 = two_tau / (b + 2.0)
    d2 = b / (2.0 * q) * d1 * d1
    return value, d1, d2


def barrier_solve(
    objective: Callable,
    y0: np.ndarray,
    k: int,
    *,
    G: np.ndarray | None = None,
    h: np.ndarray | None = None,
    E: np.ndarray | None = None,
    n_barrier: int = 0,
    gap: float = 1e-10,
    t0: float = 1.0,
    mu: float = 20.0,
    max_newton: int = 80,
    newton_tol: float = 1e-9,
) -> BarrierResult:
    """Minimise ``objective`` over ``y = (p, r)`` with ``p`` (the first ``k`` entries) in the simplex.

    ``y0`` (B, n) must be strictly feasible: ``p > 0``, ``sum p = 1``, ``G y < h``.
    ``G`` is (B, L, n) and ``h`` (B, L). ``E`` (B, R, n), when given, replaces ``sum p = 1`` by
    ``E y = E y0`` (include the simplex row yourself); steps then move in the null space of ``E``
    (computed by SVD, so redundant rows are harmless). The whole batch is stepped together; instances that have
    centred simply take no step. Raises :class:`SolverError` if Newton fails to centre.
    """
    y = np.array(y0, dtype=float, copy=True)
    bsz, n = y.shape
    n_lin = 0 if G is None else G.shape[1]
    m_total = k + n_lin + n_barrier
    if np.any(y[:, :k] <= 0):
        raise SolverError("barrier start is not strictly inside the simplex")
    if G is not None and np.any(np.einsum("bln,bn->bl", G, y) >= h):
        raise SolverError("barrier start violates a linear constraint")

    # KKT matrix [[H, e], [e^T, 0]] for the single equality sum(p) = 1.
    kkt = np.zeros((bsz, n + 1, n + 1))
    kkt[:, :k, n] = 1.0
    kkt[:, n, :k] = 1.0
    rhs = np.zeros((bsz, n + 1, 1))
    dk = np.arange(k)
    if E is not None:
        _, sv, vt = np.linalg.svd(E, full_matrices=True)
        null = np.ones((bsz, n), dtype=bool)
        r = sv.shape[1]
        null[:, :r] = sv <= 1e-10 * np.maximum(sv[:, :1], 1e-300)
        Z = vt.transpose(0, 2, 1) * null[:, None, :]  # (B, n, n), zero columns off the null space
        pad = (~null)[:, :, None] * np.eye(n)[None]

    def barrier_value(yy: np.ndarray, t: float) -> np.ndarray:
        val = objective(yy, t, False)[0]
        p = yy[:, :k]
        with np.errstate(divide="ignore", invalid="ignore"):
            val = val - np.log(p).sum(axis=1)
            ok = (p > 0).all(axis=1)
            if G is not None:
                slack = h - np.einsum("bln,bn->bl", G, yy)
                val = val - np.log(slack).sum(axis=1)
                ok &= (slack > 0).all(axis=1)
        return np.where(ok & np.isfinite(val), val, np.inf)

    t = t0
    steps = 0
    while True:
        active = np.ones(bsz, dtype=bool)
        for _ in range(max_newton):
            if not active.any():
                break
            val, grad, hess = objective(y, t, True)
            p = y[:, :k]
            grad = grad.copy()
            grad[:, :k] -= 1.0 / p
            kkt[:, :n, :n] = hess
            kkt[:, dk, dk] += 1.0 / (p * p)
            f0 = val - np.log(p).sum(axis=1)
            if G is not None:
                slack = h - np.einsum("bln,bn->bl", G, y)
                inv = 1.0 / slack
                grad += np.einsum("bln,bl->bn", G, inv)
                kkt[:, :n, :n] += np.einsum("bli,bl,blj->bij", G, inv * inv, G)
                f0 = f0 - np.log(slack).sum(axis=1)
            if E is None:
                rhs[:, :n, 0] = -grad
                dy = _solve(kkt, rhs)[:, :n, 0]
            else:
                hz = np.einsum("bji,bjk,bkl->bil", Z, kkt[:, :n, :n], Z) + pad
                gz = np.einsum("bji,bj->bi", Z, grad)
                dy = np.einsum("bij,bj->bi", Z, _solve(hz, -gz[..., None])[..., 0])
            dec = -(grad * dy).sum(axis=1)  # squared Newton decrement
            # dec/2 bounds the t-scaled suboptimality of the centring step; in the original units it
            # is dec/(2t), so a threshold growing with t keeps that below 1e-13 while staying above
            # the rounding noise of a gradient whose terms grow like t.
            active &= np.isfinite(dec) & (dec / 2.0 > max(newton_tol, 1e-13 * t))
            if not active.any():
                break
            # largest step that keeps p > 0 and the slacks > 0
            dp = dy[:, :k]
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(dp < 0, -p / dp, np.inf).min(axis=1)
                if G is not None:
                    gd = np.einsum("bln,bn->bl", G, dy)
                    ratio = np.minimum(ratio, np.where(gd > 0, slack / gd, np.inf).min(axis=1))
            alpha = np.where(active, np.minimum(1.0, 0.99 * ratio), 0.0)
            pending = active.copy()
            for _ls in range(50):
                fv = barrier_value(y + alpha[:, None] * dy, t)
                ok = fv <= f0 - 0.25 * alpha * dec
                pending &= ~ok
                if not pending.any():
                    break
                alpha = np.where(pending, 0.5 * alpha, alpha)
            # a failed line search, or a predicted decrease below the rounding level of the
            # barrier value, means the instance is centred to machine precision
            alpha = np.where(pending, 0.0, alpha)
            active &= ~pending & (alpha * dec > 1e-15 * (1.0 + np.abs(f0)))
            y += alpha[:, None] * dy
            steps += 1
        else:
            # out of Newton steps: acceptable only where the centring error in original units,
            # dec / (2t), is negligible (the rounding regime at large t); otherwise fail loudly
            bad = active & ~(dec / (2.0 * t) <= 1e-10)
            if bad.any():
                raise SolverError(f"Newton centring did not converge for {int(bad.sum())} instance(s) "
                                  f"(t = {t:.3g}, worst decrement {float(np.nanmax(dec[bad])):.3g})")
        if m_total / t <= gap:
            return BarrierResult(y=y, iterations=steps, gap_bound=m_total / t)
        t *= mu


# --------------------------------------------------------------------------------------------
# Objectives (all batched; y = (p, r) with p the first K entries)
# --------------------------------------------------------------------------------------------

def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:  # a singular system somewhere in the batch: least squares for all
        return np.stack([np.linalg.lstsq(ai, bi, rcond=None)[0] for ai, bi in zip(a, b)])


class LinearObjective:
    """``t * c . y``."""

    n_barrier = 0

    def __init__(self, c: np.ndarray) -> None:
        self.c = c  # (B, n)

    def __call__(self, y, t, derivs):
        val = t * (self.c * y).sum(axis=1)
        if not derivs:
            return val, None, None
        n = y.shape[1]
        return val, t * self.c, np.zeros((y.shape[0], n, n))


class NegLogSumObjective:
    """``-t * sum_i w_i log(A_i . p)`` (Nash welfare of linear utilities; ``w_i`` = 0 drops a row)."""

    n_barrier = 0

    def __init__(self, A: np.ndarray, w: np.ndarray | None = None) -> None:
        self.A = A  # (B, N, K)
        self.w = np.ones(A.shape[:2]) if w is None else w

    def __call__(self, y, t, derivs):
        u = np.einsum("bik,bk->bi", self.A, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.where(self.w > 0, np.log(np.where(self.w > 0, u, 1.0)), 0.0)
        val = -t * (self.w * logs).sum(axis=1)
        val = np.where(((u > 0) | (self.w == 0)).all(axis=1), val, np.inf)
        if not derivs:
            return val, None, None
        with np.errstate(divide="ignore"):
            inv = np.where(self.w > 0, self.w / np.where(self.w > 0, u, 1.0), 0.0)
        grad = -t * np.einsum("bik,bi->bk", self.A, inv)
        hess = t * np.einsum("bik,bi,bil->bkl", self.A, inv / np.where(self.w > 0, u, 1.0), self.A)
        return val, grad, hess


class QuadraticObjective:
    """``t * p^T Q p``."""

    n_barrier = 0

    def __init__(self, Q: np.ndarray) -> None:
        self.Q = Q  # (B, K, K), symmetric PSD

    def __call__(self, y, t, derivs):
        qy = np.einsum("bkl,bl->bk", self.Q, y)
        val = t * (y * qy).sum(axis=1)
        if not derivs:
            return val, None, None
        return val, 2.0 * t * qy, 2.0 * t * self.Q


class OWAObjective:
    """Minus an ordered weighted average of utilities: ``-sum_m w_m U_(m)``, ``U`` ascending.

    ``w`` must be non-increasing (then the OWA is concave). With ``w'_m = w_m - w_{m+1}`` and
    ``S_m`` the sum of the ``m`` smallest utilities, ``OWA = sum_{m<N} w'_m S_m + w_N sum(U)`` and
    ``S_m(U) = max_r m r - sum_i max(0, r - U_i)`` (Ogryczak & Sliwinski 2003). One auxiliary ``r_m``
    per level with ``w'_m > 0``; the hinges are smoothed exactly by :func:`smoothed_hinge`.
    ``y = (p, r_1..r_M)``.
    """

    def __init__(self, mu: np.ndarray, weights: np.ndarray) -> None:
        self.mu = mu  # (B, N, K)
        n = mu.shape[1]
        w = np.asarray(weights, dtype=float)
        wd = w[:-1] - w[1:]  # w'_m for m = 1..N-1
        self.levels = np.flatnonzero(wd > 0)  # 0-based m-1
        self.wl = wd[self.levels]  # (M,)
        self.msz = (self.levels + 1).astype(float)  # m
        self.w_last = float(w[-1])
        self.n_barrier = 2 * len(self.levels) * n
        self.M = len(self.levels)

    def start(self, p0: np.ndarray) -> np.ndarray:
        """A starting y for policy p0: r_m at the m-th smallest utility."""
        u = np.sort(np.einsum("bik,bk->bi", self.mu, p0), axis=1)
        return np.concatenate([p0, u[:, self.levels]], axis=1)

    def __call__(self, y, t, derivs):
        b, n, k = self.mu.shape
        p = y[:, :k]
        r = y[:, k:]
        u = np.einsum("bik,bk->bi", self.mu, p)
        lin = -(self.wl * self.msz * r).sum(axis=1) - self.w_last * u.sum(axis=1)
        val = t * lin
        if self.M == 0:
            if not derivs:
                return val, None, None
            grad = -t * self.w_last * self.mu.sum(axis=1)
            return val, grad, np.zeros((b, k, k))
        v = r[:, :, None] - u[:, None, :]  # (B, M, N)
        tau = (t * self.wl)[None, :, None]
        hv, d1, d2 = smoothed_hinge(v, tau)
        val = val + hv.sum(axis=(1, 2))
        if not derivs:
            return val, None, None
        nvar = k + self.M
        grad = np.empty((b, nvar))
        grad[:, :k] = -t * self.w_last * self.mu.sum(axis=1) - np.einsum("bi,bik->bk", d1.sum(axis=1), self.mu)
        grad[:, k:] = -t * self.wl * self.msz + d1.sum(axis=2)
        hess = np.zeros((b, nvar, nvar))
        hess[:, :k, :k] = np.einsum("bik,bi,bil->bkl", self.mu, d2.sum(axis=1), self.mu)
        cross = -np.einsum("bmi,bik->bmk", d2, self.mu)  # (B, M, K)
        hess[:, k:, :k] = cross
        hess[:, :k, k:] = cross.transpose(0, 2, 1)
        mi = np.arange(self.M)
        hess[:, k + mi, k + mi] = d2.sum(axis=2)
        return val, grad, hess
