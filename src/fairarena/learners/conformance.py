"""Seed conformance, shipped with the package so that any learner can check itself (as
PettingZoo's ``seed_test`` does for environments).

>>> from fairarena.learners.conformance import check_seed_conformance
>>> check_seed_conformance("pf")          # raises AssertionError on a violation

What a conforming learner guarantees (each point is one check):

1. **Deterministic**: the same seeds give the same arms, rewards and policies on a rerun.
2. **Batch-invariant**: a seed run alone pulls the same arms as inside a batch of seeds, with the
   same policies up to ``policy_atol`` (so vectorisation and parallel splitting never change
   results; learners that solve a batched program may differ in the last bits of ``p_t``, since
   batched linear algebra can round differently, but not in their arms).
3. **Coupled environment**: the j-th pull of arm k under seed s returns
   ``env.reward_stack(s, k, j)[j-1]``, whatever the learner did -- every learner faces the same
   rewards for a given seed, and learners draw no randomness from the environment's streams.
4. **Algorithm 1 start**: rounds 1..K pull arms 0..K-1 in order.
5. **Valid policies**: every recorded ``p_t`` is a probability vector.
6. **Fast paths agree**: a learner with a block fast path gives the same arms as the
   round-by-round harness (which :func:`simulate` uses when rewards are recorded).
7. **Seeds matter**: different seeds give different reward streams and trajectories.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from fairarena.learners.env import MultiAgentBandit

DEFAULT_REWARDS = [[0.9, 0.5, 0.2], [0.3, 0.8, 0.4], [0.6, 0.1, 0.7], [0.5, 0.5, 0.6]]


def _check(cond: bool, what: str, name: str) -> None:
    if not cond:
        raise AssertionError(f"learner {name!r} is not seed-conformant: {what}")


def check_seed_conformance(learner: Any, env: MultiAgentBandit | None = None, T: int = 150,
                           seeds: Sequence[int] = (3, 11, 12), policy_atol: float = 1e-8) -> None:
    """Run the checks above on ``learner`` (a registered name, a spec, or a :class:`FairLearner`)."""
    from fairarena.learners.catalog import make_learner
    from fairarena.learners.facade import FairLearner
    from fairarena.learners.simulate import simulate

    spec = learner.spec if isinstance(learner, FairLearner) else make_learner(learner)
    name = spec.label()
    env = env or MultiAgentBandit(DEFAULT_REWARDS, "bernoulli", name="conformance")
    K = env.n_arms
    seeds = list(seeds)
    a = simulate(spec, env, T, seeds, record_rewards=True, grid_points=30)
    b = simulate(spec, env, T, seeds, record_rewards=True, grid_points=30)
    _check(np.array_equal(a.arms, b.arms) and np.array_equal(a.rewards, b.rewards)
           and np.array_equal(a.policies, b.policies), "a rerun with the same seeds differs", name)
    for i, s in enumerate(seeds):
        alone = simulate(spec, env, T, [s], record_rewards=True, grid_points=30)
        _check(np.array_equal(alone.arms[0], a.arms[i])
               and np.allclose(alone.policies[0], a.policies[i], rtol=0, atol=policy_atol),
               f"seed {s} alone differs from seed {s} in a batch", name)
        for k in range(K):
            pulls = np.flatnonzero(a.arms[i] == k)
            stack = env.reward_stack(s, k, pulls.size)
            _check(np.array_equal(a.rewards[i][pulls], stack),
                   f"seed {s}: the rewards of arm {k} are not the environment's reward stack", name)
    _check(bool((a.arms[:, :K] == np.arange(K)).all()), "rounds 1..K do not pull every arm once in order", name)
    pol = a.policies
    _check(bool(np.all(pol >= -1e-12)) and bool(np.allclose(pol.sum(axis=-1), 1.0, atol=1e-9)),
           "a recorded policy is not a probability vector", name)
    fast = simulate(spec, env, T, seeds, grid_points=30)
    _check(np.array_equal(fast.arms, a.arms), "the fast path and the round-by-round harness disagree", name)
    _check(not np.array_equal(a.rewards[0], a.rewards[1]), "two seeds gave the same reward stream", name)
