"""The multi-agent bandit environment: N agents, K arms, one reward vector per pull.

Pulling arm ``k`` gives every agent ``i`` a reward drawn from its own distribution with mean
``mu[i, k]`` (independently across agents and pulls). Reward families:

- ``bernoulli``: ``Bernoulli(mu[i, k])``;
- ``beta:STD``: a Beta distribution with mean ``mu[i, k]`` and standard deviation ``STD``
  (``alpha``, ``beta`` solved from mean and std, see :func:`beta_params`);
- ``gaussian:STD``: ``Normal(mu[i, k], STD^2)`` clipped to [0, 1]. Clipping moves the mean near
  the boundaries; :attr:`MultiAgentBandit.means` holds the exact means of the clipped law, and
  regrets are measured against those.

Reproducibility ("reward stacks", as in Lattimore & Szepesvari, *Bandit Algorithms*, 4.6): for a
seed ``s`` the ``j``-th pull of arm ``k`` always returns the same reward vector, whatever the learner
did before. Each (seed, arm) has its own generator, derived from ``SeedSequence(s)`` with spawn
key ``(0, k)``; the harness samples arms from stream ``(1,)`` and learners get stream ``(2,)``.
So every learner faces exactly the same environment for a given seed, and a run of one seed gives
the same trajectory alone or inside a batch of seeds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from fairarena.bandit.problem import validate_rewards
from fairarena.errors import InputError

ENV_STREAM = 0
SAMPLER_STREAM = 1
LEARNER_STREAM = 2


def seed_stream(seed: int, *key: int) -> np.random.Generator:
    """The generator of one named stream of a run seed (see the module docstring)."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=tuple(int(k) for k in key)))


def validate_seeds(seeds: Any) -> list[int]:
    """A non-empty list of distinct non-negative integer seeds (an int ``n`` means ``0..n-1``)."""
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        if seeds < 1:
            raise InputError("seeds", seeds, "expected a positive number of seeds")
        return list(range(int(seeds)))
    try:
        out = [int(s) for s in seeds]
    except (TypeError, ValueError):
        raise InputError("seeds", seeds, "expected an int or a list of non-negative integers") from None
    if not out:
        raise InputError("seeds", seeds, "expected at least one seed")
    if any(s < 0 for s in out) or any(float(s) != float(t) for s, t in zip(out, seeds)):
        raise InputError("seeds", seeds, "expected non-negative integers")
    if len(set(out)) != len(out):
        raise InputError("seeds", seeds, "seeds must be distinct")
    return out


# ------------------------------------------------------------------------------------------------
# Reward families
# ------------------------------------------------------------------------------------------------

def beta_params(mean: Any, std: float) -> tuple[np.ndarray, np.ndarray]:
    """``(alpha, beta)`` of the Beta distribution with the given mean(s) and standard deviation.

    ``alpha + beta = m (1 - m) / std^2 - 1``, ``alpha = m (alpha + beta)``; e.g. mean 0.9, std 0.1
    gives (7.2, 0.8). A Beta law with mean ``m`` exists only for ``0 < m < 1`` and
    ``std^2 < m (1 - m)``: anything else raises :class:`InputError`.
    """
    m = np.asarray(mean, dtype=float)
    if not (isinstance(std, (int, float, np.floating)) and math.isfinite(std) and std > 0):
        raise InputError("std", std, "a Beta standard deviation must be a positive number")
    bad = (m <= 0) | (m >= 1)
    if np.any(bad):
        v = float(m[bad].flat[0]) if m.ndim else float(m)
        raise InputError("mean", v, f"a Beta law with std {std:g} needs a mean strictly inside (0, 1)")
    var = m * (1.0 - m)
    too = std * std >= var
    if np.any(too):
        v = float(m[too].flat[0]) if m.ndim else float(m)
        raise InputError("std", std, f"too large for mean {v:g}: a Beta law needs std < sqrt(m(1-m)) = "
                                     f"{math.sqrt(v * (1 - v)):.4g}")
    total = var / (std * std) - 1.0
    return m * total, (1.0 - m) * total


@dataclass(frozen=True)
class RewardFamily:
    """A reward distribution family: ``kind`` in {bernoulli, beta, gaussian} and its ``std``."""

    kind: str = "bernoulli"
    std: float | None = None

    KINDS = ("bernoulli", "beta", "gaussian")

    def __post_init__(self) -> None:
        if self.kind not in self.KINDS:
            raise InputError("rewards", self.kind, "expected bernoulli, beta:STD or gaussian:STD")
        if self.kind == "bernoulli":
            if self.std is not None:
                raise InputError("rewards", f"bernoulli:{self.std}", "a Bernoulli family takes no std")
        elif not (isinstance(self.std, (int, float)) and math.isfinite(self.std) and self.std > 0):
            raise InputError("rewards", f"{self.kind}:{self.std}", "expected a positive standard deviation")

    @property
    def label(self) -> str:
        return self.kind if self.std is None else f"{self.kind}:{self.std:g}"

    def check(self, mu: np.ndarray) -> None:
        """Raise :class:`InputError` when a mean cannot be realised by the family."""
        if self.kind == "beta":
            beta_params(mu, float(self.std))

    def means(self, mu: np.ndarray) -> np.ndarray:
        """Exact expected rewards (differ from ``mu`` only for the clipped Gaussian)."""
        if self.kind != "gaussian":
            return np.array(mu, dtype=float)
        from scipy.stats import norm

        s = float(self.std)
        a, b = (0.0 - mu) / s, (1.0 - mu) / s
        # E[clip(X, 0, 1)] = mu (Phi(b) - Phi(a)) + s (phi(a) - phi(b)) + 1 - Phi(b)
        return mu * (norm.cdf(b) - norm.cdf(a)) + s * (norm.pdf(a) - norm.pdf(b)) + norm.sf(b)

    def sample(self, rng: np.random.Generator, mu_col: np.ndarray, size: int) -> np.ndarray:
        """``size`` reward vectors for one arm with agent means ``mu_col`` (N,): ``(size, N)``."""
        n = mu_col.shape[0]
        if self.kind == "bernoulli":
            return (rng.random((size, n)) < mu_col).astype(float)
        if self.kind == "beta":
            a, b = beta_params(mu_col, float(self.std))
            return rng.beta(a, b, size=(size, n))
        return np.clip(rng.normal(mu_col, float(self.std), size=(size, n)), 0.0, 1.0)


def parse_family(spec: str | RewardFamily) -> RewardFamily:
    """``'bernoulli'``, ``'beta:0.1'`` or ``'gaussian:0.1'`` (case-insensitive)."""
    if isinstance(spec, RewardFamily):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise InputError("rewards", spec, "expected bernoulli, beta:STD or gaussian:STD")
    kind, _, arg = spec.strip().lower().partition(":")
    kind = {"bern": "bernoulli", "normal": "gaussian", "clipped-gaussian": "gaussian"}.get(kind, kind)
    if kind not in RewardFamily.KINDS:
        raise InputError("rewards", spec, "expected bernoulli, beta:STD or gaussian:STD")
    if kind == "bernoulli":
        if arg:
            raise InputError("rewards", spec, "a Bernoulli family takes no std (use 'bernoulli')")
        return RewardFamily("bernoulli")
    if not arg:
        raise InputError("rewards", spec, f"expected {kind}:STD, e.g. {kind}:0.1")
    try:
        std = float(arg)
    except ValueError:
        raise InputError("rewards", spec, f"expected {kind}:STD with a number STD") from None
    return RewardFamily(kind, std)


# ------------------------------------------------------------------------------------------------
# Environment
# ------------------------------------------------------------------------------------------------

class MultiAgentBandit:
    """N agents x K arms with reward means ``rewards`` (validated) and a reward family."""

    def __init__(self, rewards: Any, family: str | RewardFamily = "bernoulli", name: str = "") -> None:
        self.mu = validate_rewards(rewards)
        self.family = parse_family(family)
        self.family.check(self.mu)
        means = self.family.means(self.mu)
        means.setflags(write=False)
        self.means = means
        self.name = name or f"{self.n_agents}x{self.n_arms}"

    @property
    def n_agents(self) -> int:
        return int(self.mu.shape[0])

    @property
    def n_arms(self) -> int:
        return int(self.mu.shape[1])

    def __repr__(self) -> str:
        return f"MultiAgentBandit({self.name!r}, N={self.n_agents}, K={self.n_arms}, rewards={self.family.label!r})"

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "rewards": self.mu.tolist(), "family": self.family.label}

    def streams(self, seeds: Sequence[int], chunk: int = 512) -> "RewardStreams":
        """Batched reward streams for the given run seeds."""
        return RewardStreams(self, validate_seeds(seeds), chunk)

    def reward_stack(self, seed: int, arm: int, n: int) -> np.ndarray:
        """The first ``n`` reward vectors arm ``arm`` returns under ``seed``: ``(n, N)``."""
        st = self.streams([seed])
        out = np.empty((n, self.n_agents))
        arms = np.array([arm])
        for j in range(n):
            out[j] = st.pull(arms)[0]
        return out


class RewardStreams:
    """The environment state of several runs (one per seed), pulled together."""

    def __init__(self, env: MultiAgentBandit, seeds: list[int], chunk: int) -> None:
        self.env = env
        self.seeds = seeds
        self.chunk = int(chunk)
        s, k, n = len(seeds), env.n_arms, env.n_agents
        self._gens = [[seed_stream(sd, ENV_STREAM, a) for a in range(k)] for sd in seeds]
        self._buf = np.empty((s, k, self.chunk, n))
        self._ptr = np.zeros((s, k), dtype=np.int64)
        self._sidx = np.arange(s)
        for i in range(s):
            for a in range(k):
                self._refill(i, a)

    def _refill(self, i: int, a: int) -> None:
        env = self.env
        self._buf[i, a] = env.family.sample(self._gens[i][a], env.mu[:, a], self.chunk)
        self._ptr[i, a] = 0

    def pull(self, arms: np.ndarray) -> np.ndarray:
        """Pull ``arms[s]`` in run ``s``: the reward vectors ``(S, N)``."""
        sidx = self._sidx
        ptr = self._ptr[sidx, arms]
        out = self._buf[sidx, arms, ptr]
        ptr += 1
        self._ptr[sidx, arms] = ptr
        if ptr.max() >= self.chunk:
            for i in np.flatnonzero(ptr >= self.chunk):
                self._refill(int(i), int(arms[i]))
        return out


class ArmStacks:
    """The reward stacks of one seed, read ahead: ``peek`` the rewards a sequence of pulls would
    return, ``commit`` the pulls that really happen. Draws exactly the same chunks, in the same
    order, as :class:`RewardStreams`, so both give the same reward for the j-th pull of an arm."""

    def __init__(self, env: MultiAgentBandit, seed: int, chunk: int = 512) -> None:
        self.env = env
        self.chunk = int(chunk)
        k, n = env.n_arms, env.n_agents
        self._gens = [seed_stream(seed, ENV_STREAM, a) for a in range(k)]
        self._buf = [np.empty((0, n)) for _ in range(k)]
        self._ptr = np.zeros(k, dtype=np.int64)

    def _ensure(self, a: int, upto: int) -> None:
        buf = self._buf[a]
        if buf.shape[0] >= upto:
            return
        env = self.env
        more = [env.family.sample(self._gens[a], env.mu[:, a], self.chunk)
                for _ in range(-(-(upto - buf.shape[0]) // self.chunk))]
        self._buf[a] = np.concatenate([buf, *more])

    def peek(self, arms: np.ndarray) -> np.ndarray:
        """Rewards ``(m, N)`` of pulling ``arms`` in order (nothing is consumed)."""
        out = np.empty((arms.shape[0], self.env.n_agents))
        counts = np.bincount(arms, minlength=self.env.n_arms)
        for a in np.flatnonzero(counts):
            p = int(self._ptr[a])
            self._ensure(int(a), p + int(counts[a]))
            out[arms == a] = self._buf[a][p:p + counts[a]]
        return out

    def commit(self, arms: np.ndarray) -> None:
        """Consume the pulls ``arms`` (a prefix of the last ``peek``)."""
        counts = np.bincount(arms, minlength=self.env.n_arms)
        self._ptr += counts
        for a in np.flatnonzero(self._ptr >= 8 * self.chunk):
            drop = (int(self._ptr[a]) // self.chunk) * self.chunk
            self._buf[a] = self._buf[a][drop:]
            self._ptr[a] -= drop


class RoundUniforms:
    """The sampler stream of one seed indexed by round: ``get(t, b)`` gives the uniforms in (0, 1]
    of rounds ``t..t+b-1`` (drawn in chunks of 1024 from round 1, like the vectorised harness;
    rounds only move forward)."""

    CHUNK = 1024

    def __init__(self, gen: np.random.Generator) -> None:
        self.gen = gen
        self.base = 1  # round of buf[0]
        self.buf = np.empty(0)

    def get(self, t: int, b: int) -> np.ndarray:
        drop = ((t - self.base) // self.CHUNK) * self.CHUNK
        if drop:
            self.buf = self.buf[drop:]
            self.base += drop
        while self.base + self.buf.size < t + b:
            self.buf = np.concatenate([self.buf, self.gen.random(self.CHUNK)])
        return 1.0 - self.buf[t - self.base:t - self.base + b]
