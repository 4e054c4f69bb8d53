"""Environment: reward families, Beta parameters, reward stacks."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.errors import InputError
from fairarena.learners.env import ArmStacks, MultiAgentBandit, RewardFamily, beta_params, parse_family


def test_beta_params_solve_mean_and_std():
    a, b = beta_params(0.9, 0.1)
    assert a == pytest.approx(7.2) and b == pytest.approx(0.8)
    a, b = beta_params(np.array([0.5, 0.1]), 0.1)
    assert np.allclose(a / (a + b), [0.5, 0.1])
    var = a * b / ((a + b) ** 2 * (a + b + 1))
    assert np.allclose(np.sqrt(var), 0.1)


@pytest.mark.parametrize("mean,std", [(0.5, 0.5), (0.9, 0.3), (0.1, 0.31), (0.0, 0.1), (1.0, 0.1), (0.5, 0.0), (0.5, -0.1)])
def test_impossible_beta_pairs_are_rejected(mean, std):
    with pytest.raises(InputError):
        beta_params(mean, std)


def test_environment_rejects_a_beta_std_too_large_for_some_mean():
    with pytest.raises(InputError, match="too large"):
        MultiAgentBandit([[0.5, 0.99]], "beta:0.2")


@pytest.mark.parametrize("spec", ["", "beta", "beta:x", "poisson:1", "bernoulli:0.1", "gaussian:-1", "gaussian:0"])
def test_bad_family_specs(spec):
    with pytest.raises(InputError):
        parse_family(spec)


def test_family_parsing():
    assert parse_family("Beta:0.1") == RewardFamily("beta", 0.1)
    assert parse_family("bernoulli") == RewardFamily("bernoulli")
    assert parse_family("gaussian:0.2").label == "gaussian:0.2"


@pytest.mark.parametrize("family", ["bernoulli", "beta:0.1", "gaussian:0.3"])
def test_sampled_rewards_have_the_environment_means(family):
    env = MultiAgentBandit([[0.9, 0.05], [0.3, 0.6]], family)
    st = env.streams([0, 1])
    draws = np.stack([st.pull(np.array([1, 1])) for _ in range(20000)])  # (T, S, N)
    assert draws.min() >= 0 and draws.max() <= 1
    assert np.allclose(draws.mean(axis=(0, 1)), env.means[:, 1], atol=0.01)
    if family == "beta:0.1":
        assert np.allclose(draws.std(axis=(0, 1)), 0.1, atol=0.005)


def test_clipped_gaussian_means_shift_towards_the_middle():
    env = MultiAgentBandit([[0.95, 0.5, 0.02]], "gaussian:0.2")
    assert env.means[0, 0] < 0.95 and env.means[0, 2] > 0.02
    assert env.means[0, 1] == pytest.approx(0.5)


def test_reward_stacks_do_not_depend_on_how_they_are_read():
    env = MultiAgentBandit([[0.2, 0.7, 0.5], [0.9, 0.1, 0.4]], "beta:0.1")
    stack = env.reward_stack(5, 1, 1300)  # crosses chunk boundaries
    arms = ArmStacks(env, 5)
    seq = np.array([1, 0, 1, 1, 2] * 400)
    got = arms.peek(seq)
    arms.commit(seq[:7])  # commit a prefix, read on: the next arm-1 rewards continue the stack
    rest = arms.peek(np.array([1] * 600))
    ones = got[seq == 1]
    assert np.array_equal(ones, stack[: ones.shape[0]])
    n_committed = int((seq[:7] == 1).sum())
    assert np.array_equal(rest, stack[n_committed:n_committed + 600])
    other = env.reward_stack(6, 1, 10)
    assert not np.array_equal(other, stack[:10])


def test_dots_ships_with_the_package_and_no_machine_path_is_named():
    from pathlib import Path

    import fairarena.learners as pkg
    from fairarena.learners.instances import DOTS_FILE, dots_resource, dots_rewards

    assert dots_resource().name == DOTS_FILE and dots_resource().is_file()
    mu = dots_rewards()
    assert mu.shape == (50, 4) and np.allclose(np.sort(mu, axis=1), np.linspace(0.1, 0.9, 4))
    for src in Path(pkg.__file__).parent.glob("*.py"):
        text = src.read_text(encoding="utf-8")
        assert "/work/" not in text and "/home/" not in text, src.name
