"""A whole debate against a real (loopback) HTTP model replays offline from the SQLite cache."""

from __future__ import annotations

import json

from fairarena.allocation.problem import allocation_to_mapping
from fairarena.arena import DebateConfig, build_agent, read_transcript, run_debate
from fairarena.triage import sample_cohort


def _same(x, y) -> bool:
    return json.dumps(x, sort_keys=True) == json.dumps(y, sort_keys=True)


def test_debate_replays_offline_from_the_cache(fake_server, tmp_path):
    cohort = sample_cohort(3, "tight")
    p = cohort.to_problem()
    fake_server.reply = json.dumps({"allocation": allocation_to_mapping(p, p.zeros()),
                                    "justification": "wait and see", "critique": "none"})
    fake_server.plan = [500]  # one transient failure on the way, retried
    cfg = DebateConfig(rounds=2, use_schema=False, closing="joint-draft")
    cache = tmp_path / "cache.sqlite"
    spec = f"openai:m@{fake_server.base_url}"
    live = run_debate(cohort, build_agent("A", "aligned:care", spec, cohort, cache=cache, rag="off", retries=3),
                      build_agent("B", "baseline", spec, cohort, cache=cache, rag="off"), cfg,
                      transcript=tmp_path / "live.jsonl")
    assert live.status == "ok" and live.feasible["joint"]
    n_requests = len(fake_server.requests)
    assert n_requests == 2 * 2 + 2 + 2 + 1  # rounds, finals, draft + decide, one retried 500
    fake_server.close()
    replay = run_debate(cohort, build_agent("A", "aligned:care", "openai:m@http://127.0.0.1:9/v1", cohort, cache=cache,
                                            offline=True, rag="off"),
                        build_agent("B", "baseline", "openai:m@http://127.0.0.1:9/v1", cohort, cache=cache,
                                    offline=True, rag="off"), cfg, transcript=tmp_path / "replay.jsonl")
    assert replay.status == "ok"
    a = [e for e in read_transcript(tmp_path / "live.jsonl") if e["type"] in ("turn", "closing")]
    b = [e for e in read_transcript(tmp_path / "replay.jsonl") if e["type"] in ("turn", "closing")]
    assert [e.get("raw") for e in a] == [e.get("raw") for e in b]
    # compared as JSON text: proposals that give nobody nursing have an undefined (NaN) nursing Gini, and NaN != NaN
    assert _same([e["metrics"] for e in a], [e["metrics"] for e in b])
    assert all(e["cached"] for e in b if e["type"] == "turn") and not any(e["cached"] for e in a if e["type"] == "turn")
    assert _same(replay.metrics, live.metrics)
