"""Clean numbers for users (raw values stay in the API) and the Gini-coefficient reading of GGI."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fairarena.bandit.display import clean_numbers, clean_policy
from fairarena.bandit.notions import gini_coefficient, get_notion, min_gini_policy
from fairarena.bandit.problem import renormalise_policy
from fairarena.errors import InputError


def test_solver_noise_is_snapped_and_sums_to_one():
    assert clean_policy([0.4999999997, 0.4999999993, 1.0e-09]) == [0.5, 0.5, 0.0]
    assert clean_policy([-1e-12, 1.0000000001]) == [0.0, 1.0]
    q = clean_policy([1 / 3, 1 / 3, 1 / 3])
    assert sum(q) == pytest.approx(1.0, abs=1e-15) and all(x == pytest.approx(1 / 3, abs=1e-8) for x in q)
    out = clean_numbers({"policy": np.array([0.70833333331, 0.29166666669]), "x": -1e-13, "ok": True,
                         "n": np.int64(3), "rows": [[1.00000000002]]})
    assert out == {"policy": [0.70833333, 0.29166667], "x": 0.0, "ok": True, "n": 3, "rows": [[1.0]]}


def test_raw_values_stay_in_the_api():
    mu = np.array([[0.9, 0.1], [0.9, 0.1], [0.1, 0.9]])
    p = get_notion("nsw").policy(mu)
    assert p.dtype == float and p.sum() == pytest.approx(1.0)  # unrounded solver output


def test_renormalise_policy_rule():
    p, r = renormalise_policy([0.5, 0.5 + 5e-10], 2)
    assert not r and p[1] == 0.5 + 5e-10
    p, r = renormalise_policy([0.5, 0.5 + 5e-7], 2)
    assert r and p.sum() == pytest.approx(1.0, abs=1e-15)
    with pytest.raises(InputError):
        renormalise_policy([0.5, 0.5 + 2e-6], 2)


def test_gini_coefficient_known_values():
    assert gini_coefficient(np.array([1.0, 1.0, 1.0])) == 0.0
    assert gini_coefficient(np.array([0.0, 0.0, 1.0])) == pytest.approx(2 / 3)  # (n - 1) / n
    u = np.array([0.2, 0.5, 0.9])
    mean_diff = np.abs(u[:, None] - u[None, :]).sum() / (2 * 3**2 * u.mean())
    assert gini_coefficient(u) == pytest.approx(mean_diff)


@pytest.mark.parametrize("seed", range(6))
def test_min_gini_policy_against_a_grid(seed):
    """The Charnes-Cooper LP's optimum is at least as good as every point of a fine simplex grid, and
    among the minimisers it keeps the most total utility."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    mu = rng.uniform(0.05, 0.95, (n, 3))
    p = min_gini_policy(mu)
    g = gini_coefficient(mu @ p)
    steps = 60
    grid = np.array([(a, b, steps - a - b) for a, b in itertools.product(range(steps + 1), repeat=2)
                     if a + b <= steps], float) / steps
    gs = gini_coefficient(grid @ mu.T)
    assert g <= gs.min() + 1e-9
    near = grid[gs <= g + 1e-9]
    if len(near):
        assert (mu @ p).sum() >= (near @ mu.T).sum(axis=1).max() - 1e-6


def test_ggi_kind_option():
    mu = np.array([[0.9, 0.1], [0.9, 0.1], [0.1, 0.9]])
    ggi = get_notion("ggi")
    p = ggi.policy(mu, ggi_kind="gini")
    u = mu @ p
    assert gini_coefficient(u) == pytest.approx(0.0, abs=1e-8)  # (1/2, 1/2); the tie-break LP allows 1e-9 slack
    assert ggi.value(mu, p, ggi_kind="gini") == pytest.approx(1.0)
    with pytest.raises(InputError):
        ggi.policy(mu, ggi_kind="weird")
