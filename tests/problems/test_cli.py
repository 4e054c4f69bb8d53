"""The three --problem command forms run in a fresh process (--json), write their folders, and keep whole seats."""

from __future__ import annotations

import json

import numpy as np

from fairarena.problems import SEATS

from .conftest import SEATS as SEATS_FILE
from .conftest import VACCINES, cli


def _whole(mapping: dict) -> bool:
    return all(float(v).is_integer() for row in mapping.values() for v in row.values())


def test_debate_json_with_stakeholder_agents(tmp_path):
    out = tmp_path / "run"
    proc = cli("debate", "--problem", str(SEATS_FILE), "--agent", "aligned:merit", "--agent", "E=aligned:equity",
               "--agent", "baseline", "--rounds", "2", "--json", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["status"] == "ok" and doc["domain"] == "file" and doc["problem"] == "School seats"
    assert [(a["name"], a["profile"]) for a in doc["agents"]] == [("merit", "aligned:merit"), ("E", "aligned:equity"),
                                                                  ("baseline", "baseline")]
    joint = doc["final"]["joint"]
    assert joint["allocation"] and _whole(joint["allocation"]) and doc["feasible"]["joint"]
    assert doc["problem_metrics"]["final"]["joint"]["violations"] == []
    assert set(doc["problem_metrics"]["final"]["joint"]["metrics"]) == {"merit", "need", "districts", "placed", "equality"}
    # round 1: each stakeholder's optimum; round 2: the compromise of the stakeholders at the table
    r1 = {r["agent"]: r["metrics"] for r in doc["problem_metrics"]["rounds"] if r["round"] == 1}
    r2 = {r["agent"]: r["metrics"] for r in doc["problem_metrics"]["rounds"] if r["round"] == 2}
    assert r1["merit"]["merit"] > r2["merit"]["merit"] and r1["E"]["need"] > r2["E"]["need"] and r2["merit"] == r2["E"]
    assert {p.name for p in out.iterdir()} >= {"transcript.jsonl", "result.json", "problem.json"}
    header = json.loads((out / "transcript.jsonl").read_text().splitlines()[0])
    assert header["domain"] == "file" and header["instance"] == SEATS.to_dict(SEATS.sample(0))


def test_debate_by_default_seats_every_stakeholder_and_refuses_cohort_options():
    proc = cli("debate", "--problem", str(VACCINES), "--rounds", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [a["name"] for a in json.loads(proc.stdout)["agents"]] == ["public-health", "services", "equality", "rural"]
    for extra, field in ((["--agent", "aligned:utilitarian"], "agent = 'aligned:utilitarian'"),
                         (["--agent-a", "baseline"], "agent-a = 'baseline'"),
                         (["--proposal-format", "priorities"], "proposal-format = 'priorities'")):
        proc = cli("debate", "--problem", str(VACCINES), *extra)
        assert proc.returncode == 2 and field in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_council_json_reports_lotteries_as_lotteries(tmp_path):
    out = tmp_path / "council"
    proc = cli("aggregate", "council", "--problem", str(SEATS_FILE), "--json", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["agents"] == doc["candidates"] == ["merit", "equity", "districts"]
    assert json.loads((out / "council.json").read_text()) == doc
    rows = {r["rule"]: r for r in doc["rows"]}
    assert rows["utilitarian"]["decision"] == "winner" and rows["utilitarian"]["winner"] == "merit"
    assert rows["schulze"]["decision"] == "lottery"
    assert [(e["candidate"], e["probability"]) for e in rows["schulze"]["lottery"]] == [("merit", 0.5), ("districts", 0.5)]
    for r in doc["rows"]:
        assert _whole(r["allocation"]) and r["valid"]
        for e in r["lottery"] or []:
            assert _whole(e["allocation"])
    proc = cli("aggregate", "council", "--problem", str(SEATS_FILE), "--rule", "nash-bargaining")
    assert proc.returncode == 2 and "rule = 'nash-bargaining': a candidate-set rule" in proc.stderr


def test_audit_conflict_json(tmp_path):
    proc = cli("audit", "conflict", "--problem", str(SEATS_FILE), "--x", "merit", "--y", "need", "--points", "20",
               "--json", "--out", str(tmp_path / "audit"))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["exact"] and doc["directions"] == {"merit": "max", "need": "max"} and not doc["no_conflict"]
    pts = np.array(doc["points"])
    # the two optima are the frontier's ends: merit's (0.656, 0.235) and equity's need optimum 0.941
    assert pts[:, 0].max() == np.float64(doc["x_best"]) and abs(doc["y_best"] - 16 / 17) < 1e-9
    assert np.all(np.diff(pts[:, 1]) < 0)        # a trade-off: more merit, less need
    assert (tmp_path / "audit" / "frontier.png").is_file()
    proc = cli("audit", "conflict", "--problem", str(SEATS_FILE), "--x", "merit", "--y", "esg")
    assert proc.returncode == 2 and "--y = 'esg': a metric of the problem file" in proc.stderr
    proc = cli("audit", "conflict", "--problem", str(VACCINES), "--x", "covered", "--y", "equality", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["exact"], proc.stderr


def test_a_json_problem_file_takes_the_same_forms(tmp_path):
    path = tmp_path / "seats.json"
    path.write_text(json.dumps(SEATS.to_dict(SEATS.sample(0))), encoding="utf-8")
    proc = cli("audit", "conflict", "--problem", str(path), "--x", "merit", "--y", "districts", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["problem"] == "file: School seats", proc.stderr
    proc = cli("aggregate", "council", "--problem", str(path), "--rule", "schulze", "--json")
    assert proc.returncode == 0 and [r["rule"] for r in json.loads(proc.stdout)["rows"]] == ["schulze"], proc.stderr
