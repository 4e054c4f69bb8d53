"""Council studies: every member in one debate per instance, and the same instance decided by every rule.

A study design with ``kind = "council"`` (presets ``council`` and ``tourism``) expands into one
:class:`fairarena.study.design.CouncilTask` per instance x capacity variant x debate seed x closing
rule. Its record holds one **row** per mechanism and one for the debate, each scored the same way:

``{"rule", "kind" ("rule" | "debate"), "family" (the rule's kind: candidates, feasible, ...),
"metrics" {metric: value}, "utilities" {member: normalised utility}, "worst_off", "min_utility",
"gini_utilities", "feasible", "note"}``

* **triage** (``domain = "triage"``): the members are ``aligned:<framework>`` agents (default all six);
  the rules aggregate the members' proposals of their frameworks' exact optima
  (:func:`fairarena.aggregation.council.council`); the debate is the arena's N-agent debate of the same
  members (:func:`fairarena.arena.council.council_debate`), closed by ``closing``; its joint decision is
  scored by the same functions. Metrics: the allocation metrics of the paper (ESG, RMG, ...). A lottery
  (a rule's tie, the procedural-fairness lottery) is scored in expectation, as the council table does,
  and counts as feasible (a lottery over feasible proposals); the duel study's mechanisms score its
  seeded draw instead.
* **tourism** (``domain = "tourism"``): the members are stakeholders; the rules and the scripted (or
  language-model) debate are those of ``fairarena tourism compare`` (:mod:`fairarena.tourism.study`).

The analysis (:mod:`fairarena.study.council_analysis`) pairs the debate with each rule by
instance (:func:`fairarena.stats.compare_table`, the
study's tests, exclusions and corrections), for every metric, the worst-off member's utility and the Gini
of the members' utilities. The report shows the mean of every metric and every member's utility per rule
and for the debate side by side (Arrow's trade-off as one table and one heat map), the paired differences,
and each instance's rows.

The mechanisms are post-processing: they are not in a task's key. A record lacking a rule of the current
design (a folder adopted with ``--force`` after the list changed) has that rule's row computed from the
instance at analysis time (rules do not depend on the debate).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

DEBATE = "debate"


# ------------------------------------------------------------------------------------------------ run

def _triage_row(r: Mapping[str, Any], kind: str) -> dict[str, Any]:
    from fairarena.study.mechanisms import SCALAR_METRICS

    ev = r["evaluation"]
    m = r["metrics"]
    lottery = r.get("lottery") is not None
    # a lottery over the proposals (feasible candidates) is a feasible randomised decision: it is scored in
    # expectation, as the council table does (its expected allocation may be fractional on an indivisible
    # resource, which the allocation check would call infeasible)
    return {"rule": r["rule"], "kind": kind, "family": r["kind"],
            "metrics": {k: float(m[k]) for k in SCALAR_METRICS if k in m and m[k] is not None},
            "utilities": {a: float(u) for a, u in r["utilities"].items()},
            "worst_off": ev["worst_off"]["name"], "min_utility": float(ev["worst_off"]["utility"]),
            "gini_utilities": float(ev["gini_utilities"]), "feasible": lottery or bool(m.get("feasible", True)),
            "note": str(r.get("note") or "") + (" (a lottery: scored in expectation)" if lottery else "")}


def _frameworks(members: Sequence[str]) -> list[str]:
    return [m.partition(":")[2] for m in members]


def rule_rows(task: Mapping[str, Any], rules: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of ``rules`` on a council task's instance (``task``: the task's dict), in that order."""
    if not rules:
        return []
    if task["domain"] == "file":
        return _file_rule_rows(str(task["problem"]), list(task["members"]), list(rules), int(task["seed"]))
    if task["domain"] == "tourism":
        from fairarena.tourism.study import rule_rows as tourism_rows

        return tourism_rows(destination_seed=int(task["cohort_seed"]), pois=int(task["pois"]),
                            stakeholders=list(task["members"]), decision=str(task["capacity"]),
                            k=int(task["k"] or 5), seed=int(task["seed"]), rules=list(rules))
    from fairarena.aggregation.council import council
    from fairarena.study.mechanisms import cohort_problem

    res = council(int(task["cohort_seed"]), str(task["capacity"]), rules=list(rules), rule_seed=int(task["seed"]),
                  problem=cohort_problem(int(task["cohort_seed"]), str(task["capacity"])),
                  frameworks=_frameworks(task["members"]))
    return [_triage_row(r, "rule") for r in res.rows]


def execute_council(task: Any, opts: Any, model_for: Any, transcript: str | Path) -> dict[str, Any]:
    """Run one council task, its debate's transcript into ``transcript``; return the record's outcome
    fields (``status``, ``error``, ``members``, ``rows``, ``usage``, ``debate``, ``timing``; with a language
    model also ``serving``, as a duel's record: :func:`fairarena.study.store.serving`).
    ``model_for(spec)`` gives the process's shared model for a spec. The study store's ``execute_task``
    calls it, records an exception as a failed task and keeps the transcript."""
    t0 = time.perf_counter()
    rules = list(opts.mechanisms)
    live = not task.model.startswith("scripted")
    models = {task.model: model_for(task.model)} if live else {}
    if task.domain == "file":
        rec = _execute_file(task, rules, opts, models, transcript)
        turns = _transcript_turns(transcript) if live else []
    elif task.domain == "tourism":
        from fairarena.tourism.study import council_task

        out = council_task(destination_seed=task.cohort_seed, pois=int(task.pois), stakeholders=list(task.members),
                           decision=task.capacity, k=int(task.k or 5), rounds=task.rounds, closing=task.closing,
                           seed=task.seed, model=task.model if live else "scripted",   # its own scripted loop
                           rules=rules, transcript=transcript, models=models, max_tokens=task.max_tokens,
                           temperature=task.temperature, max_repairs=task.max_repairs)
        rec = dict(status=out["status"], error=out.get("error"), members=list(out["stakeholders"]), rows=out["rows"],
                   usage=out.get("usage") or {}, debate=out.get("debate") or {}, timing={})
        turns: Sequence[Any] = _transcript_turns(transcript) if live else []
    else:
        from fairarena.arena.council import council_debate
        from fairarena.study.design import cohort_of

        cohort = cohort_of(task.cohort_seed, task.capacity)
        run = council_debate(task.cohort_seed, task.capacity, closing=task.closing, rounds=task.rounds,
                             model=task.model, rules=rules, rule_seed=task.seed, label=DEBATE, transcript=transcript,
                             frameworks=_frameworks(task.members), cohort=cohort, debate_seed=task.seed,
                             build=dict(cache=opts.cache, offline=opts.offline, rag=task.rag, models=models),
                             header={"command": "study", "task": task.to_dict()}, max_repairs=task.max_repairs,
                             temperature=task.temperature, max_tokens=task.max_tokens)
        res = run.debate
        rows = [_triage_row(r, DEBATE if r["kind"] == "joint" else "rule") for r in run.council.rows]
        if not run.joint_in_table:
            rows.append({"rule": DEBATE, "kind": DEBATE, "family": "joint", "metrics": None, "utilities": None,
                         "worst_off": None, "min_utility": None, "gini_utilities": None, "feasible": False,
                         "note": f"no feasible joint decision ({res.status}: {res.error})"})
        rec = dict(status=res.status, error=res.error, members=list(run.council.agents), rows=rows, usage=res.usage,
                   debate={"rounds": len(res.rounds), "feasible": res.feasible,
                           "final": final_metrics(res)},
                   timing=dict(res.timing or {}))
        turns = res.turns
    if live:   # how the debate was served, as a duel's record says it (a scripted council has no server)
        from fairarena.study.store import serving

        serve = serving(turns, [task.model], opts)
        if serve is not None:
            rec["serving"] = serve
    rec["timing"]["wall_s"] = round(time.perf_counter() - t0, 6)
    return rec


def _utility_rows(domain: Any, instance: Any, members: Sequence[str]) -> tuple[Any, Any]:
    """The council profile of the members (their optima as candidates) and, per member, the (lowest,
    highest) value over the candidates: the range a decision's utilities are normalised on."""
    from fairarena.domains.registry import problem_file_form

    council_profile = problem_file_form("council_profile")

    prof = council_profile(domain, instance, list(members))
    ps = {p.name: p for p in domain.participants(instance)}
    span = {m: [domain.value(instance, ps[m], x) for x in prof.X] for m in members}
    return prof, {m: (min(v), max(v)) for m, v in span.items()}


def _row_summary(utilities: Mapping[str, float]) -> dict[str, Any]:
    from fairarena.inequality import gini

    worst = min(utilities, key=lambda a: utilities[a])
    return {"worst_off": worst, "min_utility": float(utilities[worst]),
            "gini_utilities": float(gini(np.array(list(utilities.values()), dtype=float)))}


def _file_rule_rows(problem: str, members: Sequence[str], rules: Sequence[str], seed: int) -> list[dict[str, Any]]:
    """The rows of ``rules`` on a problem file (``fairarena.problems.run.council``: the members' optima as
    candidates, utilities normalised per member over them; a lottery scored by its expected metrics)."""
    from fairarena.domains.registry import problem_file_form

    council = problem_file_form("rules")
    from fairarena.study.design import file_problem

    domain, instance = file_problem(problem)
    if set(members) != {st.name for st in instance.stakeholders}:
        instance = _restricted(instance, members)
    doc = council(domain, instance, list(rules), seed=seed)
    return [{"rule": r["rule"], "kind": "rule", "family": r["family"], "metrics": dict(r["metrics"]),
             "utilities": dict(r["utilities"]), **_row_summary(r["utilities"]), "feasible": bool(r["valid"]),
             "note": str(r.get("note") or "") + (" (a lottery: scored in expectation)" if r["lottery"] else "")}
            for r in doc["rows"]]


def _restricted(instance: Any, members: Sequence[str]) -> Any:
    from dataclasses import replace as with_

    return with_(instance, stakeholders=tuple(st for st in instance.stakeholders if st.name in members))


def _execute_file(task: Any, rules: Sequence[str], opts: Any, models: Mapping[str, Any],
                  transcript: str | Path) -> dict[str, Any]:
    """A problem file's council: its members (aligned to the file's stakeholders) debate through the problems
    package's debate (:func:`fairarena.problems.run.run_debate_on`), the transcript moved to ``transcript``;
    the rows are every rule's (:func:`_file_rule_rows`) and the debate's joint, scored by the file's metrics,
    its utilities normalised on the same per-member range as the rules'."""
    import os
    import shutil
    import tempfile

    from fairarena.allocation.problem import allocation_from_mapping
    from fairarena.domains.registry import problem_file_form

    prepare_debate, run_debate_on = problem_file_form("prepare_debate"), problem_file_form("run_debate_on")
    from fairarena.study.design import file_problem

    domain, instance = file_problem(str(task.problem))
    plan = prepare_debate(domain, agents=[f"aligned:{m}" for m in task.members],
                          models=[task.model] if task.model in models else [], rounds=task.rounds,
                          closing=task.closing, max_repairs=task.max_repairs, seed=task.seed,
                          temperature=task.temperature, max_tokens=task.max_tokens)
    with tempfile.TemporaryDirectory(prefix=".council-", dir=os.path.dirname(os.path.abspath(transcript))) as tmp:
        doc = run_debate_on(plan, out=tmp, cache=opts.cache, offline=opts.offline)
        shutil.move(os.path.join(tmp, "transcript.jsonl"), str(transcript))
    rows = _file_rule_rows(str(task.problem), task.members, rules, task.seed) if rules else []
    finals = doc["problem_metrics"]["final"]
    joint = finals.get("joint") or {}
    mapping = (doc["final"].get("joint") or {}).get("allocation")
    if doc["status"] == "ok" and joint.get("metrics") is not None and mapping:
        _, span = _utility_rows(domain, instance, task.members)
        ps = {p.name: p for p in domain.participants(instance)}
        x = allocation_from_mapping(domain.problem(instance), mapping)
        util = {m: (1.0 if hi - lo <= 1e-12 else (domain.value(instance, ps[m], x) - lo) / (hi - lo))
                for m, (lo, hi) in span.items()}
        rows.append({"rule": DEBATE, "kind": DEBATE, "family": "joint", "metrics": dict(joint["metrics"]),
                     "utilities": util, **_row_summary(util), "feasible": not joint.get("violations"),
                     "note": ""})
    else:
        rows.append({"rule": DEBATE, "kind": DEBATE, "family": "joint", "metrics": None, "utilities": None,
                     "worst_off": None, "min_utility": None, "gini_utilities": None, "feasible": False,
                     "note": f"no feasible joint decision ({doc['status']}: {doc['error']})"})
    return dict(status=doc["status"], error=doc["error"], members=list(task.members), rows=rows,
                usage=doc["usage"] or {},
                debate={"rounds": len(doc["rounds"]), "feasible": doc["feasible"],
                        "final": {k: v["metrics"] for k, v in finals.items()}},
                timing=dict(doc["timing"] or {}))


def final_metrics(res: Any) -> dict[str, Any]:
    """Each member's final metrics and the joint's, keyed as the debate's ``final`` and ``feasible`` are (``a``,
    ``b`` and ``joint`` for two members, the members' names otherwise): the arena keeps them in ``metrics``,
    not inside the finals (which hold the allocation, validity, violations, repairs and justification).
    A member without a final (a failed debate) maps to None."""
    metrics = res.metrics or {}
    return {k: metrics.get(k) for k in (res.final or {})}


def _transcript_turns(path: str | Path) -> list[dict[str, Any]]:
    """The turn events of a tourism debate's arena transcript (none when the debate failed before writing
    one): the tourism task returns no turns of its own."""
    from fairarena.arena.transcript import iter_turns, read_transcript
    from fairarena.errors import InputError

    try:
        return list(iter_turns(read_transcript(path)))
    except (OSError, InputError):
        return []


def preflight(cfg: Any, tasks: Sequence[Any]) -> None:
    """Build the first task's members before any work or write (a scripted stand-in for language models:
    it checks the profiles and the retrieval set-up the same way)."""
    if not tasks or cfg.domain != "triage":
        return          # a tourism design is checked whole by its validator
    from fairarena.arena.council import council_agents
    from fairarena.study.design import cohort_of

    t = tasks[0]
    council_agents(cohort_of(t.cohort_seed, t.capacity), t.model if t.model.startswith("scripted") else "scripted",
                   _frameworks(t.members), rag=t.rag)


__all__ = ["DEBATE", "execute_council", "preflight", "rule_rows"]
