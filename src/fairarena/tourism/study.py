"""The tourism domain's part of a *council* study: seeded synthetic destinations, every stakeholder agent in
one debate, and the same destination decided by every rule of a list.

The study runner (:mod:`fairarena.study`) reaches them through the tourism plug-in's optional protocol
members (``study_check``, ``study_variants``, ``study_rules``, ``study_task_fields``, ``study_key_config``,
``study_council``, ``study_rule_rows``, ``study_plan_debate``: the ``study_*`` functions at the end of this
module), never by name.
The plain functions:

* :func:`check_design` validates a design before any work;
* :func:`instance_digest` fingerprints a generated destination (it enters the task keys, so a changed
  generator changes the keys);
* :func:`council_task` runs one task — one destination x debate seed x closing rule: the stakeholders'
  candidates are built once, every rule decides (:func:`fairarena.tourism.compare.rule_rows_of`, the rows of
  ``tourism compare``), the debate runs (scripted, :func:`fairarena.tourism.run.debate`; or language-model
  agents through the arena, :func:`fairarena.tourism.arena.llm_negotiate`, flows only) and writes its
  transcript;
* :func:`rule_rows` gives the rule rows alone (same numbers), for an analysis that needs rules a stored
  record lacks;
* :func:`metric_directions` says which way each metric of the rows is better.

Every row is scored by every scalar metric of :mod:`fairarena.tourism.metrics` (plus ``satisfaction`` over
all tourist groups) and every stakeholder's utility, normalised with the payoff table over the candidates
(and the row's own decision): ``u_a = (v_a - worst_a) / (best_a - worst_a)`` clipped to [0, 1], best/worst
the largest/smallest value of stakeholder ``a`` (1 when all are equal) — the normalisation of
:func:`fairarena.tourism.decisions.evaluate_decision`. A rule or scripted debate always picks a candidate, so
its utilities are those of the payoff table itself; a language-model joint decision may lie outside the
candidates' range and is clipped.

Example (runnable; a few seconds)::

    import tempfile, pathlib
    from fairarena.tourism.study import check_design, council_task

    names = ["tourists:family", "residents", "local-business", "destination"]
    check_design(stakeholders=names, decision="lists", rules=[], closing="nash", k=5, pois=12, model="scripted")
    out = council_task(destination_seed=0, pois=12, stakeholders=names, decision="lists", k=5, rounds=3,
                       closing="nash", seed=0, model="scripted", rules=["schulze", "nash", "leximin"],
                       transcript=pathlib.Path(tempfile.mkdtemp()) / "t.jsonl")
    for row in out["rows"]:
        print(row["rule"], row["chosen"], row["worst_off"], round(row["min_utility"], 3))
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from fairarena.errors import InputError
from fairarena.tourism.compare import debate_note, decision_row, rule_rows_of
from fairarena.tourism.decisions import DECISIONS, RANKING_RULES, Candidates, candidates, check_rule, rule_names
from fairarena.tourism.destination import Destination, check_pois, generate
from fairarena.tourism.metrics import ATTENTION, METRICS
from fairarena.tourism.run import debate
from fairarena.tourism.stakeholders import parse_stakeholders

__all__ = ["check_design", "instance_digest", "metric_directions", "council_task", "rule_rows", "destination_of",
           "scripted_closings", "clear_caches", "SCRIPTED", "MAX_ROUNDS", "study_check", "study_variants",
           "study_rules", "study_task_fields", "study_key_config", "study_council", "study_rule_rows",
           "study_plan_debate", "study_presets"]

#: the ``model`` value of scripted agents (no language model)
SCRIPTED = "scripted"
#: the most debate rounds a task accepts (as ``tourism run --rounds``)
MAX_ROUNDS = 50


def scripted_closings(decision: str = "flows") -> list[str]:
    """The closings of a scripted debate: the arena closings of
    :func:`fairarena.tourism.arena.scripted_closings` (``joint-draft``: the stakeholder negotiators' Nash
    bargaining draft; the candidate rules close over the finals)."""
    from fairarena.tourism.arena import scripted_closings as closings

    return closings(decision)


def _llm_closings() -> list[str]:
    from fairarena.tourism.arena import llm_closings

    return llm_closings()


def check_design(*, stakeholders: list[str], decision: str, rules: list[str], closing: str, k: int, pois: int,
                 model: str) -> None:
    """Validate a tourism study design before any work; InputError naming ``study.<field>`` on a bad value.

    ``stakeholders``: at least two distinct names that ``tourism run --stakeholders`` accepts; ``decision``
    in :data:`~fairarena.tourism.decisions.DECISIONS`; every rule of ``rules`` valid for the decision (empty:
    all); ``closing`` one of :func:`scripted_closings` (scripted) or a closing rule a tourism debate accepts
    (language model: :func:`fairarena.tourism.arena.llm_closings` — no feasible-set or repair rule);
    ``1 <= k <= pois``; ``pois`` within :data:`~fairarena.tourism.destination.POIS_RANGE`; a ``model`` other
    than ``"scripted"`` a valid model spec, and only with decision ``flows`` (language-model agents negotiate
    flows)."""
    if isinstance(stakeholders, str) or not isinstance(stakeholders, (list, tuple)):
        raise InputError("study.stakeholders", stakeholders, "a list of stakeholder names")
    parse_stakeholders(list(stakeholders), "study.stakeholders")
    if decision not in DECISIONS:
        raise InputError("study.decision", decision, f"one of {', '.join(DECISIONS)}")
    if isinstance(rules, str) or not isinstance(rules, (list, tuple)):
        raise InputError("study.mechanisms", rules, "a list of rule names (empty: every rule)")
    for r in rules:
        try:
            check_rule(decision, r)
        except InputError as exc:
            raise InputError("study.mechanisms", r, exc.expected) from None
    if len(set(rules)) != len(rules):
        raise InputError("study.mechanisms", rules, "distinct rules")
    if not isinstance(model, str) or not model.strip():
        raise InputError("study.model_a", model, f"'{SCRIPTED}' or a model spec")
    if model != SCRIPTED:
        from fairarena.llm.spec import parse_model_spec

        if decision != "flows":
            raise InputError("study.model_a", model, "'scripted' for decision lists (language-model agents "
                                                     "negotiate flows; lists are decided by rules)")
        try:
            parse_model_spec(model)
        except InputError as exc:
            raise InputError("study.model_a", model, exc.expected) from None
    allowed = scripted_closings(decision) if model == SCRIPTED else _llm_closings()
    if closing not in allowed:
        raise InputError("study.closing", closing, f"one of {', '.join(allowed)}"
                         + (" (scripted debate)" if model == SCRIPTED else
                            " (arena closing rules that score stakeholders by their objectives)"))
    check_pois(pois, "study.pois")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= pois:
        raise InputError("study.k", k, f"an integer in 1..{pois} (the number of POIs)")


@functools.lru_cache(maxsize=64)
def destination_of(destination_seed: int, pois: int) -> Destination:
    """The synthetic destination (cached per process: every task of a destination shares it)."""
    return generate(destination_seed, pois)


@functools.lru_cache(maxsize=256)
def instance_digest(destination_seed: int, pois: int) -> str:
    """sha256 hex of the canonical JSON (sorted keys, no spaces) of the generated destination."""
    blob = json.dumps(destination_of(destination_seed, pois).to_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def metric_directions(decision: str) -> dict[str, str]:
    """Every scalar metric the rows of ``decision`` carry -> ``"max"`` (higher is better) or ``"min"``,
    from :data:`fairarena.tourism.metrics.METRICS` (both decisions carry the same scalar metrics)."""
    if decision not in DECISIONS:
        raise InputError("study.decision", decision, f"one of {', '.join(DECISIONS)}")
    return {m: METRICS.entry(m).direction for m in METRICS}


@functools.lru_cache(maxsize=32)
def _candidates(destination_seed: int, pois: int, stakeholders: tuple[str, ...], decision: str, k: int,
                attention: str) -> Candidates:
    # every task of an instance (debate seeds x closings) shares the candidates: flows solve one integer
    # program per proposal and compromise. Nothing downstream mutates them.
    d = destination_of(destination_seed, pois)
    return candidates(d, parse_stakeholders(list(stakeholders), "study.stakeholders"), decision, k,
                      attention=attention)


def clear_caches() -> None:
    """Forget the destinations, digests and candidates cached in this process."""
    destination_of.cache_clear()
    instance_digest.cache_clear()
    _candidates.cache_clear()


def _setup(destination_seed: int, pois: int, stakeholders: list[str], decision: str, k: int, attention: str
           ) -> tuple[Destination, list[Any], Candidates]:
    if decision not in DECISIONS:
        raise InputError("study.decision", decision, f"one of {', '.join(DECISIONS)}")
    check_pois(pois, "study.pois")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= pois:
        raise InputError("study.k", k, f"an integer in 1..{pois} (the number of POIs)")
    ATTENTION.check(attention)
    ss = parse_stakeholders(list(stakeholders), "study.stakeholders")
    d = destination_of(destination_seed, pois)
    return d, ss, _candidates(destination_seed, pois, tuple(stakeholders), decision, k, attention)


def _rules(decision: str, rules: list[str]) -> list[str]:
    out = list(rules) or rule_names(decision)
    for r in out:
        try:
            check_rule(decision, r)
        except InputError as exc:
            raise InputError("study.mechanisms", r, exc.expected) from None
    return out


def rule_rows(*, destination_seed: int, pois: int, stakeholders: list[str], decision: str, k: int, seed: int,
              rules: list[str], attention: str = "position") -> list[dict[str, Any]]:
    """The rule rows of :func:`council_task` alone (same rows, same numbers), in the order of ``rules``
    (empty: every rule of ``rule_names(decision)``)."""
    d, ss, cands = _setup(destination_seed, pois, stakeholders, decision, k, attention)
    return rule_rows_of(d, ss, decision, cands, _rules(decision, rules), k=k, seed=seed, attention=attention)


def _usage_row(calls: int, prompt: int = 0, completion: int = 0) -> dict[str, int]:
    return {"calls": int(calls), "prompt_tokens": int(prompt), "completion_tokens": int(completion)}


def _scripted_debate(d: Destination, ss: list[Any], cands: Candidates, *, destination_seed: int, pois: int,
                     decision: str, k: int, rounds: int, closing: str, seed: int, attention: str,
                     transcript: str | Path) -> tuple[dict[str, Any] | None, dict[str, Any], dict[str, Any], str | None]:
    names = [s.name for s in ss]
    header = {"destination_seed": destination_seed, "pois": pois, "stakeholders": names, "decision": decision,
              "k": k, "attention": attention, "candidates": cands.names}
    deb = debate(d, ss, cands, decision, closing, rounds, seed, k=k, transcript=transcript, header=header)
    usage = {n: _usage_row(deb["usage"].get(n, 0)) for n in names}
    info = {"rounds": len(deb["rounds"]), "agreed": bool(deb["agreed"]), "closing": closing}
    if deb["status"] != "ok" or deb["decision"] is None:
        return None, usage, info, deb["error"] or f"no joint decision: {deb['note']}"
    row = decision_row(d, ss, decision, "debate", "debate", deb["chosen"], deb["decision"], cands, attention,
                       debate_note(deb))
    error = None
    if not row["feasible"]:
        error = "joint decision infeasible"
    return row, usage, info, error


def _llm_debate(d: Destination, ss: list[Any], cands: Candidates, *, model: str, rounds: int, closing: str,
                seed: int, attention: str, transcript: str | Path, models: dict[str, Any] | None,
                settings: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any], dict[str, Any], str | None]:
    from fairarena.arena.result import result_keys
    from fairarena.errors import FairArenaError
    from fairarena.tourism.arena import agent_name, final_flows, llm_negotiate

    names = [s.name for s in ss]
    zero = {n: _usage_row(0) for n in names}
    try:
        res = llm_negotiate(d, ss, model, rounds=rounds, closing=closing, seed=seed, transcript=transcript,
                            models=models, cands=cands, **settings)
    except InputError:
        raise
    except (FairArenaError, OSError) as exc:   # e.g. a backend that cannot be built or reached
        return None, zero, {"rounds": 0, "agreed": False, "closing": closing}, f"{type(exc).__name__}: {exc}"
    keys = result_keys([agent_name(s) for s in ss])
    usage = {}
    for s in ss:
        u = res.usage.get(keys[agent_name(s)], {})
        usage[s.name] = _usage_row(u.get("calls", 0), u.get("prompt_tokens", 0), u.get("completion_tokens", 0))
    flows = final_flows(d, res) if res.status == "ok" else {}
    finals = [flows.get(keys[agent_name(s)]) for s in ss]
    agreed = all(f is not None for f in finals) and all(np.array_equal(finals[0], f) for f in finals[1:])
    info = {"rounds": len(res.rounds), "agreed": bool(agreed), "closing": closing}
    if res.status != "ok":
        return None, usage, info, res.error or f"debate {res.status}"
    if "joint" not in flows:
        note = (res.final.get("joint") or {}).get("note") or "no joint decision"
        return None, usage, info, f"no joint decision: {note}"
    joint = res.final["joint"]
    row = decision_row(d, ss, "flows", "debate", "debate", None, flows["joint"], cands, attention,
                       str(joint.get("note") or ""))
    row["feasible"] = bool(row["feasible"] and res.feasible.get("joint", False))
    error = None
    if not row["feasible"]:
        from fairarena.tourism.metrics import flow_feasibility

        why = flow_feasibility(d, flows["joint"]) or list(joint.get("violations") or []) or ["infeasible"]
        error = "joint decision infeasible: " + "; ".join(str(v) for v in why[:3])
    return row, usage, info, error


def council_task(*, destination_seed: int, pois: int, stakeholders: list[str], decision: str, k: int, rounds: int,
                 closing: str, seed: int, model: str, rules: list[str], attention: str = "position",
                 transcript: str | Path, models: dict[str, Any] | None = None, max_tokens: int = 900,
                 temperature: float = 0.0, max_repairs: int = 2) -> dict[str, Any]:
    """One council task: destination ``(destination_seed, pois)``, every rule of ``rules`` (empty: all of
    ``rule_names(decision)``) and one debate of all ``stakeholders`` (``model`` ``"scripted"``: the scripted
    debate of ``rounds`` rounds closed by ``closing``; else language-model agents of spec ``model``, flows
    only, through the arena with closing rule ``closing``; ``models`` (spec -> built ChatModel) is shared
    with the caller so a model is built once; ``max_tokens``, ``temperature`` and ``max_repairs``: the
    language-model debate's settings, as for a triage council).

    Returns ``{"status": "ok" | "failed", "error", "stakeholders", "rows", "usage", "debate"}``: ``rows`` are
    :func:`fairarena.tourism.compare.decision_row` rows, the rules in the order given then the debate (rule
    ``"debate"``, kind ``"debate"``; ``chosen`` is the candidate for a scripted debate, None for a
    language-model joint). Utilities are normalised with the payoff table over the candidates (module doc).
    ``usage``: stakeholder -> calls and tokens (scripted: one call per round including round 0, no tokens).
    ``debate``: rounds actually run (scripted: the round of agreement or ``rounds``), whether the agents
    agreed, the closing rule that decided (None when they agreed; scripted).

    The transcript (JSON lines) goes to ``transcript``: scripted, a ``header`` line (destination seed, POIs,
    stakeholders, decision, k, rounds, closing, seed, attention, candidates), one ``round`` line per round
    (``proposals``: stakeholder -> candidate name; round 0 = the proposals) and a ``closing`` line (rule,
    chosen, agreed); language model, the arena's transcript.

    A debate that fails does not raise: status ``"failed"`` and ``error``, the rule rows kept. Model errors
    or no joint decision: no debate row. A joint decision that breaks the flow rules: the debate row with
    ``feasible`` False and status ``"failed"``. Bad input raises InputError before any work.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= MAX_ROUNDS:
        raise InputError("study.rounds", rounds, f"an integer in 1..{MAX_ROUNDS}")
    check_design(stakeholders=list(stakeholders), decision=decision, rules=list(rules), closing=closing, k=k,
                 pois=pois, model=model)
    d, ss, cands = _setup(destination_seed, pois, stakeholders, decision, k, attention)
    rows = rule_rows_of(d, ss, decision, cands, _rules(decision, rules), k=k, seed=seed, attention=attention)
    error: str | None = None
    if model == SCRIPTED:
        row, usage, info, error = _scripted_debate(d, ss, cands, destination_seed=destination_seed, pois=pois,
                                                   decision=decision, k=k, rounds=rounds, closing=closing, seed=seed,
                                                   attention=attention, transcript=transcript)
    else:
        row, usage, info, error = _llm_debate(d, ss, cands, model=model, rounds=rounds, closing=closing, seed=seed,
                                              attention=attention, transcript=transcript, models=models,
                                              settings=dict(max_tokens=max_tokens, temperature=temperature,
                                                            max_repairs=max_repairs))
    if row is not None:
        rows.append(row)
    return {"status": "ok" if error is None else "failed", "error": error, "stakeholders": [s.name for s in ss],
            "rows": rows, "usage": usage, "debate": info}


# -- the domain protocol's council-study members (fairarena.domains.protocol: study_*) ----------------------
# The tourism plug-in (fairarena.tourism.domain) answers them with these functions; ``design`` is the study's
# validated design, ``task`` one council task (its ``capacity`` is the decision).

def study_check(design: Any) -> None:
    """A council design on destinations: every closing checked with the stakeholders, decision, rules, k and
    POIs (:func:`check_design`)."""
    for closing in design.closing:
        check_design(stakeholders=list(design.stakeholders), decision=design.decision, rules=list(design.mechanisms),
                     closing=closing, k=design.k, pois=design.pois,   # scripted: the domain's own loop
                     model=SCRIPTED if design.model_a.startswith("scripted") else design.model_a)


def study_variants(design: Any) -> list[str]:
    """One variant per design: its decision (flows or lists)."""
    return [design.decision]


def study_rules(design: Any) -> list[str]:
    """Every rule of the design's decision."""
    return list(rule_names(design.decision))


def study_task_fields(design: Any, variant: str) -> dict[str, Any]:
    """The destination's size, and k for lists."""
    return {"pois": design.pois, "k": design.k if variant == "lists" else None}


def study_key_config(task: Any) -> dict[str, Any]:
    """What a task's key holds of its debate: the scripted loop's settings and the decision."""
    return {"rounds": task.rounds, "closing": task.closing, "seed": task.seed, "decision": task.capacity, "k": task.k,
            "temperature": task.temperature, "max_repairs": task.max_repairs, "max_tokens": task.max_tokens}


def study_council(task: Any, rules: list[str], models: dict[str, Any], transcript: str | Path, **_: Any
                  ) -> dict[str, Any]:
    """One council task (:func:`council_task`): the record's outcome fields (``status``, ``error``, ``members``,
    ``rows``, ``usage``, ``debate``, ``timing``)."""
    live = not task.model.startswith("scripted")
    out = council_task(destination_seed=task.cohort_seed, pois=int(task.pois), stakeholders=list(task.members),
                       decision=task.capacity, k=int(task.k or 5), rounds=task.rounds, closing=task.closing,
                       seed=task.seed, model=task.model if live else SCRIPTED,   # its own scripted loop
                       rules=list(rules), transcript=transcript, models=models, max_tokens=task.max_tokens,
                       temperature=task.temperature, max_repairs=task.max_repairs)
    return dict(status=out["status"], error=out.get("error"), members=list(out["stakeholders"]), rows=out["rows"],
                usage=out.get("usage") or {}, debate=out.get("debate") or {}, timing={})


def study_rule_rows(task: Any, rules: list[str]) -> list[dict[str, Any]]:
    """The rows of ``rules`` on a council task's destination (``task``: the task's dict)."""
    return rule_rows(destination_seed=int(task["cohort_seed"]), pois=int(task["pois"]),
                     stakeholders=list(task["members"]), decision=str(task["capacity"]), k=int(task["k"] or 5),
                     seed=int(task["seed"]), rules=list(rules))


def _flows_reply(d: Destination) -> str:
    """A stand-in's reply on a destination: the shape of a real flows proposal (each group at one POI it finds
    relevant in every slot, as the prompt asks), every amount 0 (valid: nothing can exceed a capacity). An
    every-needed-entry form would list every POI in every slot, longer than ``max_tokens``; a real proposal
    names one POI a slot."""
    from fairarena.tourism.decisions import flows_problem

    p = flows_problem(d)
    slots = list(d.slots)
    alloc: dict[str, dict[str, int]] = {}
    for g, gid in enumerate(p.ids):
        row: dict[str, int] = {}
        for s in slots:
            cols = [r for r, res in enumerate(p.resources) if res.endswith(f"@{s}")]
            r = next((c for c in cols if p.needed[g, c]), cols[0])
            row[p.resources[r]] = 0
        alloc[gid] = row
    return json.dumps({"allocation": alloc, "justification": "-", "critique": "-", "accept": True})


def study_plan_debate(task: Any, standin: Any) -> tuple[str, str, Any]:
    """``study plan``'s stand-in debate of a language-model council task: ``standin(reply)`` gives the
    stand-in model answering ``reply``; returns ``(status, reply, stand-in)``. The study's debate: the
    closing, rounds, seed and model settings of the task."""
    from fairarena.tourism.arena import llm_negotiate

    d = destination_of(task.cohort_seed, int(task.pois))
    reply = _flows_reply(d)
    st = standin(reply)
    res = llm_negotiate(d, parse_stakeholders(list(task.members), "study.stakeholders"), task.model,
                        rounds=task.rounds, closing=task.closing, seed=task.seed, models={task.model: st},
                        max_tokens=task.max_tokens, temperature=task.temperature, max_repairs=task.max_repairs)
    return res.status, reply, st


def study_presets() -> dict[str, dict[str, Any]]:
    """The study presets of destinations (the protocol's ``study_presets``): issue 15's tourism study -- the four
    built-in stakeholder kinds (tourists as the family persona) on 50 seeded 40-POI destinations, negotiating
    visitor flows through the arena; the joint drafted as the Nash bargaining solution (joint-draft,
    docs/tourism.md), every rule beside it -- and its 3-destination, 20-POI form."""
    tourism = dict(name="tourism", kind="council", domain="tourism", cohorts=50, first_cohort_seed=0,
                   stakeholders=["tourists:family", "residents", "local-business", "destination"], decision="flows",
                   pois=40, rounds=3, closing=["joint-draft"], model_a="scripted", model_b="scripted", seeds=[0],
                   mechanisms=[])
    return {"tourism": tourism, "tourism-small": dict(tourism, name="tourism-small", cohorts=3, pois=20)}
