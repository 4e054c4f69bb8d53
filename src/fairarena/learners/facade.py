"""One entry point: ``FairLearner('pf', gamma=0.5).simulate(env, T=10_000, seeds=20)``."""

from __future__ import annotations

from typing import Any

from fairarena.learners.base import LearnerSpec, LearnerState
from fairarena.learners.catalog import make_learner
from fairarena.learners.simulate import SimulationResult, simulate


class FairLearner:
    """A validated learner spec with ``build`` and ``simulate``."""

    def __init__(self, learner: "str | LearnerSpec" = "pf", **params: Any) -> None:
        self.spec = make_learner(learner, **params)

    @property
    def name(self) -> str:
        return self.spec.name

    def __repr__(self) -> str:
        return f"FairLearner({self.spec!r})"

    def build(self, n_agents: int, n_arms: int, horizon: int, n_runs: int, rngs=None) -> LearnerState:
        return self.spec.build(n_agents, n_arms, horizon, n_runs, rngs)

    def simulate(self, env: Any, T: int, seeds: Any = 20, **kw: Any) -> SimulationResult:
        return simulate(self.spec, env, T, seeds, **kw)
