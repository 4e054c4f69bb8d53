"""Rank -> reward maps: rank order, value range, favourite counts."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.bandit.problem import favourites
from fairarena.errors import InputError
from fairarena.preferences import reward_matrix, rewards_from_profile, sample_profile


def test_rewards_follow_the_ranking_and_stay_inside_the_bounds():
    prof = sample_profile("ic", 40, 6, seed=2)
    mu = reward_matrix(prof, np.random.default_rng(0), "strict", low=0.05, high=0.95)
    by_rank = np.take_along_axis(mu, prof, axis=1)
    assert np.all(np.diff(by_rank, axis=1) < 0)  # strictly decreasing along each ranking
    assert mu.min() >= 0.05 and mu.max() <= 0.95
    assert np.array_equal(favourites(mu).argmax(axis=1), prof[:, 0])


@pytest.mark.parametrize("f", [1, 2, 4])
def test_fixed_mode_gives_every_agent_exactly_f_favourites_at_its_top_ranks(f):
    prof = sample_profile("ic", 30, 5, seed=4)
    mu = reward_matrix(prof, np.random.default_rng(1), "fixed", f)
    fav = favourites(mu)
    assert np.all(fav.sum(axis=1) == f)
    for i in range(30):
        assert set(np.flatnonzero(fav[i])) == set(prof[i, :f])


def test_random_mode_draws_f_uniformly_from_1_to_k():
    k = 4
    prof = sample_profile("ic", 4000, k, seed=9)
    counts = favourites(reward_matrix(prof, np.random.default_rng(2), "random")).sum(axis=1)
    freq = np.bincount(counts, minlength=k + 1)[1:] / 4000
    assert np.all(np.abs(freq - 1 / k) < 0.03)


def test_fixed_mode_rejects_impossible_f():
    prof = sample_profile("ic", 3, 3, seed=1)
    for f in (0, 3, 4):
        with pytest.raises(InputError) as exc:
            reward_matrix(prof, np.random.default_rng(0), "fixed", f)
        assert exc.value.field == "f"
    with pytest.raises(InputError) as exc:
        reward_matrix(prof, np.random.default_rng(0), "sometimes", 1)
    assert exc.value.field == "fav_mode"


def test_rewards_from_profile_places_values_by_rank():
    mu = rewards_from_profile(np.array([[2, 0, 1]]), np.array([[0.9, 0.5, 0.1]]))
    assert mu.tolist() == [[0.5, 0.1, 0.9]]
