"""The NashUCB update (Hossain, Micha & Shah, NeurIPS 2021), solved in batch.

    p_t = argmax_{p in simplex}  NSW(p, mu_hat) + sum_j p_j b_j,   b_j = c sqrt(ln(N K t) / n_j)

with ``NSW(p, mu) = prod_i U_i(p)`` (``form='product'``, the paper's) or its N-th root
(``form='geometric'``, same NSW maximiser, a bonus on the same scale for any N). The product
form is not concave (a product of linear functions is only log-concave), so the maximiser is found
by **projected gradient ascent with restarts**: from every vertex of the simplex, its centre and an
optional warm start (the previous solution); spectral (Barzilai-Borwein) steps with Armijo
backtracking per problem; every problem of every restart is stepped together as one stack. The best restart wins. On K = 2, 3 this
is tested against a brute-force grid, and ``benchmarks/bench_learners.py`` compares it with a
per-step scipy-minimize (SLSQP) implementation of the same restarts.
"""

from __future__ import annotations

import numpy as np

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
    uc = np.maximum(u, 1e-300)
    with np.errstate(divide="ignore"):
        logs = np.log(uc)
    g = np.exp(logs.mean(axis=1))
    if not grad:
        return g, None
    uc = np.maximum(u, 1e-12)
    return g, (g / n)[:, None] * np.einsum("bi,bik->bk", 1.0 / uc, mu)


def nashucb_maximise(mu: np.ndarray, bonus: np.ndarray, form: str = "product",
                     warm: np.ndarray | None = None, max_iter: int = 300, tol: float = 1e-8) -> np.ndarray:
    """argmax over the simplex of ``NSW(p, mu) + bonus . p`` for each of ``B`` problems: ``(B, K)``.

    Restarts: the K vertices, the centre and ``warm`` (B, K) when given; every restart of every
    problem is one row of a stack stepped together. Each row runs the spectral projected gradient
    method (Birgin, Martinez & Raydan 2000): Barzilai-Borwein step, projection onto the simplex,
    Armijo backtracking along the projected direction (monotone, so each restart climbs to a local
    maximum). Objective changes are computed as ``(NSW(q) - NSW(p)) + bonus . (q - p)``, never as a
    difference of totals, so that a product NSW of 1e-16 next to a bonus of order 1 is still seen.
    A row stops when ``||P(p + grad) - p||_inf <= tol`` or its line search fails. The best row
    per problem wins.
    """
    b, n, k = mu.shape
    starts = [np.broadcast_to(np.eye(k), (b, k, k)), np.full((b, 1, k), 1.0 / k)]
    if warm is not None:
        starts.append(np.asarray(warm, dtype=float)[:, None, :])
    x0 = np.concatenate(starts, axis=1)  # (B, R, K)
    r = x0.shape[1]
    P = x0.reshape(b * r, k).copy()
    M = np.repeat(mu, r, axis=0)
    Bo = np.repeat(bonus, r, axis=0)
    h, gh = nsw_part(M, P, form)  # NSW part and its gradient
    g = gh + Bo
    alpha = np.ones(b * r)
    active = np.arange(b * r)
    for _ in range(max_iter):
        if active.size == 0:
            break
        Pa, ga, ha = P[active], g[active], h[active]
        stat = np.abs(project_simplex(Pa + ga) - Pa).max(axis=1)
        keep = stat > tol
        active, Pa, ga, ha = active[keep], Pa[keep], ga[keep], ha[keep]
        if active.size == 0:
            break
        d = project_simplex(Pa + alpha[active, None] * ga) - Pa
        gd = (ga * d).sum(axis=1)
        lam = np.ones(active.size)
        Ma, Ba = M[active], Bo[active]
        hc, ghc = nsw_part(Ma, Pa + d, form)
        gain = (hc - ha) + (Ba * d).sum(axis=1)
        for _ in range(30):  # backtracking, only on the rows that need it
            bad = gain < 1e-4 * lam * gd
            if not bad.any():
                break
            lam[bad] *= 0.5
            stp = lam[bad, None] * d[bad]
            hb, gb = nsw_part(Ma[bad], Pa[bad] + stp, form)
            hc[bad], ghc[bad] = hb, gb
            gain[bad] = (hb - ha[bad]) + (Ba[bad] * stp).sum(axis=1)
        ok = (gain >= 1e-4 * lam * gd) & (gain >= 0)
        stp = lam[:, None] * d
        gc = ghc + Ba
        # Barzilai-Borwein step for the next iteration (curvature of -f along the step)
        sy = -(stp * (gc - ga)).sum(axis=1)
        ss = (stp * stp).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            bb = np.where(sy > 0, ss / sy, 1e4)
        alpha[active] = np.clip(bb, 1e-8, 1e4)
        acc = active[ok]
        P[acc] = Pa[ok] + stp[ok]
        h[acc] = hc[ok]
        g[acc] = gc[ok]
        active = acc  # a row whose line search failed is at a (numerical) maximum
    # best restart per problem, compared by differences to restart 0 (no cancellation)
    Pr, hr = P.reshape(b, r, k), h.reshape(b, r)
    rel = (hr - hr[:, :1]) + np.einsum("bk,brk->br", bonus, Pr - Pr[:, :1])
    best = rel.argmax(axis=1)
    return Pr[np.arange(b), best]
