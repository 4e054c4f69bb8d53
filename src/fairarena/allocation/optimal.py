"""Framework-optimal allocations: exact MILPs solved by HiGHS (``scipy.optimize.milp``).

Formulation (documented in ``docs/triage.md``):

* one variable ``x[i, r]`` per *needed* pair, bounded ``0 <= x[i, r] <= need[i, r]``, integer for
  indivisible resources; non-needed pairs are fixed to 0. Every objective depends on ``x`` only through
  CNSS, and truncating an allocation to ``min(x, need)`` keeps it feasible and leaves CNSS unchanged,
  so this restriction loses no optimum and removes waste. Under it ``min(1, x/need) = x/need`` and
  ``CNSS_i = sum_r x[i, r] / (|N_i| need[i, r])`` is linear: no auxiliary variable is needed.
* capacities ``sum_i x[i, r] <= capacity[r]``.
* lexicographic objectives are solved stage by stage; after each stage its optimum ``v`` is fixed by
  the constraint ``objective >= v - eps`` with ``eps = 1e-7 max(1, |v|)``.

Every solve checks the HiGHS status and raises :class:`SolverError` unless it is optimal.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.optimize import LinearConstraint, milp
from scipy.sparse import coo_array

from fairarena.allocation.problem import AllocationProblem
from fairarena.allocation.welfare import get_framework
from fairarena.errors import SolverError

__all__ = [
    "AllocationMILP",
    "InfeasibleMILP",
    "optimal_allocation",
    "framework_optima",
    "entitlement_allocation",
    "SOLVERS",
]

Expr = dict[int, float]
_STATUS = {1: "iteration or time limit reached", 2: "infeasible", 3: "unbounded", 4: "numerical or other failure"}
MIP_REL_GAP = 1e-9
STAGE_EPS = 1e-9


class InfeasibleMILP(SolverError):
    """HiGHS proved the MILP infeasible (status 2): a definite answer, not a solver failure."""


def _add(*exprs: tuple[float, Expr]) -> Expr:
    out: Expr = {}
    for scale, e in exprs:
        for k, v in e.items():
            out[k] = out.get(k, 0.0) + scale * v
    return out


class AllocationMILP:
    """A small MILP over an allocation problem: the ``x`` variables plus auxiliaries and rows.

    Linear expressions are sparse dicts ``{variable index: coefficient}``. ``cnss[i]`` is the linear
    expression of patient ``i``'s CNSS (exact under the ``x <= need`` bounds).
    """

    def __init__(self, problem: AllocationProblem, time_limit: float | None = None) -> None:
        self.problem = problem
        self.time_limit = time_limit
        self.pairs = [(i, r) for i in range(problem.n) for r in range(problem.n_resources)
                      if problem.needed[i, r]]
        self.lb: list[float] = []
        self.ub: list[float] = []
        self.integer: list[int] = []
        for i, r in self.pairs:
            self.add_var(0.0, float(problem.need[i, r]), integer=bool(problem.indivisible[r]))
        self.rows: list[tuple[Expr, float, float]] = []
        self.cnss: list[Expr] = [dict() for _ in range(problem.n)]
        for k, (i, r) in enumerate(self.pairs):
            self.cnss[i][k] = 1.0 / (problem.n_needed[i] * problem.need[i, r])
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
        return _add(*((float(c), e) for c, e in zip(coef, self.cnss)))

    def sum_smallest(self, k: int) -> Expr:
        """Expression equal (at the optimum of a maximisation) to the sum of the ``k`` smallest CNSS.

        LP dual form: ``max k t - sum_i d_i`` with ``d_i >= t - CNSS_i``, ``d_i >= 0``, ``t`` free.
        """
        t = self.add_var(-np.inf, np.inf)
        ds = [self.add_var(0.0, np.inf) for _ in range(self.problem.n)]
        for d, c in zip(ds, self.cnss):
            self.add_row(_add((1.0, {d: 1.0, t: -1.0}), (1.0, c)), lo=0.0)
        return _add((float(k), {t: 1.0}), *((-1.0, {d: 1.0}) for d in ds))

    def min_cnss(self) -> Expr:
        """A variable ``m <= CNSS_i`` for all i: maximising it maximises ``min_i CNSS_i``."""
        m = self.add_var(-np.inf, np.inf)
        for c in self.cnss:
            self.add_row(_add((1.0, c), (-1.0, {m: 1.0})), lo=0.0)
        return {m: 1.0}

    # -- solving -------------------------------------------------------------------------------
    def solve(self, objective: Expr, sense: str = "max") -> tuple[float, np.ndarray]:
        """Optimise ``objective``; returns (optimal value, full solution vector)."""
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
        from scipy.optimize import Bounds

        options: dict[str, float] = {"mip_rel_gap": MIP_REL_GAP}
        if self.time_limit is not None:
            options["time_limit"] = self.time_limit
        res = milp(c, constraints=constraints, integrality=np.asarray(self.integer),
                   bounds=Bounds(np.asarray(self.lb), np.asarray(self.ub)), options=options)
        if res.status == 2:
            raise InfeasibleMILP(f"HiGHS MILP infeasible: {res.message}")
        if res.status != 0 or res.x is None:
            raise SolverError(f"HiGHS MILP not optimal: status {res.status} "
                              f"({_STATUS.get(res.status, 'unknown')}): {res.message}")
        value = float(-res.fun if sense == "max" else res.fun)
        return value, np.asarray(res.x)

    def fix(self, objective: Expr, value: float, sense: str = "max") -> None:
        """Keep a stage's optimum: ``objective >= value - eps`` (max) or ``<= value + eps`` (min)."""
        eps = STAGE_EPS * max(1.0, abs(value))
        if sense == "max":
            self.add_row(objective, lo=value - eps)
        else:
            self.add_row(objective, hi=value + eps)

    def lexicographic(self, stages: list[tuple[Expr, str] | Callable[[], tuple[Expr, str]]]) -> np.ndarray:
        """Solve objectives in order, fixing each optimum before the next; returns the allocation.

        A stage may be a callable building its objective (and auxiliaries) only when it is reached.
        """
        sol = None
        for j, stage in enumerate(stages):
            obj, sense = stage() if callable(stage) else stage
            value, sol = self.solve(obj, sense)
            if j < len(stages) - 1:
                self.fix(obj, value, sense)
        assert sol is not None
        return self.allocation(sol)

    def allocation(self, sol: np.ndarray) -> np.ndarray:
        """The ``(n, R)`` allocation in a solution vector (integers rounded exactly)."""
        x = self.problem.zeros()
        for k, (i, r) in enumerate(self.pairs):
            v = float(sol[k])
            if self.problem.indivisible[r]:
                x[i, r] = round(v)
            else:  # solver noise: round to 1e-6 and stay within [0, need]
                x[i, r] = min(max(0.0, round(v, 6)), float(self.problem.need[i, r]))
        # rounding may overshoot a capacity by < 1e-5: take the excess from the largest holder
        for r in range(self.problem.n_resources):
            excess = x[:, r].sum() - self.problem.capacity[r]
            if excess > 0 and not self.problem.indivisible[r]:
                i = int(np.argmax(x[:, r]))
                x[i, r] = max(0.0, x[i, r] - excess)
        return x


# -- framework solvers ------------------------------------------------------------------------

def _utilitarian(m: AllocationMILP) -> np.ndarray:
    p = m.problem
    return m.lexicographic([(m.weighted_cnss(p.survival), "max"), (m.min_cnss(), "max")])


def _prioritarian(m: AllocationMILP) -> np.ndarray:
    p = m.problem
    return m.lexicographic([(m.weighted_cnss(p.disadvantage * p.survival), "max"),
                            (m.weighted_cnss(p.survival), "max")])


def _care(m: AllocationMILP) -> np.ndarray:
    p = m.problem
    return m.lexicographic([(m.weighted_cnss(p.vulnerability), "max"),
                            (m.weighted_cnss(p.survival), "max")])


def _rawlsian(m: AllocationMILP, leximin: bool = False) -> np.ndarray:
    """Max RMG; with ``leximin`` then the sums of the k smallest CNSS (Ogryczak), then ESG."""
    p = m.problem
    stages: list[tuple[Expr, str] | Callable[[], tuple[Expr, str]]] = [(m.min_cnss(), "max")]
    if leximin:
        # sum of the k smallest CNSS for k = 2..n-1; k = n is the plain sum of CNSS (no auxiliaries)
        stages += [lambda k=k: (m.sum_smallest(k), "max") for k in range(2, p.n)]
        stages.append((m.weighted_cnss(np.ones(p.n)), "max"))
    stages.append((m.weighted_cnss(p.survival), "max"))
    return m.lexicographic(stages)


def _egalitarian(m: AllocationMILP, gini_tolerance: float = 0.0) -> np.ndarray:
    """Stage 1: min Gini(CNSS). Gini >= 0 and the empty allocation attains 0, so the optimum is 0
    and the stage is the constraint ``Gini(CNSS) <= gini_tolerance``; stage 2 maximises mean CNSS."""
    add_gini_bound(m, gini_tolerance)
    p = m.problem
    return m.lexicographic([(m.weighted_cnss(np.full(p.n, 1.0 / p.n)), "max"),
                            (m.weighted_cnss(p.survival), "max")])


def add_gini_bound(m: AllocationMILP, bound: float) -> None:
    """Constrain ``Gini(CNSS) <= bound`` exactly (linear).

    ``Gini = sum_{i<j} |c_i - c_j| / (n sum_i c_i)``; with ``d_ij >= |c_i - c_j|`` the constraint is
    ``sum d_ij <= bound * n * sum_i c_i``. With ``bound == 0`` it is ``c_i = c_{i+1}`` for all i.
    """
    n = m.problem.n
    c = m.cnss
    if bound <= 0:
        for i in range(n - 1):
            m.add_row(_add((1.0, c[i]), (-1.0, c[i + 1])), lo=0.0, hi=0.0)
        return
    total: list[tuple[float, Expr]] = []
    for i in range(n):
        for j in range(i + 1, n):
            d = m.add_var(0.0, np.inf)
            diff = _add((1.0, c[i]), (-1.0, c[j]))
            m.add_row(_add((1.0, {d: 1.0}), (-1.0, diff)), lo=0.0)
            m.add_row(_add((1.0, {d: 1.0}), (1.0, diff)), lo=0.0)
            total.append((1.0, {d: 1.0}))
    m.add_row(_add(*total, *((-bound * n, e) for e in c)), hi=0.0)


def entitlement_allocation(problem: AllocationProblem) -> np.ndarray:
    """Libertarian entitlement procedure (no optimisation, no redistribution).

    Patients are served in order of urgency (most urgent first), then survival (highest first), then
    their position in the cohort; each takes, for every resource it needs, ``min(need, what is left)``
    (whole units for indivisible resources, which capacities and needs already are).
    """
    order = sorted(range(problem.n), key=lambda i: (-problem.urgency[i], -problem.survival[i], i))
    left = problem.capacity.copy()
    x = problem.zeros()
    for i in order:
        take = np.minimum(problem.need[i], left)
        x[i] = take
        left = left - take
    return x


SOLVERS: dict[str, Callable[[AllocationMILP], np.ndarray]] = {
    "utilitarian": _utilitarian,
    "egalitarian": _egalitarian,
    "rawlsian": _rawlsian,
    "prioritarian": _prioritarian,
    "care": _care,
}


def optimal_allocation(problem: AllocationProblem, framework: str, *, leximin: bool = False,
                       time_limit: float | None = None) -> np.ndarray:
    """The ``(n, R)`` allocation ``framework`` would choose alone (see ``FRAMEWORKS``).

    Exact (MILP, HiGHS, status checked) for the five optimising frameworks; the libertarian one is the
    entitlement procedure :func:`entitlement_allocation`. ``leximin`` only affects ``rawlsian``: off
    (default) it maximises RMG then ESG; on, it refines RMG to the full leximin order before ESG
    (exact, n+1 MILPs, 3-6x slower; see docs/performance.md).
    """
    get_framework(framework)
    if framework == "libertarian":
        return entitlement_allocation(problem)
    m = AllocationMILP(problem, time_limit=time_limit)
    if framework == "rawlsian":
        return _rawlsian(m, leximin=leximin)
    return SOLVERS[framework](m)


def framework_optima(problem: AllocationProblem, frameworks: list[str] | None = None,
                     **kwargs: object) -> dict[str, np.ndarray]:
    """``{framework: optimal allocation}`` for the given frameworks (default: all six)."""
    from fairarena.allocation.welfare import FRAMEWORKS

    names = list(frameworks) if frameworks is not None else list(FRAMEWORKS)
    return {f: optimal_allocation(problem, f, **kwargs) for f in names}  # type: ignore[arg-type]
