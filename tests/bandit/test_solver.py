"""The barrier engine's pieces against direct computation."""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from fairarena.bandit import solver as S


@pytest.mark.parametrize("tau", [0.5, 3.0, 1e4])
@pytest.mark.parametrize("v", [-50.0, -1.0, -1e-3, 0.0, 2e-3, 0.7, 40.0])
def test_smoothed_hinge_is_the_partial_minimum(tau, v):
    lo = max(0.0, v)

    def f(s):
        return tau * s - np.log(s) - np.log(s - v)

    res = minimize_scalar(f, bounds=(lo + 1e-15, lo + 100 / tau + 100), method="bounded",
                          options={"xatol": 1e-14, "maxiter": 2000})
    val, d1, d2 = S.smoothed_hinge(v, tau)
    assert val == pytest.approx(res.fun, rel=1e-8, abs=1e-7)
    h = 1e-5 * max(1.0 / tau, abs(v))
    fd1 = (S.smoothed_hinge(v + h, tau)[0] - S.smoothed_hinge(v - h, tau)[0]) / (2 * h)
    assert d1 == pytest.approx(fd1, rel=1e-4, abs=1e-6)
    fd2 = (S.smoothed_hinge(v + h, tau)[1] - S.smoothed_hinge(v - h, tau)[1]) / (2 * h)
    assert d2 == pytest.approx(fd2, rel=1e-4, abs=1e-6)


def test_owa_objective_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    mu = rng.uniform(0.1, 0.9, (3, 4, 3))
    obj = S.OWAObjective(mu, 2.0 ** -np.arange(4))
    y = obj.start(rng.dirichlet(np.ones(3), size=3))
    val, g, h = obj(y, 7.0, True)
    eps = 1e-6
    for j in range(y.shape[1]):
        e = np.zeros_like(y)
        e[:, j] = eps
        fd = (obj(y + e, 7.0, False)[0] - obj(y - e, 7.0, False)[0]) / (2 * eps)
        np.testing.assert_allclose(g[:, j], fd, rtol=1e-5, atol=1e-6)
        gd = (obj(y + e, 7.0, True)[1] - obj(y - e, 7.0, True)[1]) / (2 * eps)
        np.testing.assert_allclose(h[:, :, j], gd, rtol=1e-4, atol=1e-5)


def test_barrier_solves_a_small_lp_on_a_face_exactly():
    # maximise 0.3 p1 + 0.7 p2 + 0.5 p3 on the simplex with p1 + p2 = 0.5: optimum (0, 0.5, 0.5)
    c = -np.array([[0.3, 0.7, 0.5]])
    E = np.array([[[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]])
    res = S.barrier_solve(S.LinearObjective(c), np.array([[0.25, 0.25, 0.5]]), 3, E=E)
    np.testing.assert_allclose(res.y[0], [0.0, 0.5, 0.5], atol=1e-9)
    assert res.gap_bound <= 1e-10


def test_barrier_keeps_dead_arms_at_zero():
    c = -np.array([[0.3, 0.9, 0.5]])
    res = S.barrier_solve(S.LinearObjective(c), np.array([[0.5, 0.0, 0.5]]), 3,
                          live=np.array([[True, False, True]]))
    np.testing.assert_allclose(res.y[0], [0.0, 0.0, 1.0], atol=1e-9)


def test_barrier_rejects_infeasible_start():
    with pytest.raises(S.SolverError):
        S.barrier_solve(S.LinearObjective(np.zeros((1, 2))), np.array([[1.0, 0.0]]), 2)


def test_predictor_changes_the_path_not_the_answer():
    # the tangent predictor (and the OWA levels' exact r after each t increase) only choose where the
    # Newton steps start: values must agree with plain path following, in fewer steps
    rng = np.random.default_rng(5)
    mu = rng.uniform(0.05, 0.95, (25, 7, 5))
    w = 2.0 ** -np.arange(7)
    cases = [S.OWAObjective(mu, w), S.NegLogSumObjective(mu),
             S.QuadraticObjective(np.einsum("bik,bil->bkl", mu - mu.mean(1, keepdims=True), mu - mu.mean(1, keepdims=True)))]
    for obj in cases:
        p0 = np.full((25, 5), 0.2)
        y0 = obj.start(p0) if isinstance(obj, S.OWAObjective) else p0
        a = S.barrier_solve(obj, y0, 5, gap=1e-10)
        b = S.barrier_solve(obj, y0, 5, gap=1e-10, predictor=False)
        va, vb = obj(a.y, 1.0, False)[0], obj(b.y, 1.0, False)[0]
        if isinstance(obj, S.OWAObjective):  # the t = 1 value includes smoothing terms: compare the OWA itself
            u = np.sort(np.einsum("bik,bk->bi", mu, a.y[:, :5]), 1) @ w
            v = np.sort(np.einsum("bik,bk->bi", mu, b.y[:, :5]), 1) @ w
            np.testing.assert_allclose(u, v, atol=1e-8)
        else:
            np.testing.assert_allclose(va, vb, atol=1e-8)
        assert a.steps.sum() < b.steps.sum()


def test_redundant_face_equations_are_harmless_and_ties_land_at_the_centre():
    # repeated rows in E (the null space comes from an SVD) and an objective constant on the face:
    # the barrier's answer is the face's centre
    c = -np.array([[0.5, 0.5, 0.1]])
    E = np.array([[[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]])  # redundant rows
    res = S.barrier_solve(S.LinearObjective(c), np.array([[0.3, 0.3, 0.4]]), 3, E=E)
    np.testing.assert_allclose(res.y[0], [0.3, 0.3, 0.4], atol=1e-9)  # E fixes p3 = 0.4 and p1 + p2
