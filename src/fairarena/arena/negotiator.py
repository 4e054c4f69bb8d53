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
  min CNSS (then ESG); egalitarian the sum of pairwise CNSS gaps (minimised, then mean CNSS);
  libertarian and baseline: preservation of their own opening (entitlements / proportional shares);
  adversarial: bias-weighted CNSS. Ties are broken by ESG.
* **Closing**: as drafter it submits its final; as responder it accepts a draft that already
  preserves ``c`` of its own final, otherwise amends once with the concession rule at ``lambda = c``.

Justifications and critiques are generated from templates naming the metric values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairarena.allocation.optimal import AllocationMILP, _add
from fairarena.allocation.problem import AllocationProblem, allocation_to_mapping
from fairarena.allocation.welfare import compute_metrics, need_satisfaction
from fairarena.arena.profiles import Profile
from fairarena.llm.base import ChatParams
from fairarena.llm.scripted import register_script

CONCESSION = 0.9


@dataclass
class NegotiationState:
    """What the arena tells the negotiator before each call (it reads nothing else)."""

    phase: str = "round"          # round | final | draft | decide | repair
    round: int = 1
    rounds: int = 3
    partner_last: np.ndarray | None = None   # partner's last valid allocation
    own_final: np.ndarray | None = None
    draft: np.ndarray | None = None          # the draft to accept or amend (phase decide)
    partner_violations: list[str] = field(default_factory=list)


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


class Negotiator:
    """A ``scripted`` model script bound to one debate's problem and one profile."""

    def __init__(self, problem: AllocationProblem, profile: Profile, *, cohort: Any = None,
                 concession: float = CONCESSION) -> None:
        self.problem = problem
        self.profile = profile
        self.concession = float(concession)
        self.state = NegotiationState()
        self._bias: np.ndarray | None = None
        if profile.kind in ("adversarial", "adversarial-rag"):
            from fairarena.arena.research_adversarial import bias_weights
            self._bias = bias_weights(cohort) if cohort is not None else np.full(problem.n, 1.0 / problem.n)
        self._ideal: np.ndarray | None = None

    # -- welfare ---------------------------------------------------------------------------------
    @property
    def label(self) -> str:
        return self.profile.framework or self.profile.kind

    def ideal(self) -> np.ndarray:
        if self._ideal is None:
            p = self.problem
            if self.profile.kind == "aligned":
                from fairarena.allocation.optimal import optimal_allocation
                self._ideal = optimal_allocation(p, self.profile.framework, leximin=False)
            elif self.profile.kind == "baseline":
                self._ideal = proportional_allocation(p)
            else:
                self._ideal = self._solve(None, 0.0)
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
            gaps: list[tuple[float, dict[int, float]]] = []
            for i in range(p.n):
                for j in range(i + 1, p.n):
                    d = m.add_var(0.0, np.inf)
                    diff = _add((1.0, m.cnss[i]), (-1.0, m.cnss[j]))
                    m.add_row(_add((1.0, {d: 1.0}), (-1.0, diff)), lo=0.0)
                    m.add_row(_add((1.0, {d: 1.0}), (1.0, diff)), lo=0.0)
                    gaps.append((1.0, {d: 1.0}))
            return [(_add(*gaps), "min"), (m.weighted_cnss(np.full(p.n, 1.0 / p.n)), "max"), esg]
        # libertarian and baseline: keep as much of the opening as possible
        return [(self._preserve(m, need_satisfaction(p, self.ideal())), "max"), esg]

    def _preserve(self, m: AllocationMILP, target: np.ndarray) -> dict[int, float]:
        """Expression ``sum_i min(CNSS_i(x), target_i)`` (exact at a maximum of it or under ``>=``)."""
        zs = []
        for i, c in enumerate(m.cnss):
            z = m.add_var(0.0, float(target[i]))
            m.add_row(_add((1.0, c), (-1.0, {z: 1.0})), lo=0.0)
            zs.append((1.0, {z: 1.0}))
        return _add(*zs)

    def _solve(self, partner: np.ndarray | None, lam: float) -> np.ndarray:
        m = AllocationMILP(self.problem)
        if partner is not None and lam > 0:
            target = need_satisfaction(self.problem, partner)
            total = float(target.sum())
            if total > 0:
                m.add_row(self._preserve(m, target), lo=lam * total * (1 - 1e-9))
        return m.lexicographic(self._stages(m))

    def propose(self, lam: float, partner: np.ndarray | None) -> np.ndarray:
        if partner is None or lam <= 0:
            return self.ideal()
        return self._solve(partner, lam)

    def lam(self) -> float:
        s = self.state
        if s.phase in ("final", "draft", "decide"):
            return self.concession
        return self.concession * (s.round - 1) / (s.rounds - 1) if s.rounds > 1 else 0.0

    # -- the script ------------------------------------------------------------------------------
    def __call__(self, messages: list[dict[str, str]], params: ChatParams) -> dict[str, Any]:
        s = self.state
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
            x = self.propose(lam, s.partner_last)
        reply: dict[str, Any] = {"allocation": allocation_to_mapping(self.problem, x),
                                 "justification": self.justify(x, lam), "critique": self.critique()}
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
        worst = int(np.argmin(mt["cnss"]))
        return (f"{head[self.profile.kind]} ({s.phase} {s.round}/{s.rounds}), {how}. Metrics: {vals}. "
                f"Lowest need satisfaction: {self.problem.ids[worst]} at {mt['cnss'][worst]:.2f}.")

    def critique(self) -> str:
        s = self.state
        if s.partner_violations:
            return "Your last proposal was infeasible: " + "; ".join(s.partner_violations[:4]) + "."
        if s.partner_last is None:
            return "No valid proposal from you yet."
        mt = compute_metrics(self.problem, s.partner_last)
        worst = int(np.argmin(mt["cnss"]))
        return (f"Your last proposal scores ESG {mt['esg']:.3f} and RMG {mt['rmg']:.3f}; it leaves "
                f"{self.problem.ids[worst]} at need satisfaction {mt['cnss'][worst]:.2f}.")


def _needs_a_debate(messages: list[dict[str, str]], params: ChatParams) -> str:
    """The deterministic negotiator (bound to a debate by fairarena.arena; not callable on its own)."""
    from fairarena.llm.base import LLMError
    raise LLMError("scripted:negotiator plays inside a debate: use fairarena.arena.run_debate or `fairarena debate`")


register_script("negotiator", _needs_a_debate)
