"""Stability and fairness certificates for a policy: core, proportionality, Pareto dominance.

Every check returns a verdict *and* a witness (the blocking coalition and its policy, the agents
short of their proportional share, ...), so a failed check can be inspected and re-verified.

Core checks enumerate coalitions and solve one LP (HiGHS) per coalition: **exact for
N <= ``MAX_EXACT_N`` (12) agents** (4,095 coalitions). For larger N the check covers every coalition
of size 1, 2, N-1 and N plus ``samples`` random ones, and reports ``exact=False``: a ``True``
verdict is then only evidence, a ``False`` verdict (with its witness) is still a proof.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from fairarena.bandit.notions import pf_score_batch
from fairarena.bandit.problem import DEFAULT_TOL, favourites, validate_policy, validate_rewards
from fairarena.errors import SolverError

MAX_EXACT_N = 12
BLOCK_TOL = 1e-7  # a coalition blocks only if it gains more than this in total


@dataclass(frozen=True)
class Blocking:
    coalition: list[int]   # 0-based agent indices
    policy: list[float]    # the coalition's deviation q
    gains: list[float]     # |S|/N * v_i(q) - v_i(p) for each member (all >= 0, one > 0)


@dataclass(frozen=True)
class CoreResult:
    in_core: bool
    exact: bool
    coalitions_checked: int
    blocking: Blocking | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _coalitions(n: int, rng: np.random.Generator, samples: int) -> Iterator[tuple[int, ...]]:
    if n <= MAX_EXACT_N:
        for size in range(1, n + 1):
            yield from itertools.combinations(range(n), size)
        return
    seen: set[tuple[int, ...]] = set()
    fixed = [c for size in (1, 2) for c in itertools.combinations(range(n), size)]
    fixed += [tuple(x for x in range(n) if x != i) for i in range(n)] + [tuple(range(n))]
    for c in fixed:
        seen.add(c)
        yield c
    for _ in range(samples):
        size = int(rng.integers(3, n - 1))
        c = tuple(sorted(rng.choice(n, size=size, replace=False).tolist()))
        if c not in seen:
            seen.add(c)
            yield c


def _blocking_lp(values: np.ndarray, current: np.ndarray, coalition: Sequence[int], n: int):
    """max sum_{i in S} (|S|/N v_i q - v_i(p)) s.t. each term >= 0, q in the simplex."""
    from scipy.optimize import linprog

    s = len(coalition)
    V = values[list(coalition)] * (s / n)
    cur = current[list(coalition)]
    if np.any(V.max(axis=1) < cur - 1e-12):  # some member cannot even reach its current value
        return None
    k = values.shape[1]
    res = linprog(-V.sum(axis=0), A_ub=-V, b_ub=-cur, A_eq=np.ones((1, k)), b_eq=[1.0],
                  bounds=(0, None), method="highs")
    if res.status == 2:  # infeasible: this coalition cannot block
        return None
    if res.status != 0:
        raise SolverError(f"core LP for coalition {list(coalition)} failed: {res.message}")
    q = np.clip(res.x, 0, None)
    q /= q.sum()
    gains = V @ q - cur
    return q, gains


def _core(values: np.ndarray, current: np.ndarray, samples: int, seed: int) -> CoreResult:
    n = values.shape[0]
    rng = np.random.default_rng(seed)
    checked = 0
    for coalition in _coalitions(n, rng, samples):
        checked += 1
        out = _blocking_lp(values, current, coalition, n)
        if out is None:
            continue
        q, gains = out
        if gains.sum() > BLOCK_TOL and np.all(gains >= -1e-9):
            return CoreResult(False, n <= MAX_EXACT_N, checked,
                              Blocking(list(coalition), q.tolist(), gains.tolist()))
    return CoreResult(True, n <= MAX_EXACT_N, checked, None)


def procedural_core(mu: Any, p: Any, tol: float = DEFAULT_TOL, samples: int = 2000, seed: int = 0) -> CoreResult:
    """Is ``p`` in the procedural core? Blocked if some coalition S and policy q give every member
    ``|S|/N d_i(q) >= d_i(p)``, one strictly."""
    mu = validate_rewards(mu)
    p = validate_policy(p, mu.shape[1])
    fav = favourites(mu, tol).astype(float)
    return _core(fav, fav @ p, samples, seed)


def outcome_core(mu: Any, p: Any, samples: int = 2000, seed: int = 0) -> CoreResult:
    """Is ``p`` in the outcome core? As the procedural core, with utilities ``U_i`` instead of
    decision shares."""
    mu = validate_rewards(mu)
    p = validate_policy(p, mu.shape[1])
    return _core(np.asarray(mu), np.asarray(mu) @ p, samples, seed)


@dataclass(frozen=True)
class ProportionalityResult:
    proportional: bool
    shortfall: dict[int, dict[str, float]]  # agent -> {"utility", "fair_share"} for agents short

    def to_dict(self) -> dict[str, Any]:
        return {"proportional": self.proportional,
                "shortfall": {str(i): v for i, v in self.shortfall.items()}}


def proportionality(mu: Any, p: Any, atol: float = 1e-7) -> ProportionalityResult:
    """Every agent gets at least 1/N of its best achievable utility (``max_k mu[i,k] / N``)."""
    mu = validate_rewards(mu)
    p = validate_policy(p, mu.shape[1])
    n = mu.shape[0]
    u = mu @ p
    share = mu.max(axis=1) / n
    short = {int(i): {"utility": float(u[i]), "fair_share": float(share[i])}
             for i in np.flatnonzero(u < share - atol)}
    return ProportionalityResult(not short, short)


def is_procedurally_fair(mu: Any, p: Any, tol: float = DEFAULT_TOL, atol: float = 1e-7) -> bool:
    """PF iff the PF score (a max-flow value) is 1."""
    mu = validate_rewards(mu)
    p = validate_policy(p, mu.shape[1])
    return bool(pf_score_batch(favourites(mu, tol)[None], p[None])[0] >= 1.0 - atol)


@dataclass(frozen=True)
class PolicyCheck:
    """Every certificate of one policy (what ``fairarena check`` reports)."""
    procedural: CoreResult
    outcome: CoreResult
    proportionality: ProportionalityResult
    procedurally_fair: bool

    def to_dict(self) -> dict[str, Any]:
        """The verdicts, the first blocking coalition (procedural core first) tagged with its core,
        whether the core checks were exact, and the proportionality shortfall."""
        blocking: dict[str, Any] | None = None
        if self.procedural.blocking is not None:
            blocking = {"core": "procedural", **asdict(self.procedural.blocking)}
        elif self.outcome.blocking is not None:
            blocking = {"core": "outcome", **asdict(self.outcome.blocking)}
        return {"procedural_core": self.procedural.in_core, "outcome_core": self.outcome.in_core,
                "proportional": self.proportionality.proportional, "blocking": blocking,
                "procedurally_fair": self.procedurally_fair, "exact": self.procedural.exact,
                "proportionality_shortfall": self.proportionality.to_dict()["shortfall"]}


def check_policy(mu: Any, p: Any, tol: float = DEFAULT_TOL) -> PolicyCheck:
    """Procedural core, outcome core, proportionality and procedural fairness of ``p`` on ``mu``."""
    return PolicyCheck(procedural_core(mu, p, tol=tol), outcome_core(mu, p), proportionality(mu, p),
                       is_procedurally_fair(mu, p, tol))


def pareto_dominates(a: Mapping[str, float], b: Mapping[str, float], keys: Sequence[str] = ("pf", "ef", "uf"),
                     atol: float = 1e-9) -> bool:
    """``a`` Pareto-dominates ``b`` over the given scores: at least as good on all, better on one."""
    ge = all(a[k] >= b[k] - atol for k in keys)
    gt = any(a[k] > b[k] + atol for k in keys)
    return ge and gt
