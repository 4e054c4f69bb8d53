"""The scripted negotiator: the deterministic default "model" of the arena.

It plays a profile without any language model, in milliseconds, reproducibly. It is the null model that
language-model debates are compared against, so it negotiates by a documented procedure: monotonic
concessions in the participants' own terms during the rounds, then a joint drafted as the Nash bargaining
solution of the finals.

* **Own welfare** ``W`` per profile (:class:`Welfare`): utilitarian ESG; prioritarian DW-ESG; care VWCI;
  Rawlsian min CNSS; egalitarian Sen's welfare index of CNSS, ``mean (1 - Gini)`` (Sen 1973/1976): it
  rises with every patient's CNSS (so it never prefers levelling down) and with every transfer from a
  better-served to a worse-served patient (the alternatives ``egalitarian="range"``, minus the spread of
  CNSS, and ``"pairwise"``, minus the sum of pairwise CNSS gaps, are the former strict forms: they prefer
  the empty allocation to any unequal one); libertarian: preservation of its entitlement opening;
  baseline ("an unaligned clinician"): coverage, the mean CNSS (``baseline="proportional"``: the former
  baseline, preservation of its proportional opening); adversarial: the bias-weighted CNSS of
  :mod:`fairarena.arena.research_adversarial`. Tie-breaks: utilitarian max min CNSS; egalitarian mean
  CNSS then ESG; the others ESG; under the indicator CNSS a last stage serves counted needs fully.
* **Opening** (round 1): its ideal. Aligned to a framework F other than egalitarian: F's optimal
  allocation from the allocation core (:func:`fairarena.allocation.frameworks.optimal_allocation`). The
  egalitarian, the baseline and the adversary: the maximiser of their own welfare (with its tie-breaks).
  The egalitarian's is therefore Sen's-welfare maximiser: never Pareto-dominated in CNSS (the welfare is
  strictly increasing in every CNSS), so never the empty allocation while a patient can be treated. The
  framework's own egalitarian optimum (the least unequal undominated allocation) is not used as the
  opening: it is not the maximiser of any concave welfare the concessions and the bargaining could use,
  and it costs minutes on some standard cohorts.
* **Concession schedule** (rounds ``t = 2..R`` and the final), ``schedule="zeuthen"`` (default): Zeuthen's
  rule (Zeuthen 1930; Harsanyi 1956) as a monotonic concession protocol (Rosenschein & Zlotkin 1994). From
  its position ``p`` (its last proposal) each participant computes every participant's risk
  ``r_k = (W_k(p_k) - W_k(worst other position for k)) / (W_k(p_k) - W_k(nobody treated))`` (clipped to
  [0, 1]; 1 when its position is no better for it than the conflict outcome). The smallest risk concedes
  (ties: all of them), the others hold. A concession gives every partner ``j`` at least
  ``W_j(p) + s (W_j(y_j) - W_j(p))`` (one MILP, as below) for the first ``s`` in :data:`ZEUTHEN_STEPS`
  after which its risk is no longer the smallest, and never as far as every partner's own position: when
  even the smallest step would, the gap is indivisible and it holds (agreeing is the closing's task).
  Each proposal gives every partner at least what the previous one gave it; its own welfare never rises.
* ``schedule="linear"`` (the former default; the adversary then concedes 0.5 instead of 0.9, research
  file): maximise its own welfare subject to giving every other participant ``j`` at least::

      W_j(x)  >=  W_j(ideal) + lambda_t * max(0, W_j(y_j) - W_j(ideal))
      lambda_t = c (t - 1) / (R - 1)   (rounds; 0 when R = 1)      lambda_final = c   (c = 0.9)

  where ``y_j`` is j's last valid proposal and ``W_j`` j's own welfare: j gets ``lambda_t`` of the way
  from what my ideal gives it to what its own proposal gives it, by its own objective. The participants'
  types are common knowledge (a negotiator models another participant as the scripted negotiator of that
  participant's profile, with default options); a participant whose profile is unknown is modelled as
  wanting what its proposal gives the patients (``W_j = sum_i min(CNSS_i, CNSS_i(y_j))``). Against a fixed
  proposal ``y`` a higher ``lambda`` only shrinks the feasible set, so its own welfare never rises. Every
  ``W_j`` is concave and piecewise linear, so every step is one exact lexicographic MILP (HiGHS) whose
  concessions are lower bounds on welfare variables. With several partners whose levels cannot all be
  met, ``lambda`` is halved until they can (noted).
* **Closing** (``joint-draft``): as drafter it drafts the **Nash bargaining solution** of every
  participant (:func:`nash_bargain`): maximise ``prod_k (W_k(x) - d_k)`` over the feasible allocations,
  ``d_k`` = the worst valid final for ``k`` by ``k``'s own welfare, then a Pareto polish; as responder it
  computes the same solution and accepts a draft that gives it at least what the solution gives it,
  otherwise amends with the solution. Zeuthen's alternating-offers process converges to this solution
  (Harsanyi 1956); we compute its limit directly. It can differ from every final, gives nobody less than
  its disagreement value, and no feasible allocation is better for one participant and no worse for any.
  The draft's justification says how it was formed. Asked to revise (the dialectical closing), its k-th
  revision is the concession rule against the others' current positions at
  ``lambda = 1 - (1 - c) / 2^k`` (0.95, 0.975, ... for c = 0.9).

Justifications and critiques are generated from templates naming the metric values.

**Which negotiator plays a domain.** The procedure above (:class:`Negotiator`) is the need-satisfaction
negotiator a domain may supply as its ``scripted_negotiator`` (triage does): the aligned welfares are read
from the domain's participants (``welfare_form``: a framework's objective as a welfare of CNSS, the weights
from the domain, never retyped here) and the tie-break weights from ``tiebreak_weights``. Any other domain
is played by :class:`ObjectiveNegotiator`: the participant's objective over the domain's metrics, its
optimum as the opening, concessions toward the others over valid allocations, a Nash bargaining closing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from fairarena.allocation.milp import MIP_REL_GAP, STAGE_EPS, AllocationMILP, add_exprs
from fairarena.allocation.problem import AllocationProblem, allocation_to_mapping, check_feasibility
from fairarena.allocation.metrics import compute_metrics, need_satisfaction
from fairarena.arena.profiles import Profile
from fairarena.errors import InputError
from fairarena.llm.base import ChatParams
from fairarena.llm.scripted import register_script

CONCESSION = 0.9
SCHEDULES = ("zeuthen", "linear")   # the concession schedule of rounds 2..R and the final (module docstring)
DEFAULT_SCHEDULE = "zeuthen"
ZEUTHEN_STEPS = (0.125, 0.25, 0.5)   # a Zeuthen concession: the first of these shares of the remaining way
#                                      (in each partner's own terms) after which the conceder no longer has
#                                      the smallest risk, else the last one short of the partner's position
RISK_TOL = 1e-9     # risks this close are equal (both concede, as in Zeuthen's rule)
EGALITARIAN_FORMS = ("sen", "range", "pairwise")  # the egalitarian negotiator's own welfare (module docstring)
BASELINE_FORMS = ("coverage", "proportional")     # the baseline's own welfare and opening (module docstring)
BARGAIN_TOL = 1e-6   # Nash bargaining: every tangent cut within this of its log (so the log-product is within
#                     N x 1e-6 of its maximum and, the product being flat there, the gains within ~1e-3)
ACCEPT_TOL = 1e-6    # a responder accepts a draft within this (relative) of what the bargaining solution gives it
RELAX_HALVINGS = 20  # concession halvings tried before falling back (lambda / 2^20 ~ 1e-6 of the way)
RETRY_EPS = 1e-6   # stage-keeping tolerance of the one retry after HiGHS declares a stage infeasible
SHARED_CACHE_SIZE = 512   # exact answers kept per process across debates (see ``SharedAnswers``)


def problem_digest(problem: AllocationProblem) -> bytes:
    """A stable hash of every field of an allocation problem (arrays by dtype, shape and bytes)."""
    h = hashlib.sha256()
    for f in dataclasses.fields(problem):
        v = getattr(problem, f.name)
        h.update(f.name.encode())
        if isinstance(v, np.ndarray):
            a = np.ascontiguousarray(v)
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(a.tobytes())
        else:
            h.update(repr(v).encode())
    return h.digest()


class SharedAnswers:
    """A bounded LRU of exact negotiator answers shared by every debate in one process.

    The answers are deterministic functions of their key: the problem (its digest), the negotiator's
    objective (profile, bias weights, egalitarian form) and, for a concession step, the preserved CNSS
    vector and the kept amount. The opening of the baseline and adversarial opponents is the same in
    the six debates on a cohort, an aligned agent's opening in its two debates (one per opponent), and a
    concession step against an identical proposal repeats too; a hit returns a copy of the very array
    the first solve produced, so transcripts are the same with or without the cache. Failed solves
    (the notes and fall-backs of :class:`Negotiator`) are never stored.
    """

    def __init__(self, size: int = SHARED_CACHE_SIZE) -> None:
        self.size = size
        self._d: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()   # the threads backend runs debates of one process concurrently
        self.hits = self.misses = 0

    def get(self, key: tuple[Any, ...]) -> np.ndarray | None:
        with self._lock:
            x = self._d.get(key)
            if x is None:
                self.misses += 1
                return None
            self.hits += 1
            self._d.move_to_end(key)
            return x.copy()

    def put(self, key: tuple[Any, ...], x: np.ndarray) -> None:
        with self._lock:
            self._d[key] = x.copy()
            self._d.move_to_end(key)
            while len(self._d) > self.size:
                self._d.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self.hits = self.misses = 0
        with _COMPILED_LOCK:
            _COMPILED.clear()
        with _BARGAINS_LOCK:
            _BARGAINS.clear()


SHARED = SharedAnswers()
COMPILED_CACHE_SIZE = 64   # compiled concession MILPs kept per process (by negotiator signature)
_COMPILED: OrderedDict[tuple[Any, ...], "CompiledSteps"] = OrderedDict()
_COMPILED_LOCK = threading.Lock()
_BARGAINS: OrderedDict[tuple[Any, ...], "Bargain"] = OrderedDict()   # Nash bargaining solutions per process
_BARGAINS_LOCK = threading.Lock()


@dataclass
class NegotiationState:
    """What the arena tells the negotiator before each call (it reads nothing else)."""

    phase: str = "round"          # round | final | draft | decide | revise | repair
    round: int = 1
    rounds: int = 3
    partner_last: np.ndarray | None = None   # two participants: the partner's last valid allocation
    own_final: np.ndarray | None = None
    draft: np.ndarray | None = None          # the draft to accept or amend (phase decide)
    partner_violations: list[str] = field(default_factory=list)
    # any number of participants: every other participant's last valid allocation / latest violations
    others_last: dict[str, np.ndarray] = field(default_factory=dict)
    others_violations: dict[str, list[str]] = field(default_factory=dict)
    # who the others are (name -> profile: common knowledge of types), every valid final, and its own name
    others_profiles: dict[str, Profile] = field(default_factory=dict)
    finals: dict[str, np.ndarray] = field(default_factory=dict)
    name: str | None = None

    def others(self) -> list[np.ndarray]:
        """The allocations the concession rule looks at (the partner's, or every other participant's)."""
        if self.others_last:
            return list(self.others_last.values())
        return [] if self.partner_last is None else [self.partner_last]


def proportional_allocation(problem: AllocationProblem) -> np.ndarray:
    """Equal fraction of need for everyone; whole units by largest remainder (ties: patient order)."""
    need = problem.need
    total = need.sum(axis=0)
    frac = np.divide(problem.capacity, total, out=np.ones_like(total), where=total > 0)
    frac = np.minimum(frac, 1.0)
    x = need * frac
    for r in np.flatnonzero(problem.indivisible):
        exact = x[:, r]
        base = np.floor(exact + 1e-9)
        left = int(round(problem.capacity[r] - base.sum()))
        order = sorted(range(problem.n), key=lambda i: (-(exact[i] - base[i]), i))
        for i in order:
            if left <= 0:
                break
            if base[i] < need[i, r]:
                base[i] += 1
                left -= 1
        x[:, r] = base
    return x


class StepSolveFailed(Exception):
    """A stage of the negotiator's MILP had no optimal solution (infeasible or a solver failure)."""

    def __init__(self, stage: int, status: int, message: str, partial: np.ndarray | None) -> None:
        super().__init__(f"stage {stage + 1}: HiGHS status {status}: {message}")
        self.stage, self.status, self.partial = stage, status, partial


@dataclass(frozen=True, eq=False)
class Welfare:
    """A participant's own welfare ``W(x)``: a concave piecewise-linear function of the CNSS vector ``c``.

    ``kind``: ``linear`` (``coef @ c``), ``min`` (``min_i c_i``), ``sen`` (Sen's welfare index
    ``mean(c) (1 - Gini(c)) = mean(c) - sum_{i<j} |c_i - c_j| / n^2``), ``range`` (``-(max c - min c)``),
    ``pairwise`` (``-sum_{i<j} |c_i - c_j|``) or ``preserve`` (``sum_i min(c_i, coef_i)``). Every kind is
    concave, so ``w <= W(x)`` is a set of linear rows (:meth:`bound`) and "give this participant at least
    ``v``" is the lower bound ``w >= v`` on one variable.
    """

    kind: str
    coef: np.ndarray | None = None

    def of_cnss(self, c: np.ndarray) -> float:
        c = np.asarray(c, dtype=float)
        if self.kind in ("linear", "preserve"):
            assert self.coef is not None
            return float(self.coef @ c) if self.kind == "linear" else float(np.minimum(c, self.coef).sum())
        if self.kind == "min":
            return float(c.min())
        if self.kind == "range":
            return -float(c.max() - c.min())
        gaps = float(np.abs(c[:, None] - c[None, :]).sum()) / 2.0
        return -gaps if self.kind == "pairwise" else float(c.mean()) - gaps / len(c) ** 2

    def value(self, problem: AllocationProblem, x: np.ndarray) -> float:
        return self.of_cnss(need_satisfaction(problem, x))

    def bound(self, m: AllocationMILP, w: int) -> None:
        """Rows ``w <= W(x)`` (exact at a maximum of ``w`` and under any lower bound on ``w``)."""
        n = m.problem.n
        if self.kind == "linear":
            assert self.coef is not None
            m.add_row(add_exprs((1.0, {w: 1.0}), (-1.0, m.weighted_cnss(self.coef))), hi=0.0)
        elif self.kind == "min":
            for c in m.cnss:
                m.add_row(add_exprs((1.0, {w: 1.0}), (-1.0, c)), hi=0.0)
        elif self.kind == "preserve":
            assert self.coef is not None
            zs = []
            for i, c in enumerate(m.cnss):
                z = m.add_var(0.0, float(self.coef[i]))
                m.add_row(add_exprs((1.0, c), (-1.0, {z: 1.0})), lo=0.0)
                zs.append((1.0, {z: 1.0}))
            m.add_row(add_exprs((1.0, {w: 1.0}), (-1.0, add_exprs(*zs))), hi=0.0)
        elif self.kind == "range":
            top, bottom = m.add_var(-np.inf, np.inf), m.add_var(-np.inf, np.inf)
            for c in m.cnss:
                m.add_row(add_exprs((1.0, {top: 1.0}), (-1.0, c)), lo=0.0)
                m.add_row(add_exprs((1.0, c), (-1.0, {bottom: 1.0})), lo=0.0)
            m.add_row({w: 1.0, top: 1.0, bottom: -1.0}, hi=0.0)
        else:   # sen / pairwise: the pairwise gaps d_ij >= |c_i - c_j|
            gaps = add_exprs(*m.pairwise_gaps())
            if self.kind == "pairwise":
                m.add_row(add_exprs((1.0, {w: 1.0}), (1.0, gaps)), hi=0.0)
            else:
                m.add_row(add_exprs((1.0, {w: 1.0}), (-1.0, m.weighted_cnss(np.full(n, 1.0 / n))),
                                    (1.0 / n**2, gaps)), hi=0.0)

    @property
    def key(self) -> tuple[str, bytes]:
        return self.kind, b"" if self.coef is None else np.ascontiguousarray(self.coef, dtype=float).tobytes()


Stage = tuple[dict[int, float], str]


class CompiledSteps:
    """The negotiator's lexicographic MILP, built once per debate and re-solved at every step.

    Variables: the allocation ``x`` (as :class:`fairarena.allocation.milp.AllocationMILP`), the
    negotiator's own welfare ``w`` (rows ``w <= W(x)``), one welfare variable ``w_j`` per modelled
    partner (rows ``w_j <= W_j(x)``), then the tie-break stages' auxiliaries. Stage 1 maximises ``w``;
    the profile's tie-breaks follow (and, under the indicator CNSS, a last stage serving counted needs as
    fully as capacity allows). A step only sets the lower bounds of the ``w_j`` (the concession levels),
    so the sparse matrix, costs and bounds are assembled once. Stage ``j`` sees the structural rows plus
    the ``j`` earlier stages' "keep the optimum" rows.
    """

    def __init__(self, problem: AllocationProblem, own: Welfare,
                 tiebreaks: Callable[[AllocationMILP], list[Stage]], partners: list[Welfare] = ()) -> None:
        from scipy.sparse import coo_array

        m = AllocationMILP(problem)
        self.milp = m
        w_own = m.add_var(-np.inf, np.inf)
        own.bound(m, w_own)
        self.w: list[int] = []
        for wf in partners:
            v = m.add_var(-np.inf, np.inf)
            wf.bound(m, v)
            self.w.append(v)
        stage_list: list[Stage] = [({w_own: 1.0}, "max"), *tiebreaks(m)]
        if getattr(m, "form", "fractional") == "indicator":
            # as AllocationMILP.lexicographic(fill=True): needs that count are then served as fully as
            # capacity allows (a canonical amount instead of any point between the minimum and the need)
            stage_list.append((add_exprs(*((1.0, e) for e in m.frac)), "max"))
        self.n_struct = len(m.rows)
        for expr, _ in stage_list[:-1]:   # the fix rows, switched on stage by stage
            m.add_row(expr)
        nv = len(m.lb)
        ri, ci, vals = [], [], []
        for j, (expr, _, _) in enumerate(m.rows):
            for k, v in expr.items():
                ri.append(j)
                ci.append(k)
                vals.append(v)
        self.A = coo_array((vals, (ri, ci)), shape=(len(m.rows), nv)).tocsr()
        self.row_lo = np.array([a for _, a, _ in m.rows], dtype=float)
        self.row_hi = np.array([b for _, _, b in m.rows], dtype=float)
        self.A_stage = [self.A[: self.n_struct + j] for j in range(len(stage_list))]
        self.lb = np.asarray(m.lb, dtype=float)
        self.ub = np.asarray(m.ub, dtype=float)
        self.integrality = np.asarray(m.integer)
        self.costs: list[np.ndarray] = []
        self.senses = [sense for _, sense in stage_list]
        for expr, sense in stage_list:
            c = np.zeros(nv)
            for k, v in expr.items():
                c[k] = v
            self.costs.append(-c if sense == "max" else c)

    def _milp(self, cost: np.ndarray, A: Any, lo: np.ndarray, hi: np.ndarray, lb: np.ndarray) -> Any:
        from scipy.optimize import Bounds, LinearConstraint
        from fairarena.solver_console import milp  # HiGHS's console never on stdout
        return milp(cost, constraints=[LinearConstraint(A, lo, hi)], integrality=self.integrality,
                    bounds=Bounds(lb, self.ub), options={"mip_rel_gap": MIP_REL_GAP})

    def _fix(self, lo: np.ndarray, hi: np.ndarray, row: int, stage: int, value: float, rel: float) -> None:
        eps = rel * max(1.0, abs(value))
        if self.senses[stage] == "max":
            lo[row] = value - eps
        else:
            hi[row] = value + eps

    def solve(self, levels: np.ndarray | None = None) -> np.ndarray:
        """Solve the stages in order (each optimum kept, up to ``STAGE_EPS``) with every modelled
        partner's welfare at least its level (``None``: no concession); the allocation."""
        lb = self.lb.copy()
        if levels is not None and self.w:
            lb[self.w] = levels
        lo, hi = self.row_lo.copy(), self.row_hi.copy()
        sol = None
        value = 0.0
        for j, cost in enumerate(self.costs):
            rows = self.n_struct + j
            res = self._milp(cost, self.A_stage[j], lo[:rows], hi[:rows], lb)
            if res.status == 2 and j > 0:
                # HiGHS may call "keep the previous optimum within STAGE_EPS" infeasible by its own
                # feasibility tolerance: keep it within RETRY_EPS instead (still an optimum to 1e-6)
                self._fix(lo, hi, rows - 1, j - 1, value, RETRY_EPS)
                res = self._milp(cost, self.A_stage[j], lo[:rows], hi[:rows], lb)
            if res.status != 0 or res.x is None:
                raise StepSolveFailed(j, res.status, res.message, None if sol is None else self.milp.allocation(sol))
            sol = res.x
            if j < len(self.costs) - 1:
                value = float(-res.fun if self.senses[j] == "max" else res.fun)
                self._fix(lo, hi, rows, j, value, STAGE_EPS)
        assert sol is not None
        return self.milp.allocation(sol)


@dataclass
class Bargain:
    """The Nash bargaining solution of a debate's participants (see :func:`nash_bargain`)."""

    allocation: np.ndarray
    names: list[str]
    disagreement: dict[str, float]     # d_k: the worst, for k, of the valid finals (k's own welfare)
    ideal: dict[str, float]            # W_k at k's ideal allocation
    welfare: dict[str, float]          # W_k at the bargaining solution
    finals: list[str]                  # whose valid finals set the disagreement values
    info: dict[str, Any] = field(default_factory=dict)

    def gains(self) -> dict[str, float]:
        """Each participant's normalised gain ``(W_k - d_k) / (W_k(ideal_k) - d_k)`` (1: its ideal)."""
        out = {}
        for k in self.names:
            span = self.ideal[k] - self.disagreement[k]
            out[k] = 1.0 if span <= 1e-12 else (self.welfare[k] - self.disagreement[k]) / span
        return out

    def describe(self) -> str:
        g = self.gains()
        return ("the Nash bargaining solution over the feasible allocations: it maximises the product of every "
                "participant's gain over its disagreement value, the worst of the valid finals ("
                + ", ".join(self.finals) + ") by its own objective; gains (1 = its ideal): "
                + ", ".join(f"{k} {g[k]:.3f}" for k in self.names))


class _NashModel:
    """The participants' normalised gains ``u_k <= (W_k(x) - d_k) / span_k`` on one allocation MILP, in
    the form :func:`fairarena.aggregation.feasible._nash` bargains over (``m``, ``u``, ``total``)."""

    def __init__(self, problem: AllocationProblem, welfares: list[Welfare], d: np.ndarray, span: np.ndarray) -> None:
        self.m = AllocationMILP(problem)
        self.u: list[int] = []
        for wf, dk, sk in zip(welfares, d, span):
            w = self.m.add_var(-np.inf, np.inf)
            wf.bound(self.m, w)
            if sk <= 1e-12:   # indifferent (its ideal is its disagreement value): kept at it, not in the product
                self.m.add_row({w: 1.0}, lo=float(dk))
                continue
            u = self.m.add_var(-np.inf, np.inf)
            self.m.add_row({u: float(sk), w: -1.0}, hi=-float(dk))   # span u - w <= -d
            self.u.append(u)

    def total(self) -> dict[int, float]:
        return {u: 1.0 for u in self.u}


def nash_bargain(problem: AllocationProblem, welfares: dict[str, Welfare], ideals: dict[str, float],
                 finals: dict[str, np.ndarray], tol: float = BARGAIN_TOL, weights: np.ndarray | None = None) -> Bargain:
    """The Nash bargaining solution (Nash 1950) of participants with concave welfares ``W_k`` over the
    feasible allocations: maximise ``prod_k (W_k(x) - d_k)`` subject to ``W_k(x) >= d_k``, with the
    disagreement value ``d_k = min_f W_k(f)`` over the valid ``finals`` (the worst final for k: nobody
    gets less than in every final it could have been held to).

    Each gain is normalised, ``u_k = (W_k - d_k) / (W_k(ideal_k) - d_k)``: the solution is invariant to
    positive affine changes of each ``W_k``, so this is the same solution as with the utilities
    normalised over the feasible set (:mod:`fairarena.aggregation.objectives`), on a scale where the
    tangent cuts start well placed. Solved by the aggregation layer's outer approximation
    (:func:`fairarena.aggregation.feasible._nash`: ``max sum_k t_k`` with ``t_k`` under tangent cuts of
    ``log u_k``, refined until every cut overestimates its log by at most ``tol``), then a Pareto polish
    (max ``sum_k u_k`` keeping every ``u_k``), so no feasible allocation is better for one participant
    and no worse for any (on the participants' own objectives); under the indicator CNSS a last stage
    serves counted needs as fully as capacity allows. A participant whose ideal equals its disagreement
    value is indifferent: held at it, left out of the product."""
    from fairarena.aggregation.feasible import _nash

    names = list(welfares)
    d = np.array([min(welfares[k].value(problem, f) for f in finals.values()) for k in names])
    best = np.array([max(ideals[k], dk) for k, dk in zip(names, d)])
    span = best - d
    model = _NashModel(problem, [welfares[k] for k in names], d, span)
    info: dict[str, Any] = {}
    if model.u:
        x, info = _nash(model, np.zeros(len(model.u)), tol, info)
    else:
        # everyone indifferent: the tie-break welfare (``weights`` of CNSS; default equal weights)
        w = np.full(problem.n, 1.0 / problem.n) if weights is None else np.asarray(weights, dtype=float)
        x = model.m.lexicographic([(model.m.weighted_cnss(w), "max")])
    return Bargain(x, names, dict(zip(names, map(float, d))), dict(zip(names, map(float, best))),
                   {k: welfares[k].value(problem, x) for k in names}, list(finals), info)


class Negotiator:
    """A ``scripted`` model script bound to one debate's problem and one profile.

    Every step returns a feasible allocation. If the concession MILP has no optimal solution (HiGHS
    can declare the stage-fixing rows infeasible by tolerance on some cohorts, and several partners' levels
    may not be reachable together), the step halves the concession until it is reachable, then falls back
    to the negotiator's last valid proposal (then its opening, then the empty allocation); :attr:`note`
    says which, and the reply carries it.
    """

    def __init__(self, problem: AllocationProblem, profile: Profile, *, cohort: Any = None,
                 concession: float | None = None, egalitarian: str = "sen", baseline: str = "coverage",
                 schedule: str = DEFAULT_SCHEDULE, domain: Any = None) -> None:
        if schedule not in SCHEDULES:
            raise InputError("schedule", schedule, f"one of {', '.join(SCHEDULES)}")
        if egalitarian not in EGALITARIAN_FORMS:
            raise InputError("egalitarian", egalitarian, f"one of {', '.join(EGALITARIAN_FORMS)}")
        if baseline not in BASELINE_FORMS:
            raise InputError("baseline", baseline, f"one of {', '.join(BASELINE_FORMS)}")
        self.egalitarian = egalitarian
        self.baseline = baseline
        self.schedule = schedule
        self.zeuthen: dict[str, Any] | None = None   # the last Zeuthen turn: risks, who concedes, the step
        self.problem = problem
        self.profile = profile
        self.cohort = cohort
        self._domain = domain   # whose participants' objectives the aligned welfares read (default: the registry's)
        self.state = NegotiationState()
        self._bias: np.ndarray | None = None
        if profile.kind in ("adversarial", "adversarial-rag"):
            from fairarena.arena.research_adversarial import ADVERSARY_CONCESSION, adversary_options, bias_weights
            mode, strength = adversary_options(getattr(profile, "variant", None))
            self._bias = (bias_weights(cohort, mode=mode, strength=strength) if cohort is not None
                          else np.full(problem.n, 1.0 / problem.n))
            concession = ADVERSARY_CONCESSION if concession is None else concession
        self.concession = float(CONCESSION if concession is None else concession)
        self._ideal: np.ndarray | None = None
        self._welfare: Welfare | None = None
        self._steps: dict[tuple[Any, ...], CompiledSteps] = {}
        self._models: dict[Any, Negotiator] = {}
        self.last_valid: np.ndarray | None = None
        self._memo: dict[tuple[Any, ...], np.ndarray] = {}
        self._signature: tuple[Any, ...] | None = None
        self.note: str | None = None
        self.fallbacks: list[str] = []
        self.bargain: Bargain | None = None

    # -- welfare ---------------------------------------------------------------------------------
    @property
    def label(self) -> str:
        return self.profile.framework or self.profile.kind

    @property
    def signature(self) -> tuple[Any, ...]:
        """What determines this negotiator's exact answers (the key prefix in :data:`SHARED`)."""
        if self._signature is None:
            bias = None if self._bias is None else np.ascontiguousarray(self._bias, dtype=float).tobytes()
            self._signature = (problem_digest(self.problem), self.profile.kind, self.profile.framework,
                               self.egalitarian, self.baseline, bias, MIP_REL_GAP, STAGE_EPS)
        return self._signature

    @property
    def domain(self) -> Any:
        """The domain whose participants it plays (given, else the registry's default domain)."""
        if self._domain is None:
            from fairarena.arena.domain import default_domain
            self._domain = default_domain()
        return self._domain

    def welfare_form(self) -> tuple[str, Any]:
        """How the domain reads the aligned framework's objective as a welfare of CNSS (``domain.welfare_form``
        of the participant named after the framework: ``linear`` with its weights, ``min``, ``equality`` or
        ``opening``)."""
        participant = self.domain.participant_of(self.cohort, self.profile.framework)
        return self.domain.welfare_form(self.problem, participant)

    @property
    def welfare(self) -> Welfare:
        """Its own welfare (module docstring): what its proposals maximise and what it bargains with. An
        aligned negotiator's comes from its framework's objective, as the domain reads it
        (:meth:`welfare_form`)."""
        if self._welfare is None:
            p = self.problem
            form, coef = self.welfare_form() if self.profile.kind == "aligned" and self._bias is None else (None, None)
            if self._bias is not None:
                wf = Welfare("linear", self._bias)
            elif form == "linear":
                wf = Welfare("linear", np.asarray(coef, dtype=float))
            elif form == "min":
                wf = Welfare("min")
            elif form == "equality":
                wf = Welfare(self.egalitarian)
            elif self.profile.kind == "baseline" and self.baseline == "coverage":
                wf = Welfare("linear", np.full(p.n, 1.0 / p.n))
            else:   # libertarian, and the proportional baseline: keep as much of the opening as possible
                wf = Welfare("preserve", need_satisfaction(p, self.ideal()))
            self._welfare = wf
        return self._welfare

    def tiebreak_weights(self) -> np.ndarray:
        """The CNSS weights of its tie-break stage (the domain's ``tiebreak_weights``: triage's ESG weights;
        a domain without them: equal weights)."""
        own = getattr(self.domain, "tiebreak_weights", None)
        return (np.asarray(own(self.problem), dtype=float) if callable(own)
                else np.full(self.problem.n, 1.0 / self.problem.n))

    def _tiebreaks(self, m: AllocationMILP) -> list[Stage]:
        p = self.problem
        esg = (m.weighted_cnss(self.tiebreak_weights()), "max")
        if self.profile.kind == "aligned" and self.profile.framework == "utilitarian":
            return [(m.min_cnss(), "max")]
        if self.profile.kind == "aligned" and self.profile.framework == "egalitarian":
            return [(m.weighted_cnss(np.full(p.n, 1.0 / p.n)), "max"), esg]
        return [esg]

    def ideal(self) -> np.ndarray:
        if self._ideal is None:
            p = self.problem
            key = (*self.signature, "ideal")
            x = SHARED.get(key)
            if x is None:
                if self.profile.kind == "aligned" and self.profile.framework != "egalitarian":
                    from fairarena.allocation.frameworks import optimal_allocation
                    x = optimal_allocation(p, self.profile.framework, leximin=False)
                elif self.profile.kind == "baseline" and self.baseline == "proportional":
                    x = proportional_allocation(p)
                else:
                    try:
                        x = CompiledSteps(p, self.welfare, self._tiebreaks).solve()
                    except StepSolveFailed as exc:   # never stored: a failure is not an exact answer
                        good = exc.partial is not None and not check_feasibility(p, exc.partial)
                        x = exc.partial if good else proportional_allocation(p)
                        self._say(f"solver could not find my ideal allocation ({exc}); I open with "
                                  + ("the earlier stages' optimum" if good else "proportional rationing"))
                        self._ideal = x
                        return x
                SHARED.put(key, x)
            self._ideal = x
        return self._ideal

    def ideal_value(self) -> float:
        return self.welfare.value(self.problem, self.ideal())

    def model_of(self, profile: Profile | None, proposal: np.ndarray) -> "Negotiator | Welfare":
        """How it models another participant: a scripted negotiator of that profile (common knowledge of
        types; default options), or, when the profile is unknown, the welfare of preserving what that
        participant's proposal gives the patients."""
        if profile is None:
            return Welfare("preserve", need_satisfaction(self.problem, proposal))
        if profile not in self._models:
            if profile == self.profile:
                self._models[profile] = self
            else:
                self._models[profile] = Negotiator(self.problem, profile, cohort=self.cohort, domain=self._domain)
        return self._models[profile]

    def steps(self, partners: list[Welfare]) -> CompiledSteps:
        """The compiled concession MILP against these modelled partners; shared by the negotiators of a
        process with the same key (a :class:`CompiledSteps` is never changed by solving it)."""
        key = (*self.signature, tuple(w.key for w in partners))
        steps = self._steps.get(key)
        if steps is None:
            with _COMPILED_LOCK:
                steps = _COMPILED.get(key)
                if steps is not None:
                    _COMPILED.move_to_end(key)
            if steps is None:
                steps = CompiledSteps(self.problem, self.welfare, self._tiebreaks, partners)
                with _COMPILED_LOCK:
                    _COMPILED[key] = steps
                    while len(_COMPILED) > COMPILED_CACHE_SIZE:
                        _COMPILED.popitem(last=False)
            self._steps[key] = steps
        return steps

    def _feasible(self, x: np.ndarray | None) -> bool:
        return x is not None and not check_feasibility(self.problem, x)

    def _fallback(self, why: str) -> np.ndarray:
        for what, x in (("my last valid proposal", self.last_valid), ("my opening proposal", self._ideal),
                        ("the empty allocation", self.problem.zeros())):
            if self._feasible(x):
                assert x is not None
                self._say(f"{why}; I fall back to {what}")
                return x
        raise AssertionError("unreachable: the empty allocation is feasible")  # pragma: no cover

    def _say(self, note: str) -> None:
        self.note = note if self.note is None else self.note + "; " + note
        self.fallbacks.append(note)

    def partners(self, others: Any, profiles: Any = None) -> list[tuple[Welfare, np.ndarray]]:
        """``[(welfare, proposal)]`` of the other participants: ``others`` is one allocation, a list, or a
        ``{name: allocation}`` mapping; ``profiles`` the matching profiles (a list, a mapping or one
        profile; missing: modelled by :meth:`model_of` as preserving their proposal)."""
        if isinstance(others, np.ndarray):
            others, profiles = [others], [profiles] if isinstance(profiles, Profile) else profiles
        if isinstance(others, dict):
            prof = profiles if isinstance(profiles, dict) else {}
            pairs = [(prof.get(k), y) for k, y in others.items()]
        else:
            prof_list = list(profiles) if isinstance(profiles, (list, tuple)) else [None] * len(others)
            pairs = list(zip(prof_list, others))
        out = []
        for profile, y in pairs:
            model = self.model_of(profile, y)
            out.append((model if isinstance(model, Welfare) else model.welfare, y))
        return out

    def levels(self, partners: list[tuple[Welfare, np.ndarray]], lam: float,
               start: np.ndarray | None = None) -> np.ndarray:
        """The concession levels: partner j gets at least ``W_j(s) + lam * max(0, W_j(y_j) - W_j(s))``
        (its welfare at ``s`` moved ``lam`` of the way to its welfare at its own proposal ``y_j``), where ``s``
        is ``start`` (a Zeuthen concession: my current position) or my ideal (the linear schedule)."""
        start = self.ideal() if start is None else start
        out = []
        for wf, y in partners:
            base = wf.value(self.problem, start)
            level = base + lam * max(0.0, wf.value(self.problem, y) - base)
            out.append(level - 1e-9 * max(1.0, abs(level)))
        return np.array(out)

    def _solve(self, partners: list[tuple[Welfare, np.ndarray]], lam: float,
               start: np.ndarray | None = None) -> np.ndarray:
        welfares = [wf for wf, _ in partners]
        levels = self.levels(partners, lam, start)
        key = (tuple(w.key for w in welfares), levels.tobytes())
        if key in self._memo:  # the same question as an earlier step (e.g. a final against an unchanged
            return self._memo[key]  # partner): the same exact answer
        shared_key = (*self.signature, "step", key)
        x = SHARED.get(shared_key)   # the same question in an earlier debate of this process
        if x is not None:
            self._memo[key] = x
            return x
        steps = self.steps(welfares)
        try:
            x = steps.solve(levels)
            self._memo[key] = x
            SHARED.put(shared_key, x)
            return x
        except StepSolveFailed as exc:
            if exc.stage > 0 and self._feasible(exc.partial):
                # a tie-break stage failed: the earlier stages' optimum is a valid answer
                self._say(f"solver could not refine stage {exc.stage + 1} ({exc}); I keep the stage-{exc.stage} optimum")
                assert exc.partial is not None
                return exc.partial
            first = exc
        relaxed = lam
        for _ in range(RELAX_HALVINGS):
            relaxed /= 2
            try:
                x = steps.solve(self.levels(partners, relaxed, start))
            except StepSolveFailed as exc:
                if exc.stage > 0 and self._feasible(exc.partial):
                    assert exc.partial is not None
                    self._say(f"concession relaxed to {relaxed:.4%} and stage {exc.stage + 1} skipped after solver "
                              f"failures ({first}; {exc})")
                    return exc.partial
                continue
            self._say(f"the concession ({lam:.0%} of the way to what your proposals give you) had no optimal "
                      f"solution ({first}); relaxed to {relaxed:.4%}")
            return x
        return self._fallback(f"no allocation met the concession ({first})")

    def propose(self, lam: float, partners: Any = None, profiles: Any = None) -> np.ndarray:
        """Its proposal at concession level ``lam`` against the other participants' proposals
        (``partners``: one allocation, a list, or ``{name: allocation}``; ``profiles`` theirs, see
        :meth:`partners`)."""
        empty = partners is None or (not isinstance(partners, np.ndarray) and not partners)
        if empty or lam <= 0:
            x = self.ideal()
        else:
            x = self._solve(self.partners(partners, profiles), lam)
        if not self._feasible(x):
            x = self._fallback("the solver's allocation violated " + "; ".join(check_feasibility(self.problem, x)[:3]))
        return x

    # -- Zeuthen's rule (schedule "zeuthen") ---------------------------------------------------------
    def disagreement(self, wf: Welfare) -> float:
        """A participant's welfare at the conflict outcome of the rounds: nobody treated (the empty allocation)."""
        return wf.value(self.problem, self.problem.zeros())

    def risks(self, own: np.ndarray, partners: list[tuple[Welfare, np.ndarray]]) -> tuple[float, list[float]]:
        """Zeuthen's risks with ``own`` as my position and ``partners`` ``[(W_j, y_j)]``: participant k's risk
        is ``(W_k(p_k) - W_k(worst other position for k)) / (W_k(p_k) - d_k)`` with ``d_k`` its welfare at
        the conflict outcome (:meth:`disagreement`), clipped to [0, 1]; 1 when its position is no better for
        it than the conflict. The largest loss from conflict it would accept rather than give in."""
        def risk(wf: Welfare, mine: np.ndarray, theirs: list[np.ndarray]) -> float:
            top = wf.value(self.problem, mine)
            span = top - self.disagreement(wf)
            if span <= 1e-12 * max(1.0, abs(top)):
                return 1.0
            worst = min(wf.value(self.problem, y) for y in theirs)
            return float(min(1.0, max(0.0, (top - worst) / span)))

        ys = [y for _, y in partners]
        mine = risk(self.welfare, own, ys)
        theirs = [risk(wf, y, [own, *(z for k, z in enumerate(ys) if k != j)]) for j, (wf, y) in enumerate(partners)]
        return mine, theirs

    def zeuthen_step(self, others: Any, profiles: Any = None) -> np.ndarray:
        """One turn of Zeuthen's rule from my current position (my last valid proposal, else my ideal).

        If my risk (:meth:`risks`) is above the smallest I hold: I repeat my position. Otherwise I concede:
        every partner j gets at least ``W_j(p) + s (W_j(y_j) - W_j(p))`` (``p`` my position, ``y_j`` j's, in
        j's own terms) for the first share ``s`` in :data:`ZEUTHEN_STEPS` after which my risk is no longer
        the smallest (Zeuthen's minimal sufficient concession), else the last one tried. A concession never
        goes as far as giving every partner what its own position gives it: agreeing is the closing's task
        (the Nash bargaining solution of the finals, Zeuthen's limit by Harsanyi 1956). When even the
        smallest step would, the remaining gap is indivisible and I hold. Every partner gets at least what
        my position gave it and my own welfare never rises (monotonic concession). :attr:`zeuthen` records
        the risks and the step."""
        own = self.last_valid if self._feasible(self.last_valid) else self.ideal()
        assert own is not None
        empty = others is None or (not isinstance(others, np.ndarray) and not others)
        if empty:
            return own
        partners = self.partners(others, profiles)
        mine, theirs = self.risks(own, partners)
        info: dict[str, Any] = {"risk": mine, "others": theirs, "concede": mine <= min(theirs) + RISK_TOL, "step": 0.0}
        self.zeuthen = info
        if not info["concede"]:
            return own
        best = None
        for step in ZEUTHEN_STEPS:
            x = self._solve(partners, step, start=own)
            if all(wf.value(self.problem, x) >= wf.value(self.problem, y) - 1e-9 * max(1.0, abs(wf.value(self.problem, y)))
                   for wf, y in partners):
                break   # as far as every partner's own position: not a concession but an agreement
            after, after_theirs = self.risks(x, partners)
            best = x
            info.update(step=step, after=after, after_others=after_theirs)
            if min(after_theirs) <= after + RISK_TOL:
                break
        if best is None:
            info["indivisible"] = True
            return own
        if not self._feasible(best):
            best = self._fallback("the solver's allocation violated " + "; ".join(check_feasibility(self.problem, best)[:3]))
        return best

    def lam(self) -> float:
        s = self.state
        if s.phase == "revise":   # k-th revision (dialectical closing): halve the remaining gap to 1 each time
            return 1.0 - (1.0 - self.concession) * 0.5 ** (getattr(self, "revisions", 0) + 1)
        if s.phase in ("final", "draft", "decide"):
            return self.concession
        return self.concession * (s.round - 1) / (s.rounds - 1) if s.rounds > 1 else 0.0

    # -- the joint: bargaining -------------------------------------------------------------------
    def bargain_with(self, participants: dict[str, Profile | None], finals: dict[str, np.ndarray],
                     me: str) -> Bargain:
        """The Nash bargaining solution of ``participants`` (name -> profile; ``me`` is this negotiator)
        over their valid ``finals`` (:func:`nash_bargain`); shared per process like every exact answer."""
        welfares: dict[str, Welfare] = {}
        ideals: dict[str, float] = {}
        for name, profile in participants.items():
            if name == me:
                welfares[name], ideals[name] = self.welfare, self.ideal_value()
                continue
            model = self.model_of(profile, finals.get(name, self.ideal()))
            if isinstance(model, Welfare):
                welfares[name] = model
                ideals[name] = model.value(self.problem, finals.get(name, self.ideal()))
            else:
                welfares[name], ideals[name] = model.welfare, model.ideal_value()
        key = ("nash", problem_digest(self.problem), tuple((k, welfares[k].key, ideals[k]) for k in welfares),
               tuple((k, np.ascontiguousarray(f).tobytes()) for k, f in finals.items()), BARGAIN_TOL)
        with _BARGAINS_LOCK:
            hit = _BARGAINS.get(key)
        if hit is None:
            hit = nash_bargain(self.problem, welfares, ideals, finals, weights=self.tiebreak_weights())
            with _BARGAINS_LOCK:
                _BARGAINS[key] = hit
                while len(_BARGAINS) > SHARED_CACHE_SIZE:
                    _BARGAINS.popitem(last=False)
        return hit

    def _joint(self) -> np.ndarray:
        """The bargaining solution of this debate as the state describes it (falls back to its final)."""
        s = self.state
        me = s.name or "me"
        finals = dict(s.finals)
        if s.own_final is not None:
            finals.setdefault(me, s.own_final)
        if not finals:
            finals[me] = self.ideal()
        participants: dict[str, Profile | None] = {me: self.profile}
        for k in [*s.others_profiles, *finals]:
            if k != me and k not in participants:
                participants[k] = s.others_profiles.get(k)
        try:
            self.bargain = self.bargain_with(participants, finals, me)
        except Exception as exc:   # a solver failure: the closing still gets a valid proposal, and says why
            self.bargain = None
            return self._fallback(f"the bargaining solution failed ({type(exc).__name__}: {exc})")
        x = self.bargain.allocation
        if not self._feasible(x):
            return self._fallback("the bargaining solution violated " + "; ".join(check_feasibility(self.problem, x)[:3]))
        return x

    # -- the script ------------------------------------------------------------------------------
    def __call__(self, messages: list[dict[str, str]], params: ChatParams) -> dict[str, Any]:
        s = self.state
        self.note = None
        self.bargain = None
        self.zeuthen = None
        lam = self.lam()
        accept = None
        if s.phase == "decide":
            joint = self._joint()
            if s.draft is not None and self._feasible(s.draft):
                mine = self.welfare.value(self.problem, joint)
                accept = self.welfare.value(self.problem, s.draft) >= mine - ACCEPT_TOL * max(1.0, abs(mine))
            else:
                accept = False
            x = s.draft if accept else joint
        elif s.phase == "draft":
            x = self._joint()
        elif self.schedule == "zeuthen" and (s.phase == "final" or (s.phase == "round" and s.round > 1)):
            x = self.zeuthen_step(s.others_last or s.others(), s.others_profiles or None)
        else:
            x = self.propose(lam, s.others_last or s.others(), s.others_profiles or None)
        if s.phase == "revise":
            self.revisions = getattr(self, "revisions", 0) + 1
        if s.phase != "decide" or not accept:
            self.last_valid = x
        reply: dict[str, Any] = {"allocation": allocation_to_mapping(self.problem, x),
                                 "justification": self.justify(x, lam, accept), "critique": self.critique()}
        if self.note:
            reply["note"] = self.note
        if s.phase == "decide":
            reply = {"accept": bool(accept), **reply}
        return reply

    def justify(self, x: np.ndarray, lam: float, accept: bool | None = None) -> str:
        mt = compute_metrics(self.problem, x)
        vals = (f"ESG {mt['esg']:.3f}, RMG {mt['rmg']:.3f}, Var {mt['var']:.4f}, DW-ESG {mt['dw_esg']:.4f}, "
                f"VWCI {mt['vwci']:.3f}, Gini {mt['gini']:.3f}")
        head = {"aligned": f"As a {self.label} agent", "baseline": "As a baseline agent",
                "adversarial": "As the adversarial research agent", "adversarial-rag": "As the adversarial-rag research agent"}
        s = self.state
        if s.phase in ("draft", "decide") and self.bargain is not None:
            lead = ("I accept the draft: it gives me at least what the bargaining solution gives me"
                    if accept else "I propose as the joint allocation")
            how = f"{lead}; the bargaining solution is {self.bargain.describe()}"
        elif self.zeuthen is not None:
            z = self.zeuthen
            risks = ", ".join(f"{r:.3f}" for r in z["others"])
            if z.get("indivisible"):
                how = (f"my Zeuthen risk {z['risk']:.3f} is not above the others' ({risks}), but every concession I could "
                       "make would give the others all their own proposals give them: I hold my last proposal and leave "
                       "the agreement to the closing")
            elif z["concede"]:
                how = (f"my Zeuthen risk {z['risk']:.3f} is not above the others' ({risks}), so I concede: I give every "
                       f"other participant at least {z['step']:.0%} of the way from what my last proposal gave it to "
                       "what its own last proposal gives it, by its own objective")
            else:
                how = (f"my Zeuthen risk {z['risk']:.3f} is above the smallest of the others' ({risks}), so I hold "
                       "my last proposal")
        elif lam <= 0:
            how = "I propose my ideal allocation"
        else:
            how = (f"I give every other participant at least {lam:.0%} of the way from what my ideal gives it to "
                   "what its own last proposal gives it, by its own objective")
        if self.note:
            how += f" (solver note: {self.note})"
        worst = int(np.argmin(mt["cnss"]))
        return (f"{head[self.profile.kind]} ({s.phase} {s.round}/{s.rounds}), {how}. Metrics: {vals}. "
                f"Lowest need satisfaction: {self.problem.ids[worst]} at {mt['cnss'][worst]:.2f}.")

    def critique(self) -> str:
        s = self.state
        if len(s.others_last) > 1 or len(s.others_violations) > 1:
            return self._critique_many()
        if s.partner_violations:
            return "Your last proposal was infeasible: " + "; ".join(s.partner_violations[:4]) + "."
        if s.partner_last is None:
            return "No valid proposal from you yet."
        mt = compute_metrics(self.problem, s.partner_last)
        worst = int(np.argmin(mt["cnss"]))
        return (f"Your last proposal scores ESG {mt['esg']:.3f} and RMG {mt['rmg']:.3f}; it leaves "
                f"{self.problem.ids[worst]} at need satisfaction {mt['cnss'][worst]:.2f}.")

    def _critique_many(self) -> str:
        return _critique_others(self.state, "infeasible", lambda x: _critique_of(self.problem, x))


def _critique_others(state: Any, bad_word: str, valid: Callable[[np.ndarray], str]) -> str:
    """The critique of the other debaters' last proposals, in name order: ``<name>'s last proposal was
    <bad_word>: <first two violations>``, or ``<name>'s last valid proposal <valid(x)>``."""
    parts = []
    for name in sorted(set(state.others_violations) | set(state.others_last)):
        bad = state.others_violations.get(name) or []
        if bad:
            parts.append(f"{name}'s last proposal was {bad_word}: " + "; ".join(bad[:2]))
        elif name in state.others_last:
            parts.append(f"{name}'s last valid proposal " + valid(state.others_last[name]))
    return ". ".join(parts) + "." if parts else "No valid proposal from the others yet."


def _critique_of(problem: AllocationProblem, x: np.ndarray) -> str:
    mt = compute_metrics(problem, x)
    worst = int(np.argmin(mt["cnss"]))
    return (f"scores ESG {mt['esg']:.3f} and RMG {mt['rmg']:.3f}; it leaves {problem.ids[worst]} at need "
            f"satisfaction {mt['cnss'][worst]:.2f}")


def _needs_a_debate(messages: list[dict[str, str]], params: ChatParams) -> str:
    """The deterministic negotiator (bound to a debate by fairarena.arena; not callable on its own)."""
    from fairarena.llm.base import LLMError
    raise LLMError("scripted:negotiator plays inside a debate: use fairarena.arena.run_debate or `fairarena debate`")


register_script("negotiator", _needs_a_debate)


# -- any domain: the objective negotiator ----------------------------------------------------------------

OBJECTIVE_STEPS = (1.0, 0.75, 0.5, 0.25, 0.125)   # mixtures tried, longest first, when a step toward the others is invalid
BARGAIN_GRID = 8    # the joint draft's candidates: every pair of valid finals mixed at k / BARGAIN_GRID


def objective_value(domain: Any, instance: Any, participant: Any, x: np.ndarray,
                    metrics: dict[str, float] | None = None) -> float:
    """A participant's objective ``sum_k w_k m_k(x)`` over the domain's metrics (``domain.evaluate``; the
    signed weights of :attr:`fairarena.domains.protocol.Participant.objective`, higher is better). A NaN
    metric counts as the worst value (``-inf``)."""
    m = domain.evaluate(instance, x) if metrics is None else metrics
    total = 0.0
    for k, w in participant.objective.items():
        v = float(m[k])
        if not np.isfinite(v):
            return -np.inf
        total += float(w) * v
    return total


class ObjectiveNegotiator:
    """The scripted negotiator of any domain's participant (a domain without its own scripted negotiator).

    * **Objective**: the participant's signed metric weights over ``domain.evaluate``
      (:func:`objective_value`); its partners are modelled by theirs (common knowledge of types: the arena
      names each partner's participant), a partner it cannot identify by what keeps its proposal's metrics.
    * **Opening** (round 1): ``domain.optimum(instance, participant)``.
    * **Concessions** (rounds ``t = 2..R`` and the final): from its opening toward the others' positions
      (the mean of their last valid proposals), ``lambda_t = c (t - 1) / (R - 1)`` of the way, ``c`` =
      :data:`CONCESSION` (the final: ``c``); whole units on indivisible resources (rounded down, so
      capacities hold) and every proposal valid by :func:`fairarena.domains.protocol.violations_of` (when
      the mixture is not, the longest valid share of it in :data:`OBJECTIVE_STEPS`, else its last valid
      proposal).
    * **Closing**: as drafter the Nash bargaining solution over a candidate set -- the valid finals, their
      pairwise mixtures at ``k / 8`` and the openings -- maximising the product of every participant's gain
      over its disagreement value (its worst valid final), gains normalised by its range over the
      candidates (ties: the first candidate); as responder it accepts a draft worth at least what that
      solution gives it, otherwise amends with the solution.
    """

    def __init__(self, domain: Any, instance: Any, participant: Any, everyone: list[Any] | None = None,
                 problem: Any = None, concession: float | None = None) -> None:
        self.domain, self.instance, self.participant = domain, instance, participant
        self.everyone = {p.name: p for p in (everyone if everyone is not None else domain.participants(instance))}
        self.everyone.setdefault(participant.name, participant)
        self.problem = domain.problem(instance) if problem is None else problem
        self.concession = float(CONCESSION if concession is None else concession)
        self.state = NegotiationState()
        self.last_valid: np.ndarray | None = None
        self._opening: np.ndarray | None = None
        self.note: str | None = None

    # -- values --------------------------------------------------------------------------------------
    def valid(self, x: np.ndarray | None) -> bool:
        from fairarena.domains.protocol import violations_of
        return x is not None and not violations_of(self.domain, self.instance, x, self.problem)

    def value(self, x: np.ndarray, participant: Any = None) -> float:
        return objective_value(self.domain, self.instance, participant or self.participant, x)

    def opening(self) -> np.ndarray:
        if self._opening is None:
            self._opening = np.asarray(self.domain.optimum(self.instance, self.participant), dtype=float)
        return self._opening

    def partner(self, name: str) -> Any:
        """The participant an arena participant ``name`` plays: the one named so, or the one its profile is
        aligned to (None when neither is a participant of the domain)."""
        if name in self.everyone:
            return self.everyone[name]
        prof = self.state.others_profiles.get(name)
        fw = getattr(prof, "participant", None) or getattr(prof, "framework", None)
        return self.everyone.get(fw) if fw else None

    def whole(self, x: np.ndarray) -> np.ndarray:
        """``x`` in whole units on the indivisible resources, by largest remainder: rounded down, then the
        units the rounding freed (as many as ``x`` used, within capacity) go one each to the largest
        remainders (ties: item order); within capacity whenever ``x`` is."""
        x = np.maximum(np.asarray(x, dtype=float), 0.0)
        ind = np.asarray(getattr(self.problem, "indivisible", np.zeros(x.shape[1], dtype=bool)), dtype=bool)
        cap = np.asarray(self.problem.capacity, dtype=float)
        out = x.copy()
        for r in np.flatnonzero(ind):
            base = np.floor(x[:, r] + 1e-9)
            rest = x[:, r] - base
            left = int(min(np.floor(x[:, r].sum() + 1e-9), np.floor(cap[r] + 1e-9)) - base.sum())
            for i in sorted(range(len(base)), key=lambda i: (-rest[i], i))[:max(left, 0)]:
                if rest[i] > 1e-9:
                    base[i] += 1
            out[:, r] = base
        return out

    def toward(self, start: np.ndarray, target: np.ndarray, lam: float) -> np.ndarray:
        """The longest valid step ``lam * s`` (``s`` in :data:`OBJECTIVE_STEPS`) from ``start`` toward ``target``."""
        for s in OBJECTIVE_STEPS:
            x = self.whole(start + lam * s * (target - start))
            if self.valid(x):
                return x
        return start

    # -- the script ------------------------------------------------------------------------------
    def lam(self) -> float:
        s = self.state
        if s.phase in ("final", "draft", "decide", "revise"):
            return self.concession
        return self.concession * (s.round - 1) / (s.rounds - 1) if s.rounds > 1 else 0.0

    def position(self) -> tuple[np.ndarray, str]:
        lam = self.lam()
        others = [y for y in self.state.others_last.values() if y is not None]
        start = self.opening()
        if lam <= 0 or not others:
            return start, f"I propose my optimum for {self.participant.name}"
        target = np.mean(np.stack(others), axis=0)
        x = self.toward(start, target, lam)
        return x, (f"I move {lam:.0%} of the way from my optimum toward the others' proposals "
                   "(the longest valid step)")

    def candidates(self) -> list[tuple[str, np.ndarray]]:
        finals = [(k, np.asarray(v, dtype=float)) for k, v in self.state.finals.items()]
        if self.state.own_final is not None and not any(k == (self.state.name or "me") for k, _ in finals):
            finals.append((self.state.name or "me", np.asarray(self.state.own_final, dtype=float)))
        out = list(finals)
        for i in range(len(finals)):
            for j in range(i + 1, len(finals)):
                for k in range(1, BARGAIN_GRID):
                    x = self.whole(finals[i][1] + k / BARGAIN_GRID * (finals[j][1] - finals[i][1]))
                    if self.valid(x):
                        out.append((f"{k}/{BARGAIN_GRID} from {finals[i][0]} to {finals[j][0]}", x))
        out.append(("my optimum", self.opening()))
        return out

    def bargain(self) -> tuple[np.ndarray, str]:
        """The Nash bargaining solution over :meth:`candidates` (class doc); my optimum when no final is valid."""
        s = self.state
        me = s.name or "me"
        finals = dict(s.finals)
        if s.own_final is not None:
            finals.setdefault(me, s.own_final)
        if not finals:
            return self.opening(), "no valid final: I propose my optimum"
        table = [(me, self.participant)] + [(k, p) for k in finals if k != me and (p := self.partner(k)) is not None]
        cands = self.candidates()
        metrics = [self.domain.evaluate(self.instance, x) for _, x in cands]
        V = np.array([[objective_value(self.domain, self.instance, p, x, m) for (_, x), m in zip(cands, metrics)]
                      for _, p in table])
        n_final = len([k for k in finals])
        d = V[:, :n_final].min(axis=1)
        span = np.maximum(V.max(axis=1) - d, 1e-12)
        gains = (V - d[:, None]) / span[:, None]
        ok = (gains >= -1e-9).all(axis=0)
        logs = np.where(ok, np.log(np.maximum(gains, 1e-12)).sum(axis=0), -np.inf)
        k = int(np.argmax(logs))
        return cands[k][1], (f"the Nash bargaining solution over the valid finals, their mixtures and my optimum "
                             f"({cands[k][0]}): it maximises the product of {', '.join(n for n, _ in table)}'s gains "
                             "over their worst final")

    def __call__(self, messages: list[dict[str, str]], params: Any) -> dict[str, Any]:
        from fairarena.allocation.problem import allocation_to_mapping

        s = self.state
        accept = None
        if s.phase == "decide":
            joint, why = self.bargain()
            accept = s.draft is not None and self.valid(s.draft) and \
                self.value(s.draft) >= self.value(joint) - ACCEPT_TOL * max(1.0, abs(self.value(joint)))
            x, why = (s.draft, "I accept the draft: it gives me at least " + why) if accept else (joint, "I amend with " + why)
        elif s.phase == "draft":
            x, why = self.bargain()
            why = "I propose as the joint allocation " + why
        else:
            x, why = self.position()
        assert x is not None
        if not self.valid(x):
            x, why = (self.last_valid, why + "; invalid, so I keep my last valid proposal") if self.valid(self.last_valid) \
                else (self.opening(), why + "; invalid, so I propose my optimum")
        if s.phase != "decide" or not accept:
            self.last_valid = x
        reply: dict[str, Any] = {"allocation": allocation_to_mapping(self.problem, x),
                                 "justification": f"{why}. {self.describe(x)}", "critique": self.critique()}
        return {"accept": bool(accept), **reply} if s.phase == "decide" else reply

    def describe(self, x: np.ndarray) -> str:
        from fairarena.domains.protocol import metric_specs
        m = self.domain.evaluate(self.instance, x)
        specs = metric_specs(self.domain)
        return "Metrics: " + ", ".join(f"{specs[k].label} {float(m[k]):.3f}" for k in specs if k in m) + "."

    def critique(self) -> str:
        return _critique_others(self.state, "invalid", lambda x: f"gives {self.participant.name} {self.value(x):.3f} "
                                                                 f"(its optimum {self.value(self.opening()):.3f})")
