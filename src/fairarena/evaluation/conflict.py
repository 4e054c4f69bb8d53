"""The conflict audit: is the trade-off between two objectives real, or made by a metric's assumption?

For two metrics ``x`` and ``y`` of one problem:

* the **Pareto frontier** between them. Triage cohorts: exact, by the epsilon-constraint method with HiGHS
  (maximise or minimise ``x`` subject to ``y`` no worse than ``eps`` for ``eps`` on a grid between ``y``'s
  value at ``x``'s optimum and ``y``'s own optimum; each point one MILP of
  :class:`fairarena.allocation.milp.AllocationMILP`). Metrics with an exact form: ``esg``, ``dw_esg``,
  ``vwci`` (weighted sums of CNSS), ``rmg`` (minimum CNSS), ``gini_cnss`` (as a constraint, exact linear
  form). Tourism destinations: sampled (ranked lists scored by ``t x relevance + (1 - t) x`` the other
  stakeholder's per-POI score for ``t`` on a grid, plus seeded random lists), non-dominated points kept.
* **no conflict** when one decision is optimal for both (the frontier collapses to the ideal point
  within ``tol`` of each metric's range);
* the **price of fairness** both ways: ``PoF_x = (x* - x(y-opt)) / |x*|``, the relative loss in ``x`` when
  ``y`` is at its optimum (for a minimised metric the relative increase), and ``PoF_y`` symmetrically
  (Bertsimas, Farias and Trichakis, Oper. Res. 59 (2011) define the price of fairness this way);
* where an **alternative definition** is registered (tourism: exposure and load under full-list attention
  vs position-based attention with a visit budget), the same audit under it and whether the conflict
  shrinks (smaller price of fairness) or vanishes (no conflict).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairarena.errors import InputError

__all__ = ["TRIAGE_EXACT", "TOURISM_METRICS", "pareto_front", "audit_triage", "audit_tourism", "audit",
           "plot_frontier"]

#: triage metrics with an exact MILP form in the epsilon-constraint method
TRIAGE_EXACT = ("esg", "dw_esg", "vwci", "rmg", "gini_cnss")

#: tourism metrics (lists) and their direction; ``satisfaction`` = size-weighted mean nDCG of all groups
TOURISM_METRICS: dict[str, str] = {
    "satisfaction": "max", "small_exposure_share": "max", "exposure_gini": "min", "crowding_residential": "min",
    "emissions_per_visit": "min", "tourist_visits_above_capacity": "min", "popularity_mean": "min",
    "long_tail_share": "max",
}
#: metrics whose definition depends on the attention model (the registered alternative definitions)
ATTENTION_DEPENDENT = ("small_exposure_share", "exposure_gini", "crowding_residential", "emissions_per_visit",
                       "tourist_visits_above_capacity")


def pareto_front(X: np.ndarray, Y: np.ndarray, dx: str, dy: str) -> np.ndarray:
    """Indices of the non-dominated points (sorted by ``X``) for directions ``dx``, ``dy`` ("max"/"min")."""
    sx = 1.0 if dx == "max" else -1.0
    sy = 1.0 if dy == "max" else -1.0
    a, b = sx * np.asarray(X, float), sy * np.asarray(Y, float)
    keep = []
    for i in range(len(a)):
        dom = (a >= a[i]) & (b >= b[i]) & ((a > a[i]) | (b > b[i]))
        if not dom.any():
            keep.append(i)
    keep = np.array(sorted(set(keep), key=lambda i: (X[i], Y[i])), dtype=int)
    # identical points: keep one
    if keep.size:
        _, first = np.unique(np.round(np.c_[X[keep], Y[keep]], 12), axis=0, return_index=True)
        keep = keep[np.sort(first)]
    return keep


def _summary(X: np.ndarray, Y: np.ndarray, dx: str, dy: str, tol: float) -> dict[str, Any]:
    sx = 1.0 if dx == "max" else -1.0
    sy = 1.0 if dy == "max" else -1.0
    ix = int(np.lexsort((-sy * Y, -sx * X))[0])     # best x, ties best y
    iy = int(np.lexsort((-sx * X, -sy * Y))[0])     # best y, ties best x
    xbest, ybest = X[ix], Y[iy]
    rx = max(float(X.max() - X.min()), 1e-12)
    ry = max(float(Y.max() - Y.min()), 1e-12)
    both = bool(abs(X[iy] - xbest) <= tol * rx and abs(Y[ix] - ybest) <= tol * ry)

    def pof(best: float, at: float, sign: float) -> float:
        return float(sign * (best - at) / abs(best)) if abs(best) > 1e-12 else float(sign * (best - at))

    return {"x_best": float(xbest), "y_at_x_best": float(Y[ix]), "y_best": float(ybest), "x_at_y_best": float(X[iy]),
            "no_conflict": both, "price_of_fairness_x": pof(xbest, X[iy], sx), "price_of_fairness_y": pof(ybest, Y[ix], sy)}


# -- triage (exact) ------------------------------------------------------------------------------
def _triage_expr(m: Any, problem: Any, metric: str) -> Any:
    if metric == "esg":
        return m.weighted_cnss(problem.survival)
    if metric == "dw_esg":
        return m.weighted_cnss(problem.disadvantage * problem.survival)
    if metric == "vwci":
        return m.weighted_cnss(problem.vulnerability)
    if metric == "rmg":
        return m.min_cnss()
    raise InputError("--x", metric, f"a metric with a linear form: {', '.join(TRIAGE_EXACT[:-1])}")


def audit_triage(problem: Any, x: str, y: str, points: int = 50, tol: float = 1e-6, reuse: bool = True
                 ) -> dict[str, Any]:
    """Exact epsilon-constraint frontier of ``x`` (maximised) against ``y`` on a triage problem. With
    ``reuse`` a grid point whose bound the previous optimum already meets is not re-solved (that optimum
    stays optimal: tightening the bound only shrank the feasible set); the frontier is the same."""
    from fairarena.allocation.metrics import METRICS, compute_metrics_batch
    from fairarena.allocation.milp import AllocationMILP, InfeasibleMILP, add_gini_bound

    for f, v in (("--x", x), ("--y", y)):
        if v not in TRIAGE_EXACT:
            raise InputError(f, v, f"one of {', '.join(TRIAGE_EXACT)} (metrics with an exact MILP form)")
    if x == y:
        raise InputError("--y", y, "a metric other than --x")
    if x == "gini_cnss":
        x, y = y, x   # the Gini has an exact form as a constraint only: swap the axes back afterwards
        swapped = True
    else:
        swapped = False
    dy = METRICS.entry(y).direction

    def solve(eps: float | None) -> np.ndarray | None:
        m = AllocationMILP(problem)
        if eps is not None:
            if y == "gini_cnss":
                add_gini_bound(m, eps)
            else:
                m.add_row(_triage_expr(m, problem, y), lo=eps)
        try:
            _, sol = m.solve(_triage_expr(m, problem, x), "max")
        except InfeasibleMILP:
            return None
        return m.allocation(sol)

    x_opt = solve(None)
    vals = compute_metrics_batch(problem, x_opt[None])
    y_at = float(vals[y][0])
    # y's own optimum
    if y == "gini_cnss":
        y_opt = 0.0
    else:
        m = AllocationMILP(problem)
        y_opt, _ = m.solve(_triage_expr(m, problem, y), "max")
    grid = np.linspace(y_at, y_opt, points)
    xs: list[np.ndarray] = [x_opt]
    solved = 1
    for eps in grid[1:]:
        e = float(eps) if dy == "max" else max(0.0, float(eps))
        # the last optimum still meets the tighter bound: it stays optimal (the feasible set only shrank)
        last = float(compute_metrics_batch(problem, xs[-1][None])[y][0])
        if reuse and ((last >= e - 1e-9) if dy == "max" else (last <= e + 1e-9)):
            continue
        sol = solve(e)
        solved += 1
        if sol is not None:
            xs.append(sol)
    X = np.stack(xs)
    batch = compute_metrics_batch(problem, X)
    vx, vy = np.asarray(batch[x], float), np.asarray(batch[y], float)
    dx = "max"
    if swapped:
        x, y, vx, vy, dx, dy = y, x, vy, vx, dy, dx
    keep = pareto_front(vx, vy, dx, dy)
    out = {"problem": "triage", "method": "exact (epsilon-constraint, HiGHS)", "x": x, "y": y,
           "directions": {x: dx, y: dy}, "points": [[float(vx[i]), float(vy[i])] for i in keep],
           "solved": solved, "grid": int(points)}
    out.update(_summary(vx, vy, dx, dy, tol))
    out["alternatives"] = []
    return out


# -- tourism (sampled) ---------------------------------------------------------------------------
def _tourism_values(d: Any, L: np.ndarray, metric: str, attention: str) -> float:
    from fairarena.tourism.metrics import list_metrics, satisfaction

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
        res.update(_summary(vx, vy, dx, dy, tol))
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
        from fairarena.tourism.metrics import ATTENTION

        for f, v in (("--x", x), ("--y", y)):
            if v not in TOURISM_METRICS:
                raise InputError(f, v, f"one of {', '.join(TOURISM_METRICS)}")
        ATTENTION.check(attention)
        return "tourism", parse_destination(data, "--problem")
    for f, v in (("--x", x), ("--y", y)):
        if v not in TRIAGE_EXACT:
            raise InputError(f, v, f"one of {', '.join(TRIAGE_EXACT)} (metrics with an exact MILP form)")
    from fairarena.triage import parse_cohort

    return "triage", parse_cohort(data).to_problem()


def audit_tourism_flows(d: Any, x: str, y: str, points: int = 50, tol: float = 1e-6) -> dict[str, Any]:
    """Flows: the weighted-sum frontier between the stakeholders behind ``x`` and ``y`` (``t`` on a grid;
    each point one integer program of :func:`fairarena.tourism.decisions.solve_flows` on ``t c_x / span_x +
    (1 - t) c_y / span_y``). Exact for the supported points of the frontier (weighted sums reach only
    its convex hull's vertices); attention does not apply to flows, so no alternative definition."""
    from fairarena.tourism import decisions as D
    from fairarena.tourism.metrics import flow_metrics, satisfaction

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
    out.update(_summary(vx, vy, dx, dy, tol))
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


def audit(path: str, x: str, y: str, points: int = 50, seed: int = 0, k: int = 5,
          attention: str = "full-list", loaded: tuple[str, Any] | None = None, decision: str = "lists"
          ) -> dict[str, Any]:
    """Audit a problem file: a destination (JSON with ``pois``; lists or flows) or a triage cohort."""
    kind, obj = loaded or load_problem(path, x, y, points, attention)
    if kind == "tourism":
        if decision == "flows":
            return audit_tourism_flows(obj, x, y, points)
        return audit_tourism(obj, x, y, points, k, seed, attention)
    return audit_triage(obj, x, y, points)


def plot_frontier(result: dict[str, Any], path: str) -> None:
    """The frontier (and the alternative definition's, if any) as a PNG/SVG written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fairarena.fsutil import atomic_path

    fig, ax = plt.subplots(figsize=(5, 4))
    series = [(result.get("attention", result["method"]), result["points"])]
    series += [(f"{a['attention']} ({a['verdict']})", a["points"]) for a in result["alternatives"]]
    for label, pts in series:
        p = np.array(pts)
        ax.plot(p[:, 0], p[:, 1], "o-", label=label, ms=3)
    ax.set_xlabel(f"{result['x']} ({result['directions'][result['x']]})")
    ax.set_ylabel(f"{result['y']} ({result['directions'][result['y']]})")
    ax.set_title(f"Pareto frontier: {result['problem']}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=str(path).rsplit(".", 1)[-1] if "." in str(path) else "png")
    plt.close(fig)
