"""Debate agents for a problem file: profiles aligned to its stakeholders, the scripted stakeholder agent,
and agents built from command-line specs.

Profiles (``--agent``):

* ``aligned:<stakeholder>`` -- speaks for one stakeholder of the file: its description and objective in the
  system prompt (no retrieval); its name defaults to the stakeholder's;
* ``baseline`` -- a neutral allocation assistant (the arena's baseline profile with the file's rules).

Models (``--model``): ``scripted`` plays a stakeholder with :class:`StakeholderNegotiator`; any other spec
(``openai:...``, ``llamacpp:...``, ``scripted:NAME``) is built by :func:`fairarena.llm.build_model`.

The scripted stakeholder agent proposes its stakeholder's exact optimum in round 1; from round 2 on, and as
its final, the compromise of the stakeholders at the table (its own and those of the other aligned agents):
the allocation that maximises the smallest share any of them keeps of its range between its worst and its
best optimum (:func:`fairarena.problems.objectives.compromise`; stakeholders whose first stage is a Gini or a
variance are left out of it), or its optimum again when no allocation keeps a positive share for all.
Drafting a ``joint-draft`` closing it drafts the valid final whose worst-off stakeholder at the table fares
best (values normalised over the finals; ties: speaking order); deciding, it accepts a valid draft that keeps
at least half of its own range over the finals, or that is that maximin final, and otherwise amends it with
that final. A baseline played by ``scripted`` proposes the compromise from round 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from fairarena.arena.negotiator import NegotiationState
from fairarena.arena.profiles import Profile
from fairarena.errors import InputError

__all__ = ["StakeholderProfile", "StakeholderNegotiator", "parse_profile", "scripted_agents", "build_agents",
           "resolve_agents", "ACCEPT_SHARE"]

#: a scripted stakeholder accepts a draft worth at least this share of its range over the finals
ACCEPT_SHARE = 0.5


@dataclass(frozen=True)
class StakeholderProfile(Profile):
    """An arena profile aligned to a stakeholder of a problem file (``framework`` holds its name, so the
    profile reads ``aligned:<stakeholder>``). Its statement and objective are in the system prompt."""

    statement: str = ""
    objective: str = ""
    setting: str = "an allocation"

    @property
    def uses_retrieval(self) -> bool:
        return False

    def system_prompt(self, *, rag_available: bool, rules: str | None = None) -> str:
        head = f"You represent the stakeholder '{self.framework}' in {self.setting}."
        if self.statement:
            head += f" {self.statement}"
        return f"{head} Your objective: {self.objective}. " + (rules or "")


def parse_profile(domain: Any, instance: Any, spec: str, field: str = "agent") -> Profile:
    """``aligned:<stakeholder>`` or ``baseline`` (InputError naming the choices otherwise)."""
    from fairarena.problems.objectives import stage_key

    names = [s.name for s in instance.stakeholders]
    kind, sep, who = str(spec).partition(":")
    if kind == "aligned" and who in names:
        s = instance.stakeholder(who)
        return StakeholderProfile("aligned", who, statement=s.description, objective=stage_key(instance, s),
                                  setting=instance.setting)
    if spec == "baseline":
        return Profile("baseline")
    raise InputError(field, spec, "aligned:<stakeholder> with a stakeholder of the problem file "
                                  f"({', '.join(names)}), or baseline")


class StakeholderNegotiator:
    """The scripted stakeholder agent (module doc); ``stakeholder`` None: a baseline."""

    def __init__(self, domain: Any, instance: Any, stakeholder: str | None) -> None:
        self.domain, self.instance, self.stakeholder = domain, instance, stakeholder
        self.problem = domain.problem(instance)
        self.participants = {p.name: p for p in domain.participants(instance)}
        self.state = NegotiationState()
        self._compromise: dict[tuple[str, ...], np.ndarray | None] = {}

    def table(self) -> list[str]:
        """The stakeholders at the table: its own, then those of the other agents aligned to one (a baseline
        alone with no stakeholder at the table: every stakeholder)."""
        names = [self.stakeholder] if self.stakeholder is not None else []
        for prof in self.state.others_profiles.values():
            who = getattr(prof, "framework", None)
            if getattr(prof, "kind", None) == "aligned" and who in self.participants and who not in names:
                names.append(who)
        return names if len(names) >= 2 or self.stakeholder is not None else list(self.participants)

    def optimum(self, name: str) -> np.ndarray:
        return self.domain.optimum(self.instance, self.participants[name])

    def compromise(self) -> np.ndarray | None:
        """The compromise of the stakeholders at the table (:func:`fairarena.problems.objectives.compromise`)."""
        from fairarena.problems.objectives import compromise

        names = tuple(self.table())
        if names not in self._compromise:
            self._compromise[names] = (compromise(self.instance, list(names), {n: self.optimum(n) for n in names})
                                       if len(names) >= 2 else None)
        return self._compromise[names]

    def proposal(self) -> tuple[np.ndarray, str]:
        """Round 1 (a stakeholder): its optimum; later, and a baseline always: the compromise at the table."""
        c = None if (self.stakeholder is not None and self.state.phase == "round" and self.state.round == 1) \
            else self.compromise()
        if c is not None:
            return c, ("the compromise of " + ", ".join(self.table()) + ": the largest share of its range every "
                       "stakeholder at the table keeps")
        own = self.stakeholder or self.table()[0]
        return self.optimum(own), f"the best allocation for {own}"

    def _normalised(self, xs: list[np.ndarray]) -> np.ndarray:
        from fairarena.aggregation.candidates import per_agent_range

        V = np.array([[self.domain.value(self.instance, self.participants[n], x) for x in xs] for n in self.table()],
                     dtype=float)
        return per_agent_range(V)

    def _maximin(self, named: list[tuple[str, np.ndarray]]) -> tuple[np.ndarray, str, float]:
        U = self._normalised([x for _, x in named])
        worst = U.min(axis=0)
        k = int(np.argmax(worst))
        return named[k][1], named[k][0], float(worst[k])

    def __call__(self, messages: list[dict[str, str]], params: Any) -> dict[str, Any]:
        from fairarena.allocation.problem import allocation_to_mapping

        s = self.state
        accept = None
        finals = list(s.finals.items())
        if s.phase == "draft":
            if finals:
                x, by, w = self._maximin(finals)
                why = f"I draft {by}'s final: its worst-off stakeholder keeps {w:.2f} of its range over the finals"
            else:
                x, why = self.proposal()
        elif s.phase == "decide":
            if s.draft is None:
                accept, (x, why) = False, self.proposal()
            elif self.stakeholder is None or len(finals) < 2:
                accept, x, why = True, s.draft, "I accept the draft"
            else:
                U = self._normalised([f for _, f in finals] + [s.draft])
                mine = U[0, -1]
                best, by, w = self._maximin(finals)
                if mine >= ACCEPT_SHARE - 1e-9 or np.array_equal(best, s.draft):
                    accept, x, why = True, s.draft, f"I accept the draft: it keeps {mine:.2f} of my range"
                else:
                    accept, x = False, best
                    why = (f"the draft keeps only {mine:.2f} of my range: I amend it to {by}'s final, whose "
                           f"worst-off stakeholder keeps {w:.2f}")
        else:
            x, why = self.proposal()
        reply: dict[str, Any] = {"allocation": allocation_to_mapping(self.problem, x), "justification": why,
                                 "critique": ""}
        return {"accept": bool(accept), **reply} if s.phase == "decide" else reply


def _agent(domain: Any, instance: Any, name: str, profile: Profile, model: str, *, models: dict[str, Any] | None = None,
           **build: Any) -> Any:
    from fairarena.arena.protocol import Agent
    from fairarena.llm import ScriptedChatModel, build_model, parse_model_spec
    from fairarena.llm.wrappers import UsageMeter

    spec = parse_model_spec(model)
    if spec.backend == "scripted" and spec.model == "negotiator":
        neg = StakeholderNegotiator(domain, instance, profile.framework if profile.kind == "aligned" else None)
        return Agent(name, profile, UsageMeter(ScriptedChatModel(neg, name="stakeholder")), str(spec),
                     negotiator=neg)   # type: ignore[arg-type]
    key = str(spec)
    if models is not None and key in models:
        chat = models[key]
    else:
        chat = build_model(spec, **build)
        if models is not None:
            models[key] = chat
    return Agent(name, profile, chat, str(spec), None, None,
                 "no retrieval for problem-file stakeholders: description and objective in the system prompt"
                 if profile.kind == "aligned" else None)


def scripted_agents(domain: Any, instance: Any, names: Sequence[str] | None = None) -> list[Any]:
    """One scripted stakeholder agent per stakeholder (default every one), named after it."""
    wanted = [s.name for s in instance.stakeholders] if names is None else list(names)
    return [_agent(domain, instance, n, parse_profile(domain, instance, f"aligned:{n}"), "scripted") for n in wanted]


def resolve_agents(domain: Any, instance: Any, agents: Sequence[str] = (), models: Sequence[str] = ()
                   ) -> list[dict[str, Any]]:
    """The participants as ``[{"name", "profile", "model"}]``, every spec checked, nothing built.

    ``agents``: ``PROFILE`` or ``NAME=PROFILE`` (default: ``aligned:<s>`` for every stakeholder ``s``); an
    aligned agent is named after its stakeholder unless named, a baseline ``baseline`` (then ``baseline2``...).
    ``models``: ``SPEC`` (every participant's; at most one) or ``NAME=SPEC``; default ``scripted``."""
    from fairarena.arena.agents import assign_models
    from fairarena.arena.protocol import LIMITS

    entries = list(agents) or [f"aligned:{s.name}" for s in instance.stakeholders]
    if not 2 <= len(entries) <= LIMITS["participants"]:
        raise InputError("agent", " ".join(entries), f"2 to {LIMITS['participants']} participants (repeat --agent)")
    out: list[dict[str, Any]] = []
    for entry in entries:
        name, sep, spec = str(entry).partition("=")
        if not sep:
            name, spec = "", name
        profile = parse_profile(domain, instance, spec)
        if not name:
            base = profile.framework if profile.kind == "aligned" else "baseline"
            name, k = base, 2
            while name in [p["name"] for p in out]:
                name, k = f"{base}{k}", k + 1
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,31}", name):
            raise InputError("agent", entry, "PROFILE or NAME=PROFILE, NAME of letters, digits, '-' or '_'")
        out.append({"name": name, "profile": spec, "model": ""})
    return assign_models(out, models)


def build_agents(domain: Any, instance: Any, participants: list[dict[str, Any]], **build: Any) -> list[Any]:
    """Arena agents of :func:`resolve_agents`'s participants (``build``: :func:`fairarena.llm.build_model`'s
    options, e.g. ``cache``, ``offline``, ``max_calls``); one model per spec is shared."""
    shared: dict[str, Any] = {}
    return [_agent(domain, instance, p["name"], parse_profile(domain, instance, p["profile"]), p["model"],
                   models=shared, **build) for p in participants]
