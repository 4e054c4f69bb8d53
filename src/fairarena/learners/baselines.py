"""Baselines: explore-then-commit to a notion's optimal policy, and the uniform policy."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fairarena.errors import InputError
from fairarena.learners.base import LearnerSpec, LearnerState, register_learner


class ETCState(LearnerState):
    def __init__(self, spec: "ETCSpec", *a: Any) -> None:
        super().__init__(spec, *a)
        self.m = spec.explore_rounds(self.T, self.K)
        self.committed: np.ndarray | None = None

    def policy(self, t: int) -> np.ndarray:
        if t <= self.K * self.m:
            return self._onehot(np.full(self.S, (t - 1) % self.K))
        if self.committed is None:
            from fairarena.bandit.notions import get_notion

            self.committed = get_notion(self.spec.notion).policy_batch(self.means())
        return self.committed


@register_learner
@dataclass(frozen=True)
class ETCSpec(LearnerSpec):
    """Explore-then-commit: ``explore`` round-robin pulls per arm (default ``ceil(T^(2/3) / K)``),
    then the ``notion``'s optimal policy on the empirical means for the rest of the run (any
    notion of :data:`fairarena.bandit.notions.NOTIONS`)."""

    notion: str = "pf"
    explore: int | None = None

    name: ClassVar[str] = "etc"
    title: ClassVar[str] = "Explore-then-commit"
    source: ClassVar[str] = "Baseline"
    state_cls: ClassVar[type] = ETCState

    def __post_init__(self) -> None:
        from fairarena.bandit.notions import get_notion

        get_notion(self.notion)  # unknown names: InputError listing the registered notions
        if self.explore is not None and (isinstance(self.explore, bool) or not isinstance(self.explore, int)
                                         or self.explore < 1):
            raise InputError("explore", self.explore, "expected a positive number of pulls per arm")

    def explore_rounds(self, T: int, k: int) -> int:
        return self.explore if self.explore is not None else max(1, math.ceil(T ** (2.0 / 3.0) / k))

    def target_notion(self) -> str:
        return self.notion


class UniformState(LearnerState):
    def policy(self, t: int) -> np.ndarray:
        return np.full((self.S, self.K), 1.0 / self.K)


@register_learner
@dataclass(frozen=True)
class UniformSpec(LearnerSpec):
    """The uniform policy (no learning); its regret is linear for every notion it is not optimal for."""

    name: ClassVar[str] = "uniform"
    title: ClassVar[str] = "Uniform"
    source: ClassVar[str] = "Baseline"
    target: ClassVar[str] = "uf"
    state_cls: ClassVar[type] = UniformState
