"""NashUCB's maximiser against a brute-force grid; simplex projections."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.learners.nashucb import nashucb_maximise, nsw_objective, project_simplex, project_truncated_simplex


def _grid(k: int, h: int) -> np.ndarray:
    if k == 2:
        x = np.linspace(0, 1, h + 1)
        return np.stack([x, 1 - x], axis=1)
    return np.array([(i / h, j / h, (h - i - j) / h) for i in range(h + 1) for j in range(h + 1 - i)])


@pytest.mark.parametrize("form", ["product", "geometric"])
@pytest.mark.parametrize("k", [2, 3])
def test_maximiser_beats_a_brute_force_grid(form, k):
    rng = np.random.default_rng(10 * k + len(form))
    B, N = 60, 3
    mu = rng.random((B, N, k))
    bonus = rng.random((B, k)) * rng.choice([0.0, 0.02, 0.2, 1.0], size=(B, 1))
    p = nashucb_maximise(mu, bonus, form)
    assert np.allclose(p.sum(axis=1), 1) and (p >= 0).all()
    G = _grid(k, 300 if k == 2 else 120)
    f_sol = nsw_objective(mu, bonus, p, form, grad=False)[0]
    for i in range(B):
        f_grid = nsw_objective(np.broadcast_to(mu[i], (len(G), N, k)), np.broadcast_to(bonus[i], (len(G), k)),
                               G, form, grad=False)[0]
        best = int(f_grid.argmax())
        # never worse than the grid's best point ...
        assert f_sol[i] >= f_grid[best] - 1e-12, (i, f_sol[i], f_grid[best])
        # ... and, where the grid's maximum is clear, at the same place (within the grid step)
        second = np.sort(f_grid)[-1] - f_grid[np.abs(G - G[best]).max(axis=1) > 0.05].max(initial=-np.inf)
        if second > 1e-3:
            assert np.abs(p[i] - G[best]).max() <= 0.03, (i, p[i], G[best])


def test_maximiser_finds_the_global_maximum_of_a_bimodal_product():
    # two agents with opposite favourites: NSW = p(1-p) peaks inside, the bonus pulls to arm 2;
    # from the centre only, gradient ascent can stop at the wrong local maximum.
    mu = np.array([[[1.0, 0.0, 0.3], [0.0, 1.0, 0.3]]])
    bonus = np.array([[0.0, 0.0, 0.26]])
    p = nashucb_maximise(mu, bonus, "product")
    f = nsw_objective(mu, bonus, p, "product", grad=False)[0][0]
    assert f == pytest.approx(0.35, abs=1e-9) and p[0, 2] == pytest.approx(1.0)


def test_simplex_projections():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(200, 5)) * 3
    p = project_simplex(v)
    assert np.allclose(p.sum(axis=1), 1) and (p >= 0).all()
    # optimality: p is the closest point; compare with random feasible points
    q = rng.dirichlet(np.ones(5), size=200)
    assert (((v - p) ** 2).sum(axis=1) <= ((v - q) ** 2).sum(axis=1) + 1e-12).all()
    lo = project_truncated_simplex(v, 0.1)
    assert np.allclose(lo.sum(axis=1), 1) and (lo >= 0.1 - 1e-12).all()
    assert np.allclose(project_truncated_simplex(v, 0.2), 0.2)  # lower = 1/K: the uniform point
