"""A debate's transcript carries the problem itself: a fresh process re-scores it through the registered domain
``file``, with nothing else (no problem file on disk)."""

from __future__ import annotations

import json
import subprocess
import sys

from fairarena.arena import DebateConfig, run_debate
from fairarena.problems import VACCINES

SCRIPT = r'''
import json, sys
from fairarena.allocation.problem import allocation_from_mapping
from fairarena.arena.transcript import read_transcript, recompute_metrics
from fairarena.domains import DOMAINS
events = read_transcript(sys.argv[1])
checks = recompute_metrics(events)
same = [json.dumps(c["recorded"], sort_keys=True) == json.dumps(c["recomputed"], sort_keys=True) for c in checks]
domain = DOMAINS.get(events[0]["domain"])
inst = domain.from_dict(events[0]["instance"])
joint = [e for e in events if e.get("type") == "closing"][0]["allocation"]
x = allocation_from_mapping(domain.problem(inst), joint)
print(json.dumps({"events": len(checks), "same": all(same), "title": inst.title,
                  "metrics": domain.evaluate(inst, x), "violations": domain.violations(inst, x)}))
'''


def test_a_fresh_process_rescores_the_transcript(tmp_path):
    inst = VACCINES.sample(0)
    path = tmp_path / "t.jsonl"
    res = run_debate(inst, VACCINES.scripted_agents(inst), config=DebateConfig(rounds=2), transcript=path,
                     domain=VACCINES)
    assert res.status == "ok"   # 4 stakeholders x (2 rounds + a final), a draft and 3 decisions, the closing
    moved = tmp_path / "elsewhere.jsonl"
    path.rename(moved)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(moved)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["same"] and out["events"] == 4 * 3 + 4 + 1 and out["title"] == "Vaccine doses" and out["violations"] == []
    from fairarena.allocation.problem import allocation_from_mapping

    x = allocation_from_mapping(VACCINES.problem(inst), res.final["joint"]["allocation"])
    assert out["metrics"] == VACCINES.evaluate(inst, x)
    assert 0 < x[:, 1].sum() <= 3.0 and any(not float(v).is_integer() for v in x[:, 1])   # divisible care hours
