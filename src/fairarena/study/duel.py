"""A duel of a domain's participants: two of them debate through the generic arena, played by the domain's
scripted agents, and the record holds the domain's own metrics.

A duel design on a domain other than the default one (or with ``stakeholders``) pits the domain's
participants against each other two by two (:func:`fairarena.study.design.expand_participant_duel`). Each
debate is :func:`fairarena.arena.result.run_debate` on the task's instance with the agents the domain's
``scripted_agents(instance, [a, b])`` gives (default :func:`fairarena.arena.optimum.optimum_agents`),
closed by the task's closing rule; its record has the shape of every duel record (``rounds``, ``final``,
``feasible``, ``metrics`` for ``a``, ``b`` and ``joint``), the metrics being the domain's
(:meth:`Domain.evaluate <fairarena.domains.protocol.Domain>`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["execute_participant_duel", "duel_agents", "preflight_participant_duel"]


def duel_agents(task: Any) -> tuple[Any, Any, list[Any]]:
    """``(domain, instance, [agent A, agent B])`` of a participant duel's task."""
    from fairarena.study.instances import instance_of, study_domain

    dom = study_domain(task.domain, task.problem)
    inst = instance_of(task.domain, task.cohort_seed, problem=task.problem, options=task.sample_options())
    ps = {p.name: p for p in dom.participants(inst)}
    pair = [ps[task.agent_a], ps[task.agent_b]]
    own = getattr(dom, "scripted_agents", None)
    if callable(own):
        agents = list(own(inst, pair))
    else:
        from fairarena.arena.optimum import optimum_agents

        agents = optimum_agents(dom, inst, pair)
    return dom, inst, agents


def execute_participant_duel(task: Any, opts: Any, transcript: str | Path) -> dict[str, Any]:
    """One participant duel into ``transcript``: the record's outcome fields."""
    from fairarena.arena.result import run_debate

    dom, inst, agents = duel_agents(task)
    res = run_debate(inst, agents, config=task.debate_config(), transcript=transcript,
                     header={"command": "study", "task": task.to_dict()}, domain=dom)
    return dict(status=res.status, error=res.error, rounds=res.rounds, final=res.final, feasible=res.feasible,
                metrics=res.metrics, usage=res.usage, timing=dict(res.timing or {}))


def preflight_participant_duel(cfg: Any, tasks: Any) -> None:
    """Build the first task's agents before any work or write."""
    if tasks:
        duel_agents(tasks[0])
