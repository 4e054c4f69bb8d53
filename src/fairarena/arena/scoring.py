"""How a debate scores an allocation: the domain's own metrics (:func:`score_with`), or the allocation core's
(:func:`score`) for a domain with only the arena's members.

Its own module so that the debate (:mod:`fairarena.arena.protocol`) and the transcript's re-scoring
(:func:`fairarena.arena.transcript.recompute_metrics`) share it without importing each other.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fairarena.allocation.metrics import compute_metrics, defined_metrics
from fairarena.allocation.problem import AllocationProblem

__all__ = ["metrics_domain", "score", "score_with"]


def score(problem: AllocationProblem, x: np.ndarray) -> dict[str, Any]:
    """The allocation core's metrics of one allocation (:func:`fairarena.allocation.compute_metrics`; kept
    for old callers: a debate scores with its domain, :func:`score_with`): every metric on a problem with
    welfare data (a triage cohort), those of need satisfaction alone on a generic problem
    (:func:`fairarena.allocation.metrics.defined_metrics`)."""
    return compute_metrics(problem, x, keys=defined_metrics(problem))


def metrics_domain(domain: Any) -> Any:
    """The domain whose metrics score a debate of ``domain``: ``domain`` itself when it has ``evaluate`` and
    ``metrics`` (or its own ``score``), else the registered domain of the same name when that one has them
    (an arena-only adapter of a registered domain, e.g. one bound to a study's candidates, records the
    registered domain's metrics, which :func:`fairarena.arena.transcript.recompute_metrics` finds by the
    transcript's domain name), else None (the allocation core's metrics, :func:`score`)."""
    from fairarena.domains.registry import DOMAINS

    def has(d: Any) -> bool:
        return callable(getattr(d, "score", None)) or all(callable(getattr(d, m, None)) for m in ("evaluate", "metrics"))

    if has(domain):
        return domain
    name = getattr(domain, "name", None)
    if isinstance(name, str) and name in DOMAINS:
        registered = DOMAINS.get(name)
        if has(registered):
            return registered
    return None


def score_with(domain: Any, instance: Any, problem: AllocationProblem, x: np.ndarray) -> dict[str, Any]:
    """The record of one allocation's metrics in a debate of ``domain``: the domain's own ``score(instance,
    x, problem)`` when it has one (triage: every allocation metric plus CNSS, waste and unused capacity), otherwise
    every metric of ``domain.evaluate`` (NaN when the domain cannot evaluate it, e.g. over capacity) plus
    ``feasible`` and ``violations`` (:func:`fairarena.domains.protocol.violations_of`: the problem's and the
    domain's own rules). A domain with only the arena's members (no ``evaluate``): the allocation core's
    metrics of its problem (:func:`score`), as before domains had metrics of their own."""
    from fairarena.domains.protocol import metric_specs, violations_of

    own = getattr(domain, "score", None)   # optional: score(instance, x, problem) -> the record
    if callable(own):
        return dict(own(instance, x, problem))
    violations = violations_of(domain, instance, x, problem)
    scorer = metrics_domain(domain)
    if scorer is None:
        out = score(problem, x)
        if violations and out["feasible"]:
            out["feasible"], out["violations"] = False, violations
        return out
    if scorer is not domain:
        return score_with(scorer, instance, problem, x) | {"feasible": not violations, "violations": violations}
    try:
        out: dict[str, Any] = {k: float(v) for k, v in domain.evaluate(instance, x).items()}
    except Exception:   # an invalid allocation the domain's metrics are not defined on
        out = {k: math.nan for k in metric_specs(domain)}
    out["feasible"] = not violations
    out["violations"] = violations
    return out
