"""Compiled per-instance loops of the barrier solver (numba).

:func:`fairarena.bandit.solver.barrier_solve` describes the method; this module is its engine. Each
instance of a batch is solved on its own, to its own tolerance, in one compiled loop: no instance
waits for the slowest one and no Python runs per Newton step, which is what made small batches
(a few instances per shape) expensive when the steps were numpy calls on the whole stack.

Objectives are described by a ``kind`` and plain arrays (a numba kernel cannot call Python objects):

* ``LINEAR``: ``t * c . y``
* ``QUADRATIC``: ``t * (p' Q p + c . p)``
* ``NEGLOGSUM``: ``-t * sum_i w_i log(A_i . p)`` (rows with ``w_i = 0`` left out)
* ``OWA``: ``-t * (sum_m wl_m m_m r_m + w_last sum_i A_i . p)`` plus the smoothed hinges
  ``h(r_m - A_i . p, t wl_m)`` (see :func:`smoothed_hinge`); ``y = (p, r)``.

Per instance the variables are the live arms (dead ones stay at exactly 0) and the auxiliary ``r``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

LINEAR, QUADRATIC, NEGLOGSUM, OWA = 0, 1, 2, 3
OK, FELL_BACK, FAILED, BAD_START = 0, 1, 2, 3

_INF = np.inf
_LOOSE = 1e-3  # Newton decrement (dec/2) that ends an intermediate centring


@njit(cache=True)
def _hinge(v, tau):
    """:func:`smoothed_hinge` without its additive constant ``2 log(2 tau)`` (which does not depend
    on ``v``; the solver adds it once per level)."""
    w = tau * v
    q = math.sqrt(w * w + 4.0)
    big = abs(w) + q
    small = 4.0 / big
    if w >= 0.0:
        a, b = big, small
    else:
        a, b = small, big
    a2 = a + 2.0
    b2 = b + 2.0
    d1 = (2.0 * tau) / b2
    return 0.5 * a2 - math.log(a2 * b2), d1, b / (2.0 * q) * d1 * d1


@njit(cache=True)
def smoothed_hinge(v, tau):
    """``min over s > max(0, v) of tau*s - log(s) - log(s - v)`` and its first and second
    derivative in ``v`` (scalars).

    Closed form ``s = (tau v + 2 + sqrt(tau^2 v^2 + 4)) / (2 tau)``. With ``w = tau v``,
    ``q = sqrt(w^2 + 4)``, ``a = q + w`` and ``b = q - w`` (so ``a b = 4``) the larger of ``a, b`` is
    computed directly and the smaller as ``4 / larger``, so neither cancels; then
    ``s = (a + 2) / (2 tau)`` and ``s - v = (b + 2) / (2 tau)``.
    """
    value, d1, d2 = _hinge(v, tau)
    return value + 2.0 * math.log(2.0 * tau), d1, d2


@njit(cache=True)
def _utilities(A, y, k):
    """``U_i = A_i . p`` for every row of ``A`` (``p`` the first ``k`` entries of ``y``)."""
    u = np.empty(A.shape[0])
    for i in range(A.shape[0]):
        s = 0.0
        for a in range(k):
            s += A[i, a] * y[a]
        u[i] = s
    return u


@njit(cache=True)
def objective(kind, y, t, derivs, k, c, A, w, Q, wl, msz, w_last, grad, hess):
    """Value of the ``t``-scaled objective at ``y`` (``inf`` outside its domain); with ``derivs``
    also fills ``grad`` (n,) and ``hess`` (n, n)."""
    n = y.shape[0]
    if derivs:
        grad[:] = 0.0
        hess[:, :] = 0.0
    if kind == LINEAR:
        val = 0.0
        for j in range(n):
            val += c[j] * y[j]
            if derivs:
                grad[j] = t * c[j]
        return t * val
    if kind == QUADRATIC:
        val = 0.0
        for a in range(k):
            qa = 0.0
            for b in range(k):
                qa += Q[a, b] * y[b]
            val += y[a] * qa + c[a] * y[a]
            if derivs:
                grad[a] = t * (2.0 * qa + c[a])
                for b in range(k):
                    hess[a, b] = 2.0 * t * Q[a, b]
        return t * val
    nag = A.shape[0]
    if kind == NEGLOGSUM:
        val = 0.0
        for i in range(nag):
            if w[i] <= 0.0:
                continue
            u = 0.0
            for a in range(k):
                u += A[i, a] * y[a]
            if not u > 0.0:
                return _INF
            val -= w[i] * math.log(u)
            if derivs:
                s1 = t * w[i] / u
                s2 = s1 / u
                for a in range(k):
                    if A[i, a] == 0.0:
                        continue
                    grad[a] -= s1 * A[i, a]
                    for b in range(k):
                        hess[a, b] += s2 * A[i, a] * A[i, b]
        return t * val
    # OWA
    m_lev = wl.shape[0]
    u = _utilities(A, y, k)
    usum = 0.0
    for i in range(nag):
        usum += u[i]
    val = -w_last * usum
    for m in range(m_lev):
        val -= wl[m] * msz[m] * y[k + m]
    val *= t
    if derivs:
        for a in range(k):
            s = 0.0
            for i in range(nag):
                s += A[i, a]
            grad[a] = -t * w_last * s
        for m in range(m_lev):
            grad[k + m] = -t * wl[m] * msz[m]
    if m_lev == 0:
        return val
    dsum = np.zeros(nag)
    for m in range(m_lev):
        tau = t * wl[m]
        km = k + m
        val += nag * 2.0 * math.log(2.0 * tau)
        for i in range(nag):
            h, d1, d2 = _hinge(y[km] - u[i], tau)
            val += h
            if derivs:
                grad[km] += d1
                for a in range(k):
                    grad[a] -= d1 * A[i, a]
                    hess[km, a] -= d2 * A[i, a]
                hess[km, km] += d2
                dsum[i] += d2
    if derivs:
        for m in range(m_lev):
            for a in range(k):
                hess[a, k + m] = hess[k + m, a]
        for i in range(nag):
            di = dsum[i]
            for a in range(k):
                x = di * A[i, a]
                for b in range(a, k):
                    hess[a, b] += x * A[i, b]
        for a in range(k):
            for b in range(a + 1, k):
                hess[b, a] = hess[a, b]
    return val


@njit(cache=True)
def _lu_solve(M, rhs):
    """Solve ``M x = rhs`` (``rhs`` (n, r)) by LU with partial pivoting (LAPACK); least squares
    where ``M`` is singular or the result is not finite."""
    try:
        x = np.linalg.solve(M, rhs)
        if np.isfinite(x).all():
            return x
    except Exception:  # noqa: BLE001 -- LAPACK reports a singular matrix
        pass
    return np.linalg.lstsq(M, rhs, rcond=-1.0)[0]


@njit(cache=True)
def _direction(H, g, npv, Z, resid, dy):
    """Newton direction for the barrier Hessian ``H`` (nv, nv) and gradient ``g`` in the instance's
    variables (the first ``npv`` are the live arms). Without ``Z`` (0 columns) the step keeps
    ``sum p`` and removes ``resid``: the KKT system ``[[H, e], [e', 0]]``. With ``Z`` the step is
    ``Z dz`` (null space of the face equations). Both are solved by LU with symmetric Jacobi
    scaling (hinge curvatures span many orders of magnitude). Returns ``dy' H dy``."""
    nv = H.shape[0]
    if Z.shape[1] == 0:
        d = np.empty(nv)
        for i in range(nv):
            d[i] = 1.0 / math.sqrt(max(H[i, i], 1e-300))
        kkt = np.zeros((nv + 1, nv + 1))
        rhs = np.empty((nv + 1, 1))
        for i in range(nv):
            for j in range(nv):
                kkt[i, j] = H[i, j] * d[i] * d[j]
            rhs[i, 0] = -g[i] * d[i]
        for i in range(npv):
            kkt[i, nv] = d[i]
            kkt[nv, i] = d[i]
        rhs[nv, 0] = resid
        X = _lu_solve(kkt, rhs)
        dec = 0.0
        for i in range(nv):
            dy[i] = d[i] * X[i, 0]
            s = 0.0
            for j in range(nv):
                s += kkt[i, j] * X[j, 0]
            dec += X[i, 0] * s
        return dec
    nz = Z.shape[1]
    HZ = H @ Z
    hz = Z.T @ HZ
    gz = Z.T @ g
    d = np.empty(nz)
    for i in range(nz):
        d[i] = 1.0 / math.sqrt(max(hz[i, i], 1e-300))
    rhs = np.empty((nz, 1))
    for i in range(nz):
        rhs[i, 0] = -gz[i] * d[i]
        for j in range(nz):
            hz[i, j] *= d[i] * d[j]
    X = _lu_solve(hz, rhs)
    dec = 0.0
    dz = np.empty(nz)
    for i in range(nz):
        dz[i] = X[i, 0] * d[i]
        s = 0.0
        for j in range(nz):
            s += hz[i, j] * X[j, 0]
        dec += X[i, 0] * s
    for i in range(nv):
        s = 0.0
        for j in range(nz):
            s += Z[i, j] * dz[j]
        dy[i] = s
    return dec


@njit(cache=True)
def _barrier_value(kind, y, t, k, live, c, A, w, Q, wl, msz, w_last, g, h):
    val = objective(kind, y, t, False, k, c, A, w, Q, wl, msz, w_last, g, h)
    for a in range(k):
        if live[a]:
            if not y[a] > 0.0:
                return _INF
            val -= math.log(y[a])
    if not math.isfinite(val):
        return _INF
    return val


@njit(cache=True)
def _reduced(kind, y, t, k, live, vi, npv, c, A, w, Q, wl, msz, w_last, g, h, gs, Hs):
    """Objective plus barrier at ``y``: value, and gradient/Hessian in the instance's variables."""
    val = objective(kind, y, t, True, k, c, A, w, Q, wl, msz, w_last, g, h)
    nv = vi.shape[0]
    for i in range(nv):
        gs[i] = g[vi[i]]
        for j in range(nv):
            Hs[i, j] = h[vi[i], vi[j]]
    for i in range(npv):
        p = y[vi[i]]
        gs[i] -= 1.0 / p
        Hs[i, i] += 1.0 / (p * p)
        val -= math.log(p)
    return val


@njit(cache=True)
def _max_step(y, dy, vi, npv):
    ratio = _INF
    for i in range(npv):
        if dy[i] < 0.0:
            r = -y[vi[i]] / dy[i]
            if r < ratio:
                ratio = r
    return ratio


@njit(cache=True)
def _renormalise(y, vi, npv):
    s = 0.0
    for i in range(npv):
        s += y[vi[i]]
    for i in range(npv):
        y[vi[i]] /= s


@njit(cache=True)
def solve_one(kind, k, y, live, E, c, A, w, Q, wl, msz, w_last, n_barrier, gap, t0, mu,
              max_newton, newton_tol, fallback_gap, predictor):
    """Barrier method for one instance, in place on ``y``. Returns (status, Newton steps, duality
    gap bound reached). ``E`` (R, n): with R > 0 the steps keep ``E y`` fixed instead of ``sum p``."""
    n = y.shape[0]
    npv = 0
    for a in range(k):
        if live[a]:
            npv += 1
    nv = npv + n - k
    vi = np.empty(nv, dtype=np.int64)
    j = 0
    for a in range(k):
        if live[a]:
            vi[j] = a
            j += 1
        else:
            y[a] = 0.0
    for a in range(k, n):
        vi[j] = a
        j += 1
    total = 0.0
    for i in range(npv):
        if not y[vi[i]] > 0.0:
            return BAD_START, 0, _INF
        total += y[vi[i]]
    use_E = E.shape[0] > 0
    if use_E:
        Ev = np.empty((E.shape[0], nv))
        for r in range(E.shape[0]):
            for i in range(nv):
                Ev[r, i] = E[r, vi[i]]
        _u, sv, vt = np.linalg.svd(Ev)
        tol = 1e-10 * max(sv[0], 1e-300) if sv.shape[0] > 0 else 0.0
        rank = 0
        for s in sv:
            if s > tol:
                rank += 1
        Z = np.ascontiguousarray(vt[rank:, :].T)
        if Z.shape[1] == 0:  # a single feasible point: nothing to optimise
            return OK, 0, 0.0
    else:
        Z = np.empty((nv, 0))
        if abs(total - 1.0) > 1e-9:
            return BAD_START, 0, _INF
    m_total = npv + n_barrier
    g = np.empty(n)
    h = np.empty((n, n))
    g2 = np.empty(n)
    gs = np.empty(nv)
    gs2 = np.empty(nv)
    Hs = np.empty((nv, nv))
    dy = np.empty(nv)
    ytry = np.empty(n)
    last = y.copy()
    have_last = False
    last_gap = _INF
    t = t0
    steps = 0
    first = True
    while True:
        centred = False
        dec = 0.0
        limit = max_newton * 6 if first else max_newton
        # intermediate centrings only need to be approximate (the next stage starts from them);
        # the last one, whose gap bound m/t is reported, is centred to newton_tol
        final = m_total / t <= gap
        tol_c = max(newton_tol if final else max(newton_tol, _LOOSE), 1e-13 * t)
        for _it in range(limit):
            f0 = _reduced(kind, y, t, k, live, vi, npv, c, A, w, Q, wl, msz, w_last, g, h, gs, Hs)
            resid = 1.0
            for i in range(npv):
                resid -= y[vi[i]]
            dec = _direction(Hs, gs, npv, Z, resid, dy)
            if not math.isfinite(dec):
                break
            # dec/2 bounds the t-scaled suboptimality of the centring step; dec/(2t) in the
            # original units, so a threshold growing with t keeps that below 1e-13 while staying
            # above the rounding noise of a gradient whose terms grow like t
            if dec / 2.0 <= tol_c:
                centred = True
                break
            steps += 1
            ratio = _max_step(y, dy, vi, npv)
            # Step: the longest of a_max, a_max/4, a_max/16 passing an Armijo test, else the
            # damped Newton step 1/(1 + lambda), which decreases a self-concordant barrier without
            # a function evaluation (at large t the value's rounding exceeds the decrease).
            lam = math.sqrt(max(dec, 0.0))
            a_max = min(1.0, 0.99 * ratio)
            a_damp = min(1.0 / (1.0 + lam) if lam > 0.25 else 1.0, a_max)
            alpha = a_damp
            trial = a_max
            for _ls in range(3):
                if not trial > a_damp:
                    break
                ytry[:] = y
                for i in range(nv):
                    ytry[vi[i]] += trial * dy[i]
                fv = _barrier_value(kind, ytry, t, k, live, c, A, w, Q, wl, msz, w_last, g2, h)
                if fv <= f0 - 0.25 * trial * dec:
                    alpha = trial
                    break
                trial *= 0.25
            for i in range(nv):
                y[vi[i]] += alpha * dy[i]
            if not use_E:
                # near a vertex the system is ill-conditioned and sum(p) drifts by rounding; a
                # multiplicative rescale puts p back on the simplex without touching positivity
                _renormalise(y, vi, npv)
        first = False
        if not centred and not (math.isfinite(dec) and dec / (2.0 * t) <= 1e-9):
            # extreme t makes the Newton systems ill-conditioned: fall back to the last centred
            # iterate when its duality-gap bound is still tight, else report failure
            if have_last:
                y[:] = last
                return (FELL_BACK if last_gap <= fallback_gap else FAILED), steps, last_gap
            return FAILED, steps, _INF
        last[:] = y
        have_last = True
        last_gap = m_total / t
        if last_gap <= gap:
            return OK, steps, last_gap
        t_new = t * mu
        if predictor:
            _predict(kind, y, t, t_new, k, live, vi, npv, Z, use_E, c, A, w, Q, wl, msz, w_last,
                     g, g2, h, gs, gs2, Hs, dy, ytry, centred)
        t = t_new
        # the hinge levels' r sharpen with t: put each at its exact minimiser for the new t (about
        # 15% fewer Newton steps for the GGI)
        _recentre_r(kind, y, t, k, A, wl, msz)


@njit(cache=True)
def _recentre_r(kind, y, t, k, A, wl, msz):
    """OWA only: set each level's r_m to its exact minimiser for the current p and t (a 1-D convex
    problem per level: safeguarded Newton on the derivative, bracketed by bisection)."""
    if kind != OWA:
        return
    nag = A.shape[0]
    u = _utilities(A, y, k)
    for m in range(wl.shape[0]):
        tau = t * wl[m]
        target = wl[m] * msz[m] * t
        r = y[k + m]
        lo = -_INF
        hi = _INF
        for _it in range(60):
            g = -target
            h = 0.0
            for i in range(nag):
                _v, d1, d2 = _hinge(r - u[i], tau)
                g += d1
                h += d2
            if abs(g) <= 1e-12 * target:
                break
            if g > 0.0:
                hi = r
            else:
                lo = r
            step = -g / h if h > 0.0 else 0.0
            r_new = r + step
            if not (r_new > lo and r_new < hi) or not math.isfinite(r_new):
                if math.isfinite(lo) and math.isfinite(hi):
                    r_new = 0.5 * (lo + hi)
                elif math.isfinite(lo):
                    r_new = lo + 2.0 * max(abs(step), 1.0 / tau)
                else:
                    r_new = hi - 2.0 * max(abs(step), 1.0 / tau)
            r = r_new
        y[k + m] = r


@njit(cache=True)
def _predict(kind, y, t, t_new, k, live, vi, npv, Z, use_E, c, A, w, Q, wl, msz, w_last,
             g, g2, h, gs, gs2, Hs, dy, ytry, fresh):
    """Move a centred ``y`` along the tangent of the central path towards its point at ``t_new``:
    ``dy/dt = -H^-1 d(grad)/dt`` (feasible directions only), extrapolated linearly in ``1/t`` (the
    path approaches its limit like ``1/t``), cut back to stay inside the simplex and kept only where
    it lowers the barrier objective at ``t_new``. ``d(grad)/dt`` is a relative finite difference,
    exact for objectives ``t * f(y)`` and close for the smoothed hinges; the Newton steps that
    follow make the result exact either way. ``fresh``: the centring ended on its convergence test,
    so ``g`` and ``Hs`` are already the derivatives at ``y`` (no step followed them)."""
    nv = vi.shape[0]
    if not fresh:  # else g, Hs still hold the derivatives at y from the centring's last test
        _reduced(kind, y, t, k, live, vi, npv, c, A, w, Q, wl, msz, w_last, g, h, gs, Hs)
    eps = 1e-4
    objective(kind, y, t * (1.0 + eps), True, k, c, A, w, Q, wl, msz, w_last, g2, h)
    for i in range(nv):
        gs2[i] = (g2[vi[i]] - g[vi[i]]) / (t * eps)
    dec = _direction(Hs, gs2, npv, Z, 0.0, dy)
    if not math.isfinite(dec):
        return
    scale = t * (1.0 - t / t_new)
    for i in range(nv):
        dy[i] *= scale
        if not math.isfinite(dy[i]):
            return
    ratio = _max_step(y, dy, vi, npv)
    a = min(1.0, 0.995 * ratio)
    best = _barrier_value(kind, y, t_new, k, live, c, A, w, Q, wl, msz, w_last, g2, h)
    alpha = 0.0
    for frac in (1.0, 0.25):
        ytry[:] = y
        for i in range(nv):
            ytry[vi[i]] += frac * a * dy[i]
        fv = _barrier_value(kind, ytry, t_new, k, live, c, A, w, Q, wl, msz, w_last, g2, h)
        if fv < best:
            best = fv
            alpha = frac * a
    if alpha > 0.0:
        for i in range(nv):
            y[vi[i]] += alpha * dy[i]
        if not use_E:
            _renormalise(y, vi, npv)


@njit(cache=True)
def solve_batch(kind, k, Y, live, E, C, A, W, Q, wl, msz, w_last, n_barrier, gap, t0, mu,
                max_newton, newton_tol, fallback_gap, predictor):
    """:func:`solve_one` for every instance (row of ``Y``, in place). Per-instance data arrays have
    a leading batch axis; an unused one may have a single dummy row (index 0 is used for all)."""
    b = Y.shape[0]
    status = np.zeros(b, dtype=np.int64)
    steps = np.zeros(b, dtype=np.int64)
    achieved = np.zeros(b)
    for i in range(b):
        y = Y[i]
        st, ns, gp = solve_one(kind, k, y, live[i], E[min(i, E.shape[0] - 1)], C[min(i, C.shape[0] - 1)],
                               A[min(i, A.shape[0] - 1)], W[min(i, W.shape[0] - 1)], Q[min(i, Q.shape[0] - 1)],
                               wl, msz, w_last, n_barrier, gap, t0, mu, max_newton, newton_tol,
                               fallback_gap, predictor)
        status[i] = st
        steps[i] = ns
        achieved[i] = gp
    return status, steps, achieved


@njit(cache=True)
def evaluate(kind, k, Y, t, C, A, W, Q, wl, msz, w_last):
    """Objective value, gradient and Hessian for each row of ``Y`` (tests and diagnostics)."""
    b, n = Y.shape
    vals = np.empty(b)
    G = np.empty((b, n))
    H = np.empty((b, n, n))
    for i in range(b):
        vals[i] = objective(kind, Y[i], t, True, k, C[min(i, C.shape[0] - 1)], A[min(i, A.shape[0] - 1)],
                            W[min(i, W.shape[0] - 1)], Q[min(i, Q.shape[0] - 1)], wl, msz, w_last,
                            G[i], H[i])
    return vals, G, H


@njit(cache=True)
def pf_scores(masks, ps):
    """PF scores by max-flow/min-cut duality, ``min over arm sets X of p(X) + #{i : F_i not within X} / N``,
    for favourite bitmasks ``masks`` (B, N) and policies ``ps`` (B, K): every subset of the K arms
    is enumerated (``g`` counts the agents whose favourites lie within X by a subset-sum transform)."""
    b, n = masks.shape
    k = ps.shape[1]
    nsub = 1 << k
    g = np.empty(nsub)
    px = np.empty(nsub)
    out = np.empty(b)
    for i in range(b):
        g[:] = 0.0
        for a in range(n):
            g[masks[i, a]] += 1.0
        for j in range(k):
            step = 1 << j
            for s in range(nsub):
                if s & step:
                    g[s] += g[s ^ step]
        px[0] = 0.0
        for j in range(k):
            lo = 1 << j
            for s in range(lo, 2 * lo):
                px[s] = px[s - lo] + ps[i, j]
        best = np.inf
        for s in range(nsub):
            cut = px[s] + (n - g[s]) / n
            if cut < best:
                best = cut
        out[i] = min(max(best, 0.0), 1.0)
    return out
