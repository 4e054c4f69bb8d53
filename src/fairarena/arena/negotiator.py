"""The scripted negotiator: the deterministic default "model" of the arena.

It plays a profile without any language model, in milliseconds, reproducibly:

* **Opening** (round 1): its ideal allocation. Aligned to a framework F: F's optimal allocation
  from the triage core (:func:`fairarena.triage.optimal_allocation`). Baseline: proportional
  rationing (every patient gets the same fraction of each needed resource that capacity allows;
  whole units of indivisible resources go to the largest remainders, ties by patient order).
  Adversarial: the allocation that maximises the demographically weighted welfare of
  :func:`fairarena.arena.research_adversarial.bias_weights` (research profile).
* **Concession rule** (rounds ``t = 2..R`` and the final): maximise its own welfare subject to
  preserving a rising fraction ``lambda_t`` of what the partner's last *valid* proposal ``y`` gives
  the patients::

      sum_i min(CNSS_i(x), CNSS_i(y))  >=  lambda_t * sum_i CNSS_i(y)
      lambda_t = c * (t - 1) / (R - 1)   (rounds; 0 when R = 1)      lambda_final = c   (c = 0.9)

  ``lambda_t`` never decreases, so against a fixed partner proposal the feasible set only shrinks
  and the negotiator's own welfare never rises: a monotonic concession. The constraint is linear
  (``z_i <= CNSS_i(x)``, ``0 <= z_i <= CNSS_i(y)``), so every step is one exact MILP (HiGHS).
* **Own welfare** per profile: utilitarian ESG; prioritarian DW-ESG; care VWCI; Rawlsian
  min CNSS (then ESG); egalitarian the spread of CNSS, ``max_i CNSS_i - min_i CNSS_i`` (minimised, then
  mean CNSS, then ESG). The alternative ``egalitarian="pairwise"`` minimises the sum of pairwise CNSS
  gaps (the Gini numerator) instead: on the cohorts checked both reach the same Gini of CNSS, and the
  pairwise form costs about 3x more time (n(n-1)/2 gap variables on top of the indicator binaries);
  libertarian and baseline: preservation of their own opening (entitlements / proportional shares);
  adversarial: signed bias-weighted CNSS (patients the bias targets weigh negatively, so its opening gives
  them nothing; it concedes 0.5 instead of 0.9 — both documented in the research file). Ties are broken
  by ESG.
* **Closing**: as drafter it submits its final; as responder it accepts a draft that already
  preserves ``c`` of its own final, otherwise amends once with the concession rule at ``lambda = c``.
  Asked to revise (the dialectical closing), its k-th revision is the concession rule against the
  others' current positions at ``lambda = 1 - (1 - c) / 2^k`` (0.95, 0.975, ... for c = 0.9): it keeps
  conceding, ever less, towards what the others' positions give the patients.

Justifications and critiques are generated from templates naming the metric values.
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
EGALITARIAN_FORMS = ("range", "pairwise")  # the egalitarian negotiator's own welfare (module docstring)
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


SHARED = SharedAnswers()
COMPILED_CACHE_SIZE = 64   # compiled concession MILPs kept per process (by negotiator signature)
_COMPILED: OrderedDict[tuple[Any, ...], "CompiledSteps"] = OrderedDict()
_COMPILED_LOCK = threading.Lock()


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


class CompiledSteps:
    """The negotiator's lexicographic MILP, built once per debate and re-solved at every step.

    Variables: the allocation ``x`` (as :class:`fairarena.allocation.milp.AllocationMILP`), then,
    when ``concession`` is on, one ``z_i`` per patient with ``z_i <= CNSS_i(x)`` and ``0 <= z_i <=
    CNSS_i(y)`` (upper bounds set per step from the partner's proposal ``y``) and the row
    ``sum_i z_i >= lambda * sum_i CNSS_i(y)`` (lower bound set per step), then the profile's stage
    auxiliaries. The sparse matrix, cost vectors and bounds are assembled once; a step only rewrites
    bounds. Stage ``j`` sees the structural rows plus the ``j`` earlier stages' "keep the optimum"
    rows, i.e. exactly the MILP sequence the former per-step construction solved.
    """

    def __init__(self, problem: AllocationProblem,
                 stages: Callable[[AllocationMILP], list[tuple[dict[int, float], str]]], *,
                 concession: bool) -> None:
        from scipy.sparse import coo_array

        m = AllocationMILP(problem)
        self.milp = m
        self.z: list[int] = []
        self.keep_row = -1
        if concession:
            self.z = [m.add_var(0.0, 0.0) for _ in range(problem.n)]
            for c, z in zip(m.cnss, self.z):
                m.add_row(add_exprs((1.0, c), (-1.0, {z: 1.0})), lo=0.0)
            self.keep_row = len(m.rows)
            m.add_row({z: 1.0 for z in self.z})
        stage_list = list(stages(m))
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
        self.keep_cost = np.zeros(nv)
        self.keep_cost[self.z] = -1.0

    def _milp(self, cost: np.ndarray, A: Any, lo: np.ndarray, hi: np.ndarray, ub: np.ndarray) -> Any:
        from scipy.optimize import Bounds, LinearConstraint
        from fairarena.solver_console import milp  # HiGHS's console never on stdout
        return milp(cost, constraints=[LinearConstraint(A, lo, hi)], integrality=self.integrality,
                    bounds=Bounds(self.lb, ub), options={"mip_rel_gap": MIP_REL_GAP})

    def _bounds(self, target: np.ndarray | None, keep: float | None) -> tuple[np.ndarray, np.ndarray]:
        ub = self.ub.copy()
        lo = self.row_lo.copy()
        if self.z and target is not None:
            ub[self.z] = target
            lo[self.keep_row] = -np.inf if keep is None else keep
        return ub, lo

    def _fix(self, lo: np.ndarray, hi: np.ndarray, row: int, stage: int, value: float, rel: float) -> None:
        eps = rel * max(1.0, abs(value))
        if self.senses[stage] == "max":
            lo[row] = value - eps
        else:
            hi[row] = value + eps

    def max_keep(self, target: np.ndarray) -> float:
        """The largest ``sum_i min(CNSS_i(x), target_i)`` any feasible allocation reaches."""
        ub, lo = self._bounds(target, None)
        res = self._milp(self.keep_cost, self.A_stage[0], lo[: self.n_struct], self.row_hi[: self.n_struct], ub)
        if res.status != 0 or res.x is None:
            raise StepSolveFailed(0, res.status, res.message, None)
        return float(-res.fun)

    def solve(self, target: np.ndarray | None = None, keep: float | None = None) -> np.ndarray:
        """Solve the stages in order (each optimum kept, up to ``STAGE_EPS``); the allocation."""
        ub, lo = self._bounds(target, keep)
        hi = self.row_hi.copy()
        sol = None
        value = 0.0
        for j, cost in enumerate(self.costs):
            rows = self.n_struct + j
            res = self._milp(cost, self.A_stage[j], lo[:rows], hi[:rows], ub)
            if res.status == 2 and j > 0:
                # HiGHS may call "keep the previous optimum within STAGE_EPS" infeasible by its own
                # feasibility tolerance: keep it within RETRY_EPS instead (still an optimum to 1e-6)
                self._fix(lo, hi, rows - 1, j - 1, value, RETRY_EPS)
                res = self._milp(cost, self.A_stage[j], lo[:rows], hi[:rows], ub)
            if res.status != 0 or res.x is None:
                raise StepSolveFailed(j, res.status, res.message, None if sol is None else self.milp.allocation(sol))
            sol = res.x
            if j < len(self.costs) - 1:
                value = float(-res.fun if self.senses[j] == "max" else res.fun)
                self._fix(lo, hi, rows, j, value, STAGE_EPS)
        assert sol is not None
        return self.milp.allocation(sol)


class Negotiator:
    """A ``scripted`` model script bound to one debate's problem and one profile.

    Every step returns a feasible allocation. If the concession MILP has no optimal solution (HiGHS
    can declare the stage-fixing rows infeasible by tolerance on some cohorts), the step relaxes the
    concession to what is reachable, then falls back to the negotiator's last valid proposal (then its
    opening, then the empty allocation); :attr:`note` says which, and the reply carries it.
    """

    def __init__(self, problem: AllocationProblem, profile: Profile, *, cohort: Any = None,
                 concession: float | None = None, egalitarian: str = "range") -> None:
        if egalitarian not in EGALITARIAN_FORMS:
            raise InputError("egalitarian", egalitarian, f"one of {', '.join(EGALITARIAN_FORMS)}")
        self.egalitarian = egalitarian
        self.problem = problem
        self.profile = profile
        self.state = NegotiationState()
        self._bias: np.ndarray | None = None
        if profile.kind in ("adversarial", "adversarial-rag"):
            from fairarena.arena.research_adversarial import ADVERSARY_CONCESSION, bias_weights
            self._bias = bias_weights(cohort) if cohort is not None else np.full(problem.n, 1.0 / problem.n)
            concession = ADVERSARY_CONCESSION if concession is None else concession
        self.concession = float(CONCESSION if concession is None else concession)
        self._ideal: np.ndarray | None = None
        self._steps: CompiledSteps | None = None
        self.last_valid: np.ndarray | None = None
        self._memo: dict[tuple[bytes, float | None], np.ndarray] = {}
        self._signature: tuple[Any, ...] | None = None
        self.note: str | None = None
        self.fallbacks: list[str] = []

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
                               self.egalitarian, bias, MIP_REL_GAP, STAGE_EPS)
        return self._signature

    def ideal(self) -> np.ndarray:
        if self._ideal is None:
            p = self.problem
            key = (*self.signature, "ideal")
            x = SHARED.get(key)
            if x is None:
                if self.profile.kind == "aligned":
                    from fairarena.allocation.frameworks import optimal_allocation
                    x = optimal_allocation(p, self.profile.framework, leximin=False)
                elif self.profile.kind == "baseline":
                    x = proportional_allocation(p)
                else:
                    x = CompiledSteps(p, self._stages, concession=False).solve()
                SHARED.put(key, x)
            self._ideal = x
        return self._ideal

    def _stages(self, m: AllocationMILP) -> list[tuple[dict[int, float], str]]:
        p = self.problem
        esg = (m.weighted_cnss(p.survival), "max")
        fw = self.profile.framework if self.profile.kind == "aligned" else None
        if self._bias is not None:
            return [(m.weighted_cnss(self._bias), "max"), esg]
        if fw == "utilitarian":
            return [esg, (m.min_cnss(), "max")]
        if fw == "prioritarian":
            return [(m.weighted_cnss(p.disadvantage * p.survival), "max"), esg]
        if fw == "care":
            return [(m.weighted_cnss(p.vulnerability), "max"), esg]
        if fw == "rawlsian":
            return [(m.min_cnss(), "max"), esg]
        if fw == "egalitarian":
            mean = (m.weighted_cnss(np.full(p.n, 1.0 / p.n)), "max")
            if self.egalitarian == "pairwise":
                return [(add_exprs(*m.pairwise_gaps()), "min"), mean, esg]
            top, bottom = m.add_var(-np.inf, np.inf), m.add_var(-np.inf, np.inf)
            for c in m.cnss:
                m.add_row(add_exprs((1.0, {top: 1.0}), (-1.0, c)), lo=0.0)
                m.add_row(add_exprs((1.0, c), (-1.0, {bottom: 1.0})), lo=0.0)
            return [({top: 1.0, bottom: -1.0}, "min"), mean, esg]
        # libertarian and baseline: keep as much of the opening as possible
        return [(self._preserve(m, need_satisfaction(p, self.ideal())), "max"), esg]

    def _preserve(self, m: AllocationMILP, target: np.ndarray) -> dict[int, float]:
        """Expression ``sum_i min(CNSS_i(x), target_i)`` (exact at a maximum of it or under ``>=``)."""
        zs = []
        for i, c in enumerate(m.cnss):
            z = m.add_var(0.0, float(target[i]))
            m.add_row(add_exprs((1.0, c), (-1.0, {z: 1.0})), lo=0.0)
            zs.append((1.0, {z: 1.0}))
        return add_exprs(*zs)

    @property
    def steps(self) -> CompiledSteps:
        """The compiled concession MILP; shared by the debates of a process with the same signature
        (a :class:`CompiledSteps` is never changed by solving it)."""
        if self._steps is None:
            with _COMPILED_LOCK:
                steps = _COMPILED.get(self.signature)
            if steps is None:
                steps = CompiledSteps(self.problem, self._stages, concession=True)
                with _COMPILED_LOCK:
                    _COMPILED[self.signature] = steps
                    while len(_COMPILED) > COMPILED_CACHE_SIZE:
                        _COMPILED.popitem(last=False)
            else:
                with _COMPILED_LOCK:
                    if self.signature in _COMPILED:
                        _COMPILED.move_to_end(self.signature)
            self._steps = steps
        return self._steps

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

    def target(self, partners: np.ndarray | list[np.ndarray]) -> np.ndarray:
        """The CNSS vector the concession rule preserves: the partner's, or with several other
        participants the mean of their CNSS vectors (the group's position)."""
        if isinstance(partners, np.ndarray):
            return need_satisfaction(self.problem, partners)
        cs = [need_satisfaction(self.problem, y) for y in partners]
        return cs[0] if len(cs) == 1 else np.mean(np.stack(cs), axis=0)

    def _solve(self, partner: np.ndarray | list[np.ndarray] | None, lam: float) -> np.ndarray:
        if partner is None or lam <= 0 or (isinstance(partner, list) and not partner):
            return self.steps.solve()
        target = self.target(partner)
        total = float(target.sum())
        keep = lam * total * (1 - 1e-9) if total > 0 else None
        key = (target.tobytes(), keep)
        if key in self._memo:  # the same question as an earlier step (e.g. a final against an unchanged
            return self._memo[key]  # partner, a decision on that same allocation): the same exact answer
        shared_key = (*self.signature, "step", key)
        x = SHARED.get(shared_key)   # the same question in an earlier debate of this process
        if x is not None:
            self._memo[key] = x
            return x
        steps = self.steps
        try:
            x = steps.solve(target, keep)
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
        try:
            reach = steps.max_keep(target)
            relaxed = min(keep or 0.0, reach * (1 - 1e-6))
            x = steps.solve(target, relaxed)
            self._say(f"the concession constraint ({lam:.0%} of your proposal's need satisfaction) had no optimal "
                      f"solution ({first}); relaxed to {relaxed / total:.4%}")
            return x
        except StepSolveFailed as exc:
            if exc.stage > 0 and self._feasible(exc.partial):
                assert exc.partial is not None
                self._say(f"concession relaxed and stage {exc.stage + 1} skipped after solver failures ({first}; {exc})")
                return exc.partial
            return self._fallback(f"no allocation met the concession constraint ({first}; {exc})")

    def propose(self, lam: float, partner: np.ndarray | list[np.ndarray] | None) -> np.ndarray:
        """Its proposal at concession level ``lam`` against ``partner`` (one allocation, or the list of
        the other participants' allocations)."""
        if partner is None or lam <= 0 or (isinstance(partner, list) and not partner):
            x = self.ideal()
        else:
            x = self._solve(partner, lam)
        if not self._feasible(x):
            x = self._fallback("the solver's allocation violated " + "; ".join(check_feasibility(self.problem, x)[:3]))
        return x

    def lam(self) -> float:
        s = self.state
        if s.phase == "revise":   # k-th revision (dialectical closing): halve the remaining gap to 1 each time
            return 1.0 - (1.0 - self.concession) * 0.5 ** (getattr(self, "revisions", 0) + 1)
        if s.phase in ("final", "draft", "decide"):
            return self.concession
        return self.concession * (s.round - 1) / (s.rounds - 1) if s.rounds > 1 else 0.0

    # -- the script ------------------------------------------------------------------------------
    def __call__(self, messages: list[dict[str, str]], params: ChatParams) -> dict[str, Any]:
        s = self.state
        self.note = None
        lam = self.lam()
        accept = None
        if s.phase == "decide" and s.draft is not None:
            mine = s.own_final if s.own_final is not None else self.ideal()
            target = need_satisfaction(self.problem, mine)
            kept = float(np.minimum(need_satisfaction(self.problem, s.draft), target).sum())
            accept = kept >= self.concession * float(target.sum()) - 1e-9
            x = s.draft if accept else self.propose(self.concession, s.draft)
        elif s.phase == "draft" and s.own_final is not None:
            x = s.own_final
        else:
            x = self.propose(lam, s.others())
        if s.phase == "revise":
            self.revisions = getattr(self, "revisions", 0) + 1
        if s.phase != "decide" or not accept:
            self.last_valid = x
        reply: dict[str, Any] = {"allocation": allocation_to_mapping(self.problem, x),
                                 "justification": self.justify(x, lam), "critique": self.critique()}
        if self.note:
            reply["note"] = self.note
        if s.phase == "decide":
            reply = {"accept": bool(accept), **reply}
        return reply

    def justify(self, x: np.ndarray, lam: float) -> str:
        mt = compute_metrics(self.problem, x)
        vals = (f"ESG {mt['esg']:.3f}, RMG {mt['rmg']:.3f}, Var {mt['var']:.4f}, DW-ESG {mt['dw_esg']:.4f}, "
                f"VWCI {mt['vwci']:.3f}, Gini {mt['gini']:.3f}")
        head = {"aligned": f"As a {self.label} agent", "baseline": "As a baseline agent",
                "adversarial": "As the adversarial research agent", "adversarial-rag": "As the adversarial-rag research agent"}
        s = self.state
        if lam <= 0:
            how = "I propose my ideal allocation"
        else:
            how = f"I keep at least {lam:.0%} of the need satisfaction your last proposal gives the patients"
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
        s = self.state
        parts = []
        for name in sorted(set(s.others_violations) | set(s.others_last)):
            bad = s.others_violations.get(name) or []
            if bad:
                parts.append(f"{name}'s last proposal was infeasible: " + "; ".join(bad[:2]))
            elif name in s.others_last:
                parts.append(f"{name}'s last valid proposal " + _critique_of(self.problem, s.others_last[name]))
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
