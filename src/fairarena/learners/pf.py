"""The procedurally fair (PF) learner (the procedural-fairness paper's learning algorithm)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fairarena.learners.base import LearnerSpec, LearnerState, check_open_unit, check_positive, register_learner


class PFState(LearnerState):
    def __init__(self, spec: "PFSpec", *a: Any, cache: dict | None = None) -> None:
        super().__init__(spec, *a)
        N, K, T, S = self.N, self.K, self.T, self.S
        self.radius_scale = spec.radius_scale(N, K, T)
        self.eps = spec.exploration_table(T)
        self.fav = np.ones((S, N, K), dtype=bool)
        self.pi = np.full((S, K), 1.0 / K)
        # PF policy per favourite mask; shared by the runs of a process (pure function of the mask)
        self.cache: dict = {} if cache is None else cache
        self._mean = np.zeros((S, N, K))
        self._rad = np.full((S, K), np.inf)
        self.recomputes = 0

    def _updated(self, t: int, arms: np.ndarray) -> None:
        s = self._sidx
        n = self.counts[s, arms]
        self._mean[s, :, arms] = self.sums[s, :, arms] / n[:, None]
        self._rad[s, arms] = self.radius_scale / np.sqrt(n)
        if t < self.K:
            return
        from fairarena.learners.pf_fast import pf_estimated_favourites

        fav = pf_estimated_favourites(self._mean, self._rad)
        changed = np.flatnonzero((fav != self.fav).any(axis=(1, 2)))
        for r in changed:
            self.fav[r] = fav[r]
            self.pi[r] = self.pf_policy(fav[r])

    def pf_policy(self, fav: np.ndarray) -> np.ndarray:
        """PF policy of one estimated mask (cached by its bytes; recomputed only for new masks)."""
        key = (fav.shape, fav.tobytes())
        p = self.cache.get(key)
        if p is None:
            from fairarena.learners.pf_fast import pf_policy_decomposed

            p = self.cache[key] = pf_policy_decomposed(fav, self.cache)
            self.recomputes += 1
        return p

    def policy(self, t: int) -> np.ndarray:
        eps = self.eps[t]
        return (1.0 - eps) * self.pi + eps / self.K

    def est_favourites(self) -> np.ndarray:
        return self.fav


@register_learner
@dataclass(frozen=True)
class PFSpec(LearnerSpec):
    """Procedurally fair learner (the procedural-fairness paper).

    Favourite sets from Hoeffding bounds ``alpha * sqrt(ln(N K T / delta) / n_k)``; forced
    exploration with probability ``t^-(1-gamma)``; otherwise the PF policy (Nash tie-breaking, then
    the centre of the optimal face) on the estimated sets, recomputed only when a set changes.
    """

    gamma: float = 2.0 / 3.0
    alpha: float = 1.0 / math.sqrt(2.0)
    delta: float = 0.05

    name: ClassVar[str] = "pf"
    title: ClassVar[str] = "PF learner"
    source: ClassVar[str] = "Procedural-fairness paper, Algorithm 1 (PF)"
    target: ClassVar[str] = "pf"
    state_cls: ClassVar[type] = PFState

    blocks: bool = True

    def __post_init__(self) -> None:
        check_open_unit("gamma", self.gamma)
        check_open_unit("delta", self.delta)
        check_positive("alpha", self.alpha)

    def radius_scale(self, n: int, k: int, T: int) -> float:
        """``alpha sqrt(ln(N K T / delta))``: the confidence radius of an arm pulled once."""
        return self.alpha * math.sqrt(math.log(n * k * T / self.delta))

    def exploration_table(self, T: int) -> np.ndarray:
        """``eps[t] = t^-(1-gamma)`` for t = 0..T (one array operation, shared by both run modes)."""
        t = np.arange(T + 1, dtype=float)
        t[0] = 1.0
        return np.power(t, -(1.0 - self.gamma))

    def expected_explorations(self, T: int, k: int) -> float:
        """Expected number of forced-exploration rounds in rounds ``K+1..T``: ``sum_t eps_t``
        (at most ``T^gamma / gamma``, see ``docs/learners.md``)."""
        return float(self.exploration_table(T)[k + 1:].sum())

    def run_seed(self, *a: Any, **kw: Any) -> dict[str, int]:
        """Fast path of the harness (``blocks=False`` forces round-by-round)."""
        from fairarena.learners.pf_fast import pf_run_seed

        return pf_run_seed(self, *a, **kw)
