"""Regret and scores are the notions' own (issue 11): a learner is judged with the options its own
parameters fix and with the run's notion options, never with recomputed copies."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fairarena.bandit.notions import NOTIONS, get_notion
from fairarena.learners import MultiAgentBandit, make_learner, simulate
from fairarena.learners.simulate import Truth

MU = np.array([[0.9, 0.5, 0.1], [0.8, 0.1, 0.5], [0.1, 0.5, 0.9], [0.3, 0.9, 0.2]])


def _dense_prefix(res) -> int:
    """The number of first rounds that are all on the result's grid (1, 2, ..., m)."""
    g = res.grid
    return int(np.argmax(g != np.arange(1, g.size + 1))) if (g != np.arange(1, g.size + 1)).any() else g.size


def _simplex_grid(k: int, h: int) -> np.ndarray:
    pts = [c for c in itertools.product(range(h + 1), repeat=k - 1) if sum(c) <= h]
    return np.array([[*c, h - sum(c)] for c in pts], dtype=float) / h


def _slow_ggi(mu: np.ndarray, p: np.ndarray, w: np.ndarray) -> float:
    u = sorted(float(sum(p[k] * mu[i, k] for k in range(mu.shape[1]))) for i in range(mu.shape[0]))
    return sum(wm * um for wm, um in zip(w, u))


def _slow_abs_inequality(mu: np.ndarray, p: np.ndarray) -> float:
    n = mu.shape[0]
    u = mu @ p
    return 2.0 / (n * (n - 1)) * sum(abs(u[i] - u[j]) for i in range(n) for j in range(i + 1, n))


def test_ggi_learner_is_judged_with_its_own_weights():
    w = (0.7, 0.2, 0.1, 0.0)  # far from the default 2^-(m-1)
    env = MultiAgentBandit(MU, "bernoulli")
    res = simulate(make_learner("ggi", weights=w), env, 300, [0, 1])
    m = _dense_prefix(res)
    assert m >= 20
    # the optimum under these weights, by a fine grid over the simplex (slow and obvious)
    G = _simplex_grid(3, 200)
    opt = max(_slow_ggi(MU, q, w) for q in G)
    for s in range(2):
        slow = sum(opt - _slow_ggi(MU, res.policies[s, t], w) for t in range(m))
        assert res.regret["ggi"][s, m - 1] == pytest.approx(slow, abs=2e-3 * m)
    # ... and not with the default weights (what the accounting did before)
    default = Truth.of(MU)
    inst = default.instant_regrets(res.policies[:, :m])["ggi"].sum(axis=1)
    assert np.abs(inst - res.regret["ggi"][:, m - 1]).max() > 0.05
    # the final GGI score is the notion's own score under the learner's weights
    p_T = res.policies[0, -1]
    assert res.scores["ggi"][0, -1] == pytest.approx(get_notion("ggi").score(MU, p_T, ggi_weights=w), abs=1e-9)


def test_ef_regret_honours_the_absolute_inequality():
    env = MultiAgentBandit(MU, "bernoulli")
    res = simulate("ef", env, 300, [0, 1], options={"ef_kind": "absolute"})
    sq = simulate("ef", env, 300, [0, 1])
    assert np.array_equal(res.arms, sq.arms)  # the options judge the run; they do not change it
    m = _dense_prefix(res)
    G = _simplex_grid(3, 200)
    opt = min(_slow_abs_inequality(MU, q) for q in G)
    for s in range(2):
        slow = sum(_slow_abs_inequality(MU, res.policies[s, t]) - opt for t in range(m))
        assert res.regret["ef"][s, m - 1] == pytest.approx(slow, abs=2e-3 * m)
    # squared and absolute inequalities give different regrets for the same play
    assert np.abs(res.regret["ef"][:, -1] - sq.regret["ef"][:, -1]).max() > 1.0
    p_T = res.policies[1, -1]
    assert res.scores["ef"][1, -1] == pytest.approx(get_notion("ef").score(MU, p_T, ef_kind="absolute"), abs=1e-9)


def test_every_registered_notion_is_accounted_with_its_own_functions():
    env = MultiAgentBandit(MU, "beta:0.1")
    res = simulate("uniform", env, 400, [3])
    assert set(res.regret) == set(NOTIONS) and set(res.scores) == set(NOTIONS)
    p = np.full(3, 1 / 3)
    for name in NOTIONS:
        notion = get_notion(name)
        assert res.scores[name][0, -1] == pytest.approx(notion.score(MU, p), abs=1e-9), name
        if name == "pf":
            assert np.isnan(res.regret["pf"]).all()  # no favourite sets: the mistake count is undefined
            continue
        opt = notion.value(MU, notion.policy(MU))
        # rounds 1..K are the unit vectors, then the uniform policy
        first = sum(opt - notion.value(MU, np.eye(3)[k]) for k in range(3))
        assert res.regret[name][0, -1] == pytest.approx(first + (400 - 3) * (opt - notion.value(MU, p)), abs=1e-6), name


def test_a_notion_registered_by_a_user_is_accounted_and_an_etc_target():
    from fairarena.bandit.notions import ratio_score, register

    def value(mus, ps, o):  # the second agent's utility: a "dictator" notion
        return np.einsum("bk,bk->b", mus[:, 1, :], ps)

    def policy(mus, o):
        out = np.zeros((mus.shape[0], mus.shape[2]))
        out[np.arange(mus.shape[0]), mus[:, 1, :].argmax(axis=1)] = 1.0
        return out

    register("toy_second", "Dictatorship of agent 2", "a test notion", "All mass on agent 2's favourite.",
             value=value, score=ratio_score)(policy)
    try:
        env = MultiAgentBandit(MU, "bernoulli")
        res = simulate(make_learner("etc", notion="toy_second", explore=30), env, 500, [0])
        assert res.target == "toy_second"
        # ETC commits to agent 2's favourite (arm 0, mean 0.8); after round K * 30 the regret stops
        assert res.final_policy().tolist() == [1.0, 0.0, 0.0] and res.final_scores()["toy_second"] == 1.0
        g = res.grid
        assert res.regret["toy_second"][0, -1] == res.regret["toy_second"][0, np.searchsorted(g, 91)]
        # round robin over 90 rounds: 30 pulls of each arm, regret 30 (0.8 - 0.1) + 30 (0.8 - 0.5)
        assert res.regret["toy_second"][0, -1] == pytest.approx(30 * 0.7 + 30 * 0.3)
    finally:
        NOTIONS.remove("toy_second")
