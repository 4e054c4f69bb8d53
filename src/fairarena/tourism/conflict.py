"""The conflict audit on a tourism destination: the sampled frontier between two list metrics (with the
alternative attention model where a metric depends on it) and the weighted-sum frontier of flows; and
the ``audit conflict`` command's problem loading (a destination here, a triage cohort through
:func:`fairarena.evaluation.conflict.load_triage`).

Lists: ranked lists scored by ``t x relevance + (1 - t) x`` the other stakeholder's per-POI score for
``t`` on a grid, plus seeded random lists, non-dominated points kept; the alternative definition of
exposure and load (full-list attention vs position-based attention with a visit budget) is audited too,
with whether the conflict shrinks or vanishes. The frontier, the no-conflict test and the price of
fairness are the generic ones of :mod:`fairarena.evaluation.conflict`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairarena.errors import InputError
from fairarena.evaluation.conflict import audit_triage, conflict_summary, load_triage, pareto_front, plot_frontier
from fairarena.tourism.metrics import ATTENTION, METRICS, flow_metrics, list_metrics, satisfaction

__all__ = ["TOURISM_METRICS", "ATTENTION_DEPENDENT", "audit_tourism", "audit_tourism_flows", "load_problem", "audit",
           "pareto_front", "plot_frontier"]

#: the metrics the audit takes, with their direction from :data:`fairarena.tourism.metrics.METRICS`
#: (``satisfaction`` = size-weighted mean nDCG of all groups)
TOURISM_METRICS: dict[str, str] = {m: METRICS.entry(m).direction for m in (
    "satisfaction", "small_exposure_share", "exposure_gini", "crowding_residential", "emissions_per_visit",
    "tourist_visits_above_capacity", "popularity_mean", "long_tail_share")}
#: metrics whose definition depends on the attention model (the registered alternative definitions)
ATTENTION_DEPENDENT = ("small_exposure_share", "exposure_gini", "crowding_residential", "emissions_per_visit",
                       "tourist_visits_above_capacity")


def _tourism_values(d: Any, L: np.ndarray, metric: str, attention: str) -> float:
    m = list_metrics(d, L, model=attention)
    return satisfaction(d, m, None, "lists") if metric == "satisfaction" else float(m[metric])


def _tourism_sample(d: Any, k: int, points: int, seed: int, other_kind: str) -> list[np.ndarray]:
    from fairarena.tourism.decisions import poi_scores
    from fairarena.tourism.stakeholders import make

    a = d.arrays
    other = make(other_kind)
    G = len(a.groups)
    out = []
    for t in np.linspace(0.0, 1.0, points):
        L = np.empty((G, k), dtype=int)
        for g in range(G):
            s_o = poi_scores(d, other, g)
            s_o = (s_o - s_o.min()) / max(np.ptp(s_o), 1e-12)
            rel = a.relevance[g] / max(a.relevance[g].max(), 1e-12)
            L[g] = np.argsort(-(t * rel + (1 - t) * s_o), kind="stable")[:k]
        out.append(L)
    rng = np.random.default_rng(seed)
    for _ in range(points):
        out.append(np.stack([rng.choice(len(a.pois), size=k, replace=False) for _ in range(G)]))
    return out


_OTHER = {"small_exposure_share": "local-business", "exposure_gini": "local-business",
          "long_tail_share": "local-business", "popularity_mean": "local-business",
          "crowding_residential": "residents", "emissions_per_visit": "destination",
          "tourist_visits_above_capacity": "destination", "satisfaction": "residents"}


def audit_tourism(d: Any, x: str, y: str, points: int = 50, k: int = 5, seed: int = 0,
                  attention: str = "full-list", tol: float = 1e-6, alternative: bool = True) -> dict[str, Any]:
    """Sampled frontier of two list metrics on a destination, under ``attention``, and (when one of the
    metrics depends on attention) the same under the other attention model."""
    for f, v in (("--x", x), ("--y", y)):
        if v not in TOURISM_METRICS:
            raise InputError(f, v, f"one of {', '.join(TOURISM_METRICS)}")
    if x == y:
        raise InputError("--y", y, "a metric other than --x")
    other = _OTHER[y if x == "satisfaction" else x]
    Ls = _tourism_sample(d, k, points, seed, other)
    dx, dy = TOURISM_METRICS[x], TOURISM_METRICS[y]

    def one(model: str) -> dict[str, Any]:
        vx = np.array([_tourism_values(d, L, x, model) for L in Ls])
        vy = np.array([_tourism_values(d, L, y, model) for L in Ls])
        keep = pareto_front(vx, vy, dx, dy)
        res = {"attention": model, "points": [[float(vx[i]), float(vy[i])] for i in keep]}
        res.update(conflict_summary(vx, vy, dx, dy, tol))
        return res

    main = one(attention)
    out = {"problem": "tourism", "method": f"sampled ({len(Ls)} lists: {points} blends with {other}'s ranking, "
           f"{points} random)", "x": x, "y": y, "directions": {x: dx, y: dy}, **main, "alternatives": []}
    if alternative and (x in ATTENTION_DEPENDENT or y in ATTENTION_DEPENDENT):
        alt_model = "position" if attention == "full-list" else "full-list"
        alt = one(alt_model)
        shrinks = (alt["price_of_fairness_x"] + alt["price_of_fairness_y"]
                   < main["price_of_fairness_x"] + main["price_of_fairness_y"] - 1e-12)
        alt["verdict"] = ("vanishes" if alt["no_conflict"] and not main["no_conflict"] else
                          "shrinks" if shrinks else "stays or grows")
        out["alternatives"].append(alt)
    return out


def audit_tourism_flows(d: Any, x: str, y: str, points: int = 50, tol: float = 1e-6) -> dict[str, Any]:
    """Flows: the weighted-sum frontier between the stakeholders behind ``x`` and ``y`` (``t`` on a grid;
    each point one integer program of :func:`fairarena.tourism.decisions.solve_flows` on ``t c_x / span_x +
    (1 - t) c_y / span_y``). Exact for the supported points of the frontier (weighted sums reach only
    its convex hull's vertices); attention does not apply to flows, so no alternative definition."""
    from fairarena.tourism import decisions as D

    for f, v in (("--x", x), ("--y", y)):
        if v not in TOURISM_METRICS:
            raise InputError(f, v, f"one of {', '.join(TOURISM_METRICS)}")
    cx = _flow_objective(d, x)
    cy = _flow_objective(d, y)
    Fx, Fy = D.solve_flows(d, cx), D.solve_flows(d, cy)

    def val(F: np.ndarray, metric: str) -> float:
        m = flow_metrics(d, F)
        return satisfaction(d, m, None, "flows") if metric == "satisfaction" else float(m[metric])

    zx = [c @ np.concatenate([F.ravel(), D.overflow(d, F)]) for c in (cx,) for F in (Fx, Fy)]
    zy = [c @ np.concatenate([F.ravel(), D.overflow(d, F)]) for c in (cy,) for F in (Fx, Fy)]
    sx, sy = max(abs(zx[0] - zx[1]), 1e-12), max(abs(zy[0] - zy[1]), 1e-12)
    Fs = [D.solve_flows(d, t * cx / sx + (1 - t) * cy / sy) for t in np.linspace(0.0, 1.0, points)]
    vx = np.array([val(F, x) for F in Fs])
    vy = np.array([val(F, y) for F in Fs])
    dx, dy = TOURISM_METRICS[x], TOURISM_METRICS[y]
    keep = pareto_front(vx, vy, dx, dy)
    out = {"problem": "tourism", "decision": "flows", "method": f"weighted sums ({points} integer programs, HiGHS)",
           "x": x, "y": y, "directions": {x: dx, y: dy}, "attention": "flows",
           "points": [[float(vx[i]), float(vy[i])] for i in keep], "alternatives": []}
    out.update(conflict_summary(vx, vy, dx, dy, tol))
    return out


def _flow_objective(d: Any, metric: str) -> np.ndarray:
    """The linear flow objective (to maximise) of one metric, through a one-metric stakeholder."""
    from fairarena.tourism.decisions import flow_coefficients
    from fairarena.tourism.stakeholders import Stakeholder

    lin = {"satisfaction": "satisfaction", "small_exposure_share": "small_exposure_share",
           "exposure_gini": "exposure_gini", "crowding_residential": "crowding_residential",
           "emissions_per_visit": "emissions_norm", "tourist_visits_above_capacity": "over_capacity_share",
           "popularity_mean": "exposure_gini", "long_tail_share": "exposure_gini"}[metric]
    sign = 1.0 if TOURISM_METRICS[metric] == "max" else -1.0
    if metric in ("exposure_gini", "popularity_mean", "long_tail_share"):
        sign = -1.0   # the linear long-tail bonus stands for all three (flow_coefficients)
    return flow_coefficients(d, Stakeholder(name=metric, kind="audit", value="", objective={lin: sign}))


def load_problem(path: str, x: str, y: str, points: int = 50, attention: str = "full-list") -> tuple[str, Any]:
    """Read and validate everything an audit needs, before any work or write: ``("tourism", destination)``
    or ``("triage", problem)``; unknown metrics, ``--points`` out of 2..1000, an unknown attention model
    raise :class:`InputError`."""
    from fairarena.inputs import load_json

    if isinstance(points, bool) or not isinstance(points, int) or not 2 <= points <= 1000:
        raise InputError("--points", points, "an integer in 2..1000")
    if x == y:
        raise InputError("--y", y, "a metric other than --x")
    data = load_json(path, "--problem")
    if isinstance(data, dict) and "pois" in data:
        from fairarena.tourism.destination import parse_destination

        for f, v in (("--x", x), ("--y", y)):
            if v not in TOURISM_METRICS:
                raise InputError(f, v, f"one of {', '.join(TOURISM_METRICS)}")
        ATTENTION.check(attention)
        return "tourism", parse_destination(data, "--problem")
    return "triage", load_triage(data, x, y)


def audit(path: str, x: str, y: str, points: int = 50, seed: int = 0, k: int = 5,
          attention: str = "full-list", loaded: tuple[str, Any] | None = None, decision: str = "lists"
          ) -> dict[str, Any]:
    """Audit a problem file: a destination (JSON with ``pois``; lists or flows) or a triage cohort."""
    kind, obj = loaded or load_problem(path, x, y, points, attention)
    if kind == "tourism":
        if decision == "flows":
            return audit_tourism_flows(obj, x, y, points)
        return audit_tourism(obj, x, y, points, k, seed, attention)
    return audit_triage(obj, x, y, points, seed=seed)
