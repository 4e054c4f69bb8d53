"""Each culture's statistical signature, seeding and validation."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.errors import InputError
from fairarena.preferences import CULTURES, is_single_peaked, sample_profile


def _kendall_to_identity(profile: np.ndarray) -> np.ndarray:
    pos = np.argsort(profile, axis=1)  # position of each candidate
    k = profile.shape[1]
    i, j = np.triu_indices(k, 1)
    return (pos[:, i] > pos[:, j]).sum(axis=1)


@pytest.mark.parametrize("culture", sorted(CULTURES))
def test_profiles_are_rankings_and_seeded(culture):
    a = sample_profile(culture, 30, 6, seed=7, phi=0.5)
    b = sample_profile(culture, 30, 6, seed=7, phi=0.5)
    c = sample_profile(culture, 30, 6, seed=8, phi=0.5)
    assert a.shape == (30, 6)
    assert np.array_equal(np.sort(a, axis=1), np.tile(np.arange(6), (30, 1)))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("culture", ["sp_conitzer", "sp_walsh"])
def test_single_peaked_cultures_are_single_peaked(culture):
    for seed in range(20):
        assert is_single_peaked(sample_profile(culture, 25, 7, seed=seed))


def test_single_peaked_check_can_fail():
    assert not is_single_peaked(np.array([[0, 2, 1]]))  # peak 0, then 2 jumps over 1
    assert is_single_peaked(np.array([[1, 2, 0, 3]]))
    # impartial culture on 6 arms is almost never single-peaked for 40 voters
    assert not is_single_peaked(sample_profile("ic", 40, 6, seed=1))


def test_mallows_phi_zero_gives_identical_central_orders():
    prof = sample_profile("mallows", 50, 8, seed=3, phi=0.0)
    assert np.array_equal(prof, np.tile(np.arange(8), (50, 1)))


def test_mallows_dispersion_grows_with_phi():
    k = 6
    means = [_kendall_to_identity(sample_profile("mallows", 400, k, seed=5, phi=phi)).mean()
             for phi in (0.1, 0.5, 1.0)]
    assert means[0] < means[1] < means[2]
    # phi = 1 is impartial culture: expected Kendall distance K(K-1)/4
    assert abs(means[2] - k * (k - 1) / 4) < 0.5
    # phi = 0.1: nearly all mass on the central order and its neighbours
    assert means[0] < 0.8


def test_impartial_culture_top_choice_is_uniform():
    top = sample_profile("ic", 6000, 4, seed=11)[:, 0]
    freq = np.bincount(top, minlength=4) / 6000
    assert np.all(np.abs(freq - 0.25) < 0.03)


def test_iac_differs_from_ic_in_profile_distribution():
    # two arms, three voters: the number of voters ranking arm 0 first is uniform on {0..3} under
    # IAC (each anonymous profile equally likely) but Binomial(3, 1/2) under IC
    def counts(culture):
        c = np.array([(sample_profile(culture, 3, 2, seed=s)[:, 0] == 0).sum() for s in range(3000)])
        return np.bincount(c, minlength=4) / 3000

    iac, ic = counts("uniform"), counts("ic")
    assert np.all(np.abs(iac - 0.25) < 0.04)
    assert np.all(np.abs(ic - np.array([1, 3, 3, 1]) / 8) < 0.04)


@pytest.mark.parametrize("kwargs, field", [
    (dict(culture="nope", n=3, k=3), "culture"),
    (dict(culture="mallows", n=3, k=3, phi=1.5), "phi"),
    (dict(culture="mallows", n=3, k=3, phi=-0.1), "phi"),
    (dict(culture="mallows", n=3, k=3), "phi"),
    (dict(culture="ic", n=0, k=3), "N"),
    (dict(culture="ic", n=3, k=-1), "K"),
])
def test_bad_culture_input_names_the_field(kwargs, field):
    with pytest.raises(InputError) as exc:
        sample_profile(seed=1, **kwargs)
    assert exc.value.field == field
