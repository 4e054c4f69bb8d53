"""The fast Mallows sampler must give prefsampling's profile draw for draw (same seed, same votes)."""

import numpy as np
import pytest
from prefsampling.ordinal import mallows

from fairarena.preferences.cultures import mallows_rim


def test_same_profiles_as_prefsampling():
    rng = np.random.default_rng(7)
    cases = [(int(rng.integers(1, 30)), int(rng.integers(2, 12)), float(rng.choice([0.0, 1.0, rng.uniform()])),
              int(rng.integers(2**31 - 1))) for _ in range(300)]
    cases += [(5, 2, 0.5, 1), (1, 10, 0.9, 3), (20, 10, 1e-9, 4)]
    for n, k, phi, seed in cases:
        assert mallows_rim(n, k, phi, seed) == [list(map(int, v)) for v in mallows(n, k, phi, seed=seed)], (n, k, phi, seed)


def test_rankings_are_permutations_and_phi_zero_is_the_central_ranking():
    for vote in mallows_rim(50, 7, 0.4, 0):
        assert sorted(vote) == list(range(7))
    assert mallows_rim(10, 6, 0.0, 1) == [list(range(6))] * 10


def test_kendall_tau_distance_distribution_matches_the_model():
    # P(d) for K = 3: phi^d / Z with Z = (1)(1 + phi)(1 + phi + phi^2); counts of distances 0..3 are 1, 2, 2, 1
    phi, k, n = 0.5, 3, 40000
    votes = np.array(mallows_rim(n, k, phi, 11))
    inv = sum((votes[:, a] > votes[:, b]).astype(int) for a in range(k) for b in range(a + 1, k))
    z = (1 + phi) * (1 + phi + phi**2)
    expected = np.array([1, 2 * phi, 2 * phi**2, phi**3]) / z
    freq = np.bincount(inv, minlength=4) / n
    assert np.abs(freq - expected).max() < 0.01


def test_phi_out_of_range_is_an_input_error():
    from fairarena.errors import InputError

    with pytest.raises(InputError):
        mallows_rim(3, 3, 1.5, 0)
