"""Non-degeneracy: do the frameworks' optima genuinely disagree?

Each framework ``f`` has an objective ``J_f`` (the first stage of its optimisation) and a *loss*
``L_f(x) >= 0`` measuring how far allocation ``x`` is from ``f``'s optimum:

=============  ==============================================  =========================
framework      loss ``L_f(x)``                                 linear form of ``L_f <= t``
=============  ==============================================  =========================
utilitarian    ``(ESG* - ESG(x)) / ESG*``  (relative)          ``ESG(x) >= (1 - t) ESG*``
prioritarian   ``(DW* - DW(x)) / DW*``                         same
care           ``(VWCI* - VWCI(x)) / VWCI*``                   same
rawlsian       ``RMG* - min_i CNSS_i(x)``                      ``CNSS_i >= RMG* - t``
egalitarian    ``(Gini(CNSS(x)) - G*)^+``                      ``sum|c_i-c_j| <= (G* + t) n sum c``
libertarian    ``max_i (CNSS_i(lib) - CNSS_i(x))^+``           ``CNSS_i >= CNSS_i(lib) - t``
=============  ==============================================  =========================

(relative losses fall back to absolute when the optimum is 0; ``G*`` is the Gini of the egalitarian
optimum: 0 under its strict form, the least Gini among the undominated allocations under the default
form, so its own optimum has loss 0 either way). The libertarian framework does not
optimise; it is satisfied by any allocation that honours every patient's entitlement.

The problem is **non-degenerate** iff no feasible allocation has ``L_f(x) <= tol`` for every
framework: one feasibility MILP decides it exactly. Pairs of frameworks conflict iff the same MILP
restricted to the pair is infeasible.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Callable, Sequence

import numpy as np

from fairarena.allocation.frameworks import FRAMEWORKS, framework_optima, get_framework
from fairarena.allocation.metrics import METRICS, compute_metrics, gini, need_satisfaction
from fairarena.allocation.milp import AllocationMILP, InfeasibleMILP, add_gini_bound
from fairarena.allocation.problem import AllocationProblem

__all__ = [
    "NonDegeneracyReport",
    "check_nondegenerate",
    "framework_losses",
    "CakeExample",
    "cake_division_example",
    "solve_cake",
]

DEFAULT_TOL = 1e-4


def _linear_weights(problem: AllocationProblem, f: str) -> np.ndarray | None:
    """The CNSS weights of framework ``f``'s metric when it is a weighted sum of CNSS (utilitarian ESG,
    prioritarian DW-ESG, care VWCI), read from the metric's one linear form
    (:attr:`fairarena.allocation.metrics.Metric.weights`); None for the other frameworks."""
    metric = METRICS.get(FRAMEWORKS.get(f).metric)
    return metric.weights(problem) if metric.milp == "linear" and metric.weights is not None else None


def _objective_values(problem: AllocationProblem, x: np.ndarray, frameworks: Sequence[str] | None = None
                      ) -> dict[str, Any]:
    """Each framework's objective at ``x``: a weighted sum of CNSS (its metric's linear form), the minimum
    CNSS (rawlsian), the Gini of CNSS (egalitarian) or the CNSS vector (libertarian entitlements)."""
    c = need_satisfaction(problem, x)
    out: dict[str, Any] = {}
    for f in (FRAMEWORKS if frameworks is None else frameworks):
        w = _linear_weights(problem, f)
        if w is not None:
            out[f] = float(c @ w)
        elif f == "rawlsian":
            out[f] = float(c.min())
        elif f == "egalitarian":
            out[f] = float(gini(c))
        else:
            out[f] = c
    return out


def framework_losses(problem: AllocationProblem, x: np.ndarray, optima: dict[str, np.ndarray],
                     frameworks: Sequence[str]) -> dict[str, float]:
    """``L_f(x)`` for each framework ``f`` (see module docstring), given each one's optimal allocation."""
    val = _objective_values(problem, x, frameworks)
    out: dict[str, float] = {}
    for f in frameworks:
        best = _objective_values(problem, optima[f], [f])[f]
        if _linear_weights(problem, f) is not None:
            out[f] = float((best - val[f]) / best) if best > 0 else float(best - val[f])
        elif f == "rawlsian":
            out[f] = float(best - val[f])
        elif f == "egalitarian":
            out[f] = max(0.0, float(val[f] - best))  # best: the optimum's Gini (0 under the strict form)
        else:
            out[f] = float(np.max(np.maximum(best - val[f], 0.0)))
    return out


@dataclass
class NonDegeneracyReport:
    """Result of :func:`check_nondegenerate`.

    ``loss[f][g]`` is framework ``f``'s loss at ``g``'s optimal allocation; ``conflicts`` lists the
    pairs that no single allocation satisfies together, with the larger of their two cross-losses.
    """

    nondegenerate: bool
    frameworks: list[str]
    tolerance: float
    objective_optima: dict[str, float]
    loss: dict[str, dict[str, float]]
    conflicts: list[tuple[str, str, float]]
    optimal_allocations: dict[str, np.ndarray] = field(repr=False)
    metrics_at_optima: dict[str, dict[str, Any]] = field(repr=False)
    joint_allocation: np.ndarray | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (allocations omitted; metrics at each optimum included)."""
        return {
            "nondegenerate": self.nondegenerate,
            "frameworks": self.frameworks,
            "tolerance": self.tolerance,
            "objective_optima": self.objective_optima,
            "loss": self.loss,
            "conflicts": [{"a": a, "b": b, "loss": v} for a, b, v in self.conflicts],
            "metrics_at_optima": {
                f: {k: v for k, v in m.items() if k not in ("violations", "waste")}
                for f, m in self.metrics_at_optima.items()
            },
        }


def _joint_feasible(problem: AllocationProblem, frameworks: Sequence[str],
                    optima: dict[str, np.ndarray], tol: float) -> np.ndarray | None:
    """An allocation with ``L_f <= tol`` for all ``f`` in ``frameworks``, or None (one MILP)."""
    m = AllocationMILP(problem)
    for f in frameworks:
        best = _objective_values(problem, optima[f], [f])[f]
        w = _linear_weights(problem, f)
        if w is not None:
            expr = m.weighted_cnss(w)
            m.add_row(expr, lo=(1.0 - tol) * best if best > 0 else best - tol)
        elif f == "rawlsian":
            for c in m.cnss:
                m.add_row(c, lo=best - tol)
        elif f == "egalitarian":
            add_gini_bound(m, float(best) + tol)
        else:  # libertarian: honour every entitlement
            for c, b in zip(m.cnss, best):
                m.add_row(c, lo=float(b) - tol)
    try:
        _, sol = m.solve({}, "max")
    except InfeasibleMILP:
        return None
    return m.allocation(sol)


def check_nondegenerate(problem: AllocationProblem, frameworks: Sequence[str] | None = None, *,
                        tol: float = DEFAULT_TOL, pairwise: bool = True,
                        optima: dict[str, np.ndarray] | None = None) -> NonDegeneracyReport:
    """Decide exactly whether one feasible allocation attains every framework's optimum (within
    ``tol``); report the loss matrix at each other's optima and (``pairwise``) the conflicting pairs.
    """
    names = list(frameworks) if frameworks is not None else list(FRAMEWORKS)
    for f in names:
        get_framework(f)
    opt = dict(optima) if optima is not None else framework_optima(problem, names)
    loss = {f: {} for f in names}
    for g in names:
        lg = framework_losses(problem, opt[g], opt, names)
        for f in names:
            loss[f][g] = lg[f]
    joint = _joint_feasible(problem, names, opt, tol)
    conflicts: list[tuple[str, str, float]] = []
    if pairwise:
        for a, b in combinations(names, 2):
            if _joint_feasible(problem, [a, b], opt, tol) is None:
                conflicts.append((a, b, max(loss[a][b], loss[b][a])))
    vals = {f: _objective_values(problem, opt[f], [f])[f] for f in names}
    return NonDegeneracyReport(
        nondegenerate=joint is None,
        frameworks=names,
        tolerance=tol,
        objective_optima={f: (float(np.mean(v)) if f == "libertarian" else float(v)) for f, v in vals.items()},
        loss=loss,
        conflicts=conflicts,
        optimal_allocations=opt,
        metrics_at_optima={f: compute_metrics(problem, opt[f]) for f in names},
        joint_allocation=joint,
    )


# -- the cake-division example ------------------------------------------------------------------

@dataclass(frozen=True)
class CakeExample:
    """Six recipients sharing a unit cake, each with a differently shaped utility of their share."""

    names: tuple[str, ...]
    utilities: tuple[Callable[[np.ndarray], np.ndarray], ...]


def _convex(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, float) ** 2


def _concave(a: np.ndarray) -> np.ndarray:
    return np.sqrt(np.asarray(a, float))


def _interior_peak(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, float)
    return np.maximum(0.0, 1.0 - ((a - 0.3) / 0.3) ** 2)  # peak 1 at a = 0.3, 0 at 0 and 0.6


def _jump_at_zero(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, float)
    return np.where(a > 0, 0.4 + 0.6 * a, 0.0)


def _dignity_floor(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, float)
    return np.where(a >= 0.15, 0.5 + a, 0.0)  # nothing below a dignified minimum of 0.15


def _linear(a: np.ndarray) -> np.ndarray:
    return 0.8 * np.asarray(a, float)


def cake_division_example() -> CakeExample:
    """The non-degenerate cake example: strictly convex, strictly concave, non-monotone with an
    interior maximum, discontinuous at zero, dignity floor, and a linear recipient."""
    return CakeExample(
        names=("convex", "concave", "interior_peak", "jump_at_zero", "dignity_floor", "linear"),
        utilities=(_convex, _concave, _interior_peak, _jump_at_zero, _dignity_floor, _linear),
    )


def solve_cake(example: CakeExample, rule: str, grid: int = 100) -> tuple[np.ndarray, float]:
    """Exact optimum over shares that are multiples of ``1/grid`` (sum <= 1) by dynamic programming.

    ``rule`` is ``"utilitarian"`` (max sum of utilities) or ``"rawlsian"`` (max min utility, then max
    sum). Returns (shares, objective value).
    """
    if rule not in ("utilitarian", "rawlsian"):
        raise ValueError(f"rule must be utilitarian or rawlsian, not {rule!r}")
    units = np.arange(grid + 1)
    U = np.stack([u(units / grid) for u in example.utilities])  # (n, grid+1)
    n = U.shape[0]
    # value[k][b] = best (key) using recipients k.. with b units left; key compared lexicographically
    NEG = -np.inf
    if rule == "utilitarian":
        best = np.zeros(grid + 1)
        choice = np.zeros((n, grid + 1), dtype=int)
        for k in range(n - 1, -1, -1):
            new = np.full(grid + 1, NEG)
            for b in range(grid + 1):
                cand = U[k, : b + 1] + best[b - np.arange(b + 1)]
                j = int(np.argmax(cand))
                new[b], choice[k, b] = cand[j], j
            best = new
        value = float(best[grid])
    else:
        # maximise (min, sum) lexicographically
        bmin = np.full(grid + 1, np.inf)
        bsum = np.zeros(grid + 1)
        choice = np.zeros((n, grid + 1), dtype=int)
        for k in range(n - 1, -1, -1):
            nmin = np.full(grid + 1, NEG)
            nsum = np.full(grid + 1, NEG)
            for b in range(grid + 1):
                a = np.arange(b + 1)
                mins = np.minimum(U[k, a], bmin[b - a])
                sums = U[k, a] + bsum[b - a]
                order = np.lexsort((-sums, -mins))
                j = int(order[0])
                nmin[b], nsum[b], choice[k, b] = mins[j], sums[j], j
            bmin, bsum = nmin, nsum
        value = float(bmin[grid])
    shares = np.zeros(n)
    b = grid
    for k in range(n):
        shares[k] = choice[k, b] / grid
        b -= choice[k, b]
    return shares, value
