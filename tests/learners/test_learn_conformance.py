"""Every registered learner passes the shipped seed-conformance test; a broken one fails it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

from fairarena.learners import LEARNERS, FairLearner
from fairarena.learners.conformance import check_seed_conformance
from fairarena.learners.env import MultiAgentBandit
from fairarena.learners.base import LearnerSpec, LearnerState


@pytest.mark.parametrize("name", list(LEARNERS))
def test_every_learner_is_seed_conformant(name):
    check_seed_conformance(name)


def test_conformance_on_beta_rewards_with_the_facade():
    env = MultiAgentBandit([[0.9, 0.2], [0.3, 0.8], [0.6, 0.5]], "beta:0.1")
    check_seed_conformance(FairLearner("pf", gamma=0.5), env=env, T=300)


class _GlobalRandomState(LearnerState):
    def policy(self, t):
        p = np.random.random((self.S, self.K))  # hidden global state: not reproducible
        return p / p.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class _GlobalRandomSpec(LearnerSpec):
    name: ClassVar[str] = "broken-global-random"
    state_cls: ClassVar[type] = _GlobalRandomState


class _BatchCoupledState(LearnerState):
    def policy(self, t):
        # every run follows run 0's statistics: a run's trajectory depends on its batch
        best = self.sums[0].sum(axis=0).argmax()
        return self._onehot(np.full(self.S, best))


@dataclass(frozen=True)
class _BatchCoupledSpec(LearnerSpec):
    name: ClassVar[str] = "broken-batch-coupled"
    state_cls: ClassVar[type] = _BatchCoupledState


@pytest.mark.parametrize("spec", [_GlobalRandomSpec(), _BatchCoupledSpec()])
def test_non_conformant_learners_are_caught(spec):
    with pytest.raises(AssertionError, match="not seed-conformant"):
        check_seed_conformance(spec)
