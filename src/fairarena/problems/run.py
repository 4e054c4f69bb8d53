"""What the commands do with a problem file: a debate, a council, their documents and tables.

* :func:`prepare_debate` / :func:`run_debate_on` -- ``fairarena debate --problem FILE``: the file's
  stakeholders (or the ``--agent`` profiles) debate; the result adds each final's and the joint's metrics
  of the file (the transcript records the allocation core's metrics, as for every domain).
* :func:`council` -- ``fairarena aggregate council --problem FILE``: one voter per stakeholder, one candidate
  per stakeholder's optimum, every candidate-set rule. A rule that returns a lottery is reported as a
  lottery (its support with each candidate's allocation and weight, the seeded draw), never as its
  expected allocation: on indivisible resources that would be fractional units. The decision carried out
  is the winner, or the lottery's draw, a whole allocation.
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from fairarena.errors import InputError

__all__ = ["council_profile", "closing_profile", "candidate_rules", "council", "prepare_debate", "run_debate_on",
           "print_council", "print_debate", "study_problem", "study_check", "study_members", "study_rule_rows",
           "study_council"]


def council_profile(domain: Any, instance: Any, names: Sequence[str] | None = None) -> Any:
    """Voters = the stakeholders (default every one; ``names`` in that order), candidates = their optima
    (named after them), utilities = each stakeholder's value normalised over the candidates (1 at its best,
    0 at its worst), ``X`` = the optima: :func:`fairarena.aggregation.council.candidate_profile` on them."""
    from fairarena.aggregation.council import candidate_profile

    ps = domain.participants(instance)
    if names is not None:
        ps = [p for n in names for p in ps if p.name == n]
    return candidate_profile(domain, instance, ps)


def closing_profile(domain: Any, instance: Any, participants: dict[str, Any], finals: dict[str, np.ndarray]
                    ) -> tuple[Any, list[str]]:
    """The arena's closing hook (:class:`fairarena.domains.protocol.ArenaDomain`): the debaters aligned to a
    stakeholder (``aligned:<stakeholder>``, or a participant profile named after one) vote with its value over
    the valid finals; every valid final is a candidate (:func:`fairarena.aggregation.council.finals_profile`)."""
    from fairarena.aggregation.council import finals_profile

    return finals_profile(domain, instance, participants, finals, word="stakeholder")


def candidate_rules(names: Sequence[str] | None = None, field: str = "--rule") -> list[str]:
    """The candidate-set aggregation rules (default every one); a feasible-set or repair rule asked for by
    name is an InputError naming ``field``: :func:`fairarena.aggregation.council.candidate_rules`."""
    from fairarena.aggregation.council import candidate_rules as home

    return home(names, field)


def _mapping(domain: Any, instance: Any, x: np.ndarray) -> dict[str, dict[str, Any]]:
    from fairarena.allocation.problem import allocation_to_mapping

    return allocation_to_mapping(domain.problem(instance), x)


def council(domain: Any, instance: Any, rules: Sequence[str] | None = None, seed: int = 0) -> dict[str, Any]:
    """Every candidate-set rule on the stakeholders' optima (module doc); returns the JSON document."""
    from fairarena.aggregation.rules import RULES, aggregate
    from fairarena.domains.protocol import violations_of

    names = candidate_rules(rules)
    prof = council_profile(domain, instance)
    keys = list(instance.metrics)
    cand_metrics = {c: domain.evaluate(instance, prof.X[k]) for k, c in enumerate(prof.candidates)}
    rows = []
    for rule in names:
        d = aggregate(prof, rule, seed=seed)
        chosen = d.winner or d.draw
        assert chosen is not None
        x = prof.X[prof.candidates.index(chosen)]
        bad = violations_of(domain, instance, x)
        row: dict[str, Any] = {
            "rule": rule, "family": RULES.entry(rule).family, "note": d.note,
            "decision": "lottery" if d.lottery is not None else "winner", "winner": d.winner,
            "lottery": None, "draw": d.draw, "chosen": chosen,
            "allocation": _mapping(domain, instance, x), "valid": not bad, "violations": bad,
            "utilities": {a.name: float(u) for a, u in zip(prof.agents, d.utilities)},
        }
        if d.lottery is not None:
            row["lottery"] = [{"candidate": c, "probability": float(p),
                               "allocation": _mapping(domain, instance, prof.X[prof.candidates.index(c)])}
                              for c, p in d.lottery.items()]
            row["metrics"] = {k: float(sum(p * cand_metrics[c][k] for c, p in d.lottery.items())) for k in keys}
            row["metric_basis"] = ("expected metric over the lottery's support (each support allocation is whole; "
                                   "the lottery is not averaged into one allocation)")
            row["utility_basis"] = "expected utility over the lottery"
        else:
            row["metrics"] = dict(cand_metrics[chosen])
            row["metric_basis"] = "the chosen allocation"
            row["utility_basis"] = "the chosen allocation"
        rows.append(row)
    return {"problem": instance.title, "domain": domain.name, "seed": seed,
            "agents": [a.name for a in prof.agents], "candidates": list(prof.candidates),
            "optima": {c: {"allocation": _mapping(domain, instance, prof.X[k]), "metrics": cand_metrics[c]}
                       for k, c in enumerate(prof.candidates)},
            "metrics": {k: {"label": m.label, "direction": m.direction} for k, m in instance.metrics.items()},
            "utilities": {a.name: {c: float(prof.U[i, k]) for k, c in enumerate(prof.candidates)}
                          for i, a in enumerate(prof.agents)},
            "rows": rows, "note": instance.note}


def print_council(doc: dict[str, Any]) -> None:
    from rich.table import Table

    from fairarena.cli_common import console

    keys = list(doc["metrics"])
    t = Table(title=f"council on {doc['problem']}: each rule's decision over the stakeholders' optima")
    t.add_column("rule")
    t.add_column("chosen")
    for k in keys:
        t.add_column(k, justify="right")
    for r in doc["rows"]:
        t.add_row(r["rule"], r["winner"] or "lottery*", *(f"{r['metrics'][k]:.3f}" for k in keys))
    u = Table(title="each stakeholder's utility (1: its best optimum, 0: its worst)")
    u.add_column("rule")
    for a in doc["agents"]:
        u.add_column(a, justify="right")
    for r in doc["rows"]:
        u.add_row(r["rule"], *(f"{r['utilities'][a]:.2f}" for a in doc["agents"]))
    console.print(t)
    console.print("metrics: " + "; ".join(f"{k}{'' if m['label'] == k else ' ' + m['label']} ({m['direction']})"
                                          for k, m in doc["metrics"].items()),
                  highlight=False, markup=False)
    for r in doc["rows"]:
        if r["lottery"] is not None:
            console.print(f"* {r['rule']}: a lottery over whole allocations: "
                          + ", ".join(f"{e['candidate']}'s optimum {e['probability']:.3f}" for e in r["lottery"])
                          + f"; seeded draw: {r['draw']} (metrics and utilities: expectations over the lottery)",
                          highlight=False, markup=False)
    console.print(u)
    if doc.get("note"):
        console.print(doc["note"], highlight=False, markup=False)


# -- debates -----------------------------------------------------------------------------------------------

def prepare_debate(domain: Any, *, agents: Sequence[str] = (), models: Sequence[str] = (), rounds: int = 3,
                   closing: str = "joint-draft", max_repairs: int = 2, seed: int = 0, temperature: float = 0.0,
                   max_tokens: int = 900, share: float = 0.8, revisions: int = 3, max_calls: int | None = None
                   ) -> dict[str, Any]:
    """Validate every option (nothing is built or written)."""
    from fairarena.arena import DebateConfig
    from fairarena.cli_common import check_seed
    from fairarena.problems.agents import resolve_agents

    check_seed(seed)
    config = DebateConfig(rounds=rounds, max_repairs=max_repairs, closing=closing, seed=seed, temperature=temperature,
                          max_tokens=max_tokens, share=share, revisions=revisions)
    if max_calls is not None and (isinstance(max_calls, bool) or not isinstance(max_calls, int) or max_calls < 1):
        raise InputError("max-calls", max_calls, "a positive integer")
    instance = domain.sample(seed)
    participants = resolve_agents(domain, instance, agents, models)
    return {"domain": domain, "instance": instance, "config": config, "participants": participants,
            "max_calls": max_calls}


def run_debate_on(plan: dict[str, Any], *, out: Any = None, cache: Any = None, offline: bool = False) -> dict[str, Any]:
    """Build the agents and run the debate of a :func:`prepare_debate` plan; writes into ``out`` when given
    (``transcript.jsonl``, ``result.json`` and ``problem.json``, the problem as the header holds it)."""
    from pathlib import Path

    from fairarena.allocation.problem import allocation_from_mapping
    from fairarena.arena import run_debate
    from fairarena.arena.result import result_keys
    from fairarena.domains.protocol import violations_of
    from fairarena.fsutil import atomic_write_json
    from fairarena.problems.agents import build_agents

    domain, instance = plan["domain"], plan["instance"]
    built = build_agents(domain, instance, plan["participants"], cache=cache, offline=offline,
                         max_calls=plan["max_calls"])
    transcript = None
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        transcript = out / "transcript.jsonl"
        atomic_write_json(out / "problem.json", domain.to_dict(instance))
    result = run_debate(instance, built, config=plan["config"], transcript=transcript, domain=domain,
                        header={"command": "debate", "problem_source": domain.source or None})
    problem = domain.problem(instance)
    keys = result_keys([a.name for a in built])

    def allocation(mapping: Any) -> np.ndarray | None:
        if not mapping:
            return None
        try:
            return allocation_from_mapping(problem, mapping)
        except InputError:
            return None

    def scored(mapping: Any) -> dict[str, float] | None:
        x = allocation(mapping)
        return None if x is None else domain.evaluate(instance, x)

    rounds = []
    for t in result.turns:
        if t.phase == "round" and t.proposal is not None and (t.valid or t.attempt == plan["config"].max_repairs):
            rounds.append({"round": t.round, "agent": t.agent, "valid": t.valid,
                           "metrics": scored(t.proposal.get("allocation")) if t.valid else None})
    finals = {}
    for k, v in result.final.items():
        x = allocation(v.get("allocation"))
        finals[k] = {"metrics": None if x is None else domain.evaluate(instance, x),
                     "violations": ["no allocation"] if x is None else violations_of(domain, instance, x)}
    doc = {"status": result.status, "error": result.error, "problem": instance.title, "domain": domain.name,
           "agents": [{"name": a.name, "profile": a.profile.name, "model": a.model_spec} for a in built],
           "keys": keys, "rounds": result.rounds, "final": result.final, "feasible": result.feasible,
           "problem_metrics": {"rounds": rounds, "final": finals,
                               "directions": {k: m.direction for k, m in instance.metrics.items()}},
           "metrics": result.metrics, "usage": result.usage, "timing": result.timing,
           "transcript": result.transcript}
    if out is not None:
        atomic_write_json(out / "result.json", doc)
    return doc


def print_debate(doc: dict[str, Any]) -> None:
    from rich.table import Table

    from fairarena.cli_common import console

    dirs = doc["problem_metrics"]["directions"]
    keys = list(dirs)
    t = Table(title=f"debate on {doc['problem']}: " + ", ".join(f"{a['name']} = {a['profile']} ({a['model']})"
                                                                for a in doc["agents"]))
    t.add_column("round", no_wrap=True)
    t.add_column("agent", no_wrap=True)
    for k in keys:
        t.add_column(f"{k} ({dirs[k]})", justify="right")
    t.add_column("ok")
    for r in doc["problem_metrics"]["rounds"]:
        m = r["metrics"]
        t.add_row(str(r["round"]), r["agent"], *(f"{m[k]:.3f}" if m else "-" for k in keys),
                  "yes" if r["valid"] else "[red]no[/]")
    rev = {v: k for k, v in doc["keys"].items()}
    for k, f in doc["problem_metrics"]["final"].items():
        m = f["metrics"]
        t.add_row("final", rev.get(k, k), *(f"{m[x]:.3f}" if m else "-" for x in keys),
                  "yes" if not f["violations"] else "[red]no[/]")
    console.print(t)
    j = doc["final"].get("joint")
    if j:
        console.print(f"joint ({j['rule']}): {j['note']}", highlight=False, markup=False)
        for v in j["violations"]:
            console.print(f"  - {v}", highlight=False, markup=False)
    console.print(f"wall {doc['timing']['wall_s']:.3f} s" + (f"; transcript: {doc['transcript']}" if doc["transcript"] else ""),
                  highlight=False)


# -- the domain protocol's council-study members (fairarena.domains.protocol: study_*) ----------------------
# The file domain (fairarena.problems.domain) answers them with these functions: a council study of a
# problem file (``problem = PATH``) runs the file's debate (:func:`run_debate_on`) and its rules
# (:func:`council`). ``design``: the study's validated design; ``task``: one council task.

def study_problem(domain: Any, path: str) -> tuple[Any, Any]:
    """``(domain bound to the file, its problem)``: validated completely (InputError naming ``study.problem``);
    cached per domain object and path."""
    return _study_problem(domain, str(path))


def _clear_study_problems() -> None:
    _study_problem.cache_clear()


study_problem.cache_clear = _clear_study_problems  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=8)
def _study_problem(domain: Any, path: str) -> tuple[Any, Any]:
    from dataclasses import replace as bind

    try:
        instance = domain.load(path)
    except InputError as exc:
        raise InputError("study.problem", path, f"a valid problem file ({exc})") from None
    return bind(domain, declared=instance, source=str(path)), instance


def study_check(domain: Any, design: Any) -> None:
    """A council on the file's one problem (cohorts = 1), a readable problem file, members among its
    stakeholders (two at least), arena closing rules, candidate-set rules only."""
    from fairarena.arena.closing import closing_rules

    if not design.problem:
        raise InputError("study.problem", design.problem, "the path of a problem file with domain "
                                                          f"{domain.name!r}")
    if design.cohorts != 1:
        raise InputError("study.cohorts", design.cohorts, f"1 with domain {domain.name!r} (a file declares one "
                                                          "problem; replicate with seeds or samples)")
    _, instance = study_problem(domain, design.problem)
    names = [st.name for st in instance.stakeholders]
    for j, m in enumerate(design.stakeholders):
        if m not in names:
            raise InputError(f"study.stakeholders[{j}]", m, f"a stakeholder of the problem file ({', '.join(names)})")
    if len(design.stakeholders or names) < 2:
        raise InputError("study.stakeholders", design.stakeholders, "at least two members in a council")
    closings = list(closing_rules())
    for j, c in enumerate(design.closing):
        if c not in closings:
            raise InputError(f"study.closing[{j}]", c, f"a closing rule, one of {', '.join(closings)}")
    ok = candidate_rules()
    for j, r in enumerate(design.mechanisms):
        if r not in ok:
            raise InputError(f"study.mechanisms[{j}]", r, f"a candidate-set rule with domain {domain.name!r} "
                                                          f"({', '.join(ok)})")


def study_members(domain: Any, design: Any) -> list[str]:
    """The design's stakeholders, default every stakeholder of the file."""
    return list(design.stakeholders) or [st.name for st in study_problem(domain, design.problem)[1].stakeholders]


def _restricted(instance: Any, members: Sequence[str]) -> Any:
    from dataclasses import replace as with_

    return with_(instance, stakeholders=tuple(st for st in instance.stakeholders if st.name in members))


def study_rule_rows(domain: Any, task: Any, rules: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of ``rules`` on a council task's problem (``task``: the task's dict): the members' optima as
    candidates, utilities normalised per member over them, a lottery scored by its expected metrics
    (:func:`council`)."""
    from fairarena.aggregation.stakeholders import utility_summary

    if not rules:
        return []
    members = list(task["members"])
    bound, instance = study_problem(domain, str(task["problem"]))
    if set(members) != {st.name for st in instance.stakeholders}:
        instance = _restricted(instance, members)
    doc = council(bound, instance, list(rules), seed=int(task["seed"]))
    return [{"rule": r["rule"], "kind": "rule", "family": r["family"], "metrics": dict(r["metrics"]),
             "utilities": dict(r["utilities"]), **utility_summary(r["utilities"]), "feasible": bool(r["valid"]),
             "note": str(r.get("note") or "") + (" (a lottery: scored in expectation)" if r["lottery"] else "")}
            for r in doc["rows"]]


def study_council(domain: Any, task: Any, rules: Sequence[str], models: dict[str, Any], transcript: Any, *,
                  cache: Any = None, offline: bool = False) -> dict[str, Any]:
    """One council task: the members (aligned to the file's stakeholders) debate (:func:`run_debate_on`, the
    transcript moved to ``transcript``); the rows are every rule's (:func:`study_rule_rows`) and the debate's
    joint, scored by the file's metrics, its utilities normalised on the same per-member range as the
    rules'. Returns the record's outcome fields."""
    import os
    import shutil
    import tempfile

    from fairarena.aggregation.stakeholders import utility_summary
    from fairarena.allocation.problem import allocation_from_mapping

    bound, instance = study_problem(domain, str(task.problem))
    plan = prepare_debate(bound, agents=[f"aligned:{m}" for m in task.members],
                          models=[task.model] if task.model in models else [], rounds=task.rounds,
                          closing=task.closing, max_repairs=task.max_repairs, seed=task.seed,
                          temperature=task.temperature, max_tokens=task.max_tokens)
    with tempfile.TemporaryDirectory(prefix=".council-", dir=os.path.dirname(os.path.abspath(transcript))) as tmp:
        doc = run_debate_on(plan, out=tmp, cache=cache, offline=offline)
        shutil.move(os.path.join(tmp, "transcript.jsonl"), str(transcript))
    rows = study_rule_rows(domain, task.to_dict(), rules) if rules else []
    finals = doc["problem_metrics"]["final"]
    joint = finals.get("joint") or {}
    mapping = (doc["final"].get("joint") or {}).get("allocation")
    if doc["status"] == "ok" and joint.get("metrics") is not None and mapping:
        prof = council_profile(bound, instance, list(task.members))
        ps = {p.name: p for p in bound.participants(instance)}
        span = {m: [bound.value(instance, ps[m], x) for x in prof.X] for m in task.members}
        x = allocation_from_mapping(bound.problem(instance), mapping)
        util = {}
        for m, vs in span.items():
            lo, hi = min(vs), max(vs)
            util[m] = 1.0 if hi - lo <= 1e-12 else (bound.value(instance, ps[m], x) - lo) / (hi - lo)
        rows.append({"rule": "debate", "kind": "debate", "family": "joint", "metrics": dict(joint["metrics"]),
                     "utilities": util, **utility_summary(util), "feasible": not joint.get("violations"), "note": ""})
    else:
        rows.append({"rule": "debate", "kind": "debate", "family": "joint", "metrics": None, "utilities": None,
                     "worst_off": None, "min_utility": None, "gini_utilities": None, "feasible": False,
                     "note": f"no feasible joint decision ({doc['status']}: {doc['error']})"})
    return dict(status=doc["status"], error=doc["error"], members=list(task.members), rows=rows,
                usage=doc["usage"] or {},
                debate={"rounds": len(doc["rounds"]), "feasible": doc["feasible"],
                        "final": {k: v["metrics"] for k, v in finals.items()}},
                timing=dict(doc["timing"] or {}))
