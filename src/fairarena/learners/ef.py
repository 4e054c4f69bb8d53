"""The equality-fair (EF) learner: optimism as a bonus on the policy (UCB-like)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from fairarena.learners.base import LearnerSpec, ScheduledState, check_positive, clean_policies, register_learner


def ef_optimistic_objective(mu_hat: np.ndarray, counts: np.ndarray, t: int, c: float) -> tuple[np.ndarray, np.ndarray]:
    """``(Q, b)`` of the EF learner's objective ``p^T Q p - b . p``: ``p^T Q p = I(p; mu_hat)``
    (the squared inequality, ``Q = 2/(N(N-1)) mu^T (N I - 1 1^T) mu``) and the exploration bonus
    ``b_k = c sqrt(ln(N K t) / n_k)``."""
    s, n, k = mu_hat.shape
    cm = mu_hat - mu_hat.mean(axis=1, keepdims=True)
    Q = (2.0 / (n - 1)) * np.einsum("bik,bil->bkl", cm, cm) if n > 1 else np.zeros((s, k, k))
    b = c * np.sqrt(math.log(n * k * max(t, 2)) / counts)
    return Q, b


class EFState(ScheduledState):
    def solve(self, t: int) -> np.ndarray:
        from fairarena.bandit import solver as _s

        Q, b = ef_optimistic_objective(self.means(), self.counts, t, self.spec.c)
        start = np.full((self.S, self.K), 1.0 / self.K)
        # a policy to ~1e-7 is plenty for sampling; the bonus makes the optimum sit on a face,
        # where very large barrier parameters only add ill-conditioning
        res = _s.barrier_solve(_s.QuadraticObjective(Q, -b), start, self.K, gap=1e-8, fallback_gap=1e-6)
        return clean_policies(res.y[:, : self.K])


@register_learner
@dataclass(frozen=True)
class EFSpec(LearnerSpec):
    """Equality-fair learner (UCB-like): ``p_t = argmin_p I(p; mu_hat) - c sum_k p_k sqrt(ln(N K t)/n_k)``.

    ``I`` is the squared pairwise inequality of the empirical utilities. Recomputed on the lazy
    schedule ``t >= (1 + growth) t_last`` (``growth = 0``: every round).
    """

    c: float = 1.0
    growth: float = 0.02

    name: ClassVar[str] = "ef"
    title: ClassVar[str] = "EF learner"
    source: ClassVar[str] = "Procedural-fairness paper (EF baseline, UCB-like)"
    target: ClassVar[str] = "ef"
    state_cls: ClassVar[type] = EFState

    def __post_init__(self) -> None:
        check_positive("c", self.c, allow_zero=True)
        check_positive("growth", self.growth, allow_zero=True)
