"""The utilitarian (UF) learner: UCB1 on each arm's summed reward."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from fairarena.learners.base import LearnerSpec, LearnerState, check_positive, register_learner


class UFState(LearnerState):
    def policy(self, t: int) -> np.ndarray:
        idx = self.sums.sum(axis=1) / (self.N * self.counts) + np.sqrt(self.spec.c * math.log(t) / self.counts)
        return self._onehot(idx.argmax(axis=1))


@register_learner
@dataclass(frozen=True)
class UFSpec(LearnerSpec):
    """Utilitarian learner: UCB1 on each arm's summed reward (scaled to [0, 1] by 1/N):
    play ``argmax_k S_k / (N n_k) + sqrt(c ln t / n_k)``."""

    c: float = 2.0

    name: ClassVar[str] = "uf"
    title: ClassVar[str] = "UF learner (UCB1)"
    source: ClassVar[str] = "Auer, Cesa-Bianchi & Fischer (2002) on the summed reward"
    target: ClassVar[str] = "uf"
    state_cls: ClassVar[type] = UFState

    def __post_init__(self) -> None:
        check_positive("c", self.c, allow_zero=True)
