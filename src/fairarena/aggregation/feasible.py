"""Feasible-set rules: exact MILPs (HiGHS through :class:`fairarena.allocation.milp.AllocationMILP`)
over every feasible allocation, with the agents' normalised utilities as linear expressions.

Each agent ``a`` gets a variable ``u_a`` in [0, 1] bounded above by its normalised utility:
``u_a <= sum_i coef_i CNSS_i / best_a`` for the linear objectives (ESG, DW-ESG, VWCI) and
``u_a <= CNSS_i / best_a`` for every ``i`` for the Rawlsian one (RMG). Every rule below is increasing in
every ``u_a``, so at an optimum each bound is tight where it matters; the decision's utilities are
recomputed from the returned allocation anyway. Indivisible resources stay integral (the MILP's
``x`` variables).

The two minimised metrics:

* egalitarian, ``u = 1 - D / ((n - 1) S)`` with ``D = sum_{i<j} |CNSS_i - CNSS_j|`` and ``S = sum_i CNSS_i``
  (the Gini normalised by its worst value ``(n-1)/n``). ``u <= 1 - D/((n-1)S)`` is
  ``D <= (n - 1)(S - u S)``, bilinear in ``u`` and ``S``. Under the indicator CNSS form it is exact
  (:meth:`FeasibleModel._gini_exact`, products of ``u`` with the binary indicators); under the
  fractional form ``u`` is put on the grid
  ``sum_k 2^-k b_k`` (``GINI_BITS`` binaries ``b_k``) so that every product ``b_k S`` is linearised
  exactly (``0 <= w_k <= S``, ``w_k <= n b_k``, ``w_k >= S - n (1 - b_k)``). Exact up to the grid: the
  modelled utility is the true one rounded down to a multiple of ``2^-GINI_BITS``.
* libertarian, ``u = 1 - Var(CNSS) / W``: ``Var`` is a convex quadratic of CNSS, so
  ``Var(CNSS) <= W (1 - u)`` is enforced by tangent cuts added where the solution breaks it (cutting
  planes; each solve is repeated until every such agent's true variance is within ``VAR_TOL`` of its
  modelled bound).

Rules: utilitarian (max ``sum_a u_a``), leximin (max the sum of the ``k`` smallest ``u_a`` for
``k = 1..N`` in turn, Ogryczak & Sliwinski 2006; with an exact egalitarian agent the max-min stage by
Dinkelbach's iteration and a blocked egalitarian agent held by a linear row, :func:`_leximin`), Nash bargaining (max ``sum_a log(u_a - d_a)``, the
log by tangent cuts refined until every agent's cut overestimates its log by at most ``tol``),
Kalai-Smorodinsky (max ``lambda`` with ``u_a - d_a >= lambda (1 - d_a)``, ideal point 1 under the
normalisation, then max ``sum_a u_a``), maxmin over groups (max the smallest mean utility of a group,
then ``sum_a u_a``). After the last stage the indicator-CNSS MILPs serve needs as fully as capacity
allows (the triage solvers' fill stage).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from fairarena.aggregation.objectives import OBJECTIVES, milp_scale, utility_range
from fairarena.allocation.metrics import METRICS
from fairarena.allocation.milp import SMALL_MODEL_SEARCH, AllocationMILP, Expr, add_exprs
from fairarena.allocation.problem import AllocationProblem
from fairarena.errors import InputError

__all__ = ["FeasibleModel", "NASH_TOL", "solve_feasible"]

NASH_TOL = 1e-4
"""Outer-approximation tolerance of the Nash log: at the returned optimum every agent's tangent cut
overestimates ``log(u_a - d_a)`` by at most this (so the Nash objective is within ``N * NASH_TOL``)."""
NASH_MAX_ITER = 60
NASH_FLOOR = 1e-6
GINI_BITS = 10
GINI_LOWER_ONLY = True
"""Model ``w_k = b_k S`` by its lower bounds only (``w_k >= 0``, ``w_k >= S - n (1 - b_k)``): ``w_k``
only enters ``D <= (n-1)(S - sum_k 2^-k w_k)`` with a negative sign, so a solution can always lower
``w_k`` to ``b_k S``; the upper bounds are redundant rows (``False`` keeps them)."""
GINI_EXACT = True
"""Under the indicator CNSS form, model the egalitarian bound exactly without the grid: ``u S`` is a
sum of products ``u z`` of ``u`` with the binary need indicators, each exact as ``p >= u + z - 1``,
``p >= 0`` (``False``: the ``GINI_BITS`` grid, also used under the fractional form)."""
MAXMIN_RATIO = True
"""With an exact egalitarian agent, solve the max-min stage (leximin's first, KS, maxmin over single
agents) by Dinkelbach's iteration for a max-min of ratios: linear MILPs without the ``u z`` products
(``False``: one MILP with the products)."""
LEX_SKIP = True
"""Leximin (exact egalitarian path): when a stage's solution (max the sum ``F_k`` of the ``k``
smallest) gives every agent beyond its ``k`` smallest utility 1, the later stages' optima are implied,
``F_k + j`` for the sum of the ``k + j`` smallest (each added agent contributes at most 1 and this
solution attains it), so their rows are kept without solving (usually the final sum stage, the Rawlsian
agent being at 1; ``False``: every stage solved)."""
MAXMIN_TOL = 1e-7
MAXMIN_MAX_ITER = 30
VAR_TOL = 1e-7
VAR_MAX_CUTS = 400
VAR_EXACT = True
"""Under the indicator CNSS form, model the variance bound exactly by tangent rows on the finite\nset of CNSS differences (one MILP) instead of cutting planes (``False``: the cutting planes)."""
CNSS_VARS = True
"""One continuous variable ``c_i`` per patient, tied to its CNSS by an equality row, and every row built
on CNSS (the linear objectives, the minimum, the pairwise gaps, the Gini, the variance) written on
``c_i``: the same feasible set, far fewer nonzeros (``False``: each row repeats the indicator terms)."""
VAR_ON_GAPS = True
"""Under :data:`VAR_EXACT`, put the variance tangents on the pairwise gaps ``d_ij >= |CNSS_i - CNSS_j|``
(shared with the Gini) at the non-negative grid values only (``False``: on ``CNSS_i - CNSS_j`` at
every value of either sign); see :meth:`FeasibleModel._var_exact`."""


HIGHS_OPTIONS: dict[str, bool | int | float] = SMALL_MODEL_SEARCH
"""HiGHS options of every feasible-set MILP (:attr:`AllocationMILP.highs_options`): the primal
heuristics off (on a standard cohort's models, a few dozen binaries, the RINS/RENS sub-MIPs took most of
a solve and branch and bound finds the optimum at once) and branching on pseudo-costs without strong
branching first. They change the search, not the proof: the same ``mip_rel_gap`` (1e-9), and the same
six utilities on standard cohorts 0-19 (``benchmarks/bench_aggregation.py``). ``{}``: HiGHS's defaults."""


class _CutMILP(AllocationMILP):
    """An allocation MILP whose solves add variance tangent cuts until they hold (see module doc)."""

    var_agents: list[tuple[int, float]]

    @property
    def highs_options(self) -> dict[str, bool | int | float]:  # type: ignore[override]
        return HIGHS_OPTIONS

    def cnss_values(self, sol: np.ndarray) -> np.ndarray:
        return np.array([sum(v * sol[k] for k, v in e.items()) for e in self.cnss])

    def var_cut(self, u: int, W: float, c: np.ndarray) -> None:
        """Tangent of ``Var`` at CNSS vector ``c``: ``Var(c) + g (CNSS - c) <= W (1 - u)``."""
        n = self.problem.n
        var = float(c.var())
        g = 2.0 * c / n - 2.0 * c.sum() / n**2
        expr = add_exprs(*((float(gi), e) for gi, e in zip(g, self.cnss)), (W, {u: 1.0}))
        self.add_row(expr, hi=W - var + float(g @ c))

    def solve(self, objective: Expr, sense: str = "max") -> tuple[float, np.ndarray]:
        for _ in range(VAR_MAX_CUTS):
            value, sol = super().solve(objective, sense)
            c = self.cnss_values(sol)
            var = float(c.var())
            added = False
            for u, W in getattr(self, "var_agents", []):
                if var > W * (1.0 - float(sol[u])) + VAR_TOL:
                    self.var_cut(u, W, c)
                    added = True
            if not added:
                return value, sol

        from fairarena.errors import SolverError

        raise SolverError(f"variance cuts did not converge within {VAR_MAX_CUTS} solves")


class FeasibleModel:
    """An :class:`AllocationMILP` with one utility variable per agent."""

    def __init__(self, problem: AllocationProblem, objectives: Sequence[str], names: Sequence[str],
                 time_limit: float | None = None, seeds: np.ndarray | None = None) -> None:
        for a, nm in enumerate(objectives):
            if not OBJECTIVES.get(nm).milp:
                raise InputError(f"agents[{a}].objective", nm,
                                 "an objective with an exact linear form for the feasible-set rules ("
                                 + ", ".join(OBJECTIVES.names(where=lambda e: bool(e.obj.milp)))
                                 + "); use a candidate-set rule for this one")
        self.problem = problem
        self.objectives = list(objectives)
        self.gini_rows: list[tuple[int, int, Expr]] = []  # (agent, product row, S) of exact egalitarian agents
        self._var_pairs: list[tuple[float, Expr]] | None = None
        self.m = _CutMILP(problem, time_limit=time_limit)
        self.m.var_agents = []
        self.z_cnss: list[Expr] = [dict(c) for c in self.m.cnss]  # CNSS in the x / indicator variables
        if CNSS_VARS:
            cvars: list[Expr] = []
            for c in self.z_cnss:
                v = self.m.add_var(0.0, 1.0)
                self.m.add_row(add_exprs((1.0, {v: 1.0}), (-1.0, c)), lo=0.0, hi=0.0)
                cvars.append({v: 1.0})
            self.m.cnss = cvars
        self.u: list[int] = []
        for nm in objectives:
            obj = OBJECTIVES.get(nm)
            worst, best = utility_range(problem, nm)
            scale = milp_scale(problem, nm) if obj.direction == "max" else 1.0
            u = self.m.add_var(0.0, 1.0)
            self.u.append(u)
            if abs(best - worst) <= 1e-12:  # indifferent agent: utility 1 everywhere
                self.m.add_row({u: 1.0}, lo=1.0)
                continue
            if obj.milp == "linear":
                coef = METRICS.get(obj.metric).weights(problem)   # the metric's one linear form
                expr = self.m.weighted_cnss(np.asarray(coef) * scale)
                self.m.add_row(add_exprs((1.0, expr), (-1.0, {u: 1.0})), lo=0.0)
            elif obj.milp == "min":  # min CNSS
                for c in self.m.cnss:
                    self.m.add_row(add_exprs((scale, c), (-1.0, {u: 1.0})), lo=0.0)
            elif obj.milp == "gini":
                self._gini(u)
                if self.m.form == "indicator" and GINI_EXACT:
                    self.gini_rows.append((len(self.u) - 1, len(self.m.rows) - 1,
                                           add_exprs(*((1.0, c) for c in self.m.cnss))))
            elif problem.cnss == "indicator" and VAR_EXACT:  # variance: exact tangent rows (below)
                self._var_exact(u, float(worst - best))
            else:  # variance: cutting planes in _CutMILP.solve
                self.m.var_agents.append((u, float(worst - best)))
                for c in ([] if seeds is None else seeds):  # first cuts at the candidates' CNSS vectors
                    self.m.var_cut(u, float(worst - best), np.asarray(c, dtype=float))

    def _gini(self, u: int) -> None:
        m, n = self.m, self.problem.n
        S = add_exprs(*((1.0, c) for c in m.cnss))
        if m.form == "indicator" and GINI_EXACT:
            self._gini_exact(u, S)
            return
        grid: list[tuple[float, Expr]] = []
        prods: list[tuple[float, Expr]] = []
        for k in range(1, GINI_BITS + 1):
            b = m.add_var(0.0, 1.0, integer=True)
            w = m.add_var(0.0, np.inf)
            if not GINI_LOWER_ONLY:
                m.add_row(add_exprs((1.0, {w: 1.0}), (-1.0, S)), hi=0.0)               # w <= S
                m.add_row({w: 1.0, b: -float(n)}, hi=0.0)                              # w <= n b
            m.add_row(add_exprs((1.0, {w: 1.0}), (-1.0, S), (-float(n), {b: 1.0})), lo=-float(n))  # w >= S - n(1-b)
            grid.append((2.0**-k, {b: 1.0}))
            prods.append((2.0**-k, {w: 1.0}))
        m.add_row(add_exprs((1.0, {u: 1.0}), *((-c, e) for c, e in grid)), hi=0.0)     # u <= grid value
        ds = m.pairwise_gaps()
        # D <= (n - 1) (S - sum_k 2^-k w_k)
        m.add_row(add_exprs(*ds, (-(n - 1.0), S), *(((n - 1.0) * c, e) for c, e in prods)), hi=0.0)

    def _pair_abs(self) -> list[tuple[float, Expr]]:
        """``d_ij >= |CNSS_i - CNSS_j|`` for every pair (shared by every egalitarian agent)."""
        if getattr(self, "_abs_pairs", None) is None:
            self._abs_pairs = self.m.pairwise_gaps()
        return self._abs_pairs

    def _gini_exact(self, u: int, S: Expr) -> None:
        """``u <= 1 - D / ((n - 1) S)`` exactly under the indicator form, without a grid.

        The bound is ``D + (n - 1) u S <= (n - 1) S``. ``S = sum_i sum_r z_ir / k_i`` with binary
        indicators ``z_ir``, so ``u S = sum z_ir u / k_i`` and each product ``u z`` (``u`` in [0, 1],
        ``z`` binary) equals ``max(0, u + z - 1)``. It enters the row with a positive sign on the
        ``<=`` side, so its lower bounds ``p >= u + z - 1``, ``p >= 0`` suffice: a solution can always
        lower ``p`` to ``u z``. Exact: the modelled utility is the true one (no rounding); for
        ``S = 0`` (nobody served) the row reads ``0 <= 0`` and ``u`` may be 1 (Gini 0)."""
        m, n = self.m, self.problem.n
        uS: list[tuple[float, Expr]] = []
        for c in self.z_cnss:
            for z, coef in c.items():
                pz = m.add_var(0.0, np.inf)
                m.add_row({pz: 1.0, u: -1.0, z: -1.0}, lo=-1.0)  # p >= u + z - 1
                uS.append((coef, {pz: 1.0}))
        # D + (n - 1) u S - (n - 1) S <= 0
        m.add_row(add_exprs(*self._pair_abs(), *(((n - 1.0) * c, e) for c, e in uS), (-(n - 1.0), S)), hi=0.0)

    def _var_exact(self, u: int, W: float) -> None:
        """``Var(CNSS) <= W (1 - u)`` exactly under the indicator CNSS form, in one MILP.

        ``Var(c) = (1/n^2) sum_{i<j} (c_i - c_j)^2``. Under the indicator form ``c_i`` is a multiple of
        ``1/k_i`` (``k_i`` the resources ``i`` needs), so ``d = c_i - c_j`` takes finitely many values;
        ``e_ij >= g^2 + 2 g (d - g)`` for every such value ``g`` gives ``e_ij >= d^2`` with equality at
        every value ``d`` can take (the maximum of the tangents at the grid points is the square on the
        grid). So ``sum e_ij <= n^2 W (1 - u)`` is exactly the variance bound, with no cutting rounds.
        The pairs' ``e_ij`` are shared by every libertarian agent. Under :data:`VAR_ON_GAPS` the
        tangents are on ``d_ij >= |c_i - c_j|`` (the Gini's gaps) at the positive values ``g`` only:
        increasing in ``d_ij``, so ``e_ij >= d_ij^2 >= (c_i - c_j)^2`` on the grid, and both bounds
        only gain from ``d_ij`` at its least, ``|c_i - c_j|``: the same feasible set."""
        m, n = self.m, self.problem.n
        if getattr(self, "_var_pairs", None) is None:
            k = [int(v) for v in self.problem.n_needed]
            gaps = self._pair_abs() if VAR_ON_GAPS else None
            pairs: list[tuple[float, Expr]] = []
            for i in range(n):
                for j in range(i + 1, n):
                    e = m.add_var(0.0, np.inf)
                    vals = sorted({round(a / max(k[i], 1) - b / max(k[j], 1), 12)
                                   for a in range(k[i] + 1) for b in range(k[j] + 1)})
                    if gaps is not None:  # on d_ij >= |diff|: the positive values suffice (e >= 0 is a bound)
                        diff = gaps[len(pairs)][1]
                        vals = sorted({abs(g) for g in vals} - {0.0})
                    else:
                        diff = add_exprs((1.0, m.cnss[i]), (-1.0, m.cnss[j]))
                    for g in vals:  # e - 2 g d >= -g^2
                        m.add_row(add_exprs((1.0, {e: 1.0}), (-2.0 * g, diff)), lo=-g * g)
                    pairs.append((1.0, {e: 1.0}))
            self._var_pairs = pairs
        # sum e + n^2 W u <= n^2 W
        m.add_row(add_exprs(*self._var_pairs, (float(n * n) * W, {u: 1.0})), hi=float(n * n) * W)

    def max_min_ratio(self, d: np.ndarray, seeds: np.ndarray | None,
                      among: Sequence[int] | None = None, floor: float | None = None) -> float | None:
        """``max_x min_a (u_a(x) - d_a) / (1 - d_a)`` by Dinkelbach's iteration for generalised
        fractional programs (Crouzeix, Ferland & Schaible 1985), or ``None`` when it does not apply
        (no exact egalitarian agent, or some ``d_a >= 1``).

        The egalitarian utility is the ratio ``N / Dn`` of two linear forms in CNSS:
        ``(u - d)/(1 - d) = ((1 - d)(n - 1) S - D) / ((1 - d)(n - 1) S)``; every other agent's is linear
        (``Dn = 1``). Starting from ``t`` = the best value among ``seeds`` (the proposals) and the empty
        allocation, each step solves the linear MILP ``max s`` s.t. ``N_a - t Dn_a >= s Dn_a(x_prev)``
        (the product rows switched off) and moves ``t`` to the new solution's value; ``s <= MAXMIN_TOL``
        proves ``t`` optimal over every allocation with ``S > 0``, and the empty one (``S = 0``,
        egalitarian utility 1 by convention) is among the seeds. Exact to the MILP's tolerance.
        ``among``: take the minimum over these agents only (the others are held by rows already in
        the model; ``floor``: a seed counts only if every agent's ratio is at least ``floor``, i.e. it
        satisfies those rows). The maximising allocation is left in ``self.last_x``."""
        from fairarena.aggregation.objectives import utilities
        from fairarena.allocation.metrics import need_satisfaction

        if not self.gini_rows or np.any(d >= 1.0 - 1e-12):
            return None
        m, n, p = self.m, self.problem.n, self.problem
        xs = [p.zeros()] + ([] if seeds is None else list(np.asarray(seeds, dtype=float)))
        U = utilities(p, self.objectives, np.stack(xs))
        agents = list(range(len(self.u))) if among is None else list(among)
        R_all = (U - d[:, None]) / (1.0 - d[:, None])
        R = R_all[agents]
        ok = np.ones(R.shape[1], dtype=bool) if floor is None else R_all.min(0) >= floor - 1e-9
        if not ok.any():
            raise ValueError("max_min_ratio: no seed satisfies the floor")
        k = int(np.argmax(np.where(ok, R.min(0), -np.inf)))
        t = float(R[:, k].min())
        x_prev = xs[k]
        egal = {a: (row, S) for a, row, S in self.gini_rows}
        saved = {row: m.rows[row] for row, _ in egal.values()}
        for row in saved:
            m.rows[row] = (saved[row][0], -np.inf, np.inf)
        n_rows = len(m.rows)
        s = m.add_var(0.0, np.inf)  # the seed x_prev gives s = 0: s >= 0 is valid
        D = add_exprs(*self._pair_abs())
        try:
            for _ in range(MAXMIN_MAX_ITER):
                del m.rows[n_rows:]
                c_prev = float(np.asarray(need_satisfaction(p, x_prev)).sum())
                for a in agents:
                    u = self.u[a]
                    if a in egal:
                        S = egal[a][1]
                        w = (1.0 - d[a]) * (n - 1.0)
                        scale = w * c_prev if c_prev > 1e-12 else w
                        # ((1 - t) w S - D) / scale - s >= 0 (divided by scale: fewer HiGHS solution repairs)
                        m.add_row(add_exprs(((1.0 - t) * w / scale, S), (-1.0 / scale, D), (-1.0, {s: 1.0})),
                                  lo=0.0)
                    else:  # u - d - t (1 - d) - (1 - d) s >= 0
                        m.add_row({u: 1.0, s: -(1.0 - d[a])}, lo=float(d[a] + t * (1.0 - d[a])))
                value, sol = m.solve({s: 1.0}, "max")
                if value <= MAXMIN_TOL:
                    break
                x = m.allocation(sol)
                t_new = float(((utilities(p, self.objectives, x[None])[:, 0] - d) / (1.0 - d))[agents].min())
                if t_new <= t + 1e-12:  # no progress (tolerances): t is optimal to them
                    break
                t, x_prev = t_new, x
            else:
                from fairarena.errors import SolverError

                raise SolverError(f"max-min: Dinkelbach's iteration did not converge in {MAXMIN_MAX_ITER} steps")
        finally:
            del m.rows[n_rows:]
            for row, r in saved.items():
                m.rows[row] = r
            m.lb[s] = m.ub[s] = 0.0
        self.last_x = x_prev
        return t

    def fix_max_min(self, t: float, d: np.ndarray) -> list[tuple[int, Expr, float, str]]:
        """Keep a max-min optimum ``t``: ``u_a - d_a >= (t - e)(1 - d_a)`` for every agent, plus the
        linear form of ``u >= t - 1e-6`` for each exact egalitarian agent
        (``D <= (1 - L)(n - 1) S``, implied, tightening the relaxation). Returns the fixed rows in
        :meth:`AllocationMILP.lexicographic`'s ``fixed`` format."""
        m, n = self.m, self.problem.n
        fixed = []
        for a, u in enumerate(self.u):
            obj: Expr = {u: 1.0}
            val = float(t * (1.0 - d[a]) + d[a])
            fixed.append((m.fix(obj, val, "max"), obj, val, "max"))
        for a, _, S in self.gini_rows:
            L = t * (1.0 - d[a]) + d[a] - 1e-6
            m.add_row(add_exprs(*self._pair_abs(), (-(n - 1.0) * (1.0 - L), S)), hi=0.0)
        return fixed

    def total(self, weights: Sequence[float] | None = None) -> Expr:
        w = [1.0] * len(self.u) if weights is None else list(weights)
        return {u: float(wi) for u, wi in zip(self.u, w)}

    def sum_smallest(self, exprs: list[Expr], k: int) -> Expr:
        """Sum of the ``k`` smallest of ``exprs`` (at a maximisation optimum; LP dual form)."""
        t = self.m.add_var(-np.inf, np.inf)
        ds = [self.m.add_var(0.0, np.inf) for _ in exprs]
        for d, e in zip(ds, exprs):
            self.m.add_row(add_exprs((1.0, {d: 1.0, t: -1.0}), (1.0, e)), lo=0.0)
        return add_exprs((float(k), {t: 1.0}), *((-1.0, {d: 1.0}) for d in ds))


def _groups(names: Sequence[str], groups: Sequence[str] | None) -> dict[str, list[int]]:
    if not groups:
        return {nm: [a] for a, nm in enumerate(names)}
    out: dict[str, list[int]] = {}
    for a, g in enumerate(groups):
        out.setdefault(str(g), []).append(a)
    return out


def solve_feasible(rule: str, problem: AllocationProblem, objectives: Sequence[str], names: Sequence[str], *,
                   groups: Sequence[str] | None = None, disagreement: Sequence[float] | None = None,
                   weights: Sequence[float] | None = None, tol: float = NASH_TOL,
                   time_limit: float | None = None, candidates: np.ndarray | None = None,
                   ) -> tuple[np.ndarray, dict[str, Any]]:
    """The allocation of feasible-set rule ``rule`` and a note dict (see module doc). ``candidates``
    ``(K, n, R)`` (the proposals) seed the variance cuts."""
    seeds = None
    if candidates is not None:
        from fairarena.allocation.metrics import need_satisfaction

        seeds = need_satisfaction(problem, np.asarray(candidates, dtype=float))
    fm = FeasibleModel(problem, objectives, names, time_limit, seeds)
    m = fm.m
    n_agents = len(fm.u)
    info: dict[str, Any] = {}
    if rule == "utilitarian":
        return m.lexicographic([(fm.total(weights), "max")]), info
    if rule == "leximin":
        return _leximin(fm, candidates), info
    d = np.zeros(n_agents) if disagreement is None else np.asarray(disagreement, dtype=float)
    if rule in ("ks", "groups") and MAXMIN_RATIO:  # max-min of single agents: Dinkelbach (FeasibleModel)
        dd = d if rule == "ks" else np.zeros(n_agents)
        singles = rule == "ks" or all(len(v) == 1 for v in _groups(names, groups).values())
        t = fm.max_min_ratio(dd, candidates) if singles else None
        if t is not None:
            if rule == "groups":
                info["groups"] = {g: [names[a] for a in idx] for g, idx in _groups(names, groups).items()}
            return m.lexicographic([(fm.total(), "max")], fixed=fm.fix_max_min(t, dd)), info
    if rule == "ks":
        lam = m.add_var(-np.inf, np.inf)
        for a, u in enumerate(fm.u):
            m.add_row({u: 1.0, lam: -(1.0 - d[a])}, lo=float(d[a]))
        return m.lexicographic([({lam: 1.0}, "max"), (fm.total(), "max")]), info
    if rule == "groups":
        gs = _groups(names, groups)
        gexprs = [{fm.u[a]: 1.0 / len(idx) for a in idx} for idx in gs.values()]
        info["groups"] = {g: [names[a] for a in idx] for g, idx in gs.items()}
        return m.lexicographic([lambda: (fm.sum_smallest(gexprs, 1), "max"), (fm.total(), "max")]), info
    if rule == "nash":
        return _nash(fm, d, tol, info)
    raise InputError("rule", rule, "a feasible-set rule")


def _leximin(fm: FeasibleModel, candidates: np.ndarray | None) -> np.ndarray:
    """Leximin by Ogryczak & Sliwinski's stages (max the sum of the ``k`` smallest, ``k = 1..N-1``,
    then the sum). With exact egalitarian agents (:data:`MAXMIN_RATIO`) the first stage is
    :meth:`FeasibleModel.max_min_ratio` (value ``t1``), and each egalitarian agent at ``t1`` is tested
    for being *blocked*: if its utility cannot exceed ``t1`` while every agent keeps ``t1`` (one more
    Dinkelbach run), it equals ``t1`` in every stage-1 optimum and so comes first in every sorted
    utility vector there; it is then held by its linear row ``D <= (1 - t1)(n - 1) S`` alone (its
    ``u z`` products switched off) and the remaining stages run over the other agents, linear MILPs.
    With :data:`LEX_SKIP`, stages implied by a solution are not solved (see there)."""
    from fairarena.aggregation.objectives import utilities

    m, n_agents = fm.m, len(fm.u)
    zero = np.zeros(n_agents)
    t = fm.max_min_ratio(zero, candidates) if MAXMIN_RATIO else None
    if t is None:
        uexpr = [{u: 1.0} for u in fm.u]
        stages: list[Any] = [lambda k=k: (fm.sum_smallest(uexpr, k), "max") for k in range(1, n_agents)]
        return m.lexicographic(stages + [(fm.total(), "max")])
    x1 = fm.last_x
    fixed = fm.fix_max_min(t, zero)
    u1 = utilities(fm.problem, fm.objectives, x1[None])[:, 0]
    blocked = []
    for a, row, _ in fm.gini_rows:
        if u1[a] > t + 1e-7:
            continue  # above the minimum in a stage-1 optimum: not blocked
        if fm.max_min_ratio(zero, x1[None], among=[a], floor=t) <= t + 1e-7:
            blocked.append(a)
    for a in blocked:  # switch its products off: the linear row from fix_max_min holds it at t1
        expr, _, _ = m.rows[next(r for b, r, _ in fm.gini_rows if b == a)]
        m.rows[next(r for b, r, _ in fm.gini_rows if b == a)] = (expr, -np.inf, np.inf)
    rest = [a for a in range(n_agents) if a not in blocked]
    uexpr = [{fm.u[a]: 1.0} for a in rest]
    first = 1 if blocked else 2
    stages = [lambda k=k: (fm.sum_smallest(uexpr, k), "max") for k in range(first, len(rest))]
    stages.append(({fm.u[a]: 1.0 for a in rest}, "max"))
    ks = list(range(first, len(rest) + 1))   # stage j maximises the sum of the ks[j] smallest

    def implied(j: int, value: float, sol: np.ndarray) -> list[float] | None:
        k = ks[j]
        u = utilities(fm.problem, fm.objectives, m.allocation(sol)[None])[rest, 0]
        return [value + (k2 - k) for k2 in ks[j + 1:]] if np.all(np.sort(u)[k:] >= 1.0 - 1e-9) else None

    return m.lexicographic(stages, fixed=fixed, implied=implied if LEX_SKIP and m.form == "indicator" else None)


def _nash(fm: FeasibleModel, d: np.ndarray, tol: float, info: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
    m = fm.m
    ts: list[int] = []
    live = [a for a in range(len(fm.u)) if d[a] < 1.0 - 1e-12]
    info["dropped"] = [a for a in range(len(fm.u)) if a not in live]  # disagreement at the ideal

    def cut(a: int, t: int, at: float) -> None:  # t <= log(at) + (u - d - at) / at
        m.add_row({t: 1.0, fm.u[a]: -1.0 / at}, hi=math.log(at) - 1.0 - d[a] / at)

    for a in live:
        m.add_row({fm.u[a]: 1.0}, lo=float(d[a]))
        t = m.add_var(-np.inf, np.inf)
        ts.append(t)
        for at in (NASH_FLOOR, 1e-3, 1e-2, 0.1, 0.3, 0.6, 1.0):
            cut(a, t, at)
    obj: Expr = {t: 1.0 for t in ts}
    gap = np.inf
    for it in range(1, NASH_MAX_ITER + 1):
        value, sol = m.solve(obj, "max")
        gaps = []
        for a, t in zip(live, ts):
            s = max(float(sol[fm.u[a]]) - d[a], NASH_FLOOR)
            gaps.append(float(sol[t]) - math.log(s))
        gap = max(gaps, default=0.0)
        if gap <= tol:
            break
        for (a, t), g in zip(zip(live, ts), gaps):
            if g > tol:
                cut(a, t, max(float(sol[fm.u[a]]) - d[a], NASH_FLOOR))
    info.update(iterations=it, gap=gap, tol=tol)
    if gap > tol:
        from fairarena.errors import SolverError

        raise SolverError(f"Nash bargaining: outer approximation not within {tol} after {it} refinements")
    for a in live:  # keep every agent at least as well off, then a Pareto refinement (max sum u)
        m.add_row({fm.u[a]: 1.0}, lo=float(sol[fm.u[a]]) - 1e-9)
    return m.lexicographic([(fm.total(), "max")]), info
