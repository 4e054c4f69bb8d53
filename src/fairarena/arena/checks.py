"""Checks over many scripted debates (used by the slow end-to-end test and by hand).

``check_scripted_cohort(seed)`` runs every framework against every opponent on one sampled cohort with
the scripted negotiator and returns what went wrong (an empty list when every debate finished ``ok``
with every proposal, every final and the joint decision feasible). It is a module-level function so
that :func:`fairarena.execution.map_tasks` can run cohorts in worker processes::

    from fairarena.execution import map_tasks
    bad = sum(map_tasks(check_scripted_cohort, range(50), backend="processes"), [])
"""

from __future__ import annotations

from typing import Any


def check_scripted_cohort(seed: int, capacity: str = "standard", opponents: tuple[str, ...] = ("baseline", "adversarial"),
                          rounds: int = 3) -> list[dict[str, Any]]:
    from fairarena.allocation.frameworks import FRAMEWORKS
    from fairarena.arena.agents import build_agent
    from fairarena.arena.protocol import DebateConfig
    from fairarena.arena.result import run_debate
    from fairarena.arena.domain import default_domain

    cohort = default_domain().sample(seed, capacity)   # the default domain's cohort of the seed
    bad: list[dict[str, Any]] = []
    for fw in FRAMEWORKS:
        for opp in opponents:
            case = {"seed": seed, "capacity": capacity, "framework": fw, "opponent": opp}
            try:
                res = run_debate(cohort, build_agent("A", f"aligned:{fw}", "scripted", cohort),
                                 build_agent("B", opp, "scripted", cohort), DebateConfig(rounds=rounds))
            except Exception as exc:  # a crash is a failure to report, not to hide
                bad.append({**case, "error": f"{type(exc).__name__}: {exc}"})
                continue
            infeasible = [f"{t.agent} {t.phase} {t.round}" for t in res.turns
                          if not (t.valid and t.metrics and t.metrics["feasible"])]
            if res.status != "ok" or infeasible or not all(res.feasible.values()):
                bad.append({**case, "status": res.status, "error": res.error, "infeasible": infeasible,
                            "feasible": res.feasible})
    return bad
