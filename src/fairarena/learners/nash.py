"""NashUCB (Hossain, Micha & Shah, NeurIPS 2021): UCB on the Nash social welfare.

The update (:func:`fairarena.learners.nashucb.nashucb_maximise` solves it)::

    p_t = argmax_p  NSW(p, mu_hat) + c sum_j p_j sqrt(ln(N K t) / n_j)

**Default: the geometric form** (``form='geometric'``, ``NSW = (prod_i U_i)^(1/N)``), a documented
deviation from the paper, whose NSW is the product ``prod_i U_i`` (``form='product'``, kept as an
option). Both forms have the same NSW maximiser, but the bonus is on the scale of one utility (it
is the confidence width of every ``U_i``): the geometric mean moves with it (it is homogeneous of
degree 1), the product does not. With many agents the product is tiny (Dots, N = 50:
``prod_i U_i ~ 1e-15``) next to a bonus of ~1e-2, so the product form's update maximises the bonus
alone for the whole run -- it plays the least-pulled arms, and its NSW regret is linear
(``docs/learners.md`` has the measurement). On small N (the paper's experiments) both forms learn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from fairarena.errors import InputError
from fairarena.learners.base import LearnerSpec, ScheduledState, check_positive, register_learner


class NashUCBState(ScheduledState):
    def nashucb_inputs(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """The empirical means ``(S, N, K)`` and the bonus ``(S, K)`` of round ``t``."""
        bonus = self.spec.c * np.sqrt(math.log(self.N * self.K * max(t, 2)) / self.counts)
        return self.means(), bonus

    def solve(self, t: int) -> np.ndarray:
        from fairarena.learners.nashucb import nashucb_maximise

        mu, bonus = self.nashucb_inputs(t)
        warm = self.p if self.solves else None
        return nashucb_maximise(mu, bonus, self.spec.form, warm=warm, max_iter=self.spec.max_iter)


@register_learner
@dataclass(frozen=True)
class NashUCBSpec(LearnerSpec):
    """NashUCB (Hossain, Micha & Shah, NeurIPS 2021):
    ``p_t = argmax_p NSW(p, mu_hat) + c sum_j p_j sqrt(ln(N K t) / n_j)``.

    ``form='geometric'`` (default; the N-th root of the product, a bonus on the same scale for any
    N) or ``'product'`` (the paper's NSW; its bonus dominates when N is large, see the module
    docstring). Solved by projected gradient ascent with restarts
    (:mod:`fairarena.learners.nashucb`); ``growth`` as for EF: the default 0.01 re-solves when t
    has grown by 1% (about 900 solves for T = 1e5); ``growth=0`` re-solves every round, the
    paper's schedule.
    """

    c: float = 1.0
    form: str = "geometric"
    growth: float = 0.01
    max_iter: int = 300

    name: ClassVar[str] = "nashucb"
    title: ClassVar[str] = "NashUCB"
    source: ClassVar[str] = "Hossain, Micha & Shah, Fair algorithms for multi-agent multi-armed bandits (NeurIPS 2021)"
    target: ClassVar[str] = "nsw"
    state_cls: ClassVar[type] = NashUCBState

    def __post_init__(self) -> None:
        from fairarena.learners.nashucb import FORMS

        check_positive("c", self.c, allow_zero=True)
        check_positive("growth", self.growth, allow_zero=True)
        if self.form not in FORMS:
            raise InputError("form", self.form, f"expected one of {', '.join(FORMS)}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, int) or self.max_iter < 1:
            raise InputError("max_iter", self.max_iter, "expected a positive integer")
