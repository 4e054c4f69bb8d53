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

from fairarena.allocation.metrics import gini, need_satisfaction
from fairarena.allocation.milp import SMALL_MODEL_SEARCH, AllocationMILP, Expr, add_exprs, add_gini_bound
from fairarena.allocation.pareto import add_no_idle_rows, add_not_below_cut, dominating_allocation
from fairarena.allocation.problem import AllocationProblem
from fairarena.errors import InputError, SolverError
from fairarena.registry import Registry

__all__ = [
    "Framework",
    "FRAMEWORKS",
    "get_framework",
    "optimal_allocation",
    "framework_optima",
    "entitlement_allocation",
    "egalitarian_allocation",
    "EGALITARIAN_FORMS",
    "DEFAULT_EGALITARIAN",
    "check_egalitarian_form",
    "egalitarian_warning",
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


def _esg_tie_break(m: AllocationMILP) -> Expr:
    """The ESG tie-break of the rawlsian and egalitarian optima: ``sum_i s_i CNSS_i`` with the problem's
    survival, or the plain sum of CNSS on a problem without welfare data (what ESG is with every survival
    1): those two frameworks need no welfare data, so they solve any allocation problem."""
    p = m.problem
    return m.metric_expr("esg") if p.survival is not None else m.weighted_cnss(np.ones(p.n))


def solve_utilitarian(problem: AllocationProblem, **opts: Any) -> np.ndarray:
    """Max ESG; tie-break max RMG."""
    m = _milp(problem, **opts)
    return m.lexicographic([(m.metric_expr("esg"), "max"), (m.metric_expr("rmg"), "max")])


def solve_prioritarian(problem: AllocationProblem, **opts: Any) -> np.ndarray:
    """Max DW-ESG; tie-break max ESG."""
    m = _milp(problem, **opts)
    return m.lexicographic([(m.metric_expr("dw_esg"), "max"), (m.metric_expr("esg"), "max")])


def solve_care(problem: AllocationProblem, **opts: Any) -> np.ndarray:
    """Max VWCI; tie-break max ESG."""
    m = _milp(problem, **opts)
    return m.lexicographic([(m.metric_expr("vwci"), "max"), (m.metric_expr("esg"), "max")])


def solve_rawlsian(problem: AllocationProblem, leximin: bool = False, **opts: Any) -> np.ndarray:
    """Max RMG; with ``leximin`` then the sums of the k smallest CNSS (Ogryczak), then ESG."""
    m = _milp(problem, **opts)
    expr, value = m.max_min_cnss()  # stage 1, exact (see AllocationMILP.max_min_cnss)
    kept = [(m.fix(expr, value, "max"), expr, value, "max")]
    stages: list[tuple[Expr, str] | Callable[[], tuple[Expr, str]]] = []
    if leximin:
        stages += [lambda k=k: (m.sum_smallest(k), "max") for k in range(2, problem.n)]
        stages.append((m.weighted_cnss(np.ones(problem.n)), "max"))
    stages.append((_esg_tie_break(m), "max"))
    return m.lexicographic(stages, fixed=kept)


EGALITARIAN_FORMS: dict[str, str] = {
    "pareto": "no levelling down: the least unequal allocation (min Gini of CNSS) among those no feasible "
              "allocation Pareto-dominates in CNSS; tie-break max mean CNSS, then ESG (default)",
    "strict": "min Gini of CNSS over every feasible allocation (Gini 0: equal CNSS), then max mean CNSS, then "
              "ESG; may level down to the empty allocation (the paper-literal reading)",
}
DEFAULT_EGALITARIAN = "pareto"
EGALITARIAN_MAX_CUTS = 200
"""Safety cap on the no-levelling-down cut loop (standard cohorts need at most a handful; docs/aggregation.md)."""
FRACTIONAL_CUT_STEP = 1e-3
"""Under the fractional CNSS form a cut asks one patient for at least this much more CNSS (the
indicator form's step, one more need met, is exact; this one is a grid: see egalitarian_allocation)."""
GINI_TOL = 1e-9


def check_egalitarian_form(form: str) -> str:
    """``form`` if it is one of :data:`EGALITARIAN_FORMS`, else an InputError naming the allowed forms."""
    if form not in EGALITARIAN_FORMS:
        raise InputError("egalitarian", form, f"one of {', '.join(EGALITARIAN_FORMS)}")
    return form


STRICT_WARNING = ("egalitarian form 'strict' minimises inequality over every allocation and may level down "
                  "(treat nobody rather than some); the default form 'pareto' does not")


def egalitarian_warning(form: str) -> str | None:
    """The warning a command shows for egalitarian form ``form`` (``None`` for the default), after
    checking the form (InputError naming the allowed forms)."""
    return STRICT_WARNING if check_egalitarian_form(form) == "strict" else None


def _strict(problem: AllocationProblem, gini_tolerance: float = 0.0, **opts: Any) -> np.ndarray:
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
    return m.lexicographic([(_esg_tie_break(m), "max")], fixed=kept)


class _GapMILP(AllocationMILP):
    """An allocation MILP with pairwise CNSS gaps: searched with :data:`SMALL_MODEL_SEARCH`."""

    highs_options = SMALL_MODEL_SEARCH


def _gap_model(problem: AllocationProblem, front: list[np.ndarray], step: np.ndarray,
               time_limit: float | None) -> tuple[AllocationMILP, Expr, Expr]:
    """The min-Gini model: one variable per CNSS (tied by an equality row: far fewer nonzeros in the
    pairwise gaps), every vector below a known front point cut away; returns (model, sum of the
    pairwise gaps ``N``, sum of CNSS ``S``)."""
    m = _GapMILP(problem, time_limit=time_limit)
    add_no_idle_rows(m)
    tied = []
    for e in m.cnss:
        v = m.add_var(0.0, 1.0)
        m.add_row(add_exprs((1.0, e), (-1.0, {v: 1.0})), lo=0.0, hi=0.0)
        tied.append({v: 1.0})
    m.cnss = tied
    for w in front:
        add_not_below_cut(m, w, step)
    return m, add_exprs(*m.pairwise_gaps()), m.weighted_cnss(np.ones(problem.n))


def _fill_at(problem: AllocationProblem, x: np.ndarray, time_limit: float | None) -> np.ndarray:
    """Under the indicator form, the fill stage (needs that count served as fully as capacity allows)
    at ``x``'s CNSS vector, on the plain model; ``x`` itself under the fractional form."""
    if problem.cnss != "indicator":
        return x
    f = AllocationMILP(problem, time_limit=time_limit)
    for e, t in zip(f.cnss, need_satisfaction(problem, x)):
        f.add_row(e, lo=float(t) - 1e-9, hi=float(t) + 1e-9)
    return f.lexicographic([])


def _pareto_egalitarian(problem: AllocationProblem, time_limit: float | None, stats: dict[str, Any]) -> np.ndarray:
    """The ``pareto`` form (see :func:`egalitarian_allocation`); ``problem`` carries the CNSS form."""
    n = problem.n
    step = (1.0 / np.asarray(problem.n_needed, float) if problem.cnss == "indicator"
            else np.full(n, FRACTIONAL_CUT_STEP))
    first = dominating_allocation(problem, np.zeros(n), time_limit=time_limit)  # max needs met: undominated
    if first is None:  # nobody can be treated: the empty allocation is the only (undominated) answer
        return problem.zeros()
    front = [need_satisfaction(problem, first)]  # CNSS vectors of undominated allocations found
    best = first

    def check(c: np.ndarray) -> bool:
        """True when ``c`` is undominated; else its undominated dominator joins the front."""
        stats["rounds"] += 1
        stats["solves"] += 1
        w = dominating_allocation(problem, c, time_limit=time_limit)
        if w is None:
            return True
        if len(front) >= EGALITARIAN_MAX_CUTS:
            raise SolverError(f"egalitarian (pareto): no undominated answer after {len(front)} cuts")
        front.append(need_satisfaction(problem, w))
        return False

    # 1. the least Gini: Dinkelbach's F(g) = min N - g n S over the uncut set, g the least Gini of a
    #    known undominated allocation. F(g) >= 0 proves g least; a point below g is either undominated
    #    (the new g) or cut away with everything below its dominator.
    g = float(gini(front[0]))
    while g > GINI_TOL:
        m, gaps, total = _gap_model(problem, front, step, time_limit)
        value, sol = m.solve(add_exprs((1.0, gaps), (-g * n, total)), "min")
        stats["solves"] += 1
        if value >= -GINI_TOL * max(1.0, g * n):
            break
        x = m.allocation(sol)
        c = need_satisfaction(problem, x)
        if float(gini(c)) >= g - GINI_TOL:
            break  # solver tolerance: nothing strictly less unequal
        if check(c):
            g, best = float(gini(c)), x
    # 2. the tie-break among the least unequal: max mean CNSS, then ESG, over the uncut set at Gini <= g
    #    (every undominated allocation of Gini g survives the cuts); a dominated answer is cut, again.
    while True:
        m, gaps, total = _gap_model(problem, front, step, time_limit)
        m.add_row(add_exprs((1.0, gaps), (-(g + GINI_TOL) * n, total)), hi=0.0)
        try:
            x = m.lexicographic([(m.weighted_cnss(np.full(n, 1.0 / n)), "max"),
                                 (_esg_tie_break(m), "max")], fill=False)
        except SolverError:  # numerical trouble at the Gini bound: the undominated point already found
            x = best
            break
        stats["solves"] += 2
        if check(need_satisfaction(problem, x)):
            break
    stats["solves"] += 1
    return _fill_at(problem, x, time_limit)


def egalitarian_allocation(problem: AllocationProblem, form: str = DEFAULT_EGALITARIAN, *,
                           gini_tolerance: float = 0.0, time_limit: float | None = None,
                           cnss: str | None = None, info: dict[str, Any] | None = None,
                           **_: Any) -> np.ndarray:
    """The egalitarian framework's allocation, in one of :data:`EGALITARIAN_FORMS` (the one home of it:
    the council, ``triage optimal``, the debate agents' ideals and the scripted negotiator call this).

    ``form="pareto"`` (default, no levelling down): among the allocations that no feasible allocation
    Pareto-dominates in CNSS, the one with the smallest Gini of CNSS (the framework's own measure,
    metric ``gini_cnss``); ties broken by max mean CNSS, then max ESG. Never the empty allocation while
    some patient can be treated. Exact method (indicator form):

    1. solve the strict form (Gini 0, max mean CNSS): vector ``v``;
    2. if some feasible allocation dominates ``v`` (one MILP, :func:`~fairarena.allocation.pareto.dominating_allocation`,
       which returns an undominated dominator ``w``), cut away every CNSS vector ``<= w`` other than ``w``
       (:func:`~fairarena.allocation.pareto.add_not_below_cut`; ``v`` is among them) and solve min Gini
       over what is left (Dinkelbach's iteration on ``sum_{i<j} |c_i - c_j| - g n sum_i c_i``, started
       at the least Gini of the dominators found; then max mean, ESG); back to 2.

    A cut never removes an undominated vector (every vector it removes is dominated by ``w``), and each
    round removes the current answer, so the first undominated answer is the least unequal one. Under
    the fractional form a cut's "above ``w_i``" means at least :data:`FRACTIONAL_CUT_STEP` above: the
    answer is still checked undominated, and least unequal up to that grid.

    ``form="strict"``: today's paper-literal optimum (min Gini over every allocation, i.e. equal CNSS,
    then max mean, then ESG); it may level down to the empty allocation. ``gini_tolerance`` (strict only)
    relaxes Gini 0 to ``Gini <= gini_tolerance``. ``info``, if given, receives ``form``, ``rounds``
    (dominance checks), ``solves`` and ``gini``.
    """
    check_egalitarian_form(form)
    if gini_tolerance and form != "strict":
        raise InputError("gini_tolerance", gini_tolerance, "0 unless the egalitarian form is 'strict'")
    opts = {"time_limit": time_limit, "cnss": cnss}
    stats: dict[str, Any] = {"form": form, "rounds": 0, "solves": 1 if form == "strict" else 0}
    if form == "strict":
        x = _strict(problem, gini_tolerance, **opts)
    else:
        p = problem if cnss is None else problem.with_options(cnss=cnss)
        x = _pareto_egalitarian(p, time_limit, stats)
    if info is not None:
        info.update(stats, gini=float(gini(need_satisfaction(problem, x, cnss))))
    return x


def solve_egalitarian(problem: AllocationProblem, egalitarian: str = DEFAULT_EGALITARIAN,
                      gini_tolerance: float = 0.0, **opts: Any) -> np.ndarray:
    """The registry's egalitarian solver: :func:`egalitarian_allocation` in form ``egalitarian``."""
    return egalitarian_allocation(problem, egalitarian, gini_tolerance=gini_tolerance, **opts)


def entitlement_allocation(problem: AllocationProblem, **_: Any) -> np.ndarray:
    """Libertarian entitlement procedure (no optimisation, no redistribution).

    Patients are served in order of urgency (most urgent first), then survival (highest first), then
    their position in the cohort; each takes, for every resource it needs, ``min(need, what is left)``
    (whole units for indivisible resources, which capacities and needs already are).
    """
    urgency, survival = problem.welfare("urgency"), problem.welfare("survival")
    order = sorted(range(problem.n), key=lambda i: (-urgency[i], -survival[i], i))
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
              "minimise the Gini of CNSS among the allocations no feasible allocation Pareto-dominates in CNSS "
              "(no levelling down; option egalitarian='strict': over every allocation); tie-break: maximise "
              "mean CNSS, then ESG", solve_egalitarian, "gini"),
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
    ``leximin`` only affects ``rawlsian`` (exact leximin refinement before ESG); ``egalitarian=`` (a form
    of :data:`EGALITARIAN_FORMS`, default ``"pareto"``) and ``gini_tolerance`` only ``egalitarian``
    (:func:`egalitarian_allocation`).
    """
    f = get_framework(framework)
    return f.solve(problem, leximin=leximin, time_limit=time_limit, cnss=cnss, **options)


def framework_optima(problem: AllocationProblem, frameworks: list[str] | None = None,
                     **kwargs: Any) -> dict[str, np.ndarray]:
    """``{framework: optimal allocation}`` for the given frameworks (default: all six)."""
    names = list(frameworks) if frameworks is not None else list(FRAMEWORKS)
    return {f: optimal_allocation(problem, f, **kwargs) for f in names}
