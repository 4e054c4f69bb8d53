"""A batched log-barrier interior-point solver for the small convex programs behind the notions.

Every optimal policy in :mod:`fairarena.bandit.notions` is the solution of

    minimise  f(y)  subject to  p in the simplex (and, for tie-breaks, E y = E y0),   y = (p, r),

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

    def take(self, idx: np.ndarray) -> "Objective": ...  # the same objective for a sub-batch


@dataclass
class BarrierResult:
    y: np.ndarray          # (B, n) solution
    iterations: int        # Newton steps taken (max over the batch)
    gap_bound: float       # m / t at exit (over the instances that did not fail)
    failed: np.ndarray | None = None  # (B,) bool, only with on_fail='mask'


def smoothed_hinge(v: np.ndarray, tau: np.ndarray | float, derivs: bool = True):
    """min over s > max(0, v) of ``tau*s - log(s) - log(s - v)``, with first and second derivative in v.

    Closed form: ``s = (tau v + 2 + sqrt(tau^2 v^2 + 4)) / (2 tau)``. Written with
    ``a = w + q`` and ``b = q - w`` (``w = tau v``, ``q = sqrt(w^2 + 4)``, ``a b = 4``), computing
    the larger of the two directly and the smaller as ``4 / larger``, so neither cancels.
    Then ``s = (a+2)/(2 tau)``, ``s - v = (b+2)/(2 tau)``.
    """
    w = tau * v
    q = np.sqrt(w * w + 4.0)
    big = np.abs(w) + q
    small = 4.0 / big
    pos = w >= 0
    a = np.where(pos, big, small)
    b = np.where(pos, small, big)
    a2 = a + 2.0
    b2 = b + 2.0
    value = 0.5 * a2 - np.log(a2 * b2) + 2.0 * np.log(2.0 * tau)
    if not derivs:
        return value, None, None
    d1 = (2.0 * tau) / b2
    d2 = b / (2.0 * q) * d1 * d1
    return value, d1, d2


def barrier_solve(
    objective: Callable,
    y0: np.ndarray,
    k: int,
    *,
    E: np.ndarray | None = None,
    live: np.ndarray | None = None,
    n_barrier: int = 0,
    gap: float = 1e-10,
    t0: float = 100.0,
    mu: float = 50.0,
    max_newton: int = 80,
    newton_tol: float = 1e-9,
    fallback_gap: float = 1e-7,
    on_fail: str = "raise",
) -> BarrierResult:
    """Minimise ``objective`` over ``y = (p, r)`` with ``p`` (the first ``k`` entries) in the simplex.

    ``y0`` (B, n) must be strictly feasible: ``p > 0``, ``sum p = 1``. ``E`` (B, R, n), when given, replaces ``sum p = 1`` by
    ``E y = E y0`` (include the simplex row yourself); steps then move in the null space of ``E``
    (computed by SVD, so redundant rows are harmless). ``live`` (B, k) bool, when given, fixes the
    arms where it is False at exactly 0 (they get no barrier term and never move). The whole batch is stepped together; instances that have
    centred simply take no step. Raises :class:`SolverError` if Newton fails to centre.
    """
    y = np.array(y0, dtype=float, copy=True)
    bsz, n = y.shape
    m_total = k + n_barrier
    if live is None:
        live = np.ones((bsz, k), dtype=bool)
    live = np.asarray(live, dtype=bool)
    dead = ~live
    any_dead = bool(dead.any())
    y[:, :k] = np.where(live, y[:, :k], 0.0)
    if np.any(y[:, :k][live] <= 0):
        raise SolverError("barrier start is not strictly inside the simplex")

    keep_full = np.ones((bsz, n))
    keep_full[:, :k] = live  # rows/cols of the Hessian that stay (dead arms get an identity row)
    Z_full = pad_full = None
    if E is not None:
        if any_dead:  # dead arms stay at 0: add their unit rows to the equalities
            unit = np.zeros((bsz, k, n))
            unit[:, np.arange(k), np.arange(k)] = dead
            E = np.concatenate([E, unit], axis=1)
        # steps move in the null space of E (an orthonormal basis from the SVD; redundant rows
        # are harmless); columns outside it are zero and get an identity pad
        _, sv, vt = np.linalg.svd(E, full_matrices=True)
        null = np.ones((bsz, n), dtype=bool)
        r = sv.shape[1]
        null[:, :r] = sv <= 1e-10 * np.maximum(sv[:, :1], 1e-300)
        Z_full = vt.transpose(0, 2, 1) * null[:, None, :]  # (B, n, n)
        pad_full = (~null)[:, :, None] * np.eye(n)[None]
    dk = np.arange(k)

    def barrier_value(obj, yy, t, lv, dd):
        val = obj(yy, t, False)[0]
        p = yy[:, :k]
        with np.errstate(divide="ignore", invalid="ignore"):
            val = val - np.where(lv, np.log(np.where(lv, p, 1.0)), 0.0).sum(axis=1)
            ok = ((p > 0) | dd).all(axis=1)
        return np.where(ok & np.isfinite(val), val, np.inf)

    def newton_step(obj, ys, t, lv, dd, keep, Zs, pads, any_dead):
        """One damped Newton step for a sub-batch; returns (new y, squared decrement)."""
        bs = ys.shape[0]
        val, grad, hess = obj(ys, t, True)
        p = ys[:, :k]
        pl = np.where(lv, p, 1.0)
        grad = grad * keep
        grad[:, :k] -= np.where(lv, 1.0 / pl, 0.0)
        H = hess * keep[:, :, None] * keep[:, None, :] if any_dead else hess.copy()
        H[:, dk, dk] += np.where(lv, 1.0 / (pl * pl), 1.0)
        if Zs is None:
            # KKT [[H, e], [e', 0]] for sum(p) = 1, with symmetric Jacobi scaling (hinge curvatures
            # span many orders of magnitude) and an infeasible-start right-hand side that also
            # removes any rounding drift of sum(p)
            dsc = 1.0 / np.sqrt(np.maximum(np.einsum("bii->bi", H), 1e-300))
            kkt = np.zeros((bs, n + 1, n + 1))
            kkt[:, :n, :n] = H * dsc[:, :, None] * dsc[:, None, :]
            kkt[:, :k, n] = dsc[:, :k] * lv
            kkt[:, n, :k] = dsc[:, :k] * lv
            rhs = np.empty((bs, n + 1, 1))
            rhs[:, :n, 0] = -grad * dsc
            rhs[:, n, 0] = 1.0 - np.where(lv, p, 0.0).sum(axis=1)
            dz = _solve(kkt, rhs)[:, :n, 0]
            dy = dz * dsc
            dec = np.einsum("bi,bij,bj->b", dz, kkt[:, :n, :n], dz)  # dy' H dy >= 0
        else:
            hz = Zs.transpose(0, 2, 1) @ H @ Zs + pads
            gz = (Zs.transpose(0, 2, 1) @ grad[:, :, None])[:, :, 0]
            dsc = 1.0 / np.sqrt(np.maximum(np.einsum("bii->bi", hz), 1e-300))
            hz *= dsc[:, :, None] * dsc[:, None, :]
            dzs = _solve(hz, -(gz * dsc)[..., None])[..., 0]
            dy = (Zs @ (dzs * dsc)[:, :, None])[:, :, 0]
            dec = np.einsum("bi,bij,bj->b", dzs, hz, dzs)
        if not np.isfinite(dec).all():
            raise SolverError("Newton step is not finite (singular or overflowing system)")
        # dec/2 bounds the t-scaled suboptimality of the centring step; in the original units it
        # is dec/(2t), so a threshold growing with t keeps that below 1e-13 while staying above
        # the rounding noise of a gradient whose terms grow like t.
        go = dec / 2.0 > max(newton_tol, 1e-13 * t)
        dy[:, :k] *= lv  # dead arms never move (their step is rounding noise)
        dp = dy[:, :k]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(dp < 0, -p / dp, np.inf).min(axis=1)
        # Step length: the longest of alpha_max, alpha_max/4, alpha_max/16 that passes an Armijo
        # test on the barrier value, else the damped Newton step 1/(1+lambda) (Nesterov &
        # Nemirovski). Every term is self-concordant, so the damped step always decreases the
        # barrier and stays in its domain without a function evaluation -- which matters at large
        # t, where the barrier value is a difference of terms ~t whose rounding exceeds the decrease.
        lam = np.sqrt(np.maximum(dec, 0.0))
        a_max = np.minimum(1.0, 0.99 * ratio)
        a_damp = np.minimum(np.where(lam > 0.25, 1.0 / (1.0 + lam), 1.0), a_max)
        alpha = a_damp.copy()
        with np.errstate(divide="ignore", invalid="ignore"):
            f0 = val - np.where(lv, np.log(pl), 0.0).sum(axis=1)
        pending = go & (a_max > a_damp)
        trial = a_max.copy()
        for _ls in range(3):
            if not pending.any():
                break
            fv = barrier_value(obj, ys + np.where(pending, trial, 0.0)[:, None] * dy, t, lv, dd)
            ok = pending & (trial > a_damp) & (fv <= f0 - 0.25 * trial * dec)
            alpha = np.where(ok, trial, alpha)
            pending &= ~ok
            trial = trial * 0.25
        alpha = np.where(go, alpha, 0.0)
        y_new = ys + alpha[:, None] * dy
        if Zs is None:
            # Near a vertex the KKT system is ill-conditioned and sum(p) drifts by rounding; a
            # multiplicative rescale puts p back on the simplex without touching positivity.
            y_new[:, :k] /= y_new[:, :k].sum(axis=1, keepdims=True)
        return y_new, dec, go

    def sub(idx):
        """The solver state restricted to the instances ``idx`` (objectives carry batch data)."""
        whole = idx.size == bsz
        pick = (lambda a: a) if whole else (lambda a: None if a is None else a[idx])
        obj = objective if whole else objective.take(idx)
        return (obj, pick(live), pick(dead), pick(keep_full), pick(Z_full), pick(pad_full))

    t = t0
    steps = 0
    last: tuple[np.ndarray, float] | None = None
    achieved = np.zeros(bsz)  # per-instance duality-gap bound actually reached (fallbacks)
    failed = np.zeros(bsz, dtype=bool)
    all_idx = np.arange(bsz)
    while True:
        idx = all_idx
        state = sub(idx)
        dec_all = np.zeros(bsz)
        # the first centring starts far from the central path (its damped phase is bounded by the
        # start's suboptimality, not by a constant): give it more room
        for _ in range(max_newton if last is not None else 6 * max_newton):
            obj, lv, dd, keep, Zs, pads = state
            y_new, dec, go = newton_step(obj, y[idx], t, lv, dd, keep, Zs, pads, any_dead)
            y[idx] = y_new
            dec_all[idx] = dec
            steps += 1
            if not go.all():
                if not go.any():
                    idx = idx[:0]
                    break
                # work only on the instances still centring (re-slice when the set halves)
                keep_idx = np.flatnonzero(go)
                if keep_idx.size <= 0.5 * idx.size:
                    idx = idx[keep_idx]
                    state = sub(idx)
        else:
            # out of Newton steps: acceptable only where the centring error in original units,
            # dec / (2t), is negligible (the rounding regime at large t)
            bad = np.zeros(bsz, dtype=bool)
            bad[idx] = dec_all[idx] / (2.0 * t) > 1e-9
            if bad.any():
                # Extreme t makes the Newton systems ill-conditioned. Fall back to the last
                # well-centred iterate when its duality-gap bound is still tight; else fail.
                if last is not None and last[1] <= fallback_gap:
                    y[bad] = last[0][bad]
                    achieved[bad] = np.maximum(achieved[bad], last[1])
                elif on_fail == "mask":  # the caller solves these another way
                    failed |= bad
                    if last is not None:
                        y[bad] = last[0][bad]
                else:
                    raise SolverError(
                        f"Newton centring did not converge for {int(bad.sum())} instance(s) "
                        f"(t = {t:.3g}, worst decrement {float(dec_all[bad].max()):.3g})")
        last = (y.copy(), m_total / t)
        if m_total / t <= gap:
            achieved = np.maximum(achieved, m_total / t)
            ok = ~failed
            return BarrierResult(y=y, iterations=steps, gap_bound=float(achieved[ok].max()) if ok.any() else np.inf,
                                 failed=failed if on_fail == "mask" else None)
        t *= mu


# --------------------------------------------------------------------------------------------
# Objectives (all batched; y = (p, r) with p the first K entries)
# --------------------------------------------------------------------------------------------

def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:  # a singular system somewhere in the batch
        out = np.empty_like(b)
        for i in range(a.shape[0]):
            try:
                out[i] = np.linalg.solve(a[i], b[i])
            except np.linalg.LinAlgError:  # least squares for the singular ones only
                out[i] = np.linalg.lstsq(a[i], b[i], rcond=None)[0]
        return out


class LinearObjective:
    """``t * c . y``."""

    n_barrier = 0

    def __init__(self, c: np.ndarray) -> None:
        self.c = c  # (B, n)

    def take(self, idx: np.ndarray) -> "LinearObjective":
        return LinearObjective(self.c[idx])

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

    def take(self, idx: np.ndarray) -> "NegLogSumObjective":
        return NegLogSumObjective(self.A[idx], self.w[idx])

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
        wa = self.A * (inv / np.where(self.w > 0, u, 1.0))[:, :, None]
        hess = t * (self.A.transpose(0, 2, 1) @ wa)
        return val, grad, hess


class QuadraticObjective:
    """``t * p^T Q p``."""

    n_barrier = 0

    def __init__(self, Q: np.ndarray) -> None:
        self.Q = Q  # (B, K, K), symmetric PSD

    def take(self, idx: np.ndarray) -> "QuadraticObjective":
        return QuadraticObjective(self.Q[idx])

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
        self.mu_t = mu.transpose(0, 2, 1)
        n = mu.shape[1]
        w = np.asarray(weights, dtype=float)
        wd = w[:-1] - w[1:]  # w'_m for m = 1..N-1
        self.levels = np.flatnonzero(wd > 0)  # 0-based m-1
        self.wl = wd[self.levels]  # (M,)
        self.msz = (self.levels + 1).astype(float)  # m
        self.w_last = float(w[-1])
        self.n_barrier = 2 * len(self.levels) * n
        self.M = len(self.levels)

    def take(self, idx: np.ndarray) -> "OWAObjective":
        out = object.__new__(OWAObjective)
        out.__dict__.update(self.__dict__)
        out.mu = self.mu[idx]
        out.mu_t = self.mu_t[idx]
        return out

    def start(self, p0: np.ndarray) -> np.ndarray:
        """A starting y for policy p0: r_m at the m-th smallest utility."""
        u = np.sort(np.einsum("bik,bk->bi", self.mu, p0), axis=1)
        return np.concatenate([p0, u[:, self.levels]], axis=1)

    def __call__(self, y, t, derivs):
        b, n, k = self.mu.shape
        p = y[:, :k]
        r = y[:, k:]
        u = (self.mu @ p[:, :, None])[:, :, 0]
        lin = -(self.wl * self.msz * r).sum(axis=1) - self.w_last * u.sum(axis=1)
        val = t * lin
        if self.M == 0:
            if not derivs:
                return val, None, None
            grad = -t * self.w_last * self.mu.sum(axis=1)
            return val, grad, np.zeros((b, k, k))
        v = r[:, :, None] - u[:, None, :]  # (B, M, N)
        tau = (t * self.wl)[None, :, None]
        hv, d1, d2 = smoothed_hinge(v, tau, derivs)
        val = val + hv.sum(axis=(1, 2))
        if not derivs:
            return val, None, None
        nvar = k + self.M
        grad = np.empty((b, nvar))
        grad[:, :k] = -t * self.w_last * self.mu.sum(axis=1) - (self.mu_t @ d1.sum(axis=1)[:, :, None])[:, :, 0]
        grad[:, k:] = -t * self.wl * self.msz + d1.sum(axis=2)
        hess = np.zeros((b, nvar, nvar))
        hess[:, :k, :k] = self.mu_t @ (self.mu * d2.sum(axis=1)[:, :, None])
        cross = -(d2 @ self.mu)  # (B, M, K)
        hess[:, k:, :k] = cross
        hess[:, :k, k:] = cross.transpose(0, 2, 1)
        mi = np.arange(self.M)
        hess[:, k + mi, k + mi] = d2.sum(axis=2)
        return val, grad, hess
