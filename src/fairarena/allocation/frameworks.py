"""The six ethical frameworks as one registry: each entry carries its metric (the key in
:data:`~fairarena.allocation.metrics.METRICS` that scores it, and that its optimum optimises), the
paper's reported metric where it differs, and its exact optimal-allocation solver.

>>> from fairarena.allocation.frameworks import FRAMEWORKS
>>> FRAMEWORKS.get("egalitarian").metric, FRAMEWORKS.get("egalitarian").paper_metric
('gini_cnss', 'gini')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal

import numpy as np

from fairarena.allocation.milp import AllocationMILP, Expr, add_gini_bound
from fairarena.allocation.problem import AllocationProblem
from fairarena.registry import Registry

__all__ = [
    "Framework",
    "FRAMEWORKS",
    "get_framework",
    "optimal_allocation",
    "framework_optima",
    "entitlement_allocation",
]

Solver = Callable[..., np.ndarray]


@dataclass(frozen=True)
class Framework:
    """An ethical framework: its name, the metric its optimum optimises and that scores it (with the
    metric's direction), the metric the paper reports for it, a label, its objective in words and its
    exact solver ``solve(problem, **options) -> (n, R) allocation``."""

    name: str
    metric: str
    direction: Literal["max", "min"]
    label: str
    objective: str
    solve: Solver
    paper_metric: str = ""

    def better(self, a: float, b: float) -> bool:
        """True when metric value ``a`` is strictly better than ``b`` for this framework."""
        return a > b if self.direction == "max" else a < b


def _milp(problem: AllocationProblem, time_limit: float | None = None, cnss: str | None = None,
          **_: Any) -> AllocationMILP:
    return AllocationMILP(problem, time_limit=time_limit, cnss=cnss)


def solve_utilitarian(problem: AllocationProblem, **opts: Any) -> np.ndarray:
    """Max ESG; tie-break max RMG."""
    m = _milp(problem, **opts)
    return m.lexicographic([(m.weighted_cnss(problem.survival), "max"), (m.min_cnss(), "max")])


def solve_prioritarian(problem: AllocationProblem, **opts: Any) -> np.ndarray:
    """Max DW-ESG; tie-break max ESG."""
    m = _milp(problem, **opts)
    return m.lexicographic([(m.weighted_cnss(problem.disadvantage * problem.survival), "max"),
                            (m.weighted_cnss(problem.survival), "max")])


def solve_care(problem: AllocationProblem, **opts: Any) -> np.ndarray:
    """Max VWCI; tie-break max ESG."""
    m = _milp(problem, **opts)
    return m.lexicographic([(m.weighted_cnss(problem.vulnerability), "max"),
                            (m.weighted_cnss(problem.survival), "max")])


def solve_rawlsian(problem: AllocationProblem, leximin: bool = False, **opts: Any) -> np.ndarray:
    """Max RMG; with ``leximin`` then the sums of the k smallest CNSS (Ogryczak), then ESG."""
    m = _milp(problem, **opts)
    expr, value = m.max_min_cnss()  # stage 1, exact (see AllocationMILP.max_min_cnss)
    kept = [(m.fix(expr, value, "max"), expr, value, "max")]
    stages: list[tuple[Expr, str] | Callable[[], tuple[Expr, str]]] = []
    if leximin:
        stages += [lambda k=k: (m.sum_smallest(k), "max") for k in range(2, problem.n)]
        stages.append((m.weighted_cnss(np.ones(problem.n)), "max"))
    stages.append((m.weighted_cnss(problem.survival), "max"))
    return m.lexicographic(stages, fixed=kept)


def solve_egalitarian(problem: AllocationProblem, gini_tolerance: float = 0.0, **opts: Any) -> np.ndarray:
    """Stage 1: min Gini(CNSS). Gini >= 0 and the empty allocation attains 0, so the optimum is 0 and
    the stage is the constraint ``Gini(CNSS) <= gini_tolerance`` (``n - 1`` equalities at 0); stage 2
    maximises mean CNSS, stage 3 ESG."""
    m = _milp(problem, **opts)
    add_gini_bound(m, gini_tolerance)
    mean = m.weighted_cnss(np.full(problem.n, 1.0 / problem.n))
    value = m.maximise(mean)  # exact (see AllocationMILP.maximise)
    if value <= 1e-9 and gini_tolerance <= 0:
        return problem.zeros()  # every CNSS is 0, so every needed amount is 0: the empty allocation
    kept = [(m.fix(mean, value, "max"), mean, value, "max")]
    return m.lexicographic([(m.weighted_cnss(problem.survival), "max")], fixed=kept)


def entitlement_allocation(problem: AllocationProblem, **_: Any) -> np.ndarray:
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


CITATION = "Chaki, Gourru & Velcin, arXiv 2604.13705 (2026), Table 2 and Appendix C"
FRAMEWORKS: Registry[Framework] = Registry("framework")
for _f in (
    Framework("utilitarian", "esg", "max", "ESG", "maximise ESG = sum_i s_i CNSS_i; tie-break: maximise RMG",
              solve_utilitarian, "esg"),
    Framework("egalitarian", "gini_cnss", "min", "Gini(CNSS)",
              "minimise the Gini of CNSS; tie-break: maximise mean CNSS, then ESG", solve_egalitarian, "gini"),
    Framework("rawlsian", "rmg", "max", "RMG",
              "maximise RMG = min_i CNSS_i; tie-break: maximise ESG (exact leximin optional)", solve_rawlsian, "rmg"),
    Framework("prioritarian", "dw_esg", "max", "DW-ESG",
              "maximise DW-ESG = sum_i w_i s_i CNSS_i; tie-break: maximise ESG", solve_prioritarian, "dw_esg"),
    Framework("care", "vwci", "max", "VWCI", "maximise VWCI = sum_i v_i CNSS_i; tie-break: maximise ESG",
              solve_care, "vwci"),
    Framework("libertarian", "var", "min", "Var",
              "entitlement: serve by urgency then survival, full needs while capacity lasts",
              entitlement_allocation, "var"),
):
    FRAMEWORKS.add(_f.name, _f, title=_f.label, description=_f.objective, citation=CITATION,
                   metric=_f.metric, paper_metric=_f.paper_metric, direction=_f.direction)


def get_framework(name: str) -> Framework:
    """Look a framework up by name (InputError naming ``framework`` and listing the choices)."""
    return FRAMEWORKS.get(name)


def optimal_allocation(problem: AllocationProblem, framework: str, *, leximin: bool = False,
                       time_limit: float | None = None, cnss: str | None = None,
                       **options: Any) -> np.ndarray:
    """The ``(n, R)`` allocation ``framework`` would choose alone (its registry entry's solver).

    Exact (MILP, HiGHS, status checked) for the five optimising frameworks under either CNSS form
    (``cnss`` overrides the problem's); the libertarian one is :func:`entitlement_allocation`.
    ``leximin`` only affects ``rawlsian`` (exact leximin refinement before ESG).
    """
    f = get_framework(framework)
    return f.solve(problem, leximin=leximin, time_limit=time_limit, cnss=cnss, **options)


def framework_optima(problem: AllocationProblem, frameworks: list[str] | None = None,
                     **kwargs: Any) -> dict[str, np.ndarray]:
    """``{framework: optimal allocation}`` for the given frameworks (default: all six)."""
    names = list(frameworks) if frameworks is not None else list(FRAMEWORKS)
    return {f: optimal_allocation(problem, f, **kwargs) for f in names}
