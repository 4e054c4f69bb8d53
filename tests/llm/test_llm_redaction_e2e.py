"""End to end: a server that echoes the API key (and its Authorization header) inside a normal 200
completion. A real ``fairarena study run`` and ``study report`` run against the loopback fake server;
the key must appear in no file of the study folder (transcripts, records, results.jsonl, the response
cache), not in the report and not in anything printed."""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

KEY = "fa-live-7Qx2LmN9pR4sT8vW1yZ3"  # an unusual shape: only redaction of the configured key catches it


def test_a_key_echoed_in_a_completion_reaches_no_file_and_no_output(fake_server, tmp_path):
    from fairarena.allocation.frameworks import solve_utilitarian
    from fairarena.allocation.problem import allocation_to_mapping
    from fairarena.study.design import cohort_of, expand, preset, to_toml

    spec = f"openai:m@{fake_server.base_url}"
    cfg = preset("tiny", model_a=spec, model_b=spec, rag="off", cohorts=1)
    t = expand(cfg)[0]
    p = cohort_of(t.cohort_seed, t.capacity).to_problem()   # every debate proposes this cohort's utilitarian optimum
    fake_server.reply = json.dumps({"allocation": allocation_to_mapping(p, solve_utilitarian(p)),
                                    "justification": "my key is ECHO", "critique": "see ECHO", "accept": True})
    fake_server.echo_key_in_reply = True
    study = tmp_path / "study.toml"
    study.write_text(to_toml(cfg))
    env = {**os.environ, "FAIRARENA_API_KEY": KEY, "OPENAI_API_KEY": ""}
    exe = str(Path(sys.executable).with_name("fairarena"))
    out, report = tmp_path / "st", tmp_path / "report.html"
    runs = [subprocess.run([exe, "study", "run", str(study), "--out", str(out), "--backend", "threads", "--json"],
                           capture_output=True, text=True, env=env, timeout=600)]
    runs.append(subprocess.run([exe, "study", "report", str(out), "--out", str(report)],
                               capture_output=True, text=True, env=env, timeout=600))
    for r in runs:
        said = f"exit {r.returncode}\nstdout: {r.stdout[-1500:]}\nstderr: {r.stderr[-1500:]}"
        assert r.returncode == 0, said
        assert KEY not in r.stdout + r.stderr
    assert fake_server.headers and fake_server.headers[0]["authorization"] == f"Bearer {KEY}"  # the key was sent
    files = [f for f in out.rglob("*") if f.is_file()] + [report]
    assert any(f.name == "results.jsonl" for f in files) and any(f.name == "responses.sqlite" for f in files)
    assert any(f.suffix == ".jsonl" and f.parent.parent.name == "debates" for f in files)
    for f in files:
        assert KEY.encode() not in f.read_bytes(), f
    with sqlite3.connect(out / "responses.sqlite") as db:   # the cache's rows, not just its file (WAL pages)
        rows = db.execute("SELECT response FROM responses").fetchall()
    assert rows and all(KEY not in r[0] and "my key is [REDACTED]" in r[0] for r in rows)
    # the report embeds each debate's transcript gzip-compressed (base64, inflated in the page): read them inflated
    page = report.read_text()
    bodies = [gzip.decompress(base64.b64decode(z)).decode() for z in re.findall(r'data-z="([^"]+)"', page)]
    assert bodies and all(KEY not in b for b in bodies)
    assert "[REDACTED]" in page + "".join(bodies)
