"""The notion registry, the :class:`Notion` type and the options shared by every notion.

:data:`NOTIONS` is a :class:`fairarena.registry.Registry`: every list of notion names in the package
(sweep config, result columns, CLI choices and help) is read from it, so a notion registered from
outside the package (:func:`register`) is usable everywhere without another edit. Each entry carries
its title, citation (``source``), one-line summary and the direction of its raw value (``"max"``:
higher is better, the convention of every built-in notion; ``max``/``min`` is the package's one direction
vocabulary).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

import numpy as np

from fairarena.bandit.problem import DEFAULT_TOL, validate_policy, validate_rewards
from fairarena.bandit.vocabulary import EF_KINDS, GGI_KINDS, TIE_BREAKS  # noqa: F401  (re-exported)
from fairarena.errors import InputError
from fairarena.registry import Registry


@dataclass(frozen=True)
class Options:
    """Knobs shared by all notions (validated once)."""

    tol: float = DEFAULT_TOL                 # favourite-set tolerance
    ef_kind: str = "squared"                 # 'squared' (default) or 'absolute' pairwise differences
    ggi_weights: tuple[float, ...] | None = None  # None: w_m = 2^-(m-1)
    tie_break: str = "utilitarian"           # for pf and ef: 'utilitarian' or 'central'
    ggi_kind: str = "owa"                    # 'owa' (generalized Gini welfare) or 'gini' (min Gini coefficient)

    def __post_init__(self) -> None:
        if not (isinstance(self.tol, (int, float)) and np.isfinite(self.tol) and 0 <= self.tol < 1):
            raise InputError("tol", self.tol, "expected a number in [0, 1)")
        if self.ef_kind not in EF_KINDS:
            raise InputError("ef_kind", self.ef_kind, f"expected one of {', '.join(EF_KINDS)}")
        if self.tie_break not in TIE_BREAKS:
            raise InputError("tie_break", self.tie_break, f"expected one of {', '.join(TIE_BREAKS)}")
        if self.ggi_kind not in GGI_KINDS:
            raise InputError("ggi_kind", self.ggi_kind, f"expected one of {', '.join(GGI_KINDS)}")

    def ggi_w(self, n: int) -> np.ndarray:
        if self.ggi_weights is None:
            return 2.0 ** -np.arange(n)
        w = np.asarray(self.ggi_weights, dtype=float)
        if w.shape != (n,):
            raise InputError("ggi_weights", list(self.ggi_weights), f"expected N = {n} weights")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(np.diff(w) > 0):
            raise InputError("ggi_weights", list(self.ggi_weights),
                             "expected non-negative, non-increasing weights (worst-off agent first)")
        return w


def make_options(opts: Options | Mapping[str, Any] | None = None, **kw: Any) -> Options:
    if opts is None:
        return Options(**kw)
    if isinstance(opts, Options):
        return replace(opts, **kw) if kw else opts
    return Options(**{**dict(opts), **kw})


PolicyFn = Callable[[np.ndarray, Options], np.ndarray]
ValueFn = Callable[[np.ndarray, np.ndarray, Options], np.ndarray]
ScoreFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
ExactFn = Callable[[np.ndarray, Options], np.ndarray]


@dataclass(frozen=True)
class Notion:
    """A fairness notion: optimal policy, raw value (higher is better) and normalised score.

    ``policy_fn(mus (B, N, K), options) -> (B, K)`` and ``value_fn(mus, ps, options) -> (B,)`` are
    batched. ``score_fn(value, optimum) -> (B,)`` maps a value to [0, 1]; with
    ``score_is_value=True`` the value already is the score (PF) and no optimum is solved for.
    ``exact_fn(mu (N, K), options) -> (K,)``, when given, solves one instance exactly (an LP): the
    last step of :func:`~fairarena.bandit.notions.optimal_policies`' fallback chain.
    """

    name: str
    title: str
    source: str
    summary: str
    policy_fn: PolicyFn = field(repr=False)
    value_fn: ValueFn = field(repr=False)
    score_fn: ScoreFn = field(repr=False)
    score_is_value: bool = False
    direction: str = "max"
    exact_fn: ExactFn | None = field(default=None, repr=False)

    # ---- batched ---------------------------------------------------------------------------
    def policy_batch(self, mus: np.ndarray, opts: Options | Mapping | None = None, **kw: Any) -> np.ndarray:
        """Optimal policies for a stack ``(B, N, K)`` of reward matrices: ``(B, K)``."""
        mus = np.asarray(mus, dtype=float)
        return self.policy_fn(mus, make_options(opts, **kw))

    def value_batch(self, mus: np.ndarray, ps: np.ndarray, opts: Options | Mapping | None = None,
                    **kw: Any) -> np.ndarray:
        """Raw value of each policy (higher is better): ``(B,)``."""
        return self.value_fn(np.asarray(mus, float), np.asarray(ps, float), make_options(opts, **kw))

    def score_batch(self, mus: np.ndarray, ps: np.ndarray, opts: Options | Mapping | None = None, *,
                    optimum: np.ndarray | None = None, **kw: Any) -> np.ndarray:
        """Score in [0, 1] of each policy, 1 for an optimal one: ``(B,)``.

        ``optimum`` (the notion's optimal value per instance) is computed when not given.
        """
        o = make_options(opts, **kw)
        mus = np.asarray(mus, float)
        val = self.value_fn(mus, np.asarray(ps, float), o)
        if self.score_is_value:
            return val
        if optimum is None:
            optimum = self.value_fn(mus, self.policy_fn(mus, o), o)
        return self.score_fn(val, np.maximum(optimum, val))

    # ---- single instance ----------------------------------------------------------------------
    def policy(self, mu: Any, opts: Options | Mapping | None = None, **kw: Any) -> np.ndarray:
        mu = validate_rewards(mu)
        return self.policy_batch(mu[None], opts, **kw)[0]

    def value(self, mu: Any, p: Any, opts: Options | Mapping | None = None, **kw: Any) -> float:
        mu = validate_rewards(mu)
        p = validate_policy(p, mu.shape[1])
        return float(self.value_batch(mu[None], p[None], opts, **kw)[0])

    def score(self, mu: Any, p: Any, opts: Options | Mapping | None = None, **kw: Any) -> float:
        mu = validate_rewards(mu)
        p = validate_policy(p, mu.shape[1])
        return float(self.score_batch(mu[None], p[None], opts, **kw)[0])


NOTIONS: Registry[Notion] = Registry("notion")
"""Every registered notion by name, in registration order (built-ins: pf, ef, uf, nsw, ggi, maximin)."""


def register(name: str, title: str, source: str, summary: str, *, value: ValueFn, score: ScoreFn,
             score_is_value: bool = False, direction: str = "max", exact: ExactFn | None = None,
             **meta: Any) -> Callable[[PolicyFn], PolicyFn]:
    """Decorator: register a batched policy function as a notion (a duplicate name is an error).

    ``direction`` is the direction of the raw value: only ``"max"`` (higher is better) is
    supported, so that every notion's score is read the same way."""
    if direction != "max":
        raise ValueError(f"notion {name!r}: direction must be 'max', higher is better (negate a cost to "
                         "register it)")

    def deco(policy_fn: PolicyFn) -> PolicyFn:
        notion = Notion(name, title, source, summary, policy_fn, value, score, score_is_value, direction, exact)
        NOTIONS.add(name, notion, title=title, description=summary, citation=source, direction=direction,
                    **meta)
        return policy_fn

    return deco


def get_notion(name: str) -> Notion:
    """The notion registered as ``name``; unknown names raise :class:`InputError` listing the choices."""
    return NOTIONS.get(name)


def ratio_score(val: np.ndarray, opt: np.ndarray) -> np.ndarray:
    """``value / optimum`` clipped to [0, 1] (1 where the optimum is not positive)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.clip(np.where(opt > 0, val / np.where(opt > 0, opt, 1.0), 1.0), 0.0, 1.0)
