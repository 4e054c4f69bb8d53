"""The default scripted participants of a domain that supplies none: each proposes its own optimum.

A domain plug-in may supply ``scripted_agents(instance, participants)`` (triage: the framework
negotiators; tourism: the stakeholder negotiators). Without it, :func:`optimum_agents` gives one scripted
arena agent per participant that does not negotiate:

* every round and its final: the participant's optimum (``domain.optimum``);
* drafting a ``joint-draft`` closing: the valid final whose smallest payoff-normalised value over the
  participants is the largest (values ``domain.value`` normalised per participant over the finals,
  :func:`fairarena.aggregation.candidates.per_agent_range`; ties: speaking order), or its optimum when no
  final is valid;
* deciding on a draft: it accepts a valid draft (it amends an invalid one with its optimum);
* revising (``dialectical``): its optimum again.

It exercises the plumbing a new domain needs (rendering, reply parsing, feasibility, the closing and the
transcript), not negotiation: the conformance kit runs one debate of them, and the studies and the PB
groups use them. They are part of the arena, below the studies and the kit that use them.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from fairarena.arena.negotiator import NegotiationState
from fairarena.arena.profiles import ParticipantProfile, objective_text
from fairarena.domains.protocol import Participant

__all__ = ["OptimumNegotiator", "optimum_agents", "PREFIX"]

#: the prefix of these agents' profile names (``participant:<participant>``; the arena's own participant
#: profiles are ``aligned:<participant>``): recorded in their transcripts
PREFIX = "participant"


class OptimumNegotiator:
    """A scripted participant that proposes its optimum (module doc); the arena fills :attr:`state`."""

    def __init__(self, domain: Any, instance: Any, participant: Participant, everyone: Sequence[Participant],
                 problem: Any, optimum: np.ndarray) -> None:
        self.domain, self.instance, self.participant = domain, instance, participant
        self.everyone = list(everyone)
        self.problem = problem
        self.optimum = np.asarray(optimum, dtype=float)
        self.state = NegotiationState()

    def _draft(self) -> tuple[np.ndarray, str]:
        from fairarena.aggregation.candidates import per_agent_range

        finals = list(self.state.finals.items())
        if not finals:
            return self.optimum, "no valid final: I draft my own optimum"
        V = np.array([[self.domain.value(self.instance, p, x) for _, x in finals] for p in self.everyone], dtype=float)
        U = per_agent_range(V)
        worst = U.min(axis=0)
        k = int(np.argmax(worst))   # the first of the best: speaking order
        return finals[k][1], (f"I draft {finals[k][0]}'s final: its worst-off participant gets {worst[k]:.3f} of "
                              "the range between the finals (the largest such share)")

    def __call__(self, messages: list[dict[str, str]], params: Any) -> dict[str, Any]:
        from fairarena.allocation.problem import allocation_to_mapping

        s = self.state
        accept = None
        if s.phase == "decide":
            accept = s.draft is not None
            x, why = (s.draft, "I accept the draft") if accept else (self.optimum, "the draft is invalid: my optimum")
        elif s.phase == "draft":
            x, why = self._draft()
        else:
            x, why = self.optimum, f"my optimum for {self.participant.name}"
        assert x is not None
        reply: dict[str, Any] = {"allocation": allocation_to_mapping(self.problem, x), "justification": why,
                                 "critique": ""}
        return {"accept": bool(accept), **reply} if s.phase == "decide" else reply


def optimum_agents(domain: Any, instance: Any, participants: Sequence[Participant] | None = None, *,
                   negotiator: type = None, model_name: str = "optimum") -> list[Any]:  # type: ignore[assignment]
    """One :class:`OptimumNegotiator` arena agent per participant (default ``domain.participants(instance)``),
    named after it, in order. ``negotiator`` is a subclass of :class:`OptimumNegotiator` (another drafter, say)
    and ``model_name`` the scripted model's name (the agent's model is ``scripted:<model_name>``)."""
    from fairarena.arena.protocol import Agent
    from fairarena.llm.scripted import ScriptedChatModel
    from fairarena.llm.wrappers import UsageMeter

    ps = list(domain.participants(instance) if participants is None else participants)
    problem = domain.problem(instance)
    agents = []
    cls = OptimumNegotiator if negotiator is None else negotiator
    for p in ps:
        neg = cls(domain, instance, p, ps, problem, domain.optimum(instance, p))
        prof = ParticipantProfile(kind="participant", participant=p.name, statement=p.description,
                                  objective=objective_text(p), setting=getattr(domain, "setting", "an allocation"),
                                  prefix=PREFIX)
        agents.append(Agent(p.name, prof, UsageMeter(ScriptedChatModel(neg, name=model_name)),
                            f"scripted:{model_name}", negotiator=neg))   # type: ignore[arg-type]
    return agents
