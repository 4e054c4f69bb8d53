"""The stakeholder groups' debate agents of a PB election (``fairarena pb compare --model SPEC``).

One agent per stakeholder group (:meth:`fairarena.pb.domain.PBDomain.participants`), named after the group's
key (``age_lt30``, ``cluster_1``, ...), debating through the generic arena (:func:`fairarena.arena.result.run_debate`
with the PB domain): rounds of proposals, then a joint draft that every group accepts or amends.

Models (``--model``):

* ``scripted`` (default) -- :func:`scripted_group_agents`: the arena's optimum agents
  (:class:`fairarena.arena.optimum.OptimumNegotiator`: each group proposes its own optimum feasible set, the
  knapsack of its utility, and never concedes) with a leximin drafter (:class:`LeximinDrafter`): the drafter
  drafts the final that is leximin-best over the groups' utilities normalised between their worst and best
  final (the worst-off group as high as possible, then the second worst-off, ...; then the greatest sum; then
  leximin over the groups' own utilities; then the most support funded; then speaking order:
  :func:`leximin_final`). The arena's drafter compares the worst-off group only and breaks ties by speaking order;
  with three or more groups whose optima form a cycle (each final is some group's worst, so every final's
  worst-off gets 0) that tie is common, and it handed the draft to the first group to speak: on the 246
  elections of the ``pb`` study preset 115 joint drafts were the first cluster's final by that tie alone. The
  same agents play the ``pb`` domain's participants in studies and the conformance kit
  (:meth:`fairarena.pb.domain.PBDomain.scripted_agents`);
* any other spec (``openai:MODEL@URL``, ``llamacpp:...``, ``scripted:NAME``) -- a language model per group, built
  once per spec by :func:`fairarena.llm.build_model` and shared: its system prompt says which group it speaks
  for (the group's name from the file, quoted and cut to :data:`GROUP_NAME_CHARS` characters: it is data, never
  an instruction), its size, and its objective; the table it reads is :meth:`PBDomain.render` (project names
  and the title quoted as table cells, names cut to 60 characters); the domain's rules give the reply format.

A language-model group that replies with no valid allocation (over the budget, a part of a project, not JSON)
gets the arena's repairs; a debate that ends without a valid joint draft is reported as such (the row funds
nothing and says why), never replaced by another rule's set.
"""

from __future__ import annotations

from typing import Any

from fairarena.arena.optimum import OptimumNegotiator
from fairarena.errors import InputError

__all__ = ["group_agents", "check_model", "GROUP_NAME_CHARS", "group_statement", "scripted_group_agents",
           "LeximinDrafter", "leximin_final"]

#: a group's name (data from the file) is quoted in prompts up to this many characters
GROUP_NAME_CHARS = 60


def leximin_final(V: Any, support: Any = None) -> tuple[int, float]:
    """The leximin-best column of ``V (groups, finals)`` (each group's utility of each final) after normalising
    each group's row between its worst and best final (:func:`fairarena.aggregation.candidates.per_agent_range`):
    sort each final's normalised values ascending and compare them lexicographically (tolerance 1e-9), then the
    greatest sum of them; then leximin on ``V`` itself (a group's utility is the share of its support funded, so
    the groups' values are comparable: this decides when every final looks alike once normalised, e.g. each
    gives its own group 1 and both others 0); then the greatest ``support`` (one number per final: the voters'
    support it funds, so that finals symmetric for the groups go to the one more voters support); then the first
    column. Returns ``(column, its worst-off group's normalised value)``."""
    import numpy as np

    from fairarena.aggregation.candidates import per_agent_range

    V = np.asarray(V, dtype=float)
    U = per_agent_range(V)
    # worst-off first, ..., best-off, then the sum; then the same on the groups' own utilities (each the share
    # of the group's support funded, comparable across groups)
    keys = [*np.sort(U, axis=0), U.sum(axis=0), *np.sort(V, axis=0)]
    if support is not None:
        keys.append(np.asarray(support, dtype=float))
    alive = np.arange(U.shape[1])
    for k in keys:
        v = k[alive]
        alive = alive[v >= v.max() - 1e-9]
        if len(alive) == 1:
            break
    k = int(alive[0])
    return k, float(U[:, k].min())


class LeximinDrafter(OptimumNegotiator):
    """An optimum agent (proposes its group's optimum, never concedes) whose joint draft is the leximin-best
    final (:func:`leximin_final`, module doc)."""

    def _draft(self) -> tuple[Any, str]:
        finals = list(self.state.finals.items())
        if not finals:
            return self.optimum, "no valid final: I draft my own optimum"
        V = [[self.domain.value(self.instance, p, x) for _, x in finals] for p in self.everyone]
        support = [float(self.instance.support @ self.instance.mask(x)) for _, x in finals]
        k, worst = leximin_final(V, support)
        return finals[k][1], (f"I draft {finals[k][0]}'s final: the leximin-best of the finals for the groups "
                              f"(its worst-off group gets {worst:.3f} of the range between the finals)")


def scripted_group_agents(domain: Any, inst: Any, participants: Any = None) -> list[Any]:
    """One scripted agent per group (default ``domain.participants(inst)``), in order: each proposes its group's
    optimum and drafts the leximin-best final (module doc): the arena's optimum agents
    (:func:`fairarena.arena.optimum.optimum_agents`) with :class:`LeximinDrafter` as their negotiator."""
    from fairarena.arena.optimum import optimum_agents

    return optimum_agents(domain, inst, participants, negotiator=LeximinDrafter, model_name="optimum-leximin")


def check_model(spec: str, field: str = "--model") -> str:
    """The spec, checked (``scripted`` or any spec :func:`fairarena.llm.parse_model_spec` accepts); InputError
    naming ``field`` otherwise."""
    from fairarena.llm import parse_model_spec

    if spec == "scripted":
        return spec
    try:
        return str(parse_model_spec(spec))
    except InputError as exc:
        raise InputError(field, spec, exc.expected) from None


def group_statement(inst: Any, g: int) -> str:
    """What a group's agent is told about its group: the quoted, bounded name, its size and its utility."""
    from fairarena.arena.prompts import quote

    n, total = int(inst.sizes[g]), int(inst.sizes.sum())
    util = {"approval": "the share of its members' support (approvals, points) that goes to funded projects",
            "cost": "the mean over its members of the share of the cost of their supported projects that is funded",
            "cardinality": "the mean over its members of the share of their supported projects that is funded"}
    return (f"You speak for the voters of the stakeholder group <group>{quote(inst.groups[g], GROUP_NAME_CHARS)}"
            f"</group> ({n} of the {total} voters in the groups, {n / max(total, 1):.0%}). The group's utility is "
            f"{util.get(inst.utility, util['approval'])}: the column 'share of' your group in the table, summed over "
            f"the funded projects.")


def group_agents(domain: Any, inst: Any, model: str = "scripted", **build: Any) -> list[Any]:
    """The groups' arena agents (module doc); ``build``: :func:`fairarena.llm.build_model`'s options (``cache``,
    ``offline``, ``max_calls``)."""
    from fairarena.arena.protocol import Agent
    from fairarena.arena.optimum import PREFIX
    from fairarena.arena.profiles import ParticipantProfile
    from fairarena.llm import build_model

    if model == "scripted":
        return scripted_group_agents(domain, inst)
    chat = build_model(check_model(model), **build)          # one model shared by every group
    agents = []
    for g, p in enumerate(domain.participants(inst)):
        prof = ParticipantProfile(kind="participant", participant=p.name, statement=group_statement(inst, g),
                                  objective="fund the projects your group supports most, within the budget, while "
                                            "reaching a joint decision the other groups can accept",
                                  setting=domain.setting, prefix=PREFIX)
        agents.append(Agent(p.name, prof, chat, model, None, None,
                            "no retrieval for a stakeholder group: its statement and objective are in the system prompt"))
    return agents
