"""Exact allocation MILPs (HiGHS through ``scipy.optimize.milp``): the ``x`` variables, CNSS as linear
expressions under either need-satisfaction form, lexicographic stages and the linearisations the
framework objectives need (max-min, sum of the k smallest, Gini of CNSS).

Formulation (documented in ``docs/triage.md``):

* one variable ``x[i, r]`` per *needed* pair, bounded ``0 <= x[i, r] <= need[i, r]``, integer for
  indivisible resources; non-needed pairs are fixed to 0. Every objective depends on ``x`` only through
  CNSS, and truncating an allocation to ``min(x, need)`` keeps it feasible and leaves CNSS unchanged,
  so this restriction loses no optimum and removes waste.
* fractional CNSS: under the bounds ``min(1, x/need) = x/need`` and
  ``CNSS_i = sum_r x[i, r] / (|N_i| need[i, r])`` is linear, no auxiliary variable.
* indicator CNSS: one binary ``z[i, r]`` per needed pair with ``threshold[i, r] z <= x <= need[i, r] z``
  and ``CNSS_i = sum_r z[i, r] / |N_i|``. The second inequality makes ``z = 0`` force ``x = 0``, so the
  extracted allocation's true CNSS always equals the modelled one (exact for every objective, also
  non-monotone ones such as Gini constraints). Where ``x`` is itself a 0/1 integer (indivisible, need 1)
  ``x`` is used as its own ``z``. After the last stage one more stage maximises the fractional
  satisfaction, so needs that count are also served as fully as capacity allows (a canonical amount
  instead of an arbitrary point between the minimum and the need).
* capacities ``sum_i x[i, r] <= capacity[r]``.
* lexicographic objectives are solved stage by stage; after each stage its optimum ``v`` is fixed by
  ``objective >= v - eps`` with ``eps = 1e-9 max(1, |v|)``.

Every solve checks the HiGHS status and raises :class:`SolverError` unless it is optimal.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from fairarena.allocation.metrics import METRICS, metrics_with_form
from fairarena.allocation.problem import AllocationProblem
from fairarena.errors import InputError, SolverError
from fairarena.solver_console import milp  # HiGHS's console never on stdout

__all__ = ["Expr", "AllocationMILP", "InfeasibleMILP", "add_exprs", "add_gini_bound", "MIP_REL_GAP", "STAGE_EPS",
           "SMALL_MODEL_SEARCH"]

Expr = dict[int, float]
_STATUS = {1: "iteration or time limit reached", 2: "infeasible", 3: "unbounded", 4: "numerical or other failure"}
MIP_REL_GAP = 1e-9
STAGE_EPS = 1e-9
MAX_MIN_TOL = 1e-6  # max_min_cnss: optimal to this (relative) tolerance (10x HiGHS's feasibility tolerance)
MAX_MIN_START_GAP = 1e-2  # max_min_cnss: gap of the first, incumbent-finding solve
STAGE_RETRY_EPS = 1e-6  # a later stage found infeasible (solver tolerance): earlier optima kept this loosely
SMALL_MODEL_SEARCH: dict[str, bool | int | float] = {
    "mip_heuristic_run_rins": False, "mip_heuristic_run_rens": False, "mip_heuristic_run_feasibility_jump": False,
    "mip_heuristic_run_root_reduced_cost": False, "mip_heuristic_run_zi_round": False,
    "mip_heuristic_run_shifting": False, "mip_pscost_minreliable": 0}
"""HiGHS search options for the small models with pairwise CNSS gaps (the feasible-set rules' models,
``aggregation.feasible.HIGHS_OPTIONS``, and the egalitarian min-Gini stages): primal heuristics off and
pseudo-cost branching without strong branching first. They change the search, not the proof (same gap)."""


class InfeasibleMILP(SolverError):
    """HiGHS proved the MILP infeasible (status 2): a definite answer, not a solver failure."""


def add_exprs(*exprs: tuple[float, Expr]) -> Expr:
    """``sum_k scale_k * expr_k`` for sparse linear expressions ``{variable index: coefficient}``."""
    out: Expr = {}
    for scale, e in exprs:
        for k, v in e.items():
            out[k] = out.get(k, 0.0) + scale * v
    return out


class AllocationMILP:
    """A MILP over an allocation problem: the ``x`` variables plus auxiliaries and rows.

    Linear expressions are sparse dicts ``{variable index: coefficient}``. ``cnss[i]`` is the linear
    expression of individual ``i``'s CNSS under ``cnss`` (default: the problem's form), exact in the
    sense of the module docstring; ``frac[i]`` is always the fractional one.
    """

    #: extra HiGHS options for every solve (HiGHS's names, passed through ``scipy.optimize.milp``
    #: verbatim; a SciPy whose HiGHS lacks one solves without them). Meant for search switches such as
    #: heuristics, which change how fast an optimum is found, never the optimality proof or its gap.
    highs_options: dict[str, bool | int | float] = {}

    def __init__(self, problem: AllocationProblem, time_limit: float | None = None, cnss: str | None = None) -> None:
        self.problem = problem
        self.time_limit = time_limit
        self.form = problem.cnss if cnss is None else cnss
        self.pairs = [(i, r) for i in range(problem.n) for r in range(problem.n_resources)
                      if problem.needed[i, r]]
        self.lb: list[float] = []
        self.ub: list[float] = []
        self.integer: list[int] = []
        self.rows: list[tuple[Expr, float, float]] = []
        for i, r in self.pairs:
            self.add_var(0.0, float(problem.need[i, r]), integer=bool(problem.indivisible[r]))
        self.frac: list[Expr] = [dict() for _ in range(problem.n)]
        for k, (i, r) in enumerate(self.pairs):
            self.frac[i][k] = 1.0 / (problem.n_needed[i] * problem.need[i, r])
        self.z: list[int] = []  # indicator variable of each pair (indicator form)
        if self.form == "indicator":
            self.cnss: list[Expr] = [dict() for _ in range(problem.n)]
            for k, (i, r) in enumerate(self.pairs):
                need, thr = float(problem.need[i, r]), float(problem.threshold[i, r])
                if problem.indivisible[r] and need == 1.0:
                    z = k  # x in {0, 1} is its own indicator
                else:
                    z = self.add_var(0.0, 1.0, integer=True)
                    self.add_row({k: 1.0, z: -thr}, lo=0.0)
                    self.add_row({k: 1.0, z: -need}, hi=0.0)
                self.z.append(z)
                self.cnss[i][z] = 1.0 / problem.n_needed[i]
        else:
            self.cnss = self.frac
        for r in range(problem.n_resources):
            row = {k: 1.0 for k, (_, rr) in enumerate(self.pairs) if rr == r}
            if row:
                self.rows.append((row, -np.inf, float(problem.capacity[r])))

    # -- building ------------------------------------------------------------------------------
    def add_var(self, lb: float = 0.0, ub: float = np.inf, integer: bool = False) -> int:
        """Append a variable; returns its index."""
        self.lb.append(lb)
        self.ub.append(ub)
        self.integer.append(1 if integer else 0)
        return len(self.lb) - 1

    def add_row(self, expr: Expr, lo: float = -np.inf, hi: float = np.inf) -> None:
        """Add ``lo <= expr <= hi``."""
        self.rows.append((dict(expr), lo, hi))

    def weighted_cnss(self, coef: np.ndarray) -> Expr:
        """``sum_i coef[i] * CNSS_i`` as an expression."""
        return add_exprs(*((float(c), e) for c, e in zip(coef, self.cnss)))

    def metric_expr(self, key: str) -> Expr:
        """A registered allocation metric as an expression to maximise: ``sum_i w_i CNSS_i`` for a
        ``"linear"`` metric (its :attr:`~fairarena.allocation.metrics.Metric.weights`), the
        :meth:`min_cnss` variable for the ``"min"`` one (RMG). The one MILP form of the frameworks'
        metrics (their optima, the feasible-set rules, the conflict audit); InputError for a metric
        without one (a Gini is a ratio: a bound or Dinkelbach's method; the variance is quadratic)."""
        metric = METRICS.get(key)
        if metric.milp == "linear" and metric.weights is not None:
            return self.weighted_cnss(metric.weights(self.problem))
        if metric.milp == "min":
            return self.min_cnss()
        raise InputError("metric", key, "a metric with a linear form: " + ", ".join(metrics_with_form("linear", "min")))

    def pairwise_gaps(self) -> list[tuple[float, Expr]]:
        """New auxiliaries ``d_ij >= |CNSS_i - CNSS_j|`` for every pair ``i < j`` (two rows each), as the
        terms ``(1, d_ij)`` of their sum: ``n(n-1)/2`` variables, so only for bounds that need them."""
        n, c = self.problem.n, self.cnss
        gaps: list[tuple[float, Expr]] = []
        for i in range(n):
            for j in range(i + 1, n):
                d = self.add_var(0.0, np.inf)
                diff = add_exprs((1.0, c[i]), (-1.0, c[j]))
                self.add_row(add_exprs((1.0, {d: 1.0}), (-1.0, diff)), lo=0.0)
                self.add_row(add_exprs((1.0, {d: 1.0}), (1.0, diff)), lo=0.0)
                gaps.append((1.0, {d: 1.0}))
        return gaps

    def sum_smallest(self, k: int) -> Expr:
        """Expression equal (at the optimum of a maximisation) to the sum of the ``k`` smallest CNSS.

        LP dual form: ``max k t - sum_i d_i`` with ``d_i >= t - CNSS_i``, ``d_i >= 0``, ``t`` free.
        """
        t = self.add_var(-np.inf, np.inf)
        ds = [self.add_var(0.0, np.inf) for _ in range(self.problem.n)]
        for d, c in zip(ds, self.cnss):
            self.add_row(add_exprs((1.0, {d: 1.0, t: -1.0}), (1.0, c)), lo=0.0)
        return add_exprs((float(k), {t: 1.0}), *((-1.0, {d: 1.0}) for d in ds))

    def min_cnss(self) -> Expr:
        """A variable ``m <= CNSS_i`` for all i: maximising it maximises ``min_i CNSS_i``."""
        m = self.add_var(-np.inf, np.inf)
        for c in self.cnss:
            self.add_row(add_exprs((1.0, c), (-1.0, {m: 1.0})), lo=0.0)
        return {m: 1.0}

    # -- solving -------------------------------------------------------------------------------
    def solve(self, objective: Expr, sense: str = "max", *, gap: float | None = None,
              lb: np.ndarray | None = None, ub: np.ndarray | None = None,
              relax: bool = False) -> tuple[float, np.ndarray]:
        """Optimise ``objective``; returns (optimal value, full solution vector).

        ``gap`` overrides the relative MIP gap; ``lb``/``ub`` override the variable bounds for this
        solve only; ``relax`` drops integrality (an LP).
        """
        from scipy.optimize import Bounds, LinearConstraint   # here, not at import: a command that builds
        from scipy.sparse import coo_array                    # agents but solves nothing skips 0.4 s of SciPy

        nv = len(self.lb)
        c = np.zeros(nv)
        for k, v in objective.items():
            c[k] = v
        if sense == "max":
            c = -c
        constraints = []
        if self.rows:
            ri, ci, vals = [], [], []
            lo = np.empty(len(self.rows))
            hi = np.empty(len(self.rows))
            for j, (expr, a, b) in enumerate(self.rows):
                for k, v in expr.items():
                    ri.append(j)
                    ci.append(k)
                    vals.append(v)
                lo[j], hi[j] = a, b
            A = coo_array((vals, (ri, ci)), shape=(len(self.rows), nv)).tocsr()
            constraints.append(LinearConstraint(A, lo, hi))
        options: dict[str, float] = {"mip_rel_gap": MIP_REL_GAP if gap is None else gap}
        if self.time_limit is not None:
            options["time_limit"] = self.time_limit
        integrality = np.zeros(nv) if relax else np.asarray(self.integer)
        bounds = Bounds(np.asarray(self.lb if lb is None else lb), np.asarray(self.ub if ub is None else ub))

        def run(**more: bool) -> Any:
            try:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", "Unrecognized options", RuntimeWarning)
                    return milp(c, constraints=constraints, integrality=integrality, bounds=bounds,
                                options={**options, **self.highs_options, **more})
            except AttributeError:  # this SciPy's HiGHS does not know an extra option: solve without them
                return milp(c, constraints=constraints, integrality=integrality, bounds=bounds,
                            options={**options, **more})

        res = run()
        if res.status == 4:
            # "Solve error": HiGHS's repair of a solution found after presolve can fail on these max-min
            # models (the stray `transformNewIntegerFeasibleSolution` line, ERGO-Code/HiGHS#2783; e.g. the
            # council of standard cohort 44 under the default search). The same model without presolve
            # solves; a second failure is reported.
            res = run(presolve=False)
        if res.status == 2:
            raise InfeasibleMILP(f"HiGHS MILP infeasible: {res.message}")
        if res.status != 0 or res.x is None:
            raise SolverError(f"HiGHS MILP not optimal: status {res.status} "
                              f"({_STATUS.get(res.status, 'unknown')}): {res.message}")
        value = float(-res.fun if sense == "max" else res.fun)
        return value, np.asarray(res.x)

    def maximise(self, objective: Expr, tol: float = MAX_MIN_TOL) -> float:
        """The maximum of ``objective``, exact to ``tol`` (relative), by incumbent improvement.

        One MILP solved to optimality is slow past a hundred individuals when integer beds mix with
        continuous shares (weak LP bound, long proof). Instead: (1) a loose-gap solve gives an integer
        assignment; (2) with its integer variables fixed, an LP gives the exact value ``v`` that
        assignment allows; (3) a feasibility MILP asks for ``objective >= v + tol``: infeasible proves
        ``v`` optimal within ``tol``; feasible gives a better integer assignment, back to (2) (each
        round improves ``v`` by at least ``tol / 2``; a "feasible" answer that does not is the solver's
        tolerance, and ``v`` is kept). Tested against the single MILP and brute force.
        """
        ints = np.flatnonzero(np.asarray(self.integer) == 1)
        lb, ub = np.asarray(self.lb, float), np.asarray(self.ub, float)

        def exact_value(sol: np.ndarray) -> float:
            flb, fub = lb.copy(), ub.copy()
            flb[ints] = fub[ints] = np.round(sol[ints])
            try:
                value, _ = self.solve(objective, "max", lb=flb, ub=fub, relax=True)
            except SolverError:  # HiGHS can fail on a model its presolve empties: use the point itself
                value = float(sum(c * sol[k] for k, c in objective.items()))
            return value

        _, sol = self.solve(objective, "max", gap=MAX_MIN_START_GAP)
        v = exact_value(sol)
        single = next(iter(objective.items())) if len(objective) == 1 else None
        while True:
            step = tol * max(1.0, abs(v))
            try:
                if single is not None and single[1] > 0:  # a bound, not a row (HiGHS fails on the latter)
                    raised = lb.copy()
                    raised[single[0]] = max(raised[single[0]], (v + step) / single[1])
                    _, sol = self.solve({}, "max", lb=raised)
                else:
                    self.add_row(objective, lo=v + step)
                    try:
                        _, sol = self.solve({}, "max")
                    finally:
                        self.rows.pop()
            except InfeasibleMILP:
                return v
            except SolverError:  # numerical trouble in the proof: fall back to the single MILP
                return self.solve(objective, "max")[0]
            better = exact_value(sol)
            if better < v + step / 2:
                return v
            v = better

    def max_min_cnss(self, tol: float = MAX_MIN_TOL) -> tuple[Expr, float]:
        """Maximise ``min_i CNSS_i`` exactly (:meth:`maximise`); returns (expression, optimal value)."""
        expr = self.min_cnss()
        return expr, self.maximise(expr, tol)

    def fix(self, objective: Expr, value: float, sense: str = "max", eps: float = STAGE_EPS) -> int:
        """Keep a stage's optimum: ``objective >= value - e`` (max) or ``<= value + e`` (min) with
        ``e = eps * max(1, |value|)``; returns the row's index."""
        e = eps * max(1.0, abs(value))
        if sense == "max":
            self.add_row(objective, lo=value - e)
        else:
            self.add_row(objective, hi=value + e)
        return len(self.rows) - 1

    def lexicographic(self, stages: list[tuple[Expr, str] | Callable[[], tuple[Expr, str]]], *,
                      fill: bool = True, fixed: list[tuple[int, Expr, float, str]] | None = None,
                      implied: Callable[[int, float, np.ndarray], list[float] | None] | None = None) -> np.ndarray:
        """Solve objectives in order, fixing each optimum before the next; returns the allocation.

        A stage may be a callable building its objective (and auxiliaries) only when it is reached.
        Under the indicator form (and ``fill``) a last stage maximises the fractional satisfaction.
        ``implied(j, value, solution)``, called after stage ``j`` (not the last), may return the optimal
        values of every later stage when that solution already proves them: those stages are then fixed at
        these values without being solved (the caller vouches that the solution attains them).
        """
        stages = list(stages)
        n_given = len(stages)
        if fill and self.form == "indicator":
            stages.append((add_exprs(*((1.0, e) for e in self.frac)), "max"))
        sol = None
        fixed = list(fixed or [])  # (row, objective, value, sense) of optima kept before the first stage
        j = 0
        while j < len(stages):
            stage = stages[j]
            obj, sense = stage() if callable(stage) else stage
            try:
                value, sol = self.solve(obj, sense)
            except InfeasibleMILP:
                if not fixed:
                    raise
                # an earlier optimum was fixed tighter than the solver's feasibility tolerance
                # (HiGHS reports optima feasible to ~1e-7): keep the earlier stages within 1e-6 instead
                for row, o, v, sn in fixed:
                    e = STAGE_RETRY_EPS * max(1.0, abs(v))
                    self.rows[row] = (dict(o), v - e, np.inf) if sn == "max" else (dict(o), -np.inf, v + e)
                value, sol = self.solve(obj, sense)
            if j < len(stages) - 1:
                fixed.append((self.fix(obj, value, sense), obj, value, sense))
            later = implied(j, value, sol) if implied is not None and j < n_given - 1 else None
            if later is not None:
                for stage2, v2 in zip(stages[j + 1:n_given], later, strict=True):
                    o2, s2 = stage2() if callable(stage2) else stage2
                    fixed.append((self.fix(o2, v2, s2), o2, v2, s2))
                j = n_given
                continue
            j += 1
        assert sol is not None
        return self.allocation(sol)

    def allocation(self, sol: np.ndarray) -> np.ndarray:
        """The ``(n, R)`` allocation in a solution vector (integers rounded exactly; under the
        indicator form a pair whose indicator is 0 gets nothing)."""
        p = self.problem
        x = p.zeros()
        for k, (i, r) in enumerate(self.pairs):
            v = float(sol[k])
            if self.z and round(float(sol[self.z[k]])) == 0:
                v = 0.0
            if p.indivisible[r]:
                x[i, r] = round(v)
            else:  # solver noise: round to 1e-6 and stay within [0, need]
                x[i, r] = min(max(0.0, round(v, 6)), float(p.need[i, r]))
                if self.z and x[i, r] < p.threshold[i, r] and round(float(sol[self.z[k]])) == 1:
                    x[i, r] = float(p.threshold[i, r])
        # rounding may overshoot a capacity by < 1e-5: take the excess from the largest holder
        for r in range(p.n_resources):
            excess = x[:, r].sum() - p.capacity[r]
            if excess > 0 and not p.indivisible[r]:
                i = int(np.argmax(x[:, r]))
                x[i, r] = max(0.0, x[i, r] - excess)
        return x


def add_gini_bound(m: AllocationMILP, bound: float) -> None:
    """Constrain ``Gini(CNSS) <= bound`` exactly (linear).

    ``Gini(c) = sum_{i<j} |c_i - c_j| / (n sum_i c_i)``. With ``bound <= 0`` (the egalitarian optimum)
    the constraint is ``c_1 = c_2 = ... = c_n``: ``n - 1`` equality rows, no auxiliary. With
    ``bound > 0`` (the non-degeneracy check) ``d_ij >= |c_i - c_j|`` and
    ``sum_{i<j} d_ij <= bound * n * sum_i c_i``: ``n(n-1)/2`` auxiliaries (see docs/triage.md).
    """
    n = m.problem.n
    c = m.cnss
    if bound <= 0:
        for i in range(n - 1):
            m.add_row(add_exprs((1.0, c[i]), (-1.0, c[i + 1])), lo=0.0, hi=0.0)
        return
    total = m.pairwise_gaps()
    m.add_row(add_exprs(*total, *((-bound * n, e) for e in c)), hi=0.0)
