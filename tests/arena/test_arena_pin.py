"""A two-agent scripted debate gives the same transcript events and numbers as the two-agent arena did.

``data/two_agent_pin.json`` was written by the two-agent protocol (before the arena took any number of
participants and any allocation problem) on the fixed cohort file ``data/pin_cohort.json``; it was
regenerated once with that same two-agent code when the allocation core changed its CNSS definition
(indicator by default), so that it pins the arena, not the core. If the core's metrics change again,
regenerate it the same way (the two-agent protocol at commit 328dcdb on the new core) — never from the
code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairarena.arena import DebateConfig, build_agent, read_transcript, run_debate
from fairarena.triage import load_cohort

DATA = Path(__file__).parent / "data"
PIN = json.loads((DATA / "two_agent_pin.json").read_text())
TURN_KEYS = ("type", "agent", "profile", "phase", "round", "attempt", "raw", "proposal", "valid", "violations", "metrics")


def _normalise(obj):
    return json.loads(json.dumps(obj, sort_keys=True))


@pytest.mark.parametrize("key", sorted(PIN))
def test_two_agent_debate_matches_the_pin(key, tmp_path):
    pin = PIN[key]
    cohort = load_cohort(DATA / "pin_cohort.json")
    a = build_agent("A", pin["agents"][0], "scripted", cohort)
    b = build_agent("B", pin["agents"][1], "scripted", cohort)
    res = run_debate(cohort, a, b, DebateConfig(rounds=3, closing=pin["closing"]), transcript=tmp_path / "t.jsonl")
    events = []
    for e in read_transcript(tmp_path / "t.jsonl"):
        if e["type"] == "turn":
            events.append({k: e[k] for k in TURN_KEYS})
        elif e["type"] == "closing":
            events.append(e)
        elif e["type"] == "footer":
            events.append({"type": "footer", "status": e["status"]})
        else:
            events.append({"type": e["type"]})
    assert [(e["type"], e.get("agent"), e.get("phase")) for e in events] == \
        [(e["type"], e.get("agent"), e.get("phase")) for e in pin["events"]]
    for got, want in zip(events, pin["events"]):
        assert _normalise(got) == _normalise(want)
    assert _normalise({"rounds": res.rounds, "final": res.final, "feasible": res.feasible,
                       "metrics": res.metrics}) == _normalise(pin["result"])
