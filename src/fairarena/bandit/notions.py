"""The registry of fairness notions for collective decisions.

Each notion has an optimal policy, a raw value (higher is better) and a score in [0, 1] that is 1
exactly for the notion's optimal policies. Everything is batched: ``policy_batch`` takes a stack of
reward matrices ``(B, N, K)`` and returns ``(B, K)``; ``score_batch`` returns ``(B,)``.

Definitions follow the procedural-fairness paper on multi-agent bandits (see ``docs/notions/``):

- ``pf``  procedural fairness: every agent controls a 1/N share of the decision, spent on its
  favourite arms; ties among such policies broken by decision-share Nash welfare.
- ``ef``  equality: minimise the pairwise inequality of utilities.
- ``uf``  utilitarian: maximise the sum of utilities.
- ``nsw`` Nash social welfare: maximise ``sum_i log U_i``.
- ``ggi`` generalized Gini: maximise ``sum_m w_m U_(m)`` (utilities ascending, ``w_m = 2^-(m-1)``).
- ``maximin`` Rawlsian: maximise ``min_i U_i``.

Where a notion's optimum is not unique, the policy returned is chosen by a documented tie-break
(``tie_break='utilitarian'``, the default for ``pf`` and ``ef``: the optimal policy with the largest
total utility; ``'central'``: the centre of the optimal face, where interior-point methods land).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from fairarena.bandit import _kernels
from fairarena.bandit import solver as _s
from fairarena.bandit.problem import (
    DEFAULT_TOL,
    decision_shares,
    favourites,
    inequality,
    utilities,
    validate_policy,
    validate_rewards,
)
from fairarena.errors import InputError

TIE_BREAKS = ("utilitarian", "central")
EF_KINDS = ("squared", "absolute")
_PF_SUBSET_MAX_K = 16
_SUPPORT_TOL = 1e-7  # below this an interior-point coordinate is taken as 0 (it is ~1/t there)


@dataclass(frozen=True)
class Options:
    """Knobs shared by all notions (validated once)."""

    tol: float = DEFAULT_TOL                 # favourite-set tolerance
    ef_kind: str = "squared"                 # 'squared' (default) or 'absolute' pairwise differences
    ggi_weights: tuple[float, ...] | None = None  # None: w_m = 2^-(m-1)
    tie_break: str = "utilitarian"           # for pf and ef: 'utilitarian' or 'central'

    def __post_init__(self) -> None:
        if not (isinstance(self.tol, (int, float)) and np.isfinite(self.tol) and 0 <= self.tol < 1):
            raise InputError("tol", self.tol, "expected a number in [0, 1)")
        if self.ef_kind not in EF_KINDS:
            raise InputError("ef_kind", self.ef_kind, f"expected one of {', '.join(EF_KINDS)}")
        if self.tie_break not in TIE_BREAKS:
            raise InputError("tie_break", self.tie_break, f"expected one of {', '.join(TIE_BREAKS)}")

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


# ------------------------------------------------------------------------------------------------
# Registry
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Notion:
    """A fairness notion: optimal policy, raw value (higher is better) and normalised score."""

    name: str
    title: str
    source: str
    summary: str
    policy_fn: Callable[[np.ndarray, Options], np.ndarray] = field(repr=False)
    value_fn: Callable[[np.ndarray, np.ndarray, Options], np.ndarray] = field(repr=False)
    score_fn: Callable[[np.ndarray, np.ndarray], np.ndarray] = field(repr=False)

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
        if self.name == "pf":
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


NOTIONS: dict[str, Notion] = {}


def register(name: str, title: str, source: str, summary: str, *, value: Callable, score: Callable):
    """Decorator: register a batched policy function as a notion."""

    def deco(policy_fn: Callable) -> Callable:
        if name in NOTIONS:
            raise ValueError(f"notion {name!r} registered twice")
        NOTIONS[name] = Notion(name, title, source, summary, policy_fn, value, score)
        return policy_fn

    return deco


def get_notion(name: str) -> Notion:
    try:
        return NOTIONS[name]
    except KeyError:
        raise InputError("notion", name, f"expected one of {', '.join(NOTIONS)}") from None


def _ratio(val: np.ndarray, opt: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.clip(np.where(opt > 0, val / np.where(opt > 0, opt, 1.0), 1.0), 0.0, 1.0)


# ------------------------------------------------------------------------------------------------
# Shared helpers
# ------------------------------------------------------------------------------------------------

def _uniform(b: int, k: int, live: np.ndarray | None = None) -> np.ndarray:
    if live is None:
        return np.full((b, k), 1.0 / k)
    return live / live.sum(axis=1, keepdims=True)


def split_live(mus: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Stacks may mix arm counts by padding with all-NaN columns (see :func:`pad_stack`).

    Returns the stack with padding replaced by 0 and the ``(B, K)`` mask of real arms (``None``
    when nothing is padded). Padded arms get probability exactly 0 and never change a result."""
    pad = np.isnan(mus)
    if not pad.any():
        return mus, None
    live = ~pad.all(axis=-2)
    return np.where(pad, 0.0, mus), live


def pad_stack(instances: Sequence[np.ndarray]) -> np.ndarray:
    """Stack reward matrices with the same N and different K, padding missing arms with NaN."""
    n = {np.shape(m)[0] for m in instances}
    if len(n) != 1:
        raise ValueError("pad_stack needs instances with the same number of agents")
    k = max(np.shape(m)[1] for m in instances)
    out = np.full((len(instances), n.pop(), k), np.nan)
    for i, m in enumerate(instances):
        out[i, :, : np.shape(m)[1]] = m
    return out


def _utilitarian_tie_break(mus: np.ndarray, p_hat: np.ndarray, face: np.ndarray) -> np.ndarray:
    """Among policies ``p`` in the simplex with ``face @ p = face @ p_hat`` (the notion's optimal
    face, on which every optimum shares these linear statistics), the one with the largest total
    utility (then the centre of what remains tied)."""
    b, n, k = mus.shape
    # The interior-point p_hat lies in the relative interior of the optimal face, so its support
    # is the face's support: arms at ~0 stay at 0 (numerically they are ~1/t).
    live = p_hat > _SUPPORT_TOL
    p0 = np.where(live, p_hat, 0.0)
    p0 /= p0.sum(axis=1, keepdims=True)
    E = np.concatenate([face, np.ones((b, 1, k))], axis=1)
    # The face is a single point (nothing to break) when its support columns of E are independent.
    sv = np.linalg.svd(E * live[:, None, :], compute_uv=False)
    rank = (sv > 1e-9 * np.maximum(sv[:, :1], 1e-300)).sum(axis=1)
    todo = np.flatnonzero(rank < live.sum(axis=1))
    out = p0.copy()
    if todo.size == 0:
        return out
    c = -mus.sum(axis=1)  # minimise minus total utility
    res = _s.barrier_solve(_s.LinearObjective(c[todo]), p0[todo], k, E=E[todo], live=live[todo], gap=1e-11,
                           on_fail="mask")
    out[todo] = res.y[:, :k]
    for j in np.flatnonzero(res.failed):  # ill-conditioned faces: the same LP exactly with HiGHS
        i = todo[j]
        out[i] = _face_lp(c[i], E[i], p0[i], live[i])
    return out


def _face_lp(c: np.ndarray, E: np.ndarray, p0: np.ndarray, live: np.ndarray) -> np.ndarray:
    """min c.p s.t. E p = E p0, p >= 0, p = 0 off ``live`` (HiGHS; status checked)."""
    from scipy.optimize import linprog

    from fairarena.errors import SolverError

    bounds = [(0, None) if lv else (0, 0) for lv in live]
    res = linprog(c, A_eq=E, b_eq=E @ p0, bounds=bounds, method="highs")
    if res.status != 0:
        raise SolverError(f"tie-break LP failed: {res.message}")
    p = np.clip(res.x, 0.0, None)
    return p / p.sum()


def _clean(p: np.ndarray) -> np.ndarray:
    """Project solver output onto the simplex exactly (clip round-off, renormalise)."""
    p = np.where(p < 1e-11, 0.0, p)
    return p / p.sum(axis=1, keepdims=True)


# ------------------------------------------------------------------------------------------------
# Procedural fairness
# ------------------------------------------------------------------------------------------------

def pf_score_batch(fav: np.ndarray, ps: np.ndarray) -> np.ndarray:
    """PF score: the max-flow ``max sum y[i,k]`` over favourite edges with agent capacities 1/N and
    arm capacities ``p_k``; computed by max-flow/min-cut duality as
    ``min over arm sets X of p(X) + #{i : F_i not within X} / N`` (exact; enumerates 2^K sets for
    K <= 16, HiGHS LPs beyond)."""
    fav = np.asarray(fav, dtype=bool)
    b, n, k = fav.shape
    if k > _PF_SUBSET_MAX_K:
        return np.array([_pf_score_lp(f, p) for f, p in zip(fav, ps)])
    masks = (fav * (1 << np.arange(k))).sum(axis=2).astype(np.int64)  # (B, N) favourite-set bitmasks
    return _kernels.pf_scores(np.ascontiguousarray(masks), np.ascontiguousarray(ps, dtype=float))


def _pf_score_lp(fav: np.ndarray, p: np.ndarray) -> float:
    from scipy.optimize import linprog

    n, k = fav.shape
    edges = np.argwhere(fav)
    m = len(edges)
    a_ub = np.zeros((n + k, m))
    a_ub[edges[:, 0], np.arange(m)] = 1.0
    a_ub[n + edges[:, 1], np.arange(m)] = 1.0
    b_ub = np.concatenate([np.full(n, 1.0 / n), p])
    res = linprog(-np.ones(m), A_ub=a_ub, b_ub=b_ub, bounds=(0, None), method="highs")
    if res.status != 0:
        from fairarena.errors import SolverError

        raise SolverError(f"PF score LP failed: {res.message}")
    return float(min(1.0, -res.fun))


def _fav(mus: np.ndarray, tol: float) -> np.ndarray:
    mus0, live = split_live(mus)
    fav = favourites(mus0, tol)
    return fav if live is None else fav & live[:, None, :]


def _pf_value(mus, ps, o):
    return pf_score_batch(_fav(mus, o.tol), ps)


def pf_policy_from_favourites(fav: np.ndarray, mus: np.ndarray | None = None,
                              tie_break: str = "utilitarian", live: np.ndarray | None = None) -> np.ndarray:
    """PF policy for favourite masks ``(B, N, K)``: maximise ``sum_i log d_i(p)``.

    Closed form ``p_k = |{i : F_i = {k}}| / N`` when every favourite set is a single arm. Otherwise a
    convex program; with binary utilities its optimum always splits into a PF decomposition
    (``x[i,k] = p_k [k in F_i] / (N d_i)``), so it is PF. ``tie_break='utilitarian'`` (needs ``mus``)
    picks, among the optimal policies (all share the same decision shares), the one with the
    largest total utility.
    """
    fav = np.asarray(fav, dtype=bool)
    b, n, k = fav.shape
    out = np.empty((b, k))
    single = (fav.sum(axis=2) == 1).all(axis=1)
    if single.any():
        out[single] = fav[single].sum(axis=1) / n
    rest = np.flatnonzero(~single)
    if rest.size:
        A = fav[rest].astype(float)
        lv = None if live is None else live[rest]
        res = _s.barrier_solve(_s.NegLogSumObjective(A), _uniform(rest.size, k, lv), k, live=lv, gap=1e-11)
        p = res.y[:, :k]
        if tie_break == "utilitarian" and mus is not None:
            p = _utilitarian_tie_break(np.asarray(mus, float)[rest], p, A)
        out[rest] = _clean(p)
    return out


@register("pf", "Procedural fairness",
          "Procedural fairness in multi-agent multi-armed bandits (the procedural-fairness paper); "
          "Nash tie-breaking as in Bogomolnaia, Moulin & Stong (2005)",
          "Every agent controls an equal 1/N share of the decision, spent on its favourite arms.",
          value=_pf_value, score=lambda v, o: v)
def _pf_policy(mus, o):
    mus0, live = split_live(mus)
    return pf_policy_from_favourites(_fav(mus, o.tol), mus0, o.tie_break, live)


# ------------------------------------------------------------------------------------------------
# Equality
# ------------------------------------------------------------------------------------------------

def _ef_value(mus, ps, o):
    return 0.0 - inequality(_u(mus, ps), o.ef_kind)


@register("ef", "Equality fairness",
          "Procedural-fairness paper (equality notion); absolute variant: Gini mean difference",
          "Utilities as equal as possible: minimise 2/(N(N-1)) sum_{i<j} (U_i - U_j)^2.",
          value=_ef_value, score=lambda v, opt: np.clip(1.0 - (opt - v), 0.0, 1.0))
def _ef_policy(mus, o):
    b, n, k = mus.shape
    if n == 1:  # no inequality at all: every policy is equally fair
        return _uf_policy(mus, o) if o.tie_break == "utilitarian" else _uniform(b, k, split_live(mus)[1])
    if o.ef_kind == "absolute":
        c = 2.0 / (n * (n - 1))
        w = c * (n + 1 - 2 * np.arange(1, n + 1))
        return _owa_policy(mus, w)
    mus, live = split_live(mus)
    # I(p) = p^T Q p with Q = 2/(N(N-1)) mu^T (N I - 1 1^T) mu
    cm = mus - mus.mean(axis=1, keepdims=True)  # centred utilities per arm: C mu
    Q = (2.0 / (n - 1)) * np.einsum("bik,bil->bkl", cm, cm)
    res = _s.barrier_solve(_s.QuadraticObjective(Q), _uniform(b, k, live), k, live=live, gap=1e-12)
    p = res.y[:, :k]
    if o.tie_break == "utilitarian":
        # every minimiser has the same centred utility vector C mu p
        p = _utilitarian_tie_break(mus, p, cm)
    return _clean(p)


# ------------------------------------------------------------------------------------------------
# Utilitarian
# ------------------------------------------------------------------------------------------------

def _u(mus, ps):
    return utilities(split_live(mus)[0], ps)


def _uf_value(mus, ps, o):
    return _u(mus, ps).sum(axis=-1)


@register("uf", "Utilitarian fairness", "Procedural-fairness paper (utilitarian notion)",
          "Maximise total utility: all mass on argmax_k sum_i mu[i,k] (lowest index on ties).",
          value=_uf_value, score=_ratio)
def _uf_policy(mus, o):
    b, n, k = mus.shape
    out = np.zeros((b, k))
    mus0, live = split_live(mus)
    col = mus0.sum(axis=1)
    if live is not None:
        col = np.where(live, col, -np.inf)
    out[np.arange(b), col.argmax(axis=1)] = 1.0
    return out


# ------------------------------------------------------------------------------------------------
# Nash social welfare
# ------------------------------------------------------------------------------------------------

def _nsw_value(mus, ps, o):
    """Geometric mean of utilities (0 if any agent gets 0)."""
    u = _u(mus, ps)
    with np.errstate(divide="ignore"):
        return np.exp(np.log(np.maximum(u, 0.0)).mean(axis=-1))


@register("nsw", "Nash social welfare",
          "Kaneko & Nakamura (1979); offline target of NashUCB (Hossain, Micha & Shah, NeurIPS 2021)",
          "Maximise sum_i log U_i(p) (agents with an all-zero reward row are left out).",
          value=_nsw_value, score=_ratio)
def _nsw_policy(mus, o):
    b, n, k = mus.shape
    mus, live = split_live(mus)
    w = (mus.max(axis=2) > 0).astype(float)
    res = _s.barrier_solve(_s.NegLogSumObjective(mus, w), _uniform(b, k, live), k, live=live, gap=1e-11)
    return _clean(res.y[:, :k])


# ------------------------------------------------------------------------------------------------
# OWA family: generalized Gini and maximin
# ------------------------------------------------------------------------------------------------

def _owa_policy(mus: np.ndarray, w: np.ndarray) -> np.ndarray:
    b, n, k = mus.shape
    mus, live = split_live(mus)
    obj = _s.OWAObjective(mus, w)
    res = _s.barrier_solve(obj, obj.start(_uniform(b, k, live)), k, live=live, n_barrier=obj.n_barrier, gap=1e-9)
    return _clean(res.y[:, :k])


def owa_value(mus: np.ndarray, ps: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_m w_m U_(m)`` with utilities sorted ascending."""
    return (np.sort(_u(mus, ps), axis=-1) * w).sum(axis=-1)


@register("ggi", "Generalized Gini welfare",
          "Weymark (1981); GGI bandits: Busa-Fekete, Szorenyi, Weng & Mannor (ICML 2017)",
          "Maximise sum_m w_m U_(m), utilities ascending, w_m = 2^-(m-1) by default.",
          value=lambda mus, ps, o: owa_value(mus, ps, o.ggi_w(mus.shape[-2])), score=_ratio)
def _ggi_policy(mus, o):
    return _owa_policy(mus, o.ggi_w(mus.shape[1]))


def _maximin_w(n: int) -> np.ndarray:
    w = np.zeros(n)
    w[0] = 1.0
    return w


@register("maximin", "Maximin (Rawlsian) welfare", "Rawls (1971), A Theory of Justice",
          "Maximise the utility of the worst-off agent, min_i U_i(p).",
          value=lambda mus, ps, o: _u(mus, ps).min(axis=-1), score=_ratio)
def _maximin_policy(mus, o):
    return _owa_policy(mus, _maximin_w(mus.shape[1]))


def leximin_policy(mu: Any, tol: float = 1e-9) -> np.ndarray:
    """Leximin policy by the standard sequence of LPs (HiGHS): maximise the minimum utility, fix
    the agents that cannot do better, repeat. Exact; one instance at a time (cheap for N <= ~50)."""
    from scipy.optimize import linprog

    from fairarena.errors import SolverError

    mu = validate_rewards(mu)
    n, k = mu.shape
    fixed: dict[int, float] = {}
    p = np.full(k, 1.0 / k)
    while len(fixed) < n:
        free = [i for i in range(n) if i not in fixed]
        # variables (p, t): maximise t, U_i >= t (free), U_i >= level (fixed)
        c = np.zeros(k + 1)
        c[-1] = -1.0
        a_ub = [np.concatenate([-mu[i], [1.0]]) for i in free]
        b_ub = [0.0] * len(free)
        for i, lev in fixed.items():
            a_ub.append(np.concatenate([-mu[i], [0.0]]))
            b_ub.append(-lev + tol)
        a_eq = [np.concatenate([np.ones(k), [0.0]])]
        res = linprog(c, A_ub=np.array(a_ub), b_ub=b_ub, A_eq=a_eq, b_eq=[1.0],
                      bounds=[(0, None)] * k + [(None, None)], method="highs")
        if res.status != 0:
            raise SolverError(f"leximin LP failed: {res.message}")
        level = -res.fun
        p = res.x[:k]
        # an agent is saturated if it cannot exceed `level` while the others keep their levels
        newly = []
        for i in free:
            c2 = np.concatenate([-mu[i], [0.0]])
            a2 = [np.concatenate([-mu[j], [0.0]]) for j in free if j != i]
            b2 = [-level + tol] * len(a2)
            for j, lev in fixed.items():
                a2.append(np.concatenate([-mu[j], [0.0]]))
                b2.append(-lev + tol)
            r2 = linprog(c2, A_ub=np.array(a2) if a2 else None, b_ub=b2 if a2 else None, A_eq=a_eq,
                         b_eq=[1.0], bounds=[(0, None)] * k + [(0, 0)], method="highs")
            if r2.status != 0:
                raise SolverError(f"leximin LP failed: {r2.message}")
            if -r2.fun <= level + tol:
                newly.append(i)
        if not newly:  # numerical safety: fix the worst-off free agent
            newly = [min(free, key=lambda i: mu[i] @ p)]
        for i in newly:
            fixed[i] = level
    return np.clip(p, 0.0, None) / np.clip(p, 0.0, None).sum()


# ------------------------------------------------------------------------------------------------
# Everything at once
# ------------------------------------------------------------------------------------------------

SCORE_KEYS = ("pf", "ef", "uf", "nsw", "ggi", "maximin")


def optimal_policies(mus: np.ndarray, names: Iterable[str] | None = None,
                     opts: Options | Mapping | None = None, **kw: Any) -> dict[str, np.ndarray]:
    """Optimal policies of several notions for one stack ``(B, N, K)``."""
    o = make_options(opts, **kw)
    mus = np.asarray(mus, float)
    return {name: get_notion(name).policy_fn(mus, o) for name in (names or NOTIONS)}


def evaluate_batch(mus: np.ndarray, policies: Mapping[str, np.ndarray],
                   opts: Options | Mapping | None = None,
                   optima: Mapping[str, np.ndarray] | None = None, **kw: Any) -> dict[str, dict[str, np.ndarray]]:
    """Score each named policy stack on every notion.

    Returns ``{policy_name: {notion: scores (B,), notion + '_value': raw values (B,)}}``.
    A notion's optimum is read from ``policies[notion]`` when that policy is being evaluated (it is
    optimal by construction), from ``optima`` when given, and solved for otherwise.
    """
    o = make_options(opts, **kw)
    mus = np.asarray(mus, float)
    values = {pname: {nname: NOTIONS[nname].value_fn(mus, np.asarray(ps, float), o) for nname in SCORE_KEYS}
              for pname, ps in policies.items()}
    opt: dict[str, np.ndarray] = dict(optima or {})
    for nname in SCORE_KEYS:
        if nname == "pf" or nname in opt:
            continue
        if nname in policies:
            opt[nname] = values[nname][nname]
        else:
            opt[nname] = NOTIONS[nname].value_fn(mus, NOTIONS[nname].policy_fn(mus, o), o)
    out: dict[str, dict[str, np.ndarray]] = {}
    for pname, vals in values.items():
        row: dict[str, np.ndarray] = {}
        for nname in SCORE_KEYS:
            v = vals[nname]
            row[nname] = v if nname == "pf" else NOTIONS[nname].score_fn(v, np.maximum(opt[nname], v))
            row[nname + "_value"] = v
        out[pname] = row
    return out


def score_all(mu: Any, p: Any, opts: Options | Mapping | None = None, **kw: Any) -> dict[str, Any]:
    """Every score of one policy on one instance, with utilities and decision shares."""
    o = make_options(opts, **kw)
    mu = validate_rewards(mu)
    p = validate_policy(p, mu.shape[1])
    res = evaluate_batch(mu[None], {"p": p[None]}, o)["p"]
    out: dict[str, Any] = {name: float(res[name][0]) for name in SCORE_KEYS}
    out["values"] = {name: float(res[name + "_value"][0]) for name in SCORE_KEYS}
    out["utilities"] = utilities(mu, p).tolist()
    out["decision_shares"] = decision_shares(mu, p, o.tol).tolist()
    return out


def optimal_policies_many(instances: Sequence[np.ndarray], names: Iterable[str] | None = None,
                          opts: Options | Mapping | None = None, **kw: Any) -> list[dict[str, np.ndarray]]:
    """Optimal policies for a list of reward matrices of any shapes.

    Instances are batched by agent count N; arm counts are padded with NaN columns (padded arms
    are fixed at probability 0, so each result is the same as solving the instance alone).
    """
    names = list(names or NOTIONS)
    out: list[dict[str, np.ndarray]] = [None] * len(instances)  # type: ignore[list-item]
    by_n: dict[int, list[int]] = {}
    for i, m in enumerate(instances):
        by_n.setdefault(int(np.shape(m)[0]), []).append(i)
    for idx in by_n.values():
        stack = pad_stack([instances[i] for i in idx])
        pols = optimal_policies(stack, names, opts, **kw)
        for j, i in enumerate(idx):
            k = np.shape(instances[i])[1]
            out[i] = {name: pols[name][j, :k] for name in names}
    return out


def evaluate_many(instances: Sequence[np.ndarray], policies: Sequence[Mapping[str, np.ndarray]],
                  opts: Options | Mapping | None = None, **kw: Any) -> list[dict[str, dict[str, float]]]:
    """:func:`evaluate_batch` for a list of instances of any shapes (batched by N, NaN-padded)."""
    out: list[dict[str, dict[str, float]]] = [None] * len(instances)  # type: ignore[list-item]
    by_n: dict[int, list[int]] = {}
    for i, m in enumerate(instances):
        by_n.setdefault(int(np.shape(m)[0]), []).append(i)
    for idx in by_n.values():
        stack = pad_stack([instances[i] for i in idx])
        kmax = stack.shape[2]
        names = list(policies[idx[0]])
        ps = {name: np.zeros((len(idx), kmax)) for name in names}
        for j, i in enumerate(idx):
            for name in names:
                p = policies[i][name]
                ps[name][j, :len(p)] = p
        res = evaluate_batch(stack, ps, opts, **kw)
        for j, i in enumerate(idx):
            out[i] = {pn: {key: float(v[j]) for key, v in row.items()} for pn, row in res.items()}
    return out
