"""The learning results of the procedural-fairness paper, as properties (issue 10, point 9).

- Theorem 2: the EF learner's EF regret is sublinear;
- the PF learner's forced exploration: at most ``T^gamma / gamma`` rounds in expectation;
- the impossibility construction (an EF-optimal policy whose PF score tends to 0): our derivation,
  documented in ``docs/learners.md``, tested as a limit over growing numbers of agents.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairarena.bandit.notions import get_notion, optimal_policies
from fairarena.learners import MultiAgentBandit, make_learner, simulate

INSTANCE = [[0.9, 0.5, 0.1], [0.8, 0.1, 0.5], [0.1, 0.5, 0.9]]


def test_theorem_2_ef_learner_regret_is_sublinear():
    env = MultiAgentBandit(INSTANCE, "bernoulli")
    res = simulate("ef", env, 20000, [0, 1])
    curve = res.regret["ef"].mean(axis=0)
    g = res.grid
    # the average regret R_t / t falls by an order of magnitude from t = 200 to t = T
    early = curve[np.searchsorted(g, 200)] / g[np.searchsorted(g, 200)]
    assert curve[-1] / 20000 < early / 10
    slope = res.regret_slope("ef")
    assert slope < 0.8, slope
    # the uniform policy, for contrast, pays a constant EF regret per round (linear regret)
    uni = simulate("uniform", env, 20000, [0]).regret["ef"][0]
    half = np.searchsorted(g, 10000)
    assert curve[-1] - curve[half] < (uni[-1] - uni[half]) / 5


@settings(max_examples=200, deadline=None)
@given(T=st.integers(2, 10 ** 6), gamma=st.floats(0.01, 0.99), k=st.integers(1, 50))
def test_forced_exploration_count_is_at_most_T_gamma_over_gamma(T, gamma, k):
    spec = make_learner("pf", gamma=gamma)
    if T <= k:
        return
    count = spec.expected_explorations(T, k)  # sum_{t=K+1}^T t^-(1-gamma)
    assert count <= T ** gamma / gamma
    # and the bound is the right order: the sum is at least the integral from K+1 to T+1
    assert count >= ((T + 1) ** gamma - (k + 1) ** gamma) / gamma - 1e-9 * T ** gamma


def test_pf_learner_explores_as_stated():
    # every recorded p_t puts at least eps_t / K on every arm (the forced-exploration mixture)
    env = MultiAgentBandit(INSTANCE, "bernoulli")
    spec = make_learner("pf", gamma=0.5)
    res = simulate(spec, env, 5000, [0, 1])
    eps = spec.exploration_table(5000)[res.grid]
    late = res.grid > 3
    assert (res.policies[:, late] >= eps[late, None] / 3 - 1e-12).all()
    # the forced part is exactly eps_t / K on an arm the PF policy does not play
    assert np.allclose(res.policies[:, -1, 1], eps[-1] / 3, atol=1e-12)


def impossibility_instance(n: int) -> np.ndarray:
    """N - 1 agents rate the arms (1, 1/2), one agent (0, 1/2): the majority's favourite is arm 1,
    the minority's arm 2, and every agent gets 1/2 from arm 2."""
    mu = np.tile([1.0, 0.5], (n, 1))
    mu[-1] = [0.0, 0.5]
    return mu


@pytest.mark.parametrize("ef_kind", ["squared", "absolute"])
@pytest.mark.parametrize("tie_break", ["utilitarian", "central"])
def test_ef_optimal_policy_has_pf_score_tending_to_zero(ef_kind, tie_break):
    sizes = [2, 3, 5, 10, 20, 50, 100]
    scores = []
    for n in sizes:
        mu = impossibility_instance(n)
        p = optimal_policies(mu[None], ["ef"], ef_kind=ef_kind, tie_break=tie_break)["ef"][0]
        # U_majority - U_minority = p_1 for every policy: the only equal split is p = (0, 1)
        grid = np.linspace(0, 1, 1001)
        ps = np.stack([grid, 1 - grid], axis=1)
        value = get_notion("ef").value_batch(np.broadcast_to(mu, (grid.size,) + mu.shape), ps, ef_kind=ef_kind)
        assert grid[int(np.argmax(value))] == 0.0 and (np.diff(value) < 0).all()  # the unique EF optimum
        assert p == pytest.approx([0.0, 1.0], abs=1e-5)  # the solver is exact to ~1e-6
        pf = get_notion("pf").score(mu, p)
        assert pf == pytest.approx(1.0 / n, abs=1e-5)  # only the minority's 1/N share is honoured
        # while the PF policy gives every agent its share and scores 1
        assert get_notion("pf").score(mu, get_notion("pf").policy(mu)) == pytest.approx(1.0)
        scores.append(pf)
    assert all(a > b for a, b in zip(scores, scores[1:]))
    assert scores[-1] < 0.0101


def test_ef_learner_on_the_impossibility_instance_loses_procedural_fairness():
    mu = impossibility_instance(10)
    env = MultiAgentBandit(np.clip(mu, 0.02, 0.98), "bernoulli")
    res = simulate("ef", env, 4000, [0])
    pf = res.scores["pf"][0]
    # the EF learner drifts towards (0, 1), whose PF score is 1/N = 0.1 (its bonus keeps some
    # mass on the less-pulled arm 1: p_1 ~ 0.16 at T = 4000, ~0.11 at T = 20000)
    assert pf[-1] < 0.3 and pf[-1] < pf[np.searchsorted(res.grid, 400)] - 0.05
    assert res.final_policy()[1] > 0.8
    # the PF learner on the same rewards gives the majority its share
    assert simulate("pf", env, 4000, [0]).final_scores()["pf"] > 0.9
