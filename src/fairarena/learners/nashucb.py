"""The NashUCB update (Hossain, Micha & Shah, NeurIPS 2021), solved in batch.

    p_t = argmax_{p in simplex}  NSW(p, mu_hat) + sum_j p_j b_j,   b_j = c sqrt(ln(N K t) / n_j)

with ``NSW(p, mu) = prod_i U_i(p)`` (``form='product'``, the paper's) or its N-th root
(``form='geometric'``, same NSW maximiser, a bonus on the same scale for any N). The product
form is not concave (a product of linear functions is only log-concave), so the maximiser is found
by **projected gradient ascent with restarts**: from every vertex of the simplex, its centre and an
optional warm start (the previous solution); spectral (Barzilai-Borwein) steps of bounded length
with Armijo backtracking, finished by safeguarded Newton steps on the face the iterate has settled
on (details in :func:`nashucb_maximise`). The best restart wins. The solver is a numba kernel
(``cache=True``: compiled once per machine, ~8 s, then loaded from disk) that loops over problems
and restarts, one at a time, without allocating. It is tested against a brute-force grid
(K = 2, 3), a slow grid + SLSQP maximiser (K <= 5) and the KKT conditions, and
``benchmarks/bench_learners.py`` compares it with a per-step scipy-minimize (SLSQP) implementation
of the same restarts.
"""

from __future__ import annotations

import numpy as np
from numba import njit

FORMS = ("product", "geometric")


def project_simplex(v: np.ndarray, mass: float | np.ndarray = 1.0) -> np.ndarray:
    """Euclidean projection of each row of ``v`` (B, K) onto ``{p >= 0, sum p = mass}``."""
    b, k = v.shape
    u = -np.sort(-v, axis=1)
    css = np.cumsum(u, axis=1) - np.reshape(mass, (-1, 1))
    ind = np.arange(1, k + 1)
    cond = u - css / ind > 0
    rho = np.where(cond.any(axis=1), k - 1 - np.argmax(cond[:, ::-1], axis=1), 0)
    theta = css[np.arange(b), rho] / (rho + 1)
    return np.maximum(v - theta[:, None], 0.0)


def project_truncated_simplex(v: np.ndarray, lower: float) -> np.ndarray:
    """Projection onto ``{p : p_k >= lower, sum p = 1}`` (``lower <= 1/K``)."""
    k = v.shape[1]
    return project_simplex(v - lower, 1.0 - k * lower) + lower


def nsw_objective(mu: np.ndarray, bonus: np.ndarray, p: np.ndarray, form: str, grad: bool = True):
    """Value ``(B,)`` and gradient ``(B, K)`` of ``NSW(p, mu) + bonus . p`` for stacks
    ``mu (B, N, K)``, ``bonus (B, K)``, ``p (B, K)``."""
    g, gr = nsw_part(mu, p, form, grad)
    val = g + (bonus * p).sum(axis=1)
    return val, (None if gr is None else gr + bonus)


def nsw_part(mu: np.ndarray, p: np.ndarray, form: str, grad: bool = True):
    """``NSW(p, mu)`` ``(B,)`` and its gradient ``(B, K)`` (without the bonus)."""
    u = np.einsum("bik,bk->bi", mu, p)
    n = mu.shape[1]
    if form == "product":
        # products of all-but-one utilities, exact even when some U_i = 0
        pre = np.cumprod(np.concatenate([np.ones_like(u[:, :1]), u[:, :-1]], axis=1), axis=1)
        suf = np.cumprod(np.concatenate([np.ones_like(u[:, :1]), u[:, ::-1][:, :-1]], axis=1), axis=1)[:, ::-1]
        g = pre[:, -1] * u[:, -1]
        if not grad:
            return g, None
        return g, np.einsum("bi,bik->bk", pre * suf, mu)
    g = np.exp(np.log(np.maximum(u, 1e-300)).mean(axis=1))
    if not grad:
        return g, None
    # the gradient of (prod_i max(U_i, 1e-12))^(1/N): the same where every U_i > 1e-12, and where
    # some U_i = 0 it is large in the directions that raise U_i (the root has an infinite slope
    # there, so such a point is never a maximum), unless NSW = 0 everywhere (an agent with no
    # utility for any arm): then 0
    uc = np.maximum(u, 1e-12)
    gs = np.exp(np.log(uc).mean(axis=1))
    gr = (gs / n)[:, None] * np.einsum("bi,bik->bk", 1.0 / uc, mu)
    gr[(mu.max(axis=2) <= 0.0).any(axis=1)] = 0.0
    return g, gr


def nashucb_maximise(mu: np.ndarray, bonus: np.ndarray, form: str = "product",
                     warm: np.ndarray | None = None, max_iter: int = 300, tol: float = 1e-8) -> np.ndarray:
    """argmax over the simplex of ``NSW(p, mu) + bonus . p`` for each of ``B`` problems: ``(B, K)``.

    Restarts: the K vertices, the centre and ``warm`` (B, K) when given. From each restart of each
    problem, the spectral projected gradient method (Birgin, Martinez & Raydan 2000):
    Barzilai-Borwein step, projection onto the simplex, Armijo backtracking along the projected
    direction (monotone, so each restart climbs to a local maximum), the direction shortened to move
    no coordinate by more than 0.5 (the objective is not concave: a full spectral step can jump from
    the start's basin over a better maximum into a worse one). Objective changes are computed
    as ``(NSW(q) - NSW(p)) + bonus . (q - p)``, never as a difference of totals, so that a product
    NSW of 1e-16 next to a bonus of order 1 is still seen. Once the residual
    ``||P(p + grad) - p||_inf`` is below 1e-3 (and again each time it has fallen tenfold), Newton
    steps on the current face (``p_j = 0`` kept, ``sum p = 1``) are tried; a step is kept only
    where the face's reduced Hessian is negative definite, the Newton point lies in the simplex, the
    reduced gradient shrinks and the objective rises (by a tenth of the model's gain, or by rounding
    only, once the gain is at rounding level), so the Newton steps can only finish a climb, never
    redirect it; Newton is also tried every 25 iterations (narrow curved valleys, where some
    ``U_i`` is near 0 and the curvature ~ 1/U_i^2). When the Armijo search fails, a search along
    the projection arc ``P(p + a grad)`` is tried, and under the geometric form, at a point where
    some ``U_i = 0`` (NSW^(1/N) = 0 there but not everywhere, so the slope towards the centre is
    infinite unless every ``U_i = 0``), a step towards the centre. A restart stops when the residual is ``<= tol`` or every
    search fails (``max_iter`` bounds the iterations, Newton attempts included). The best restart
    per problem wins (compared by differences to the first restart, not by totals; the first best
    on a tie).

    Compiled (numba): a loop over problems and restarts, each solved alone, so a problem's answer
    does not depend on the batch it is solved in (bit for bit).
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    mu = np.ascontiguousarray(mu, dtype=np.float64)
    b, n, k = mu.shape
    bonus = np.ascontiguousarray(np.broadcast_to(bonus, (b, k)), dtype=np.float64)
    r = k + 1 + (warm is not None)
    x0 = np.empty((b, r, k))
    x0[:, :k] = np.eye(k)
    x0[:, k] = 1.0 / k
    if warm is not None:
        x0[:, k + 1] = warm
    out = np.empty((b, k))
    _nashucb_kernel(mu, bonus, x0, FORMS.index(form), int(max_iter), float(tol), out)
    return out


# ---------------------------------------------------------------------------------------------
# Compiled kernel: one problem and one restart at a time, no allocation in the inner loops
# ---------------------------------------------------------------------------------------------

_GEOMETRIC = 1
_POLISH_AT = 1e-3  # SPG residual at which Newton steps on the current face are first tried
_POLISH_EVERY = 25  # ... and every so many iterations whatever the residual
_NEWTON_STEPS = 8
_MAX_STEP = 0.5  # largest move per coordinate in one gradient step (see nashucb_maximise)
_ALPHA_MAX = 1e12  # largest spectral step: a nearly linear objective (a product NSW of 1e-20 next
# to bonuses differing by 1e-6) needs steps of 1/(gradient differences) to move at all


@njit(cache=True)
def _projected_direction(p, g, a, q, d, work):
    """``d = P(p + a g) - p`` (projection onto the simplex; ``q`` is scratch); returns ``g . d``."""
    k = p.shape[0]
    for j in range(k):
        q[j] = p[j] + a * g[j]
    _project_row(q, 1.0, d, work)
    gd = 0.0
    for j in range(k):
        d[j] -= p[j]
        gd += g[j] * d[j]
    return gd


@njit(cache=True)
def _project_row(v, mass, out, work):
    """``out`` = Euclidean projection of ``v`` (K,) onto ``{p >= 0, sum p = mass}``."""
    k = v.shape[0]
    if k <= 32:  # insertion sort, descending (small K: much cheaper than a general sort)
        for j in range(k):
            x = v[j]
            i = j
            while i > 0 and work[i - 1] < x:
                work[i] = work[i - 1]
                i -= 1
            work[i] = x
    else:
        for j in range(k):
            work[j] = -v[j]
        work.sort()
        for j in range(k):
            work[j] = -work[j]
    css = -mass
    theta = 0.0
    for j in range(k):
        css += work[j]
        t = css / (j + 1)
        if work[j] - t > 0.0:
            theta = t
    for j in range(k):
        x = v[j] - theta
        out[j] = x if x > 0.0 else 0.0


@njit(cache=True)
def _nsw_row(mu, p, form, grad, u, pre):
    """``NSW(p, mu)`` of one problem; its gradient into ``grad`` (K,). ``u``, ``pre``: (N,) work;
    ``u`` holds the utilities afterwards."""
    n, k = mu.shape
    for i in range(n):
        s = 0.0
        for j in range(k):
            s += mu[i, j] * p[j]
        u[i] = s
    for j in range(k):
        grad[j] = 0.0
    if form == _GEOMETRIC:
        acc = 0.0
        acc_s = 0.0
        dead = False
        for i in range(n):
            x = u[i] if u[i] > 1e-300 else 1e-300
            acc += np.log(x)
            x = u[i] if u[i] > 1e-12 else 1e-12
            acc_s += np.log(x)
            if u[i] <= 1e-12:
                row = 0.0
                for j in range(k):
                    row = max(row, mu[i, j])
                dead = dead or row <= 0.0
        g = np.exp(acc / n)
        if dead:  # an agent with no utility for any arm: NSW = 0 everywhere
            return g
        # gradient of (prod_i max(U_i, 1e-12))^(1/N), as in nsw_part
        gs = np.exp(acc_s / n)
        for i in range(n):
            x = u[i] if u[i] > 1e-12 else 1e-12
            w = gs / n / x
            for j in range(k):
                grad[j] += w * mu[i, j]
        return g
    # product: products of all-but-one utilities, exact even when some U_i = 0
    run = 1.0
    for i in range(n):
        pre[i] = run
        run *= u[i]
    suf = 1.0
    for i in range(n - 1, -1, -1):
        w = pre[i] * suf
        for j in range(k):
            grad[j] += w * mu[i, j]
        suf *= u[i]
    return run


@njit(cache=True)
def _nsw_hess_row(mu, u, h, grad, form, hess, pre, A, S):
    """Hessian (K, K) of ``NSW(p, mu)`` at the point whose utilities are ``u``, NSW part ``h`` and
    NSW gradient ``grad`` (as left by :func:`_nsw_row`). ``pre`` (N,), ``A`` (N, K), ``S`` (K,): work."""
    n, k = mu.shape
    if form == _GEOMETRIC:
        # f (v v^T - (1/n) sum_i mu_i mu_i^T / u_i^2), v = grad / f
        for a in range(k):
            for c in range(k):
                hess[a, c] = grad[a] * grad[c] / h if h > 0.0 else 0.0
        for i in range(n):
            x = u[i] if u[i] > 1e-12 else 1e-12
            w = h / n / (x * x)
            for a in range(k):
                for c in range(k):
                    hess[a, c] -= w * mu[i, a] * mu[i, c]
        return
    # product: d2f/dp_a dp_c = sum_{i != j} mu_ia mu_jc prod_{m != i, j} u_m, in O(N K^2), exact
    # with zero utilities: by the number z of agents with U_i = 0 (only pairs covering them count)
    z = 0
    z0 = -1
    z1 = -1
    for i in range(n):
        if u[i] == 0.0:
            if z == 0:
                z0 = i
            elif z == 1:
                z1 = i
            z += 1
    for a in range(k):
        for c in range(k):
            hess[a, c] = 0.0
    if z >= 3:
        return
    if z == 2:
        w = 1.0
        for m in range(n):
            if m != z0 and m != z1:
                w *= u[m]
        for a in range(k):
            for c in range(k):
                hess[a, c] = w * (mu[z0, a] * mu[z1, c] + mu[z1, a] * mu[z0, c])
        return
    # products of all-but-one utilities, as in _nsw_row: pre[i] = prod_{m != i} u_m
    run = 1.0
    for i in range(n):
        pre[i] = run
        run *= u[i]
    suf = 1.0
    for i in range(n - 1, -1, -1):
        pre[i] *= suf
        suf *= u[i]
    if z == 1:
        # pairs (z0, j), (j, z0): prod_{m != z0, j} u_m = pre[z0] / u_j
        for j in range(n):
            if j == z0:
                continue
            w = pre[z0] / u[j]
            for a in range(k):
                for c in range(k):
                    hess[a, c] += w * (mu[z0, a] * mu[j, c] + mu[j, a] * mu[z0, c])
        return
    # no zero: prod_{m != i, j} u_m = pre[i] / u_j, so with A_ic = mu_ic / u_i, S_c = sum_j A_jc:
    # hess_ac = sum_i pre_i mu_ia (S_c - A_ic) = grad_a S_c - sum_i pre_i mu_ia A_ic
    for c in range(k):
        S[c] = 0.0
    for i in range(n):
        r = 1.0 / u[i]
        for c in range(k):
            A[i, c] = mu[i, c] * r
            S[c] += A[i, c]
    for a in range(k):
        for c in range(k):
            hess[a, c] = grad[a] * S[c]
    for i in range(n):
        for a in range(k):
            x = pre[i] * mu[i, a]
            if x == 0.0:
                continue
            for c in range(k):
                hess[a, c] -= x * A[i, c]


@njit(cache=True)
def _newton_polish(mu, bonus, p, g, h, form, q, gc, u, pre, A, hess, R, y, free):
    """Newton steps on the face ``{q : q_j = 0 where p_j = 0, sum q = 1}`` of the simplex, from a
    point ``p`` close to a local maximum (in place; ``g`` the total gradient at ``p``). A step is
    taken only where the reduced Hessian is negative definite, the Newton point stays in the
    simplex, the reduced gradient shrinks and the objective does not fall: otherwise ``p`` is left
    as it is. Returns the NSW part at the (new) point and the number of steps taken."""
    k = p.shape[0]
    for it in range(_NEWTON_STEPS):
        m = 0
        for j in range(k):
            if p[j] > 0.0:
                free[m] = j
                m += 1
        if m < 2:
            return h, it
        last = free[m - 1]
        m1 = m - 1
        # reduced gradient and Hessian in the basis e_a - e_last of the face's tangent space
        hh = _nsw_row(mu, p, form, gc, u, pre)  # refresh u for the Hessian
        _nsw_hess_row(mu, u, hh, gc, form, hess, pre, A, q)  # q: work until the Newton point
        res = 0.0
        for a in range(m1):
            fa = free[a]
            y[a] = g[fa] - g[last]
            if abs(y[a]) > res:
                res = abs(y[a])
            for c in range(m1):
                fc = free[c]
                R[a, c] = -(hess[fa, fc] - hess[fa, last] - hess[last, fc] + hess[last, last])
        if res == 0.0:
            return h, it
        # Cholesky of -reduced Hessian (fails: not a strict local maximum of the face's quadratic model)
        dmax = 0.0
        for a in range(m1):
            if abs(R[a, a]) > dmax:
                dmax = abs(R[a, a])
        if not dmax > 0.0:
            return h, it
        for a in range(m1):
            for c in range(a + 1):
                s = R[a, c]
                for e in range(c):
                    s -= R[a, e] * R[c, e]
                if c == a:
                    if not s > 1e-12 * dmax:
                        return h, it
                    R[a, a] = np.sqrt(s)
                else:
                    R[a, c] = s / R[c, c]
        for a in range(m1):  # solve L L^T y = reduced gradient, in place
            s = y[a]
            for e in range(a):
                s -= R[a, e] * y[e]
            y[a] = s / R[a, a]
        pred = 0.0
        for a in range(m1):
            pred += y[a] * y[a]
        pred *= 0.5  # the quadratic model's gain
        for a in range(m1 - 1, -1, -1):
            s = y[a]
            for e in range(a + 1, m1):
                s -= R[e, a] * y[e]
            y[a] = s / R[a, a]
        for j in range(k):
            q[j] = p[j]
        tot = 0.0
        lin = 0.0
        for a in range(m1):
            fa = free[a]
            q[fa] = p[fa] + y[a]
            tot += y[a]
            lin += bonus[fa] * y[a]
        q[last] = p[last] - tot
        lin -= bonus[last] * tot
        for a in range(m):
            if q[free[a]] < 0.0:
                return h, it  # the maximum of the face is outside the simplex
        hc = _nsw_row(mu, q, form, gc, u, pre)
        for j in range(k):
            gc[j] += bonus[j]
        gain = (hc - h) + lin
        res_new = 0.0
        for a in range(m1):
            x = abs(gc[free[a]] - gc[last])
            if x > res_new:
                res_new = x
        scale = abs(h)
        for j in range(k):
            scale += abs(bonus[j] * p[j])
        if not (res_new < res and (gain >= 0.1 * pred or (pred <= 1e-10 * scale and gain >= -1e-12 * scale))):
            return h, it
        for j in range(k):
            p[j] = q[j]
            g[j] = gc[j]
        h = hc
    return h, _NEWTON_STEPS


@njit(cache=True)
def _escapable_zero(mu, p):
    """Some ``U_i(p) <= 1e-12`` while every agent has utility for some arm (so NSW > 0 inside)."""
    n, k = mu.shape
    zero = False
    for i in range(n):
        x = 0.0
        top = 0.0
        for j in range(k):
            x += mu[i, j] * p[j]
            top = max(top, mu[i, j])
        if top <= 0.0:
            return False
        zero = zero or x <= 1e-12
    return zero


@njit(cache=True)
def _kkt_vertex(p, g):
    """``p`` is a vertex ``e_j`` and ``g_j >= g_k`` for every k (a first-order maximum)."""
    k = p.shape[0]
    j = -1
    for i in range(k):
        if p[i] != 0.0:
            if j >= 0 or p[i] != 1.0:
                return False
            j = i
    if j < 0:
        return False
    for i in range(k):
        if g[i] > g[j]:
            return False
    return True


@njit(cache=True)
def _spg_row(mu, bonus, p, g, form, max_iter, tol, q, d, gc, work, u, pre, A, hess, R, y, free):
    """Spectral projected gradient ascent from ``p`` (K,), in place, with Newton steps on the face
    once the residual is below ``_POLISH_AT``; returns the NSW part at the end."""
    k = p.shape[0]
    h = _nsw_row(mu, p, form, g, u, pre)
    for j in range(k):
        g[j] += bonus[j]
    alpha = 1.0
    polish_at = _POLISH_AT
    since = 0
    for _ in range(max_iter):
        if _kkt_vertex(p, g):
            break  # a vertex whose gradient entry is the largest: exactly stationary
        for j in range(k):
            q[j] = p[j] + g[j]
        _project_row(q, 1.0, d, work)
        stat = 0.0
        for j in range(k):
            x = abs(d[j] - p[j])
            if x > stat:
                stat = x
        since += 1
        if stat > 0.0 and (stat <= polish_at or since >= _POLISH_EVERY):
            # Newton on the current face: tried again each time the residual has fallen tenfold,
            # and every _POLISH_EVERY iterations (a narrow curved valley, where first-order steps
            # zigzag: e.g. an agent's utility near 0 with a large bonus, curvature ~ 1/U_i^2)
            if stat <= polish_at:
                polish_at = 0.1 * stat
            since = 0
            h, steps = _newton_polish(mu, bonus, p, g, h, form, q, gc, u, pre, A, hess, R, y, free)
            if steps > 0:
                continue  # re-test the residual at the polished point
        if stat <= tol:
            break
        gd = _projected_direction(p, g, alpha, q, d, work)
        dn = 0.0
        for j in range(k):
            dn = max(dn, abs(d[j]))
        if dn > _MAX_STEP:  # a shorter step along the same direction: stay in the start's basin
            sc = _MAX_STEP / dn
            gd *= sc
            for j in range(k):
                d[j] *= sc
        lam = 1.0
        gain = 0.0
        hc = 0.0
        for bt in range(31):  # the full step, then up to 30 halvings
            if bt > 0:
                lam *= 0.5
            lin = 0.0
            for j in range(k):
                q[j] = p[j] + lam * d[j]
                lin += bonus[j] * lam * d[j]
            hc = _nsw_row(mu, q, form, gc, u, pre)
            gain = (hc - h) + lin
            if gain >= 1e-4 * lam * gd:
                break
        ok = gain >= 1e-4 * lam * gd and gain >= 0.0
        if not ok:
            # fallback: Armijo search along the projection arc P(p + a grad), a = alpha/2, alpha/4, ...
            # For a small a the arc raises every coordinate whose gradient is above the face's
            # level, where the straight direction to P(p + alpha grad) may raise only some (e.g. at
            # a vertex where two agents have U_i = 0, under the geometric form: NSW grows like
            # eps^(2/N) only if both of their arms are raised)
            a = alpha
            for _bt in range(50):
                a *= 0.5
                gd = _projected_direction(p, g, a, q, d, work)
                lin = 0.0
                for j in range(k):
                    lin += bonus[j] * d[j]
                    q[j] = p[j] + d[j]
                if not gd > 0.0:
                    break  # no ascent along the arc
                hc = _nsw_row(mu, q, form, gc, u, pre)
                gain = (hc - h) + lin
                if gain >= 1e-4 * gd and gain > 0.0:
                    ok = True
                    lam = 1.0
                    break
        if not ok and form == _GEOMETRIC:
            # NSW^(1/N) = 0 at p (z agents have U_i = 0) but not everywhere: towards the centre c
            # it grows like e^(z/N) (U_i(p + e(c - p)) >= e U_i(c) > 0 for every agent), with an
            # infinite slope if z < N, so p is no maximum however large the bonus; step towards c
            # by the largest e in 1/2, 1/4, ... that raises the objective, if any
            if _escapable_zero(mu, p):
                e = 1.0
                for _bt in range(60):
                    e *= 0.5
                    lin = 0.0
                    for j in range(k):
                        d[j] = e * (1.0 / k - p[j])
                        q[j] = p[j] + d[j]
                        lin += bonus[j] * d[j]
                    hc = _nsw_row(mu, q, form, gc, u, pre)
                    gain = (hc - h) + lin
                    if gain > 0.0:
                        ok = True
                        lam = 1.0
                        break
        # Barzilai-Borwein step for the next iteration (curvature of -f along the step)
        sy = 0.0
        ss = 0.0
        for j in range(k):
            gc[j] += bonus[j]
            s = lam * d[j]
            sy -= s * (gc[j] - g[j])
            ss += s * s
        bb = ss / sy if sy > 0.0 else _ALPHA_MAX
        alpha = min(max(bb, 1e-8), _ALPHA_MAX)
        if not ok:  # both searches failed: a (numerical) maximum, or a ridge too steep for
            # first-order steps (curvature ~ 1/U_i^2 where some U_i is tiny): a Newton attempt
            h, steps = _newton_polish(mu, bonus, p, g, h, form, q, gc, u, pre, A, hess, R, y, free)
            if steps == 0:
                break
            continue
        for j in range(k):
            p[j] = q[j]
            g[j] = gc[j]
        h = hc
    return h


@njit(cache=True)
def _nashucb_kernel(mu, bonus, x0, form, max_iter, tol, out):
    """For each problem b: run :func:`_spg_row` from every row of ``x0[b]`` (R, K); the best
    restart (compared by differences to restart 0, so no cancellation) goes to ``out[b]``."""
    nb, n, k = mu.shape
    r = x0.shape[1]
    P = np.empty((r, k))
    H = np.empty(r)
    g = np.empty(k)
    q = np.empty(k)
    d = np.empty(k)
    gc = np.empty(k)
    work = np.empty(k)
    u = np.empty(n)
    pre = np.empty(n)
    A = np.empty((n, k))
    hess = np.empty((k, k))
    R = np.empty((k, k))
    y = np.empty(k)
    free = np.empty(k, dtype=np.int64)
    for b in range(nb):
        for s in range(r):
            for j in range(k):
                P[s, j] = x0[b, s, j]
            H[s] = _spg_row(mu[b], bonus[b], P[s], g, form, max_iter, tol, q, d, gc, work, u, pre,
                            A, hess, R, y, free)
        best = 0
        best_rel = 0.0
        for s in range(1, r):
            rel = H[s] - H[0]
            for j in range(k):
                rel += bonus[b, j] * (P[s, j] - P[0, j])
            if rel > best_rel:
                best, best_rel = s, rel
        for j in range(k):
            out[b, j] = P[best, j]
