"""The PF learner's exact hot paths: its policy on a mask, and the block runner."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.bandit.notions import pf_policy_from_favourites, pf_score_batch
from fairarena.learners.env import MultiAgentBandit
from fairarena.learners.catalog import make_learner
from fairarena.learners.pf_fast import nash_shares_policy, pf_policy_decomposed
from fairarena.learners.simulate import simulate


def _masks(seed: int, count: int):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        n, k = int(rng.integers(2, 12)), int(rng.integers(2, 9))
        f = rng.random((n, k)) < rng.uniform(0.1, 0.6)
        f[np.arange(n), rng.integers(0, k, n)] = True
        out.append(f)
    return out


def test_decomposed_pf_policy_matches_the_notions_library():
    cache: dict = {}
    for f in _masks(1, 150):
        p = pf_policy_decomposed(f, cache)
        q = pf_policy_from_favourites(f[None], None, tie_break="central")[0]
        assert np.allclose(p.sum(), 1) and (p >= 0).all()
        # decision shares are unique at the optimum; the policy is the face's centre for both
        assert np.allclose(f @ p, f @ q, atol=1e-5), (f.astype(int), p, q)
        # the policy (unlike the shares) is not unique: both sides return a numerical centre of the optimal
        # face, each to its own solver's tolerance; with numpy 2.3.5 / scipy 1.17.1 (a fresh install of
        # 2026-11-24) one of the 150 masks differs by 3.2e-4 while its shares agree to 1e-5
        assert np.abs(p - q).max() < 1e-3
        assert pf_score_batch(f[None], p[None])[0] == pytest.approx(1.0, abs=1e-9)
        assert np.log(f @ p).sum() >= np.log(f @ q).sum() - 1e-9


def test_decomposition_closed_forms():
    # every agent likes arm 2: all mass there; two disjoint groups: mass by headcount
    f = np.array([[1, 1, 0], [0, 1, 1], [0, 1, 0]], bool)
    assert np.allclose(pf_policy_decomposed(f), [0, 1, 0])
    f = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1]], bool)
    assert np.allclose(pf_policy_decomposed(f), [2 / 3, 0, 1 / 6, 1 / 6])


def test_nash_shares_policy_weights_equal_duplicated_rows():
    A = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]], float)
    p = nash_shares_policy(A, np.array([3.0, 1.0, 1.0]))
    q = pf_policy_from_favourites(np.repeat(A, [3, 1, 1], axis=0).astype(bool)[None], None, "central")[0]
    assert np.allclose(p, q, atol=1e-6)


@pytest.mark.parametrize("family,T", [("bernoulli", 3000), ("beta:0.1", 2500)])
def test_block_runner_equals_round_by_round(family, T):
    rng = np.random.default_rng(7)
    mu = rng.uniform(0.1, 0.9, (6, 5))
    env = MultiAgentBandit(mu, family)
    fast = simulate(make_learner("pf"), env, T, [0, 1, 2])
    slow = simulate(make_learner("pf", blocks=False), env, T, [0, 1, 2])
    assert np.array_equal(fast.arms, slow.arms)
    assert np.array_equal(fast.policies, slow.policies)
    for k in fast.regret:
        assert np.allclose(fast.regret[k], slow.regret[k], rtol=1e-12, atol=1e-9), k


def test_pf_learner_finds_the_pf_policy_and_stops_making_mistakes():
    mu = [[0.9, 0.5, 0.1], [0.9, 0.1, 0.5], [0.1, 0.5, 0.9]]
    env = MultiAgentBandit(mu, "bernoulli")
    res = simulate("pf", env, 20000, 3)
    assert np.allclose(res.final_policy(), [2 / 3, 0, 1 / 3], atol=0.03)  # minus forced exploration
    pf = res.regret["pf"]
    assert (pf[:, -1] == pf[:, res.grid >= 10000][:, 0]).all()  # no mistake in the second half
    assert res.final_scores()["pf"] > 0.97
