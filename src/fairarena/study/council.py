"""Council studies: every member in one debate per instance, and the same instance decided by every rule.

A study design with ``kind = "council"`` (presets ``council``, ``tourism``, ...) expands into one
:class:`fairarena.study.design.CouncilTask` per instance x capacity variant x debate seed x closing
rule. Its record holds one **row** per mechanism and one for the debate, each scored the same way:

``{"rule", "kind" ("rule" | "debate"), "family" (the rule's kind: candidates, feasible, ...),
"metrics" {metric: value}, "utilities" {member: normalised utility}, "worst_off", "min_utility",
"gini_utilities", "feasible", "note"}``

* **the default domain** (the arena's profile agents: ``agent_a``, ``aligned:<framework>`` agents, default
  all six): the rules aggregate the members' proposals of their frameworks' exact optima
  (:func:`fairarena.aggregation.council.council`); the debate is the arena's N-agent debate of the same
  members (:func:`fairarena.arena.council.council_debate`), closed by ``closing``; its joint decision is
  scored by the same functions. Metrics: the domain's metric specs. A lottery (a rule's tie, the
  procedural-fairness lottery) is scored in expectation, as the council table does, and counts as feasible
  (a lottery over feasible proposals); the duel study's mechanisms score its seeded draw instead.
* **a domain with its own council study** (the protocol's ``study_council`` and ``study_rule_rows``, e.g. a
  destination's stakeholders or a problem file's): the domain runs the task and gives the rows.
* **any other domain**: the members are its participants (``stakeholders``, default every one); the rules
  decide over the participants' council profile (the domain's ``council_profile``, default their optima
  with payoff-table utilities: :func:`fairarena.aggregation.council.domain_profile`), a lottery scored by its
  expected metrics; the debate is the generic arena's, played by the domain's scripted agents, its joint
  scored by the domain's metrics and the members' values normalised on the same range as the rules'.

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

def _profile_row(r: Mapping[str, Any], kind: str) -> dict[str, Any]:
    from fairarena.study.mechanisms import scalar_metrics

    ev = r["evaluation"]
    m = r["metrics"]
    lottery = r.get("lottery") is not None
    # a lottery over the proposals (feasible candidates) is a feasible randomised decision: it is scored in
    # expectation, as the council table does (its expected allocation may be fractional on an indivisible
    # resource, which the allocation check would call infeasible)
    return {"rule": r["rule"], "kind": kind, "family": r["kind"],
            "metrics": {k: float(m[k]) for k in scalar_metrics() if k in m and m[k] is not None},
            "utilities": {a: float(u) for a, u in r["utilities"].items()},
            "worst_off": ev["worst_off"]["name"], "min_utility": float(ev["worst_off"]["utility"]),
            "gini_utilities": float(ev["gini_utilities"]), "feasible": lottery or bool(m.get("feasible", True)),
            "note": str(r.get("note") or "") + (" (a lottery: scored in expectation)" if lottery else "")}


def _is_default(domain: str) -> bool:
    from fairarena.study.instances import default_domain

    return domain == default_domain()


def _hook(domain: str, member: str) -> Any:
    from fairarena.study.design import study_hook

    return study_hook(domain, member)


def _frameworks(members: Sequence[str]) -> list[str]:
    return [m.partition(":")[2] for m in members]


def rule_rows(task: Mapping[str, Any], rules: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of ``rules`` on a council task's instance (``task``: the task's dict), in that order."""
    if not rules:
        return []
    if not _is_default(str(task["domain"])):
        own = _hook(str(task["domain"]), "study_rule_rows")
        return own(task, list(rules)) if own is not None else participant_rule_rows(task, rules)
    from fairarena.aggregation.council import council
    from fairarena.study.mechanisms import cohort_problem

    res = council(int(task["cohort_seed"]), str(task["capacity"]), rules=list(rules), rule_seed=int(task["seed"]),
                  problem=cohort_problem(int(task["cohort_seed"]), str(task["capacity"])),
                  frameworks=_frameworks(task["members"]))
    return [_profile_row(r, "rule") for r in res.rows]


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
    if not _is_default(task.domain):
        own = _hook(task.domain, "study_council")
        if own is not None:
            rec = own(task, rules, models, transcript, cache=opts.cache, offline=opts.offline)
        else:
            rec = _execute_participant_council(task, rules, transcript)
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
        rows = [_profile_row(r, DEBATE if r["kind"] == "joint" else "rule") for r in run.council.rows]
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


def _row_summary(utilities: Mapping[str, float]) -> dict[str, Any]:
    from fairarena.inequality import gini

    worst = min(utilities, key=lambda a: utilities[a])
    return {"worst_off": worst, "min_utility": float(utilities[worst]),
            "gini_utilities": float(gini(np.array(list(utilities.values()), dtype=float)))}


def _instance_options(domain: str, task: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments the domain's ``sample`` takes of a council task's fields (its variant as
    ``capacity``, the ``pois`` and ``k`` a design gave)."""
    from fairarena.study.instances import sample_options

    return sample_options(domain, {f: task.get(f) for f in ("capacity", "pois", "k") if task.get(f) is not None})


def _participant_setup(task: Mapping[str, Any]) -> tuple[Any, Any, list[Any], Any]:
    """``(domain, instance, members as participants, council profile)`` of a council task (its dict)."""
    from fairarena.aggregation.council import domain_profile
    from fairarena.study.instances import instance_of, study_domain

    domain = str(task["domain"])
    problem = task.get("problem")
    dom = study_domain(domain, problem)
    inst = instance_of(domain, int(task["cohort_seed"]), problem=problem, options=_instance_options(domain, task))
    by = {p.name: p for p in dom.participants(inst)}
    ps = [by[m] for m in task["members"]]
    return dom, inst, ps, domain_profile(dom, inst, ps)


def participant_rule_rows(task: Mapping[str, Any], rules: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of ``rules`` over a council task's participants (module doc: any other domain)."""
    from fairarena.aggregation.rules import RULES, aggregate
    from fairarena.domains.protocol import violations_of

    if not rules:
        return []
    dom, inst, _, prof = _participant_setup(task)
    scored = {c: dom.evaluate(inst, prof.X[k]) for k, c in enumerate(prof.candidates)}
    rows = []
    for rule in rules:
        d = aggregate(prof, rule, seed=int(task["seed"]))
        util = {a.name: float(u) for a, u in zip(prof.agents, d.utilities)}
        note = str(d.note or "")
        if d.lottery is not None:
            keys = scored[next(iter(d.lottery))]
            metrics = {k: float(sum(p * scored[c][k] for c, p in d.lottery.items())) for k in keys}
            feasible, note = True, note + " (a lottery: scored in expectation)"
        else:
            chosen = d.winner or d.draw
            x = prof.X[prof.candidates.index(chosen)]
            metrics = {k: float(v) for k, v in scored[chosen].items()}
            feasible = not violations_of(dom, inst, x)
        rows.append({"rule": rule, "kind": "rule", "family": RULES.entry(rule).kind, "metrics": metrics,
                     "utilities": util, **_row_summary(util), "feasible": feasible, "note": note})
    return rows


def _execute_participant_council(task: Any, rules: Sequence[str], transcript: str | Path) -> dict[str, Any]:
    """A council of a domain's participants (module doc): the record's outcome fields."""
    from fairarena.allocation.problem import allocation_from_mapping
    from fairarena.arena.result import run_debate
    from fairarena.domains.protocol import violations_of
    from fairarena.errors import InputError

    fields = task.to_dict()
    dom, inst, ps, prof = _participant_setup(fields)
    own = getattr(dom, "scripted_agents", None)
    if callable(own):
        agents = list(own(inst, ps))
    else:
        from fairarena.arena.optimum import optimum_agents

        agents = optimum_agents(dom, inst, ps)
    res = run_debate(inst, agents, config=task.debate_config(), transcript=transcript,
                     header={"command": "study", "task": fields}, domain=dom)
    rows = participant_rule_rows(fields, rules)
    mapping = (res.final.get("joint") or {}).get("allocation")
    x = None
    if res.status == "ok" and mapping:
        try:
            x = allocation_from_mapping(dom.problem(inst), mapping)
        except InputError:
            x = None
    if x is not None and not violations_of(dom, inst, x):
        util = {}
        for p in ps:
            vs = [dom.value(inst, p, c) for c in prof.X]
            lo, hi = min(vs), max(vs)
            util[p.name] = 1.0 if hi - lo <= 1e-12 else float((dom.value(inst, p, x) - lo) / (hi - lo))
        rows.append({"rule": DEBATE, "kind": DEBATE, "family": "joint",
                     "metrics": {k: float(v) for k, v in dom.evaluate(inst, x).items()}, "utilities": util,
                     **_row_summary(util), "feasible": True, "note": ""})
    else:
        why = f"{res.status}: {res.error}" if res.status != "ok" else "the joint is missing or not valid"
        rows.append({"rule": DEBATE, "kind": DEBATE, "family": "joint", "metrics": None, "utilities": None,
                     "worst_off": None, "min_utility": None, "gini_utilities": None, "feasible": False,
                     "note": f"no feasible joint decision ({why})"})
    return dict(status=res.status, error=res.error, members=[p.name for p in ps], rows=rows, usage=res.usage,
                debate={"rounds": len(res.rounds), "feasible": res.feasible, "final": final_metrics(res)},
                timing=dict(res.timing or {}))


def final_metrics(res: Any) -> dict[str, Any]:
    """Each member's final metrics and the joint's, keyed as the debate's ``final`` and ``feasible`` are (``a``,
    ``b`` and ``joint`` for two members, the members' names otherwise): the arena keeps them in ``metrics``,
    not inside the finals (which hold the allocation, validity, violations, repairs and justification).
    A member without a final (a failed debate) maps to None."""
    metrics = res.metrics or {}
    return {k: metrics.get(k) for k in (res.final or {})}


def _transcript_turns(path: str | Path) -> list[dict[str, Any]]:
    """The turn events of a debate's arena transcript (none when the debate failed before writing
    one): a domain's own council task returns no turns."""
    from fairarena.arena.transcript import iter_turns, read_transcript
    from fairarena.errors import InputError

    try:
        return list(iter_turns(read_transcript(path)))
    except (OSError, InputError):
        return []


def preflight(cfg: Any, tasks: Sequence[Any]) -> None:
    """Build the first task's members before any work or write (a scripted stand-in for language models:
    it checks the profiles and the retrieval set-up the same way)."""
    if not tasks or not _is_default(cfg.domain):
        return          # another domain's design is checked whole by its validator
    from fairarena.arena.council import council_agents
    from fairarena.study.design import cohort_of

    t = tasks[0]
    council_agents(cohort_of(t.cohort_seed, t.capacity), t.model if t.model.startswith("scripted") else "scripted",
                   _frameworks(t.members), rag=t.rag)


__all__ = ["DEBATE", "execute_council", "participant_rule_rows", "preflight", "rule_rows"]
