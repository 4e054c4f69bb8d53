"""One debate's trace for the emergence analysis, read from its record and transcript events (used by the
study analysis and by the noise analysis of :mod:`fairarena.study.noise`)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence


def _stage(ev: Mapping[str, Any]) -> str | None:
    if ev.get("phase") == "round":
        return f"r{ev['round']}"
    if ev.get("phase") == "final":
        return "final"
    return None                                 # closing turns (draft, decide, ...) are the joint's


def trace_of(record: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The emergence analysis' view of one debate (see :mod:`fairarena.stats.emergence`): the last attempt
    of each agent at each stage, with its repairs, metrics (per-patient CNSS included), violations."""
    t = record["task"]
    a_name, b_name = "A", "B"          # the transcript's participant names (opponent_role is the paper's label, B or C)
    header = next((e for e in events if e.get("type") == "header"), {})
    turns: dict[tuple[str, str], dict[str, Any]] = {}
    joint = None
    for e in events:
        if e.get("type") == "turn":
            st = _stage(e)
            who = "A" if e.get("agent") == a_name else "B" if e.get("agent") == b_name else None
            if st is None or who is None:
                continue
            m = e.get("metrics") or {}
            prev = turns.get((who, st))
            turns[(who, st)] = {"agent": who, "stage": st, "metrics": m,
                                "feasible": bool(e.get("valid")) and bool(m.get("feasible", False)),
                                "repairs": 0 if prev is None else prev["repairs"] + 1,
                                "violations": list(e.get("violations") or [])}
        elif e.get("type") == "closing":
            joint = {"metrics": e.get("metrics") or {}, "feasible": bool(e.get("feasible"))}
    return {"key": record["key"], "cohort": t["cohort"], "framework": t["framework"], "opponent": t["agent_b"],
            "patients": list((header.get("cohort") or {}).get("patients") or []),
            "turns": list(turns.values()), "joint": joint}
