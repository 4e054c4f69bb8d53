"""End to end: a server that echoes the rejected key in its 401 body. A real ``fairarena debate``
process runs against the loopback fake server; the key must appear nowhere it prints or writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

KEY = "fa-live-7Qx2LmN9pR4sT8vW1yZ3"  # an unusual shape: only redaction of the configured key catches it


def test_an_echoed_key_reaches_no_output_and_no_file(fake_server, tmp_path):
    fake_server.echo_key = True
    out = tmp_path / "run"
    env = {**os.environ, "FAIRARENA_API_KEY": KEY, "OPENAI_API_KEY": ""}
    exe = Path(sys.executable).with_name("fairarena")
    cmd = [str(exe), "debate", "--model", f"openai:m@{fake_server.base_url}", "--rounds", "1", "--rag", "off",
           "--json", "--out", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert fake_server.headers and fake_server.headers[0]["authorization"] == f"Bearer {KEY}"  # the key was used
    said = f"exit {p.returncode}\nstdout: {p.stdout[-1500:]}\nstderr: {p.stderr[-1500:]}"
    assert p.returncode != 0, said
    assert "HTTP 401" in p.stderr + p.stdout and "[REDACTED]" in p.stderr + p.stdout, said  # the echo was handled
    assert KEY not in p.stdout and KEY not in p.stderr
    files = [f for f in out.rglob("*") if f.is_file()]
    assert any(f.name == "transcript.jsonl" for f in files)
    for f in files:
        assert KEY.encode() not in f.read_bytes(), f.name
    footer = json.loads((out / "transcript.jsonl").read_text().splitlines()[-1])
    assert "[REDACTED]" in json.dumps(footer)
