"""The council debate: six agents, one aligned to each ethical framework, deliberate on one cohort;
the debate's joint decision then joins the council table of :func:`fairarena.aggregation.council.council`
as one more row beside every aggregation rule (the same cohort, the same scoring).

    from fairarena.arena.council import council_debate
    out = council_debate(seed=0, closing="joint-draft")   # scripted agents by default
    out.council.table()                                    # rules ... and the row "debate"

The participants are named after their frameworks (``utilitarian``, ``egalitarian``, ...), in the order
of the frameworks registry, so the debate's agents and the council's agents carry the same names. The
same six-agent debate from the command line::

    fairarena debate --agent utilitarian=aligned:utilitarian --agent egalitarian=aligned:egalitarian ... \\
        --model scripted --closing nash
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

__all__ = ["CouncilDebate", "council_agents", "council_debate"]


@dataclass
class CouncilDebate:
    debate: Any            # fairarena.arena.result.DebateResult
    council: Any           # fairarena.aggregation.council.CouncilResult (with the row ``label`` when the joint is feasible)
    joint_in_table: bool   # False when the debate ended without a feasible joint decision (then no row)


def council_agents(cohort: Any, model: str = "scripted", frameworks: Sequence[str] | None = None,
                   **build: Any) -> list[Any]:
    """One participant per framework (default every registered one), named after it, aligned to it."""
    from fairarena.allocation.frameworks import FRAMEWORKS
    from fairarena.arena.agents import build_agent

    return [build_agent(f, f"aligned:{f}", model, cohort, **build)
            for f in (FRAMEWORKS if frameworks is None else frameworks)]


def council_debate(seed: int = 0, capacity: str = "standard", *, closing: str = "joint-draft", rounds: int = 3,
                   model: str = "scripted", rules: Sequence[str] | None = None, rule_seed: int = 0,
                   label: str = "debate", transcript: str | Path | None = None,
                   frameworks: Sequence[str] | None = None, cohort: Any = None, debate_seed: int | None = None,
                   build: dict[str, Any] | None = None, header: dict[str, Any] | None = None,
                   **config: Any) -> CouncilDebate:
    """Run the council's debate on cohort ``seed`` (``capacity`` variant) and put its joint decision into
    the council of every aggregation rule in ``rules`` (default all) on the same cohort, as row ``label``.
    ``config`` goes to :class:`fairarena.arena.DebateConfig` (e.g. ``share``, ``revisions``).

    ``frameworks``: the members (default all six); ``cohort``: the cohort itself (default sampled from
    ``seed``); ``debate_seed``: the debate's seed (default ``seed``); ``build``: options for every
    participant's :func:`fairarena.arena.agents.build_agent` (``models``, ``cache``, ``rag``, ...);
    ``header``: extra transcript header fields. A debate that ends without a feasible joint decision
    leaves the table without the row (``joint_in_table`` False)."""
    from fairarena.aggregation.council import council
    from fairarena.allocation.problem import allocation_from_mapping
    from fairarena.arena.protocol import DebateConfig
    from fairarena.arena.result import run_debate

    cfg = DebateConfig(rounds=rounds, closing=closing, seed=seed if debate_seed is None else debate_seed,
                       **config)   # validated before any work
    if cohort is None:   # the default domain's instance of the seed (a triage cohort)
        from fairarena.arena.domain import default_domain

        cohort = default_domain().sample(seed, capacity)
    problem = cohort.to_problem()
    res = run_debate(cohort, council_agents(cohort, model, frameworks, **(build or {})), cfg, transcript=transcript,
                     header=header)
    joint = res.final.get("joint") or {}
    ok = res.status == "ok" and bool(res.feasible.get("joint")) and joint.get("allocation") is not None
    extra = {label: allocation_from_mapping(problem, joint["allocation"], "joint")} if ok else None
    table = council(seed, capacity, rules=rules, joint=extra, rule_seed=rule_seed, problem=problem,
                    frameworks=frameworks)
    return CouncilDebate(res, table, ok)
