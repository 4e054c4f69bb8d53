"""`fairarena debate`: JSON shape, files written, exit code 2 with a clear message on bad input."""

from __future__ import annotations

import json
import socket

from typer.testing import CliRunner

from fairarena.arena import read_transcript, recompute_metrics
from fairarena.cli import app

runner = CliRunner()


def test_debate_json_and_out_dir(tmp_path):
    out = tmp_path / "run"
    r = runner.invoke(app, ["debate", "--seed", "4", "--agent-a", "aligned:rawlsian", "--agent-b", "adversarial",
                            "--rounds", "2", "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert set(doc) >= {"rounds", "final", "feasible", "metrics"}
    assert [x["round"] for x in doc["rounds"]] == [1, 2]
    assert set(doc["final"]) == {"a", "b", "joint"} and set(doc["feasible"]) == {"a", "b", "joint"}
    assert set(doc["metrics"]["joint"]) >= {"esg", "rmg", "var", "dw_esg", "vwci", "gini", "cnss"}
    assert json.loads((out / "result.json").read_text()) == doc
    ev = read_transcript(out / "transcript.jsonl")
    assert ev[0]["cohort"] == json.loads((out / "cohort.json").read_text())
    assert all(c["recorded"]["esg"] == c["recomputed"]["esg"] for c in recompute_metrics(ev))


def test_debate_table_and_cohort_file(tmp_path):
    cohort = tmp_path / "c.json"
    assert runner.invoke(app, ["triage", "cohort", "--seed", "9", "--out", str(cohort)]).exit_code == 0
    r = runner.invoke(app, ["debate", "--cohort", str(cohort), "--agent-a", "aligned:care", "--agent-b", "baseline",
                            "--rounds", "1", "--closing", "mean-repair"])
    assert r.exit_code == 0, r.output
    assert "joint (mean-repair)" in r.output and "DW-ESG" in r.output
    assert r.output.count("│ 1 ") == 2  # one row per agent in round 1


def test_bad_inputs_exit_2(tmp_path):
    cases = [
        (["--agent-a", "aligned:kantian"], "aligned:<framework>"),
        (["--model", "gpt4"], "known backend"),
        (["--closing", "dictator"], "closing"),   # (borda was the unknown example; it is a closing rule now)
        (["--closing", "dialectical", "--share", "1.5"], "share"),
        (["--closing", "dialectical", "--revisions", "-1"], "revisions"),
        (["--rounds", "0"], "rounds"),
        (["--cohort", str(tmp_path / "missing.json")], "missing.json"),
    ]
    for args, fragment in cases:
        r = runner.invoke(app, ["debate", *args])
        assert r.exit_code == 2, (args, r.output)
        assert fragment in r.output


def test_server_not_running_names_the_url_and_keeps_the_transcript(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    r = runner.invoke(app, ["debate", "--model", f"openai:m@{url}", "--rag", "off", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert url in r.output and "is it running" in r.output
    ev = read_transcript(tmp_path / "o" / "transcript.jsonl")
    assert ev[-1]["type"] == "footer" and ev[-1]["status"] == "failed"
