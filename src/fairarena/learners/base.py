"""The learners' base: validated specs, the running state they build, and the learner registry.

Every learner follows the procedural-fairness paper's Algorithm 1: pull every arm once, then for
``t = K+1..T`` compute a policy from the statistics so far (the notion's optimisation step),
sample an arm from it, observe the reward vector, update. The harness
(:func:`fairarena.learners.simulate.simulate`) owns that loop; a learner only answers two calls,
vectorised over ``S`` independent runs (one per seed):

- ``policy(t) -> (S, K)``: the distribution round ``t`` samples its arm from (``t > K``);
- ``update(t, arms (S,), rewards (S, N))``: the observation of round ``t``.

A spec (frozen dataclass) holds and validates the parameters; ``spec.build(...)`` makes the
running state. A new learner subclasses :class:`LearnerSpec` (and :class:`LearnerState`) and is
registered with :func:`register_learner` into :data:`LEARNERS` (a
:class:`fairarena.registry.Registry`); the CLI, the harness and the seed-conformance test
(:mod:`fairarena.learners.conformance`) pick it up from there.

The built-in families live one per module (``pf``, ``ef``, ``uf``, ``nash``, ``ggi``,
``baselines``); :mod:`fairarena.learners.catalog` imports them all.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from fairarena.errors import InputError
from fairarena.registry import Registry

# ------------------------------------------------------------------------------------------------
# Validation helpers
# ------------------------------------------------------------------------------------------------


def check_number(field: str, v: Any) -> float:
    """A finite real number (not a bool)."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
        raise InputError(field, v, "expected a finite number")
    return float(v)


def check_open_unit(field: str, v: Any) -> float:
    """A number strictly inside (0, 1)."""
    x = check_number(field, v)
    if not 0.0 < x < 1.0:
        raise InputError(field, v, "expected a number strictly between 0 and 1")
    return x


def check_positive(field: str, v: Any, allow_zero: bool = False) -> float:
    x = check_number(field, v)
    if x < 0 or (x == 0 and not allow_zero):
        raise InputError(field, v, "expected a non-negative number" if allow_zero else "expected a positive number")
    return x


def parse_rounds(text: Any, field: str = "T") -> int:
    """A number of rounds from the command line: ``100000``, ``1e5`` or ``100_000`` (a whole number)."""
    if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
        return int(text)
    try:
        x = float(str(text).strip())
    except ValueError:
        raise InputError(field, text, "expected a whole number of rounds (e.g. 100000 or 1e5)") from None
    if not math.isfinite(x) or not x.is_integer():
        raise InputError(field, text, "expected a whole number of rounds (e.g. 100000 or 1e5)")
    return int(x)


def check_horizon(T: Any, k: int) -> int:
    """``T >= K`` (Algorithm 1 starts by pulling every arm once)."""
    if isinstance(T, bool) or not isinstance(T, (int, np.integer)) and not (isinstance(T, float) and T.is_integer()):
        raise InputError("T", T, "expected a whole number of rounds")
    T = int(T)
    if T < k:
        raise InputError("T", T, f"need T >= K = {k}: every arm is pulled once first")
    return T


# ------------------------------------------------------------------------------------------------
# Running state shared by all learners
# ------------------------------------------------------------------------------------------------


class LearnerState:
    """Counts and reward sums of ``S`` runs; subclasses add the policy."""

    def __init__(self, spec: "LearnerSpec", n_agents: int, n_arms: int, horizon: int, n_runs: int,
                 rngs: Sequence[np.random.Generator]) -> None:
        self.spec = spec
        self.N, self.K, self.T, self.S = n_agents, n_arms, horizon, n_runs
        self.rngs = rngs
        self.counts = np.zeros((n_runs, n_arms))
        self.sums = np.zeros((n_runs, n_agents, n_arms))
        self._sidx = np.arange(n_runs)

    def update(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        s = self._sidx
        self.counts[s, arms] += 1.0
        self.sums[s, :, arms] += rewards
        self._updated(t, arms)

    def _updated(self, t: int, arms: np.ndarray) -> None:  # hook
        pass

    def means(self) -> np.ndarray:
        """Empirical means ``(S, N, K)`` (0 for an arm not pulled yet)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.counts[:, None, :] > 0, self.sums / np.maximum(self.counts, 1.0)[:, None, :], 0.0)

    def policy(self, t: int) -> np.ndarray:
        raise NotImplementedError

    def est_favourites(self) -> np.ndarray | None:
        """Estimated favourite sets ``(S, N, K)`` for learners that keep them (PF regret)."""
        return None

    def _onehot(self, arms: np.ndarray) -> np.ndarray:
        out = np.zeros((self.S, self.K))
        out[self._sidx, arms] = 1.0
        return out


class ScheduledState(LearnerState):
    """For learners that solve an optimisation problem per round: re-solves at rounds
    ``t >= (1 + growth) t_last`` (every round if growth = 0).

    The schedule depends on ``t`` only, so all runs of a batch solve together.
    """

    def __init__(self, spec: Any, *a: Any) -> None:
        super().__init__(spec, *a)
        self.p = np.full((self.S, self.K), 1.0 / self.K)
        self._next = 0
        self.solves = 0

    def policy(self, t: int) -> np.ndarray:
        if t >= self._next:
            self.p = self.solve(t)
            self.solves += 1
            self._next = max(t + 1, int(math.ceil(t * (1.0 + self.spec.growth))))
        return self.p

    def solve(self, t: int) -> np.ndarray:
        raise NotImplementedError


def clean_policies(p: np.ndarray, floor: float = 1e-9) -> np.ndarray:
    """Rows of ``p`` with entries below ``floor`` set to 0, renormalised."""
    p = np.where(p < floor, 0.0, p)
    return p / p.sum(axis=1, keepdims=True)


# ------------------------------------------------------------------------------------------------
# Specs and registry
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LearnerSpec:
    """Base class of learner specs: validated parameters + ``build``."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    source: ClassVar[str] = ""
    target: ClassVar[str] = "uf"      # the notion whose regret is this learner's own
    state_cls: ClassVar[type] = LearnerState

    def build(self, n_agents: int, n_arms: int, horizon: int, n_runs: int,
              rngs: Sequence[np.random.Generator] | None = None, **kw: Any) -> LearnerState:
        """The running state of ``n_runs`` runs (``rngs``: one generator per run)."""
        self.check_instance(n_agents, n_arms, horizon)
        rngs = list(rngs) if rngs is not None else [np.random.default_rng(i) for i in range(n_runs)]
        return self.state_cls(self, n_agents, n_arms, horizon, n_runs, rngs, **kw)

    def check_instance(self, n_agents: int, n_arms: int, horizon: int) -> None:
        check_horizon(horizon, n_arms)

    def params(self) -> dict[str, Any]:
        return asdict(self)

    def target_notion(self) -> str:
        return self.target

    def notion_options(self) -> dict[str, Any]:
        """Options of :class:`fairarena.bandit.notions.Options` that this learner's own parameters
        fix (e.g. a GGI learner's ``weights``): its regret is judged with them."""
        return {}

    def label(self) -> str:
        return self.name


LEARNERS: Registry[type[LearnerSpec]] = Registry("learner")


def register_learner(cls: type[LearnerSpec]) -> type[LearnerSpec]:
    """Class decorator: make a spec available by its ``name`` (title, source and target notion as
    the registry entry's metadata)."""
    if not cls.name:
        raise ValueError(f"learner class {cls.__name__} has an empty name")
    LEARNERS.add(cls.name, cls, title=cls.title, citation=cls.source, target=cls.target)
    return cls
