"""Fair multi-agent bandit learners: one facade, each learner a small validated spec.

Every learner follows the procedural-fairness paper's Algorithm 1: pull every arm once, then for
``t = K+1..T`` compute a policy from the statistics so far (the notion's optimisation step),
sample an arm from it, observe the reward vector, update. The harness
(:func:`fairarena.learners.simulate.simulate`) owns that loop; a learner only answers two calls,
vectorised over ``S`` independent runs (one per seed):

- ``policy(t) -> (S, K)``: the distribution round ``t`` samples its arm from (``t > K``);
- ``update(t, arms (S,), rewards (S, N))``: the observation of round ``t``.

A spec (frozen dataclass) holds and validates the parameters; ``spec.build(...)`` makes the
running state. Register new learners with :func:`register_learner`; the CLI, the harness and the
seed-conformance test (:mod:`fairarena.learners.conformance`) pick them up from ``LEARNERS``.

Learners (``docs/learners.md`` has the exact updates):

- ``pf``: Hoeffding favourite sets + forced exploration + PF policy on the estimated sets;
- ``ef``: minimise the empirical inequality minus an exploration bonus (UCB-like);
- ``uf``: UCB on each arm's summed reward;
- ``nashucb``: Hossain, Micha & Shah (2021);
- ``ggi``: Busa-Fekete et al. (2017), online gradient ascent on the generalized Gini welfare;
- ``etc``: explore-then-commit to a notion's optimal policy on the empirical means;
- ``uniform``: the uniform policy.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, ClassVar, Sequence

import numpy as np

from fairarena.errors import InputError

REGRET_NOTIONS = ("pf", "ef", "uf", "nsw", "ggi")


# ------------------------------------------------------------------------------------------------
# Validation helpers
# ------------------------------------------------------------------------------------------------

def _number(field: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
        raise InputError(field, v, "expected a finite number")
    return float(v)


def check_open_unit(field: str, v: Any) -> float:
    """A number strictly inside (0, 1)."""
    x = _number(field, v)
    if not 0.0 < x < 1.0:
        raise InputError(field, v, "expected a number strictly between 0 and 1")
    return x


def check_positive(field: str, v: Any, allow_zero: bool = False) -> float:
    x = _number(field, v)
    if x < 0 or (x == 0 and not allow_zero):
        raise InputError(field, v, "expected a non-negative number" if allow_zero else "expected a positive number")
    return x


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

    def label(self) -> str:
        return self.name


LEARNERS: dict[str, type[LearnerSpec]] = {}


def register_learner(cls: type[LearnerSpec]) -> type[LearnerSpec]:
    """Class decorator: make a spec available by its ``name``."""
    if not cls.name or cls.name in LEARNERS:
        raise ValueError(f"learner name {cls.name!r} is empty or registered twice")
    LEARNERS[cls.name] = cls
    return cls


def make_learner(learner: "str | LearnerSpec", **params: Any) -> LearnerSpec:
    """A validated spec from a name and parameters (or a spec, with parameters replaced)."""
    if isinstance(learner, LearnerSpec):
        return replace(learner, **params) if params else learner
    cls = LEARNERS.get(learner) if isinstance(learner, str) else None
    if cls is None:
        raise InputError("learner", learner, f"expected one of {', '.join(LEARNERS)}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(params) - known)
    if unknown:
        raise InputError(f"{learner}.{unknown[0]}", params[unknown[0]],
                         f"unknown parameter; {learner} takes {', '.join(sorted(known)) or 'none'}")
    return cls(**params)


def learner_params(learner: str) -> tuple[str, ...]:
    """The parameter names a registered learner takes."""
    return tuple(f.name for f in fields(LEARNERS[learner]))


# ------------------------------------------------------------------------------------------------
# PF learner
# ------------------------------------------------------------------------------------------------

class _PFState(LearnerState):
    def __init__(self, spec: "PFSpec", *a: Any, cache: dict | None = None) -> None:
        super().__init__(spec, *a)
        N, K, T, S = self.N, self.K, self.T, self.S
        self.radius_scale = spec.alpha * math.sqrt(math.log(N * K * T / spec.delta))
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
    state_cls: ClassVar[type] = _PFState

    blocks: bool = True

    def __post_init__(self) -> None:
        check_open_unit("gamma", self.gamma)
        check_open_unit("delta", self.delta)
        check_positive("alpha", self.alpha)

    def exploration_table(self, T: int) -> np.ndarray:
        """``eps[t] = t^-(1-gamma)`` for t = 0..T (one array operation, shared by both run modes)."""
        t = np.arange(T + 1, dtype=float)
        t[0] = 1.0
        return np.power(t, -(1.0 - self.gamma))

    def run_seed(self, *a: Any, **kw: Any) -> dict[str, int]:
        """Fast path of the harness (``blocks=False`` forces round-by-round)."""
        from fairarena.learners.pf_fast import pf_run_seed

        return pf_run_seed(self, *a, **kw)


# ------------------------------------------------------------------------------------------------
# Lazy schedule for the learners that solve an optimisation problem per round
# ------------------------------------------------------------------------------------------------

class _ScheduledState(LearnerState):
    """Recomputes its policy at rounds ``t >= (1 + growth) t_last`` (every round if growth = 0).

    The schedule depends on ``t`` only, so all runs of a batch solve together.
    """

    def __init__(self, spec: Any, *a: Any) -> None:
        super().__init__(spec, *a)
        self.p = np.full((self.S, self.K), 1.0 / self.K)
        self._next = 0
        self.solves = 0

    def policy(self, t: int) -> np.ndarray:
        if t >= self._next:
            self.p = self._solve(t)
            self.solves += 1
            self._next = max(t + 1, int(math.ceil(t * (1.0 + self.spec.growth))))
        return self.p

    def _solve(self, t: int) -> np.ndarray:
        raise NotImplementedError


def _clean(p: np.ndarray, floor: float = 1e-9) -> np.ndarray:
    p = np.where(p < floor, 0.0, p)
    return p / p.sum(axis=1, keepdims=True)


# ------------------------------------------------------------------------------------------------
# EF learner
# ------------------------------------------------------------------------------------------------

def ef_optimistic_objective(mu_hat: np.ndarray, counts: np.ndarray, t: int, c: float) -> tuple[np.ndarray, np.ndarray]:
    """``(Q, b)`` of the EF learner's objective ``p^T Q p - b . p``: ``p^T Q p = I(p; mu_hat)``
    (the squared inequality, ``Q = 2/(N(N-1)) mu^T (N I - 1 1^T) mu``) and the exploration bonus
    ``b_k = c sqrt(ln(N K t) / n_k)``."""
    s, n, k = mu_hat.shape
    cm = mu_hat - mu_hat.mean(axis=1, keepdims=True)
    Q = (2.0 / (n - 1)) * np.einsum("bik,bil->bkl", cm, cm) if n > 1 else np.zeros((s, k, k))
    b = c * np.sqrt(math.log(n * k * max(t, 2)) / counts)
    return Q, b


class _EFState(_ScheduledState):
    def _solve(self, t: int) -> np.ndarray:
        from fairarena.bandit import solver as _s

        Q, b = ef_optimistic_objective(self.means(), self.counts, t, self.spec.c)
        start = np.full((self.S, self.K), 1.0 / self.K)
        # a policy to ~1e-7 is plenty for sampling; the bonus makes the optimum sit on a face,
        # where very large barrier parameters only add ill-conditioning
        res = _s.barrier_solve(_s.QuadraticObjective(Q, -b), start, self.K, gap=1e-8, fallback_gap=1e-6)
        return _clean(res.y[:, : self.K])


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
    state_cls: ClassVar[type] = _EFState

    def __post_init__(self) -> None:
        check_positive("c", self.c, allow_zero=True)
        check_positive("growth", self.growth, allow_zero=True)


# ------------------------------------------------------------------------------------------------
# UF learner
# ------------------------------------------------------------------------------------------------

class _UFState(LearnerState):
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
    state_cls: ClassVar[type] = _UFState

    def __post_init__(self) -> None:
        check_positive("c", self.c, allow_zero=True)


# ------------------------------------------------------------------------------------------------
# NashUCB
# ------------------------------------------------------------------------------------------------

class _NashUCBState(_ScheduledState):
    def nashucb_inputs(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        bonus = self.spec.c * np.sqrt(math.log(self.N * self.K * max(t, 2)) / self.counts)
        return self.means(), bonus

    def _solve(self, t: int) -> np.ndarray:
        from fairarena.learners.nashucb import nashucb_maximise

        mu, bonus = self.nashucb_inputs(t)
        warm = self.p if self.solves else None
        return nashucb_maximise(mu, bonus, self.spec.form, warm=warm, max_iter=self.spec.max_iter)


@register_learner
@dataclass(frozen=True)
class NashUCBSpec(LearnerSpec):
    """NashUCB (Hossain, Micha & Shah, NeurIPS 2021):
    ``p_t = argmax_p NSW(p, mu_hat) + c sum_j p_j sqrt(ln(N K t) / n_j)``.

    ``form='product'`` (the paper's NSW) or ``'geometric'`` (its N-th root). Solved by projected
    gradient ascent with restarts (:mod:`fairarena.learners.nashucb`); ``growth`` as for EF:
    the default 0.01 re-solves when t has grown by 1% (about 900 solves for T = 1e5);
    ``growth=0`` re-solves every round, the paper's algorithm exactly (and the benchmark's).
    """

    c: float = 1.0
    form: str = "product"
    growth: float = 0.01
    max_iter: int = 300

    name: ClassVar[str] = "nashucb"
    title: ClassVar[str] = "NashUCB"
    source: ClassVar[str] = "Hossain, Micha & Shah, Fair algorithms for multi-agent multi-armed bandits (NeurIPS 2021)"
    target: ClassVar[str] = "nsw"
    state_cls: ClassVar[type] = _NashUCBState

    def __post_init__(self) -> None:
        from fairarena.learners.nashucb import FORMS

        check_positive("c", self.c, allow_zero=True)
        check_positive("growth", self.growth, allow_zero=True)
        if self.form not in FORMS:
            raise InputError("form", self.form, f"expected one of {', '.join(FORMS)}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, int) or self.max_iter < 1:
            raise InputError("max_iter", self.max_iter, "expected a positive integer")


# ------------------------------------------------------------------------------------------------
# GGI (online gradient ascent)
# ------------------------------------------------------------------------------------------------

def ggi_step_size(t: int, k: int, delta: float) -> float:
    """``eta_t = sqrt(2) / (1 - 1/sqrt(K)) * sqrt(ln(2/delta) / t)`` (Busa-Fekete et al. 2017)."""
    return math.sqrt(2.0) / (1.0 - 1.0 / math.sqrt(k)) * math.sqrt(math.log(2.0 / delta) / t)


class _GGIState(LearnerState):
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
    on the GGI of the estimated costs ``1 - mu``), ``w_m = 2^-(m-1)``, step ``eta_t`` as in the
    paper, projection onto the simplex truncated at ``min(eta_t, 1) / K``."""

    delta: float = 0.05
    weights: tuple[float, ...] | None = None

    name: ClassVar[str] = "ggi"
    title: ClassVar[str] = "GGI (online gradient)"
    source: ClassVar[str] = "Busa-Fekete, Szorenyi, Weng & Mannor, Multi-objective bandits: optimizing the generalized Gini index (ICML 2017)"
    target: ClassVar[str] = "ggi"
    state_cls: ClassVar[type] = _GGIState

    def __post_init__(self) -> None:
        check_open_unit("delta", self.delta)
        if self.weights is not None:
            object.__setattr__(self, "weights", tuple(float(x) for x in self.weights))

    def weights_for(self, n: int) -> np.ndarray:
        from fairarena.bandit.notions import Options

        return Options(ggi_weights=self.weights).ggi_w(n)

    def check_instance(self, n_agents: int, n_arms: int, horizon: int) -> None:
        super().check_instance(n_agents, n_arms, horizon)
        self.weights_for(n_agents)


# ------------------------------------------------------------------------------------------------
# Baselines
# ------------------------------------------------------------------------------------------------

class _ETCState(LearnerState):
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
    then the ``notion``'s optimal policy on the empirical means for the rest of the run."""

    notion: str = "pf"
    explore: int | None = None

    name: ClassVar[str] = "etc"
    title: ClassVar[str] = "Explore-then-commit"
    source: ClassVar[str] = "Baseline"
    state_cls: ClassVar[type] = _ETCState

    def __post_init__(self) -> None:
        if self.notion not in REGRET_NOTIONS:
            raise InputError("notion", self.notion, f"expected one of {', '.join(REGRET_NOTIONS)}")
        if self.explore is not None and (isinstance(self.explore, bool) or not isinstance(self.explore, int)
                                         or self.explore < 1):
            raise InputError("explore", self.explore, "expected a positive number of pulls per arm")

    def explore_rounds(self, T: int, k: int) -> int:
        return self.explore if self.explore is not None else max(1, math.ceil(T ** (2.0 / 3.0) / k))

    def target_notion(self) -> str:
        return self.notion


class _UniformState(LearnerState):
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
    state_cls: ClassVar[type] = _UniformState


# ------------------------------------------------------------------------------------------------
# Facade
# ------------------------------------------------------------------------------------------------

class FairLearner:
    """One entry point: ``FairLearner('pf', gamma=0.5).simulate(env, T=10_000, seeds=20)``."""

    def __init__(self, learner: "str | LearnerSpec" = "pf", **params: Any) -> None:
        self.spec = make_learner(learner, **params)

    @property
    def name(self) -> str:
        return self.spec.name

    def __repr__(self) -> str:
        return f"FairLearner({self.spec!r})"

    def build(self, n_agents: int, n_arms: int, horizon: int, n_runs: int, rngs=None) -> LearnerState:
        return self.spec.build(n_agents, n_arms, horizon, n_runs, rngs)

    def simulate(self, env: Any, T: int, seeds: Any = 20, **kw: Any):
        from fairarena.learners.simulate import simulate

        return simulate(self.spec, env, T, seeds, **kw)
