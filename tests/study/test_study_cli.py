"""The study commands as a user runs them: exit codes, --json output, status counts, the failure summary."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fairarena.study.design import expand, to_toml

from .conftest import tiny_design

CLI = [sys.executable, "-m", "fairarena.cli", "study"]


def test_run_json_status_and_exit_1_on_failures(tmp_path, zero_server):
    # a server that answers (so the reachability preflight passes) but refuses every call with a 400,
    # which is not retried: every debate fails and is recorded, and the run exits 1
    zero_server.plan = [400] * 100_000
    cfg = tiny_design(cohorts=1, model_b=f"openai:m@{zero_server.base_url}", rag="off")
    study = tmp_path / "s.toml"
    study.write_text(to_toml(cfg))
    r = subprocess.run([*CLI, "run", str(study), "--out", str(tmp_path / "st"), "--json"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    s = json.loads(r.stdout)
    n = len(expand(cfg))
    assert (s["total"], s["ok"], s["failed"], s["ran"]) == (n, 0, n, n)
    assert all("400" in f["error"] for f in s["failed_now"]), s["failed_now"]
    st = subprocess.run([*CLI, "status", str(tmp_path / "st"), "--json"], capture_output=True, text=True, timeout=300)
    assert st.returncode == 0
    assert {k: v for k, v in json.loads(st.stdout).items() if k != "failed_keys"} == \
        {"total": n, "ok": 0, "failed": n, "pending": 0, "stale": 0}
    # human output: a summary line and the hint, on stdout; still exit 1
    h = subprocess.run([*CLI, "run", str(study), "--out", str(tmp_path / "st")], capture_output=True, text=True,
                       timeout=300)
    assert h.returncode == 1 and f"0 ok, {n} failed" in h.stdout and "--retry-failed" in h.stdout
