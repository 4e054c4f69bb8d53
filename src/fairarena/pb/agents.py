"""The stakeholder groups' debate agents of a PB election (``fairarena pb compare --model SPEC``).

One agent per stakeholder group (:meth:`fairarena.pb.domain.PBDomain.participants`), named after the group's
key (``age_lt30``, ``cluster_1``, ...), debating through the generic arena (:func:`fairarena.arena.result.run_debate`
with the PB domain): rounds of proposals, then a joint draft that every group accepts or amends.

Models (``--model``):

* ``scripted`` (default) -- the conformance kit's optimum agents
  (:func:`fairarena.arena.optimum.optimum_agents`): each group proposes its own optimum feasible set (the
  knapsack of its utility) and never concedes; the drafter drafts the final whose worst-off group fares best;
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

from fairarena.errors import InputError

__all__ = ["group_agents", "check_model", "GROUP_NAME_CHARS", "group_statement"]

#: a group's name (data from the file) is quoted in prompts up to this many characters
GROUP_NAME_CHARS = 60


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
    from fairarena.arena.optimum import PREFIX, optimum_agents
    from fairarena.arena.profiles import ParticipantProfile
    from fairarena.llm import build_model

    if model == "scripted":
        return optimum_agents(domain, inst)
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
