"""The GGI learner: online gradient ascent on the generalized Gini welfare (Busa-Fekete et al. 2017)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fairarena.learners.base import LearnerSpec, LearnerState, check_open_unit, register_learner


def ggi_step_size(t: int, k: int, delta: float) -> float:
    """``eta_t = sqrt(2) / (1 - 1/sqrt(K)) * sqrt(ln(2/delta) / t)`` (Busa-Fekete et al. 2017)."""
    return math.sqrt(2.0) / (1.0 - 1.0 / math.sqrt(k)) * math.sqrt(math.log(2.0 / delta) / t)


class GGIState(LearnerState):
    def __init__(self, spec: "GGISpec", *a: Any) -> None:
        super().__init__(spec, *a)
        self.p = np.full((self.S, self.K), 1.0 / self.K)
        self.w = spec.weights_for(self.N)

    def _updated(self, t: int, arms: np.ndarray) -> None:
        if t < self.K or self.K == 1:
            return
        from fairarena.learners.nashucb import project_truncated_simplex

        mu = self.means()
        u = np.einsum("sik,sk->si", mu, self.p)
        order = np.argsort(u, axis=1, kind="stable")  # ascending: the worst-off agent first
        wi = np.empty_like(u)
        np.put_along_axis(wi, order, np.broadcast_to(self.w, u.shape), axis=1)
        grad = np.einsum("si,sik->sk", wi, mu)  # a supergradient of sum_m w_m U_(m)
        eta = ggi_step_size(t, self.K, self.spec.delta)
        lower = min(eta, 1.0) / self.K
        self.p = project_truncated_simplex(self.p + eta * grad, lower)

    def policy(self, t: int) -> np.ndarray:
        return self.p


@register_learner
@dataclass(frozen=True)
class GGISpec(LearnerSpec):
    """GGI bandit (Busa-Fekete, Szorenyi, Weng & Mannor, ICML 2017): online gradient ascent on the
    generalized Gini welfare ``sum_m w_m U_(m)`` of the estimated utilities (equivalently descent
    on the GGI of the estimated costs ``1 - mu``), ``w_m = 2^-(m-1)`` unless ``weights`` are given,
    step ``eta_t`` as in the paper, projection onto the simplex truncated at ``min(eta_t, 1) / K``.
    Its GGI regret is judged with its own weights."""

    delta: float = 0.05
    weights: tuple[float, ...] | None = None

    name: ClassVar[str] = "ggi"
    title: ClassVar[str] = "GGI (online gradient)"
    source: ClassVar[str] = "Busa-Fekete, Szorenyi, Weng & Mannor, Multi-objective bandits: optimizing the generalized Gini index (ICML 2017)"
    target: ClassVar[str] = "ggi"
    state_cls: ClassVar[type] = GGIState

    def __post_init__(self) -> None:
        check_open_unit("delta", self.delta)
        if self.weights is not None:
            object.__setattr__(self, "weights", tuple(float(x) for x in self.weights))

    def weights_for(self, n: int) -> np.ndarray:
        from fairarena.bandit.notions import Options

        return Options(ggi_weights=self.weights).ggi_w(n)

    def notion_options(self) -> dict[str, Any]:
        return {} if self.weights is None else {"ggi_weights": self.weights}

    def check_instance(self, n_agents: int, n_arms: int, horizon: int) -> None:
        super().check_instance(n_agents, n_arms, horizon)
        self.weights_for(n_agents)
