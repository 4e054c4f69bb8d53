"""Every notion at once: optimal policies (with the solver's fallback chain), scores of policy stacks on
every registered notion, and the same for lists of instances of any shapes.

The fallback chain of :func:`optimal_policies`, for each notion: the batched solver on the whole stack;
if it reports a failure, the notion instance by instance; an instance that still fails is solved by
the notion's exact single-instance solver (``Notion.exact_fn``: one HiGHS LP for ``ggi`` and
``maximin``) when it has one, and otherwise raises :class:`~fairarena.errors.SolverError` naming the
notion and the instance. Pass ``stats={}`` to learn how often each step was needed.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from fairarena.bandit.notions.batching import pad_stack
from fairarena.bandit.notions.registry import NOTIONS, Notion, Options, get_notion, make_options
from fairarena.bandit.problem import decision_shares, utilities, validate_policy, validate_rewards
from fairarena.errors import SolverError

SCORE_KEYS = ("pf", "ef", "uf", "nsw", "ggi", "maximin")
"""The built-in notions (every registered notion is scored; see :func:`score_keys`)."""


def score_keys() -> tuple[str, ...]:
    """The notions every policy is scored on: all registered notions, in registration order."""
    return NOTIONS.names()


def _solve(notion: Notion, mus: np.ndarray, o: Options, stats: dict[str, int] | None) -> np.ndarray:
    try:
        return notion.policy_fn(mus, o)
    except SolverError:
        if len(mus) == 1 and notion.exact_fn is None:
            raise
    kmax = mus.shape[2]
    rows = []
    for b, mu in enumerate(mus):
        mu = mu[:, ~np.isnan(mu).all(axis=0)]  # drop padded arms
        try:
            p = notion.policy_fn(mu[None], o)[0]
            if stats is not None:
                stats["instance_retries"] = stats.get("instance_retries", 0) + 1
        except SolverError as exc:
            if notion.exact_fn is None:
                raise SolverError(f"{notion.name}: instance {b} of the batch: {exc}") from exc
            p = notion.exact_fn(mu, o)
            if stats is not None:
                stats["exact"] = stats.get("exact", 0) + 1
        rows.append(np.pad(p, (0, kmax - len(p))))
    return np.stack(rows)


def optimal_policies(mus: np.ndarray, names: Iterable[str] | None = None,
                     opts: Options | Mapping | None = None, *, stats: dict[str, int] | None = None,
                     **kw: Any) -> dict[str, np.ndarray]:
    """Optimal policies of several notions (default: every registered one) for one stack ``(B, N, K)``.

    Each notion goes through the fallback chain described in the module docstring; ``stats``, when
    a dict, counts ``instance_retries`` and ``exact`` (single-instance exact solves)."""
    o = make_options(opts, **kw)
    mus = np.asarray(mus, float)
    notions = [get_notion(name) for name in (names or NOTIONS.names())]
    return {n.name: _solve(n, mus, o, stats) for n in notions}


def evaluate_batch(mus: np.ndarray, policies: Mapping[str, np.ndarray],
                   opts: Options | Mapping | None = None,
                   optima: Mapping[str, np.ndarray] | None = None, **kw: Any) -> dict[str, dict[str, np.ndarray]]:
    """Score each named policy stack on every registered notion.

    Returns ``{policy_name: {notion: scores (B,), notion + '_value': raw values (B,)}}``.
    A notion's optimum is read from ``policies[notion]`` when that policy is being evaluated (it is
    optimal by construction), from ``optima`` when given, and solved for otherwise.
    """
    o = make_options(opts, **kw)
    mus = np.asarray(mus, float)
    keys = score_keys()
    values = {pname: {nname: NOTIONS[nname].value_fn(mus, np.asarray(ps, float), o) for nname in keys}
              for pname, ps in policies.items()}
    opt: dict[str, np.ndarray] = dict(optima or {})
    for nname in keys:
        notion = NOTIONS[nname]
        if notion.score_is_value or nname in opt:
            continue
        if nname in policies:
            opt[nname] = values[nname][nname]
        else:
            opt[nname] = notion.value_fn(mus, optimal_policies(mus, [nname], o)[nname], o)
    out: dict[str, dict[str, np.ndarray]] = {}
    for pname, vals in values.items():
        row: dict[str, np.ndarray] = {}
        for nname in keys:
            notion = NOTIONS[nname]
            v = vals[nname]
            row[nname] = v if notion.score_is_value else notion.score_fn(v, np.maximum(opt[nname], v))
            row[nname + "_value"] = v
        out[pname] = row
    return out


def score_all(mu: Any, p: Any, opts: Options | Mapping | None = None, **kw: Any) -> dict[str, Any]:
    """Every score of one policy on one instance, with utilities and decision shares."""
    o = make_options(opts, **kw)
    mu = validate_rewards(mu)
    p = validate_policy(p, mu.shape[1])
    res = evaluate_batch(mu[None], {"p": p[None]}, o)["p"]
    keys = score_keys()
    out: dict[str, Any] = {name: float(res[name][0]) for name in keys}
    out["values"] = {name: float(res[name + "_value"][0]) for name in keys}
    out["utilities"] = utilities(mu, p).tolist()
    out["decision_shares"] = decision_shares(mu, p, o.tol).tolist()
    return out


def _by_agent_count(instances: Sequence[np.ndarray]) -> list[list[int]]:
    by_n: dict[int, list[int]] = {}
    for i, m in enumerate(instances):
        by_n.setdefault(int(np.shape(m)[0]), []).append(i)
    return list(by_n.values())


def optimal_policies_many(instances: Sequence[np.ndarray], names: Iterable[str] | None = None,
                          opts: Options | Mapping | None = None, **kw: Any) -> list[dict[str, np.ndarray]]:
    """Optimal policies for a list of reward matrices of any shapes.

    Instances are batched by agent count N; arm counts are padded with NaN columns (padded arms
    are fixed at probability 0, so each result is the same as solving the instance alone).
    """
    names = list(names or NOTIONS.names())
    out: list[dict[str, np.ndarray]] = [None] * len(instances)  # type: ignore[list-item]
    for idx in _by_agent_count(instances):
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
    for idx in _by_agent_count(instances):
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
