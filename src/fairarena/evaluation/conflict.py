"""The conflict audit: is the trade-off between two objectives real, or made by a metric's assumption?

For two metrics ``x`` and ``y`` of one problem:

* the **Pareto frontier** between them. Triage cohorts: every registered allocation metric. Exact for
  every pair of ``esg``, ``dw_esg``, ``vwci`` (weighted sums of CNSS), ``rmg`` (minimum CNSS), ``gini``
  (the paper's nursing Gini) and ``gini_cnss``, by the epsilon-constraint method with HiGHS: optimise one
  axis subject to the other no worse than ``eps`` for ``eps`` on a grid between its value at the first's
  optimum and its own optimum (each point a MILP of :class:`fairarena.allocation.milp.AllocationMILP`).
  A Gini is linear as a bound, ``Gini(v) <= g`` iff ``sum_{i<j} |v_i - v_j| <= g n sum_i v_i`` with the
  absolute values as auxiliaries ``d_ij``, and is minimised exactly by Dinkelbach's method (a short
  sequence of MILPs ``min sum d_ij - lam n sum v``). ``var`` has no linear form: pairs with it are
  sampled (framework optima, an exact frontier against the Gini of CNSS, seeded random allocations).
  The result's ``method`` and ``exact`` say which; its ``problem`` names the problem's domain (the
  problem's ``domain_name``, else ``label``). Tourism destinations: sampled, in
  :mod:`fairarena.tourism.conflict` (which uses this module's frontier and summary). This module imports
  no domain package and names none: :func:`load_triage` reads a cohort through the domain registry
  (:data:`fairarena.domains.registry.DEFAULT_DOMAIN`) and the protocol.
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

from fairarena.allocation.metrics import metrics_with_form
from fairarena.errors import InputError

__all__ = ["TRIAGE_EXACT", "TRIAGE_LINEAR", "TRIAGE_RATIO", "TRIAGE_SAMPLED", "pareto_front", "conflict_summary",
           "audit_triage", "audit_triage_sampled", "load_triage", "min_gini", "plot_frontier", "problem_label",
           "audit_domain", "random_allocations"]


def problem_label(problem: Any, label: str | None = None) -> str:
    """What an audit result's ``problem`` says: ``label`` when given, else the problem's ``domain_name``
    (a domain's problem class may name its domain), else ``"allocation"``."""
    if label is not None:
        return str(label)
    return str(getattr(problem, "domain_name", None) or "allocation")

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


def conflict_summary(X: np.ndarray, Y: np.ndarray, dx: str, dy: str, tol: float) -> dict[str, Any]:
    """The best of each axis and the other's value there, ``no_conflict`` and the price of fairness both
    ways (module doc) over the points ``(X, Y)`` with directions ``dx``, ``dy`` ("max"/"min")."""
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


# -- triage (exact where a linear form exists; the variance sampled) ------------------------------
#: triage metrics whose frontier is exact: linear objectives (weighted sums of CNSS, the max-min) and the
#: two Gini coefficients (a linear constraint for a fixed bound; minimised exactly by Dinkelbach's method)
#: (read from each metric's MILP form, :attr:`fairarena.allocation.metrics.Metric.milp`)
TRIAGE_LINEAR = metrics_with_form("linear", "min")
TRIAGE_RATIO = metrics_with_form("gini")
TRIAGE_EXACT = TRIAGE_LINEAR + TRIAGE_RATIO
#: triage metrics without a linear form: their frontier is sampled
TRIAGE_SAMPLED = metrics_with_form("")
DINKELBACH_TOL = 1e-9
BOUND_SLACK = 1e-9         # a bound is loosened by this (relative) so the other metric's optimum stays feasible
RANDOM_SAMPLES = 200


def triage_metrics() -> tuple[str, ...]:
    """Every registered allocation metric (:data:`fairarena.allocation.metrics.METRICS`)."""
    from fairarena.allocation.metrics import METRICS

    return tuple(METRICS)


def check_triage_metrics(x: str, y: str) -> None:
    """Both metrics registered and different (InputError naming the option otherwise)."""
    names = triage_metrics()
    for f, v in (("--x", x), ("--y", y)):
        if v not in names:
            raise InputError(f, v, "one of " + ", ".join(names) + " (the registered allocation metrics)")
    if x == y:
        raise InputError("--y", y, "a metric other than --x")


def check_gini_defined(problem: Any, x: str, y: str) -> None:
    """The nursing Gini on an axis needs a patient who needs nursing (else it is undefined everywhere)."""
    if "gini" in (x, y) and not problem.needed[:, problem.gini_index].any():
        raise InputError("--x" if x == "gini" else "--y", "gini",
                         f"a cohort where someone needs {problem.resources[problem.gini_index]} (else its Gini is "
                         "undefined for every allocation)")


def _gini_parts(m: Any, metric: str) -> tuple[Any, Any, float]:
    """``(N, S, n)`` with ``Gini = N / (n S)`` at any solution that minimises ``N`` or bounds it:
    ``N = sum_{i<j} d_ij``, ``d_ij >= |v_i - v_j|`` (new auxiliaries), ``S = sum_i v_i``; ``v`` is the CNSS
    (``gini_cnss``) or the amounts of the problem's ``gini_resource`` (``gini``: the paper's nursing Gini;
    a patient who does not need it gets none in the MILP, an amount 0)."""
    from fairarena.allocation.milp import add_exprs

    p = m.problem
    if metric == "gini_cnss":
        return add_exprs(*m.pairwise_gaps()), add_exprs(*((1.0, c) for c in m.cnss)), float(p.n)
    g = p.gini_index
    amount: list[dict[int, float]] = [dict() for _ in range(p.n)]
    for k, (i, r) in enumerate(m.pairs):
        if r == g:
            amount[i] = {k: 1.0}
    gaps = []
    for i in range(p.n):
        for j in range(i + 1, p.n):
            if not amount[i] and not amount[j]:
                continue                                  # neither can receive any: |0 - 0| = 0
            d = m.add_var(0.0, np.inf)
            diff = add_exprs((1.0, amount[i]), (-1.0, amount[j]))
            m.add_row(add_exprs((1.0, {d: 1.0}), (-1.0, diff)), lo=0.0)
            m.add_row(add_exprs((1.0, {d: 1.0}), (1.0, diff)), lo=0.0)
            gaps.append((1.0, {d: 1.0}))
    return add_exprs(*gaps), add_exprs(*((1.0, a) for a in amount)), float(p.n)


def _defined_row(m: Any) -> None:
    """The paper's nursing Gini is undefined when nobody receives nursing: require at least the smallest
    clinical minimum of it in total (a frontier point must have a Gini)."""
    p = m.problem
    g = p.gini_index
    rows = {k: 1.0 for k, (i, r) in enumerate(m.pairs) if r == g}
    thr = [float(p.threshold[i, g]) for i in range(p.n) if p.needed[i, g]]
    m.add_row(rows, lo=min(thr))


def _value(expr: dict[int, float], sol: np.ndarray) -> float:
    return float(sum(v * sol[k] for k, v in expr.items()))


def min_gini(m: Any, metric: str, tol: float = DINKELBACH_TOL) -> tuple[float, np.ndarray]:
    """Minimise a Gini (``gini`` or ``gini_cnss``) over the model's feasible set exactly, by Dinkelbach's
    method for ratio objectives (Dinkelbach, Management Sci. 13 (1967)): from ``lam = 0``, solve
    ``F(lam) = min N - lam n S`` (a MILP) and take the solution's ratio as the next ``lam``; stop when
    ``F(lam) = 0`` and the solution's ratio is ``lam`` (then no feasible point has a smaller ratio, to
    ``tol``). Returns (minimum, solution). Needs ``S > 0`` on the feasible set."""
    from fairarena.allocation.milp import add_exprs

    num, den, n = _gini_parts(m, metric)
    lam = 0.0
    for _ in range(100):
        val, sol = m.solve(add_exprs((1.0, num), (-lam * n, den)), "min")
        N, S = _value(num, sol), _value(den, sol)
        if S <= 0:
            raise InputError(metric, "undefined", "a feasible set where the Gini's denominator is positive")
        ratio = N / (n * S)
        if val >= -tol * max(1.0, N) and ratio <= lam + tol:   # F(lam) = 0 at this solution: lam is the minimum
            return ratio, sol
        lam = ratio                                             # F(lam) < 0 (or lam below the minimum): move up
    return lam, sol                                        # not reached on these MILPs (finite convergence)


def _bound(m: Any, problem: Any, metric: str, eps: float) -> None:
    """``metric`` no worse than ``eps`` (a linear row, the Gini of CNSS's bound, or the nursing Gini's)."""
    from fairarena.allocation.milp import add_exprs, add_gini_bound

    if metric in TRIAGE_LINEAR:
        m.add_row(m.metric_expr(metric), lo=eps)
    elif metric == "gini_cnss":
        add_gini_bound(m, eps)
    else:
        num, den, n = _gini_parts(m, metric)
        m.add_row(add_exprs((1.0, num), (-eps * n, den)), hi=0.0)


def _exact_solutions(problem: Any, obj: str, con: str, points: int, reuse: bool, defined: bool
                     ) -> tuple[list[np.ndarray], int]:
    """The epsilon-constraint allocations: ``obj`` optimised with ``con`` no worse than ``eps`` for ``eps``
    on a grid from ``con``'s value at ``obj``'s optimum to ``con``'s own optimum; (allocations, solves)."""
    from fairarena.allocation.metrics import METRICS, compute_metrics_batch
    from fairarena.allocation.milp import AllocationMILP, InfeasibleMILP

    dcon = METRICS.entry(con).direction

    def model(eps: float | None) -> Any:
        m = AllocationMILP(problem)
        if defined:
            _defined_row(m)
        if eps is not None:
            _bound(m, problem, con, eps)
        return m

    def solve(eps: float | None) -> np.ndarray | None:
        m = model(eps)
        try:
            if obj in TRIAGE_LINEAR:
                _, sol = m.solve(m.metric_expr(obj), "max")
            else:
                _, sol = min_gini(m, obj)
        except InfeasibleMILP:
            return None
        return m.allocation(sol)

    x_opt = solve(None)
    if x_opt is None:
        raise InputError("--problem", "infeasible", "a cohort where the audited metrics are defined")
    c_at = float(compute_metrics_batch(problem, x_opt[None])[con][0])
    m = model(None)
    if con in TRIAGE_LINEAR:
        c_opt, _ = m.solve(m.metric_expr(con), "max")
    elif con == "gini_cnss" and not defined:
        c_opt = 0.0                       # the empty allocation (or any with equal CNSS) has Gini(CNSS) 0
    else:
        c_opt, _ = min_gini(m, con)
    xs: list[np.ndarray] = [x_opt]
    solved = 1
    for eps in np.linspace(c_at, c_opt, points)[1:]:
        e = float(eps) if dcon == "max" else max(0.0, float(eps))
        # the last optimum still meets the tighter bound: it stays optimal (the feasible set only shrank)
        last = float(compute_metrics_batch(problem, xs[-1][None])[con][0])
        if reuse and ((last >= e - 1e-9) if dcon == "max" else (last <= e + 1e-9)):
            continue
        slack = BOUND_SLACK * max(1.0, abs(e))     # the optimum's own value (c_opt) is met within the solver's tolerance
        sol = solve(e - slack if dcon == "max" else e + slack)
        solved += 1
        if sol is not None:
            xs.append(sol)
    return xs, solved


def _random_allocations(problem: Any, count: int, seed: int) -> list[np.ndarray]:
    """Seeded random feasible allocations: patients in random order, each needed resource served with a
    random probability (its whole need, or for a divisible resource a random amount from the clinical
    minimum to the need), capped by what is left."""
    return random_allocations(problem, count, seed)


def random_allocations(problem: Any, count: int, seed: int, *, low: str = "threshold") -> list[np.ndarray]:
    """``count`` seeded random feasible allocations of an allocation problem: individuals in random order,
    each needed resource served with a random probability (drawn once per allocation), its whole need on
    an indivisible resource, half the time on a divisible one and otherwise a uniform amount from ``low``
    (``"threshold"``: the problem's minimum that counts as meeting the need; ``"zero"``) to the need,
    capped by what is left of the capacity."""
    if low not in ("threshold", "zero"):
        raise InputError("low", low, "one of threshold, zero")
    rng = np.random.default_rng(seed)
    p = problem
    out = []
    for _ in range(count):
        left = p.capacity.astype(float).copy()
        x = p.zeros()
        share = rng.random()
        for i in rng.permutation(p.n):
            for r in range(p.n_resources):
                if not p.needed[i, r] or rng.random() >= share:
                    continue
                need = float(p.need[i, r])
                lo = float(p.threshold[i, r]) if low == "threshold" else 0.0
                amt = need if p.indivisible[r] or rng.random() < 0.5 else rng.uniform(lo, need)
                amt = min(amt, left[r])
                if p.indivisible[r]:
                    amt = float(np.floor(amt))
                x[i, r] = amt
                left[r] -= amt
        out.append(x)
    return out


def audit_triage(problem: Any, x: str, y: str, points: int = 50, tol: float = 1e-6, reuse: bool = True,
                 samples: int = RANDOM_SAMPLES, seed: int = 0, label: str | None = None) -> dict[str, Any]:
    """Pareto frontier of two allocation metrics on a triage problem, and the conflict summary.

    Exact (``result["exact"]``) for every pair of :data:`TRIAGE_EXACT`: the epsilon-constraint method
    with HiGHS, the axis with a linear objective optimised (the nursing Gini when both are Ginis, by
    :func:`min_gini`), the other bounded (linear row; ``Gini <= g`` as ``sum_{i<j} d_ij <= g n sum_i v_i``).
    With ``reuse`` a grid point whose bound the previous optimum already meets is not re-solved (that
    optimum stays optimal: tightening the bound only shrank the feasible set); the frontier is the same.
    Decisions are the MILP's allocations (nobody gets more than it needs; surplus only wastes capacity),
    and with the nursing Gini on an axis, allocations that give nobody nursing (undefined Gini) are left
    out. A pair with ``var`` (no linear form) is sampled: see :func:`audit_triage_sampled`."""
    from fairarena.allocation.metrics import METRICS, compute_metrics_batch

    check_triage_metrics(x, y)
    if x in TRIAGE_SAMPLED or y in TRIAGE_SAMPLED:
        return audit_triage_sampled(problem, x, y, points, tol, samples, seed, label)
    check_gini_defined(problem, x, y)
    defined = "gini" in (x, y)
    if x in TRIAGE_LINEAR or (y not in TRIAGE_LINEAR and x == "gini"):
        obj, con = x, y
    else:
        obj, con = y, x
    xs, solved = _exact_solutions(problem, obj, con, points, reuse, defined)
    batch = compute_metrics_batch(problem, np.stack(xs))
    vx, vy = np.asarray(batch[x], float), np.asarray(batch[y], float)
    dx, dy = METRICS.entry(x).direction, METRICS.entry(y).direction
    keep = pareto_front(vx, vy, dx, dy)
    how = ("Dinkelbach for the Gini objective, " if obj in TRIAGE_RATIO else "") + \
          ("Gini bound as linear rows, " if con in TRIAGE_RATIO else "")
    out = {"problem": problem_label(problem, label), "method": f"exact (epsilon-constraint on {con}, {how}HiGHS)", "exact": True,
           "x": x, "y": y, "directions": {x: dx, y: dy}, "points": [[float(vx[i]), float(vy[i])] for i in keep],
           "solved": solved, "grid": int(points)}
    out.update(conflict_summary(vx, vy, dx, dy, tol))
    out["alternatives"] = []
    return out


def audit_triage_sampled(problem: Any, x: str, y: str, points: int = 50, tol: float = 1e-6,
                         samples: int = RANDOM_SAMPLES, seed: int = 0, label: str | None = None) -> dict[str, Any]:
    """A sampled frontier (for metrics without a linear form, the variance of CNSS): the non-dominated
    points among every framework's optimum, the exact epsilon-constraint allocations of the other axis
    (ESG when both lack a linear form) against the Gini of CNSS (the linear measure of CNSS dispersion),
    and ``samples`` seeded random feasible allocations. An inner approximation: every point is achieved,
    the true frontier is at least as good."""
    from fairarena.allocation.frameworks import FRAMEWORKS
    from fairarena.allocation.metrics import METRICS, compute_metrics_batch

    check_triage_metrics(x, y)
    other = next((m for m in (x, y) if m in TRIAGE_EXACT and m != "gini_cnss"), "esg")
    defined = other == "gini" and bool(problem.needed[:, problem.gini_index].any())
    optima = [np.asarray(FRAMEWORKS.get(f).solve(problem), float) for f in FRAMEWORKS]
    front, _ = _exact_solutions(problem, other, "gini_cnss", points, True, defined)
    rand = _random_allocations(problem, samples, seed)
    X = np.stack(optima + front + rand)
    batch = compute_metrics_batch(problem, X)
    ok = np.asarray(batch["feasible"], bool) & np.isfinite(batch[x]) & np.isfinite(batch[y])
    if "gini" in (x, y):                                 # nobody nursed: the nursing Gini is undefined
        ok &= X[..., problem.gini_index].sum(axis=-1) > 0
    vx, vy = np.asarray(batch[x], float)[ok], np.asarray(batch[y], float)[ok]
    dx, dy = METRICS.entry(x).direction, METRICS.entry(y).direction
    keep = pareto_front(vx, vy, dx, dy)
    out = {"problem": problem_label(problem, label), "exact": False,
           "method": f"sampled ({int(ok.sum())} allocations: {len(optima)} framework optima, {len(front)} exact "
                     f"{other}-vs-gini_cnss frontier allocations, {len(rand)} random feasible ones, seed {seed}; "
                     f"{' and '.join(m for m in (x, y) if m in TRIAGE_SAMPLED)} has no linear form)",
           "x": x, "y": y, "directions": {x: dx, y: dy}, "points": [[float(vx[i]), float(vy[i])] for i in keep],
           "samples": int(samples), "seed": int(seed), "grid": int(points)}
    out.update(conflict_summary(vx, vy, dx, dy, tol))
    out["alternatives"] = []
    return out


def audit_domain(domain: Any, instance: Any, x: str, y: str, points: int = 50, tol: float = 1e-6,
                 samples: int = RANDOM_SAMPLES, seed: int = 0) -> dict[str, Any]:
    """The conflict audit of metrics ``x`` and ``y`` of any domain's instance, through the protocol: the
    domain's own ``conflict_frontier`` hook when it has one (triage's exact frontier, tourism's, a problem
    file's), else a sampled frontier: the participants' optima (``domain.optimum``) and ``samples`` seeded
    random feasible allocations (:func:`random_allocations`) that satisfy the domain's own rules
    (:func:`fairarena.domains.protocol.violations_of`), each scored by ``domain.evaluate``; non-dominated
    points kept, the conflict summary over every point (an inner approximation: every point is achieved).
    Metrics not listed by the domain, or equal: InputError naming ``--x``/``--y``."""
    from fairarena.domains.protocol import metric_specs, violations_of

    specs = metric_specs(domain)
    for f, v in (("--x", x), ("--y", y)):
        if v not in specs:
            raise InputError(f, v, f"a metric of the domain ({', '.join(specs)})")
    if x == y:
        raise InputError("--y", y, "a metric other than --x")
    hook = getattr(domain, "conflict_frontier", None)
    if callable(hook):
        return dict(hook(instance, x, y, points))
    problem = domain.problem(instance)
    optima = [np.asarray(domain.optimum(instance, p), dtype=float) for p in domain.participants(instance)]
    rand = [a for a in random_allocations(problem, samples, seed, low="zero")
            if not violations_of(domain, instance, a, problem)]
    vals = [domain.evaluate(instance, a) for a in optima + rand]
    vx = np.array([float(v[x]) for v in vals])
    vy = np.array([float(v[y]) for v in vals])
    ok = np.isfinite(vx) & np.isfinite(vy)
    if not ok.any():
        raise InputError("--x", x, f"metrics defined on some valid allocation of the instance (with --y {y})")
    vx, vy = vx[ok], vy[ok]
    dx, dy = specs[x].direction, specs[y].direction
    keep = pareto_front(vx, vy, dx, dy)
    out = {"problem": str(getattr(domain, "name", "allocation")), "exact": False,
           "method": f"sampled ({int(ok.sum())} allocations: {len(optima)} participant optima, {len(rand)} random "
                     f"valid ones of {samples}, seed {seed})",
           "x": x, "y": y, "directions": {x: dx, y: dy}, "points": [[float(vx[i]), float(vy[i])] for i in keep],
           "samples": int(samples), "seed": int(seed)}
    out.update(conflict_summary(vx, vy, dx, dy, tol))
    out["alternatives"] = []
    return out


def load_triage(data: Any, x: str, y: str, domain: Any = None) -> Any:
    """The allocation problem of an instance of ``domain`` (parsed JSON ``data``; default the package's
    default domain, :data:`fairarena.domains.registry.DEFAULT_DOMAIN`: a triage cohort) for an audit of
    ``x`` against ``y``, both checked first (registered, different; the nursing Gini defined on it). Read
    through the protocol: ``domain.problem(domain.from_dict(data))``."""
    from fairarena.domains.registry import DEFAULT_DOMAIN, resolve

    check_triage_metrics(x, y)
    dom = resolve(DEFAULT_DOMAIN if domain is None else domain)
    problem = dom.problem(dom.from_dict(data))
    check_gini_defined(problem, x, y)
    return problem


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
