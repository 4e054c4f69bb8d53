"""The scripted stakeholder negotiator: tourism debates without a language model, through the arena.

A scripted tourism debate is an ordinary arena debate (:func:`fairarena.arena.run_debate`, the turn loop
of :mod:`fairarena.arena.protocol`, its closings and transcripts) on the tourism domain
(:func:`fairarena.tourism.arena.domain_of`: flows or lists), whose participants are
:class:`StakeholderNegotiator` scripts. The arena briefs each script as it briefs the triage negotiator
(:class:`fairarena.arena.negotiator.NegotiationState`: the phase, the others' profiles, their last valid
proposals, every valid final, the draft to decide on); nothing here names the triage domain, and the
arena's generic modules do not name this one.

Each negotiator plays **its stakeholder's own objective**: its utility of a decision is the payoff-table
utility of :func:`fairarena.tourism.decisions.utility_matrix` (the stakeholder's value, normalised over the
candidates: 1 at its best candidate, 0 at its worst). It negotiates over the candidates of
:func:`fairarena.tourism.decisions.candidates` (the proposals and the compromises or ranking-rule lists),
plus any valid proposal another participant made (a language-model participant may propose outside them):

* **Opening** (round 1): its ideal, the candidate it values most (ties: its own proposal, then what the
  others value most, then candidate order).
* **Concessions** (rounds ``t = 2..R`` and the final), in the partners' own terms as the triage negotiator
  concedes: it proposes the option it values most among those giving every other stakeholder ``j`` at
  least ``U_j(ideal) + lambda_t max(0, U_j(y_j) - U_j(ideal))`` (``y_j`` j's last valid proposal: j gets
  ``lambda_t`` of the way from what my ideal gives it to what its own proposal gives it, by j's utility);
  ``lambda_t = c (t - 1) / (R - 1)`` (0 when ``R = 1``), ``lambda_final = c``, ``c`` the stakeholder
  profile's ``concession`` (0.5 in the shipped files). Ties: the others' total utility, then candidate
  order. When no option meets every level, ``lambda`` is halved (at most 20 times; then the ideal).
  The types are common knowledge: a participant is modelled by the stakeholder its profile names; one
  without a stakeholder sets no level.
* **Joint** (``joint-draft``): as drafter it drafts the **Nash bargaining solution over the options** (the
  candidates and every valid final): maximise ``prod_k (U_k(x) - d_k)`` over the options with ``U_k(x) >=
  d_k`` for every stakeholder ``k``, ``d_k`` = the worst valid final for ``k`` (its disagreement value);
  ties by the total gain, then option order (:func:`bargain`). So no option is better for one stakeholder
  and no worse for any (a dominating option would have a product at least as large and a larger total),
  nobody gets less than its disagreement value, and the joint may differ from every final. As responder it
  computes the same solution and accepts a draft that gives it at least what the solution gives it,
  otherwise amends with the solution. Asked to revise (``dialectical``), its k-th revision concedes at
  ``lambda = 1 - (1 - c) / 2^k``.

This is the discrete analogue of the triage negotiator's bargaining
(:func:`fairarena.arena.negotiator.nash_bargain`, over the feasible allocations): the stakeholders'
objectives are not concave functions of one allocation MILP (nDCG of lists, the exposure Gini), so the
feasible set is the candidates the domain builds. It differs from the ``nash`` rule of
:mod:`fairarena.aggregation` in its disagreement point: the rule maximises ``prod_k U_k`` (disagreement =
each stakeholder's worst candidate), the bargaining ``prod_k (U_k - d_k)`` with ``d_k`` from the finals
the debate produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fairarena.allocation.problem import AllocationProblem, allocation_to_mapping
from fairarena.arena.negotiator import RELAX_HALVINGS, NegotiationState
from fairarena.llm.base import ChatParams
from fairarena.tourism.decisions import Candidates, decode, encode, metrics_of, utility_matrix
from fairarena.tourism.destination import Destination
from fairarena.tourism.stakeholders import Stakeholder, stakeholder_value

__all__ = ["Options", "Bargain", "bargain", "StakeholderNegotiator", "scripted_negotiate", "DEFAULT_CONCESSION"]

#: a stakeholder profile without ``concession`` concedes this much
DEFAULT_CONCESSION = 0.5
TOL = 1e-9


@dataclass
class Options:
    """What the scripted stakeholders negotiate over: the candidates of one destination, as allocations of
    the domain's problem, with the payoff table ``U`` (stakeholders x candidates)."""

    d: Destination
    decision: str
    problem: AllocationProblem
    stakeholders: list[Stakeholder]
    cands: Candidates
    X: list[np.ndarray] = field(default_factory=list)
    U: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    def __post_init__(self) -> None:
        self.X = [encode(self.d, self.decision, x) for x in self.cands.decisions]
        self.U = utility_matrix(self.cands.values)
        self.index = {s.name: i for i, s in enumerate(self.stakeholders)}
        self._extra: dict[bytes, np.ndarray | None] = {}

    def candidate_of(self, x: np.ndarray) -> int | None:
        """The candidate whose allocation ``x`` is (None: none)."""
        for k, y in enumerate(self.X):
            if y.shape == x.shape and np.array_equal(y, x):
                return k
        return None

    def utilities(self, x: np.ndarray) -> np.ndarray | None:
        """Every stakeholder's utility of allocation ``x``: the payoff table's column for a candidate, else its
        values normalised over the candidates and itself (clipped to [0, 1]); None when ``x`` states no
        decision (:func:`~fairarena.tourism.decisions.decode`)."""
        k = self.candidate_of(x)
        if k is not None:
            return self.U[:, k]
        key = np.ascontiguousarray(x, dtype=float).tobytes()
        if key not in self._extra:
            dec, bad = decode(self.d, self.decision, x)
            if dec is None:
                self._extra[key] = None
            else:
                m = metrics_of(self.d, self.decision, dec)
                v = np.array([stakeholder_value(self.d, s, m, self.decision) for s in self.stakeholders])
                self._extra[key] = utility_matrix(np.concatenate([self.cands.values, v[:, None]], axis=1))[:, -1]
        return self._extra[key]

    def name_of(self, x: np.ndarray) -> str | None:
        k = self.candidate_of(x)
        return None if k is None else self.cands.names[k]


@dataclass
class Bargain:
    """The Nash bargaining solution over the options (:func:`bargain`)."""

    option: int                      # index into the options given
    disagreement: dict[str, float]   # d_k: the worst valid final for k
    utility: dict[str, float]        # U_k at the solution
    finals: list[str]                # whose valid finals set the disagreement values

    def describe(self, label: str) -> str:
        gains = ", ".join(f"{k} {self.utility[k] - self.disagreement[k]:+.3f}" for k in self.utility)
        return (f"{label}, the Nash bargaining solution over the candidates and the valid finals: it maximises the "
                "product of every stakeholder's utility gain over its disagreement value, the worst of the valid "
                f"finals ({', '.join(self.finals)}) by its own objective; gains: {gains}")


def bargain(U: np.ndarray, names: list[str], final_cols: dict[str, int]) -> Bargain:
    """Nash bargaining over a finite set: ``U`` (stakeholders x options), ``final_cols`` participant -> the
    option column of its valid final. Among the options giving every stakeholder at least ``d_k = min`` over
    the finals, the largest ``prod_k (U_k - d_k)``; ties (within 1e-12) by the total gain, then option order."""
    cols = list(final_cols.values())
    d = U[:, cols].min(axis=1)
    gain = U - d[:, None]
    ok = np.flatnonzero((gain >= -TOL).all(axis=0))
    prod = np.prod(np.maximum(gain[:, ok], 0.0), axis=0)
    tot = gain[:, ok].sum(axis=0)
    best = max(range(len(ok)), key=lambda i: (round(float(prod[i]), 12), round(float(tot[i]), 12), -i))
    j = int(ok[best])
    return Bargain(j, dict(zip(names, map(float, d))), dict(zip(names, map(float, U[:, j]))), list(final_cols))


class StakeholderNegotiator:
    """A scripted arena participant playing stakeholder ``stakeholder`` over ``options`` (module doc).

    Called by the arena as a chat script (``(messages, params) -> reply``) after the protocol has filled
    :attr:`state` (``negotiator=`` of :class:`fairarena.arena.protocol.Agent`)."""

    def __init__(self, options: Options, stakeholder: Stakeholder, concession: float | None = None) -> None:
        self.o = options
        self.stakeholder = stakeholder
        self.a = options.index[stakeholder.name]
        c = stakeholder.profile.get("concession", DEFAULT_CONCESSION) if concession is None else concession
        self.concession = float(c)
        self.state = NegotiationState()
        self.revisions = 0
        self.bargain: Bargain | None = None
        self.note: str | None = None
        U = options.U
        others = U.sum(axis=0) - U[self.a]
        self.ideal = max(range(U.shape[1]), key=lambda k: (round(float(U[self.a, k]), 12), k == self.a,
                                                         round(float(others[k]), 12), -k))

    # -- the others, by their own utility ----------------------------------------------------------
    def _stakeholder_of(self, name: str) -> int | None:
        prof = self.state.others_profiles.get(name)
        s = getattr(prof, "stakeholder", None)
        return self.o.index.get(s) if s else None

    def _options(self) -> tuple[list[np.ndarray], np.ndarray, list[str]]:
        """The candidates plus every other valid proposal or final that is no candidate (allocations,
        utilities, labels)."""
        X, cols, labels = list(self.o.X), [self.o.U], list(self.o.cands.names)
        extra = [*self.state.others_last.items(), *self.state.finals.items()]
        for who, y in extra:
            if self.o.candidate_of(y) is None and not any(np.array_equal(y, z) for z in X):
                u = self.o.utilities(y)
                if u is not None:
                    X.append(y)
                    cols.append(u[:, None])
                    labels.append(f"{who}'s proposal")
        return X, np.concatenate(cols, axis=1), labels

    def lam(self) -> float:
        s = self.state
        if s.phase == "revise":
            return 1.0 - (1.0 - self.concession) * 0.5 ** (self.revisions + 1)
        if s.phase in ("final", "draft", "decide"):
            return self.concession
        return self.concession * (s.round - 1) / (s.rounds - 1) if s.rounds > 1 else 0.0

    def concede(self, lam: float) -> tuple[int, list[np.ndarray], np.ndarray, list[str], float]:
        """The option it proposes at concession ``lam`` (module doc) and the concession actually met."""
        X, U, labels = self._options()
        partners = []
        for who, y in self.state.others_last.items():
            b = self._stakeholder_of(who)
            u = self.o.utilities(y)
            if b is not None and b != self.a and u is not None:
                partners.append((b, float(u[b])))
        me, others = U[self.a], U.sum(axis=0) - U[self.a]
        if lam <= 0 or not partners:
            return self.ideal, X, U, labels, 0.0
        tried = lam
        for _ in range(RELAX_HALVINGS + 1):
            ok = np.ones(U.shape[1], dtype=bool)
            for b, uy in partners:
                base = float(U[b, self.ideal])
                ok &= U[b] >= base + tried * max(0.0, uy - base) - TOL
            idx = np.flatnonzero(ok)
            if len(idx):
                best = max(idx, key=lambda k: (round(float(me[k]), 12), round(float(others[k]), 12), -k))
                if tried < lam:
                    self.note = f"the concession {lam:.0%} had no option; relaxed to {tried:.4%}"
                return int(best), X, U, labels, tried
            tried /= 2
        self.note = f"no option met the concession {lam:.0%}; I keep my ideal"
        return self.ideal, X, U, labels, 0.0

    def joint(self) -> tuple[int, list[np.ndarray], np.ndarray, list[str]]:
        """The Nash bargaining solution of the debate (:func:`bargain`) as the state describes it."""
        s = self.state
        X, U, labels = self._options()
        finals = dict(s.finals)
        if s.own_final is not None:
            finals.setdefault(s.name or "me", s.own_final)
        cols: dict[str, int] = {}
        for who, y in finals.items():
            k = next((i for i, z in enumerate(X) if z.shape == y.shape and np.array_equal(z, y)), None)
            if k is not None:
                cols[who] = k
        if not cols:
            cols[s.name or "me"] = self.ideal
        self.bargain = bargain(U, [x.name for x in self.o.stakeholders], cols)
        return self.bargain.option, X, U, labels

    # -- the script ----------------------------------------------------------------------------------
    def __call__(self, messages: list[dict[str, str]], params: ChatParams) -> dict[str, Any]:
        s = self.state
        self.note, self.bargain = None, None
        accept: bool | None = None
        lam = self.lam()
        if s.phase in ("draft", "decide"):
            k, X, U, labels = self.joint()
            if s.phase == "decide":
                u = self.o.utilities(s.draft) if s.draft is not None else None
                accept = u is not None and float(u[self.a]) >= float(U[self.a, k]) - TOL
        else:
            k, X, U, labels, lam = self.concede(lam)
        if s.phase == "revise":
            self.revisions += 1
        x = s.draft if accept else X[k]
        assert x is not None
        reply: dict[str, Any] = {"allocation": allocation_to_mapping(self.o.problem, x),
                                 "justification": self.justify(k, U, labels, lam, accept),
                                 "critique": self.critique()}
        if self.note:
            reply["note"] = self.note
        if s.phase == "decide":
            reply = {"accept": bool(accept), **reply}
        return reply

    def justify(self, k: int, U: np.ndarray, labels: list[str], lam: float, accept: bool | None) -> str:
        s = self.state
        me = self.stakeholder.name
        label = f"option '{labels[k]}'"
        if s.phase in ("draft", "decide") and self.bargain is not None:
            lead = ("I accept the draft: it gives me at least what the bargaining solution gives me" if accept
                    else "I propose as the joint decision")
            how = f"{lead}; the bargaining solution is {self.bargain.describe(label)}"
        elif lam <= 0:
            how = f"I propose my ideal, {label}"
        else:
            how = (f"I propose {label}: the best for me among the options giving every other stakeholder at least "
                   f"{lam:.0%} of the way from what my ideal gives it to what its own last proposal gives it, by its "
                   "own objective")
        if self.note:
            how += f" ({self.note})"
        utils = ", ".join(f"{x.name} {U[i, k]:.3f}" for i, x in enumerate(self.o.stakeholders))
        return f"As the {me} stakeholder ({s.phase} {s.round}/{s.rounds}), {how}. Utilities: {utils}."

    def critique(self) -> str:
        s = self.state
        parts = []
        for who in sorted(set(s.others_last) | set(s.others_violations)):
            bad = s.others_violations.get(who) or []
            if bad and who not in s.others_last:
                parts.append(f"{who}'s last proposal was invalid: " + "; ".join(bad[:2]))
            elif who in s.others_last:
                u = self.o.utilities(s.others_last[who])
                if u is not None:
                    parts.append(f"{who}'s last proposal gives me {float(u[self.a]):.3f}")
        return ". ".join(parts) + "." if parts else "No valid proposal from the others yet."


def scripted_negotiate(d: Destination, stakeholders: list[Stakeholder], cands: Candidates, decision: str, *,
                       rounds: int = 3, closing: str = "joint-draft", seed: int = 0, k: int = 5,
                       transcript: str | Path | None = None, header: dict[str, Any] | None = None) -> Any:
    """One scripted tourism debate through :func:`fairarena.arena.run_debate`: one
    :class:`StakeholderNegotiator` per stakeholder (named :func:`~fairarena.tourism.arena.agent_name`, in
    the order given), ``rounds`` rounds, the arena closing ``closing`` (``joint-draft``: the bargaining
    draft; a candidate rule closes over the finals through the domain's ``closing_profile``). Returns the
    arena's :class:`~fairarena.arena.result.DebateResult`."""
    from fairarena.arena import DebateConfig, run_debate
    from fairarena.arena.protocol import Agent
    from fairarena.llm.scripted import ScriptedChatModel
    from fairarena.llm.wrappers import UsageMeter
    from fairarena.tourism.arena import agent_name, domain_of, profile_of

    domain = domain_of(decision, cands, k)
    options = Options(d, decision, domain.problem(d), list(stakeholders), cands)
    agents = []
    for s in stakeholders:
        neg = StakeholderNegotiator(options, s)
        agents.append(Agent(agent_name(s), profile_of(s), UsageMeter(ScriptedChatModel(neg, name="stakeholder")),
                            "scripted:stakeholder", negotiator=neg))   # type: ignore[arg-type]
    return run_debate(d, agents, config=DebateConfig(rounds=rounds, closing=closing, seed=seed),
                      transcript=transcript, domain=domain, header=header)
