"""Deliberation against mechanisms: each debate's proposals aggregated by social-choice rules.

A study design may list ``mechanisms`` (names of :data:`fairarena.aggregation.rules.RULES`). For every
finished debate, each mechanism is applied twice, to the participants' round-1 proposals and to their
finals, with the objectives the arena's closing by an aggregation rule uses
(:func:`fairarena.arena.closing.participant_objective`: an aligned agent votes with its framework, a
baseline agent with ``utilitarian``, an adversarial one does not vote but its valid proposal stays a
candidate). A lottery is scored on its seeded draw (seed = the debate's seed), as a closing by that rule
would be. Each outcome is scored by the same metrics function as the joint recommendation
(:func:`fairarena.allocation.metrics.compute_metrics`).

Mechanisms are post-processing of a debate: they do not enter a debate's task key (the debate, its
transcript and its joint are the same whatever mechanisms are listed). The runner computes them into
each record (``record["mechanisms"]``); ``study stats`` computes any that a record lacks (a study run
before the field was set, or with other mechanisms) from the transcript, with the same function.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fairarena.errors import InputError

STAGES = ("round1", "final")


def scalar_metrics(domain: str | None = None) -> tuple[str, ...]:
    """The metric keys of ``domain`` (default: the study's default domain, whose profile debates the
    mechanisms aggregate), from its metric specs (:func:`fairarena.domains.protocol.metric_specs`), in their
    order: never retyped here."""
    from fairarena.study.instances import default_domain, metric_directions

    return tuple(metric_directions(domain or default_domain()))


def allocation_directions(domain: str | None = None) -> dict[str, str]:
    """Every metric of ``domain`` (default: the default domain) -> ``"max"`` | ``"min"`` (which is better),
    from its metric specs."""
    from fairarena.study.instances import default_domain, metric_directions

    return metric_directions(domain or default_domain())


def __getattr__(name: str) -> Any:
    if name == "SCALAR_METRICS":   # the former constant: the default domain's metric keys
        return scalar_metrics()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.lru_cache(maxsize=64)
def cohort_problem(cohort_seed: int, capacity: str) -> Any:
    """The allocation problem of a study cohort, one object per (seed, capacity) in a process: the
    aggregation objectives cache their normalisation ranges (each framework's optimum, a MILP) per problem
    object, so every debate of a cohort shares them."""
    from fairarena.study.design import cohort_of

    return cohort_of(cohort_seed, capacity).to_problem()


def stage_proposals(events: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Mapping[str, Any] | None]]:
    """Per stage (``round1``, ``final``) and participant, the allocation mapping of its last attempt when
    that attempt was valid, else None. ``events`` are transcript turn events (dicts with ``type``,
    ``agent``, ``phase``, ``round``, ``valid``, ``proposal``); other events are skipped."""
    out: dict[str, dict[str, Mapping[str, Any] | None]] = {s: {} for s in STAGES}
    for e in events:
        if e.get("type") != "turn":
            continue
        phase = e.get("phase")
        stage = "round1" if phase == "round" and e.get("round") == 1 else "final" if phase == "final" else None
        if stage is None:
            continue
        prop = e.get("proposal") or {}
        ok = bool(e.get("valid")) and isinstance(prop.get("allocation"), Mapping)
        out[stage][str(e["agent"])] = prop["allocation"] if ok else None   # a later attempt replaces it
    return out


def _scalars(m: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: float(m[k]) for k in scalar_metrics() if k in m and m[k] is not None}
    out["feasible"] = bool(m.get("feasible", False))
    return out


def apply_mechanisms(problem: Any, participants: Sequence[tuple[str, str | None, Mapping[str, Any] | None]],
                     mechanisms: Sequence[str], seed: int) -> dict[str, dict[str, Any]]:
    """Each mechanism's outcome on one stage's proposals.

    ``participants``: (name, objective or None, allocation mapping or None when invalid) in speaking
    order. Voters are the participants with a valid proposal and an objective; valid proposals of the
    others are extra candidates (as :func:`fairarena.arena.closing.aggregation_profile`). Fewer than two
    voters, or a rule refusing the profile, gives an outcome with ``allocation`` None and the reason."""
    from fairarena.aggregation.rules import Agent, Profile, aggregate
    from fairarena.allocation.metrics import compute_metrics
    from fairarena.allocation.problem import allocation_from_mapping, allocation_to_mapping

    valid = {n: allocation_from_mapping(problem, m) for n, _, m in participants if m is not None}
    voters = [(n, o) for n, o, m in participants if n in valid and o]
    extra = {n: valid[n] for n, o, _ in participants if n in valid and not o}

    def empty(note: str) -> dict[str, Any]:
        return {"allocation": None, "metrics": None, "feasible": False, "note": note}

    if len(voters) < 2:
        why = f"{len(voters)} participant(s) with a valid proposal and an objective; a rule needs two"
        return {r: empty(why) for r in mechanisms}
    try:
        profile = Profile.from_proposals(problem, [Agent(n, str(o), valid[n]) for n, o in voters], extra=extra)
    except InputError as exc:
        return {r: empty(f"no profile: {exc}") for r in mechanisms}
    out: dict[str, dict[str, Any]] = {}
    for rule in mechanisms:
        try:
            d = aggregate(profile, rule, seed=seed)
        except InputError as exc:
            out[rule] = empty(f"rule {rule} refused the profile: {exc}")
            continue
        x = d.drawn_allocation(profile)
        if x is None:
            out[rule] = empty(f"rule {rule} gave no allocation: {d.note}")
            continue
        m = compute_metrics(problem, x)
        rec: dict[str, Any] = {"allocation": allocation_to_mapping(problem, x), "metrics": _scalars(m),
                               "feasible": bool(m["feasible"]), "winner": d.winner, "note": d.note,
                               "voters": {n: o for n, o in voters}}
        if d.lottery is not None:
            rec["lottery"] = {"probabilities": dict(d.lottery), "draw": d.draw, "seed": seed,
                              "expected": allocation_to_mapping(problem, d.allocation)}
        out[rule] = rec
    return out


def debate_mechanisms(problem: Any, agents: Sequence[Mapping[str, Any]], events: Iterable[Mapping[str, Any]],
                      mechanisms: Sequence[str], seed: int) -> dict[str, dict[str, Any]]:
    """``{stage: {mechanism: outcome}}`` of one debate. ``agents``: ``[{"name", "profile"}, ...]`` in
    speaking order (the result's ``agents``, or the transcript header's)."""
    from fairarena.arena.closing import participant_objective
    from fairarena.arena.profiles import parse_agent

    props = stage_proposals(events)
    objectives = [(str(a["name"]), participant_objective(parse_agent(str(a["profile"])))) for a in agents]
    return {stage: apply_mechanisms(problem, [(n, o, props[stage].get(n)) for n, o in objectives], mechanisms, seed)
            for stage in STAGES}


def turn_events(turns: Iterable[Any]) -> list[dict[str, Any]]:
    """The transcript view of in-memory :class:`fairarena.arena.transcript.Turn` objects (what
    :func:`stage_proposals` reads), without serialising the prompts."""
    return [{"type": "turn", "agent": t.agent, "phase": t.phase, "round": t.round, "valid": t.valid,
             "proposal": t.proposal} for t in turns]


def record_mechanisms(root: str | Path, record: Mapping[str, Any], mechanisms: Sequence[str]) -> dict[str, Any]:
    """The record's mechanism outcomes, every one of ``mechanisms`` at both stages: those stored in the
    record, the missing ones computed from its transcript (nothing is written)."""
    have = record.get("mechanisms") or {}
    missing = [r for r in mechanisms if any(r not in (have.get(s) or {}) for s in STAGES)]
    if not missing:
        return {s: {r: have[s][r] for r in mechanisms} for s in STAGES}
    from fairarena.arena.transcript import read_transcript

    events = read_transcript(Path(root) / record["transcript"])
    header = next((e for e in events if e.get("type") == "header"), {})
    agents = [{"name": n, "profile": a["profile"]} for n, a in (header.get("agents") or {}).items()]
    t = record["task"]
    problem = cohort_problem(int(t["cohort_seed"]), str(t["capacity"]))
    new = debate_mechanisms(problem, agents, events, missing, int(t["seed"]))
    return {s: {r: (new[s][r] if r in missing else have[s][r]) for r in mechanisms} for s in STAGES}


def spent(record: Mapping[str, Any]) -> tuple[int, int]:
    """(model calls, prompt + completion tokens) over every participant of one debate, from the record's
    usage (which the runner sums from the transcript's turns). A scripted participant's calls count, its
    tokens do not: the scripted models report a size estimate of their prompts and replies, but no model
    spent them, so a scripted debate spends 0 tokens. A duel's participants use ``model_a`` / ``model_b``
    (usage keys ``a``, ``b``); a council's members all use ``model``."""
    t = record.get("task") or {}
    specs = {"a": t.get("model_a"), "b": t.get("model_b")}
    calls = tokens = 0
    for who, u in (record.get("usage") or {}).items():
        if isinstance(u, Mapping):
            calls += int(u.get("calls") or 0)
            if not str(t.get("model") or specs.get(who) or "").startswith("scripted"):
                tokens += int(u.get("prompt_tokens") or 0) + int(u.get("completion_tokens") or 0)
    return calls, tokens


def compare_mechanisms(root: str | Path, records: Sequence[Mapping[str, Any]], mechanisms: Sequence[str],
                       directions: Mapping[str, str], *, opponents: Sequence[str] | None = None,
                       frameworks: Sequence[str] | None = None, **stats_kw: Any) -> dict[str, Any]:
    """The debate's joint (side A) against each mechanism at each stage (side B), paired by cohort within
    every opponent x framework cell, with :func:`fairarena.stats.compare_table` (same test selection,
    exclusions, bootstrap and correction options as the study's Table 3). Each row also carries the
    model calls and tokens the debates of its cell spent (means per debate, from the records' usage)."""
    from fairarena.stats import compare_table

    outcomes = {r["key"]: record_mechanisms(root, r, mechanisms) for r in records}
    spending: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for r in records:
        t = r["task"]
        spending.setdefault((t["agent_b"], t["framework"]), []).append(spent(r))
    rows: list[dict[str, Any]] = []
    for stage in STAGES:
        for mech in mechanisms:
            recs = []
            for r in records:
                t, m = r["task"], r.get("metrics") or {}
                o = outcomes[r["key"]][stage][mech]
                joint = m.get("joint")
                recs.append({"cohort": t["cohort"], "framework": t["framework"], "opponent": t["agent_b"],
                             "a": None if joint is None else {k: joint.get(k) for k in directions},
                             "a_feasible": bool((r.get("feasible") or {}).get("joint")),
                             "opp": None if o["metrics"] is None else {k: o["metrics"].get(k) for k in directions},
                             "opp_feasible": bool(o["feasible"])})
            if not recs:
                continue
            st = compare_table(recs, directions, opponents=opponents, frameworks=frameworks, **stats_kw)
            for c in st.cells:
                res = c.result
                sp = spending.get((c.opponent, c.framework), [])
                calls = sum(x[0] for x in sp) / len(sp) if sp else math.nan
                tokens = sum(x[1] for x in sp) / len(sp) if sp else math.nan
                rows.append({"mechanism": mech, "stage": stage, "opponent": c.opponent, "framework": c.framework,
                             "metric": c.metric, "direction": res.direction, "n": res.n,
                             "n_excluded": res.n_excluded, "n_missing": res.n_missing,
                             "joint_mean": res.mean_a, "mechanism_mean": res.mean_b, "mean_diff": res.mean_diff,
                             "test": res.test, "p": res.p, "p_adjusted": res.p_adjusted, "d_z": res.d_z,
                             "winner": {"A": "joint", "B": "mechanism"}.get(res.winner, res.winner),
                             "calls_per_debate": calls, "tokens_per_debate": tokens,
                             "diff_per_1k_tokens": (res.mean_diff / tokens * 1000.0
                                                    if tokens and tokens > 0 and not math.isnan(res.mean_diff)
                                                    else None)})
    return {"mechanisms": list(mechanisms), "stages": list(STAGES), "rows": rows}
