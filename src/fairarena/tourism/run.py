"""A tourism decision run end to end: the stakeholders' proposals, a rule's decision or the scripted debate
through the arena (:func:`debate`), and the evaluation (``fairarena tourism run`` calls :func:`run`).

Above :mod:`fairarena.tourism.decisions` (candidates, rules, evaluation) and
:mod:`fairarena.tourism.negotiator` (the scripted stakeholder negotiators), which it combines.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairarena.errors import InputError, SolverError
from fairarena.tourism.decisions import (DECISIONS, Candidates, candidates, check_rule, decide, decode, encode,
                                         evaluate_decision, flows_problem, lists_problem, to_mapping)
from fairarena.tourism.destination import Destination
from fairarena.tourism.stakeholders import Stakeholder, agent_name

__all__ = ["debate", "run"]


def debate(d: Destination, stakeholders: list[Stakeholder], cands: Candidates, decision: str,
           rule: str = "joint-draft", rounds: int = 3, seed: int = 0, *, k: int = 5,
           transcript: Any = None, header: dict[str, Any] | None = None) -> dict[str, Any]:
    """The scripted debate: the stakeholders negotiate through the arena's turn loop
    (:func:`fairarena.tourism.negotiator.scripted_negotiate`: one scripted stakeholder negotiator each,
    ``rounds`` rounds and the finals, then the arena closing ``rule`` — ``joint-draft``, the default, drafts
    the Nash bargaining solution over the candidates with disagreement = each stakeholder's worst final).

    Returns ``{"rounds": [[candidate name per stakeholder] per round], "finals": [candidate name per
    stakeholder], "agreed" (every final the same), "chosen" (the joint's candidate name; None when the joint
    is none of them), "index" (its candidate index or None), "decision" (the joint as a decision array, None
    when there is none), "closing" (the rule), "how" (the closing's own account), "note", "status",
    "error", "usage" (stakeholder -> calls)}``; names are None for a proposal that is no candidate."""
    from fairarena.allocation.problem import allocation_from_mapping
    from fairarena.tourism.negotiator import scripted_negotiate

    res = scripted_negotiate(d, stakeholders, cands, decision, rounds=rounds, closing=rule, seed=seed, k=k,
                             transcript=transcript, header=header)
    problem = lists_problem(d) if decision == "lists" else flows_problem(d)
    X = [encode(d, decision, x) for x in cands.decisions]

    def name_of(mapping: Any) -> int | None:
        if not mapping:
            return None
        x = allocation_from_mapping(problem, mapping)
        return next((i for i, y in enumerate(X) if np.array_equal(x, y)), None)

    order = [agent_name(s) for s in stakeholders]
    by_round: dict[int, dict[str, int | None]] = {}
    finals: dict[str, int | None] = {}
    for t in res.turns:
        if t.proposal is None or not t.valid:
            continue
        if t.phase == "round":
            by_round.setdefault(t.round, {})[t.agent] = name_of(t.proposal["allocation"])
        elif t.phase == "final":
            finals[t.agent] = name_of(t.proposal["allocation"])
    label = (lambda i: None if i is None else cands.names[i])
    rows = [[label(by_round[r].get(n)) for n in order] for r in sorted(by_round)]
    fin = [label(finals.get(n)) for n in order]
    joint = res.final.get("joint") or {}
    idx = name_of(joint.get("allocation"))
    dec = None
    if joint.get("allocation"):
        dec = decode(d, decision, allocation_from_mapping(problem, joint["allocation"]))[0]
    from fairarena.arena.result import result_keys

    keys = result_keys(order)
    return {"rounds": rows, "finals": fin, "agreed": len(set(fin)) == 1 and fin[0] is not None,
            "chosen": label(idx), "index": idx, "decision": dec, "closing": rule,
            "how": (joint.get("details") or {}).get("how"), "note": joint.get("note"), "status": res.status,
            "error": res.error, "usage": {s.name: res.usage.get(keys[agent_name(s)], {}).get("calls", 0)
                                          for s in stakeholders},
            "transcript": res.transcript}


def run(d: Destination, stakeholders: list[Stakeholder], decision: str, rule: str, *, k: int = 5,
        rounds: int = 0, seed: int = 0, attention: str = "position", cands: Candidates | None = None,
        closing: str = "joint-draft") -> dict[str, Any]:
    """Proposals, the rule's decision (or, when ``rounds > 0``, the scripted debate through the arena closed
    by ``closing``), evaluation."""
    if decision not in DECISIONS:
        raise InputError("--decision", decision, f"one of {', '.join(DECISIONS)}")
    if decision == "lists" and not 1 <= k <= len(d.pois):
        raise InputError("--k", k, f"1..{len(d.pois)} (the number of POIs)")
    check_rule(decision, rule)
    cands = cands or candidates(d, stakeholders, decision, k, attention=attention)
    proposals = {s.name: {"decision": to_mapping(d, decision, cands.decisions[i]),
                          "evaluation": evaluate_decision(d, stakeholders, decision, cands.decisions[i], cands,
                                                          attention)["stakeholders"]}
                 for i, s in enumerate(stakeholders)}
    if rounds > 0:
        deb = debate(d, stakeholders, cands, decision, closing, rounds, seed, k=k)
        if deb["decision"] is None:
            raise SolverError(f"the scripted debate ended without a joint decision: {deb['error'] or deb['note']}")
        x = deb["decision"]
        out_dec = {"rule": rule, "closing": closing, "chosen": deb["chosen"], "lottery": None,
                   "debate": {k: v for k, v in deb.items() if k != "decision"}}   # the decision: below, as a mapping
    else:
        res = decide(d, stakeholders, decision, rule, cands, k, seed)
        x = res["decision"]
        out_dec = {"rule": rule, "chosen": res["chosen"], "lottery": res["lottery"], "note": res["note"]}
    out_dec["decision"] = to_mapping(d, decision, x)
    return {"decision_kind": decision, "rule": rule, "decision": out_dec, "proposals": proposals,
            "evaluation": evaluate_decision(d, stakeholders, decision, x, cands, attention),
            "candidates": cands.names, "seed": seed, "k": k if decision == "lists" else None,
            "attention": attention}
