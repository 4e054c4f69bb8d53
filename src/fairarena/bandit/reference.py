"""Slow, obvious reference implementations with cvxpy (one instance at a time).

Used only by the differential tests and the benchmarks: each notion is written exactly as its
definition reads, solved by a general-purpose conic solver (Clarabel) with tight tolerances.
``cvxpy`` is a test-only dependency (``pip install 'fairarena[test]'``).
"""

from __future__ import annotations

import numpy as np

from fairarena.bandit.problem import favourites

_TOL = dict(tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, tol_ktratio=1e-10, max_iter=500)
# stage-2 tie-break: the optimal face, relaxed by this much (the stage-1 optimum is only this exact)
FACE_RELAX = 1e-9


def _solve(prob, tight=True):
    import cvxpy as cp

    prob.solve(solver=cp.CLARABEL, **(_TOL if tight else {}))
    if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise RuntimeError(f"cvxpy status {prob.status}")
    return prob.value


def _simplex(k):
    import cvxpy as cp

    p = cp.Variable(k, nonneg=True)
    return p, [cp.sum(p) == 1]


def _max_total_utility_on_face(mu, face_expr_fn, target):
    import cvxpy as cp

    k = mu.shape[1]
    p, cons = _simplex(k)
    cons += [cp.abs(face_expr_fn(p) - target) <= FACE_RELAX]
    # Clarabel's default tolerances: with the tight ones this thin LP often ends "inaccurate", off
    # the face by more than FACE_RELAX
    _solve(cp.Problem(cp.Maximize(cp.sum(mu @ p)), cons), tight=False)
    return np.clip(p.value, 0, None) / np.clip(p.value, 0, None).sum()


def pf_policy(mu, tol=1e-9, tie_break="utilitarian"):
    import cvxpy as cp

    A = favourites(mu, tol).astype(float)
    p, cons = _simplex(mu.shape[1])
    _solve(cp.Problem(cp.Maximize(cp.sum(cp.log(A @ p))), cons))
    if tie_break != "utilitarian":
        return p.value
    return _max_total_utility_on_face(mu, lambda q: A @ q, A @ p.value)


def _inequality_expr(mu, p):
    n = mu.shape[0]
    u = mu @ p
    import cvxpy as cp

    return 2.0 / (n * (n - 1)) * sum(cp.square(u[i] - u[j]) for i in range(n) for j in range(i + 1, n))


def ef_policy(mu, tie_break="utilitarian"):
    """Minimise the inequality (as defined, pairwise); with the utilitarian tie-break, then maximise
    total utility on the optimal face (every minimiser shares the centred utility vector v*).

    The minimiser of a quadratic is only found to about the square root of the solver's tolerance,
    and the face (hence the tie-break point and its scores) moves with it, so v* is polished
    before stage 2: on the support of the conic solution, ``min ||C mu_S x||^2 s.t. sum x = 1`` is
    solved exactly from its KKT system, and kept when it is feasible and no worse."""
    import cvxpy as cp

    p, cons = _simplex(mu.shape[1])
    _solve(cp.Problem(cp.Minimize(_inequality_expr(mu, p)), cons))
    if tie_break != "utilitarian":
        return p.value
    cm = mu - mu.mean(axis=0)
    return _max_total_utility_on_face(mu, lambda q: cm @ q, _polished_centre(cm, p.value))


def _polished_centre(cm, p):
    v = cm @ p
    support = np.flatnonzero(p > 1e-7)
    s = len(support)
    kkt = np.zeros((s + 1, s + 1))
    kkt[:s, :s] = 2.0 * cm[:, support].T @ cm[:, support]
    kkt[:s, s] = kkt[s, :s] = 1.0
    rhs = np.zeros(s + 1)
    rhs[s] = 1.0
    x = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:s]
    if x.min() < -1e-12 or abs(x.sum() - 1.0) > 1e-12:
        return v
    v_pol = cm[:, support] @ x
    return v_pol if v_pol @ v_pol <= v @ v else v


def ef_optimum(mu) -> float:
    """Minimal inequality I* (squared differences)."""
    import cvxpy as cp

    p, cons = _simplex(mu.shape[1])
    return _solve(cp.Problem(cp.Minimize(_inequality_expr(mu, p)), cons))


def uf_policy(mu):
    out = np.zeros(mu.shape[1])
    out[int(np.argmax(mu.sum(axis=0)))] = 1.0
    return out


def nsw_policy(mu):
    import cvxpy as cp

    p, cons = _simplex(mu.shape[1])
    _solve(cp.Problem(cp.Maximize(cp.sum(cp.log(mu @ p))), cons))
    return p.value


def owa_policy(mu, w):
    """maximise sum_m w_m U_(m) (ascending), w non-increasing: sum_m (w_m - w_{m+1}) S_m(U)."""
    import cvxpy as cp

    n, k = mu.shape
    p, cons = _simplex(k)
    u = mu @ p
    w = np.asarray(w, float)
    terms = [(w[m] - w[m + 1]) * (-cp.sum_largest(-u, m + 1)) for m in range(n - 1)]
    _solve(cp.Problem(cp.Maximize(sum(terms) + w[-1] * cp.sum(u)), cons))
    return p.value


def ggi_policy(mu):
    return owa_policy(mu, 2.0 ** -np.arange(mu.shape[0]))


def maximin_policy(mu):
    import cvxpy as cp

    p, cons = _simplex(mu.shape[1])
    _solve(cp.Problem(cp.Maximize(cp.min(mu @ p)), cons))
    return p.value


def pf_score(mu, p, tol=1e-9) -> float:
    """The PF score LP exactly as defined: max sum y[i,k] over favourite edges."""
    import cvxpy as cp

    n, k = mu.shape
    F = favourites(mu, tol).astype(float)
    y = cp.Variable((n, k), nonneg=True)
    cons = [cp.sum(y, axis=1) <= 1.0 / n, cp.sum(y, axis=0) <= p, cp.multiply(y, 1 - F) == 0]
    return float(_solve(cp.Problem(cp.Maximize(cp.sum(y)), cons)))


POLICIES = {"pf": pf_policy, "ef": ef_policy, "uf": uf_policy, "nsw": nsw_policy, "ggi": ggi_policy,
            "maximin": maximin_policy}
