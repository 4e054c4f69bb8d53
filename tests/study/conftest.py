"""Shared helpers for the study tests: small designs, the deterministic part of a result record, and a
loopback OpenAI-compatible server that answers every debate turn with a valid (all-zero) allocation."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

OUTCOME = ("status", "error", "rounds", "final", "feasible", "metrics")


def outcome(record: dict[str, Any]) -> dict[str, Any]:
    """What a debate decided (no timing, usage latencies, pids or dates)."""
    return {k: record.get(k) for k in ("key", "task", *OUTCOME)}


def run_and_kill(study: Any, root: Any, *, after: int, timeout: float, poll: float, extra: tuple[str, ...] = ()) -> int:
    """``fairarena study run STUDY --out ROOT`` in a subprocess, killed with SIGKILL as soon as ``after``
    debates are on disk (within ``timeout`` seconds, or the test fails); returns its exit code."""
    from fairarena.study.store import finished_keys

    proc = subprocess.Popen([sys.executable, "-m", "fairarena.cli", "study", "run", str(study), "--out", str(root),
                             *extra, "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout
        while len(finished_keys(root)) < after:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline
            time.sleep(poll)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode


def tiny_design(**kw: Any):
    from fairarena.study.design import preset

    return preset("tiny", **kw)


class ZeroServer:
    """POST /v1/chat/completions -> a valid proposal giving nobody anything. Counts requests and the largest
    number in flight at once; ``delay`` seconds per answer; ``plan`` of statuses consumed first (429 with
    ``Retry-After: 0``)."""

    def __init__(self, delay: float = 0.0) -> None:
        from fairarena.allocation.problem import allocation_to_mapping
        from fairarena.triage import sample_cohort

        p = sample_cohort(0, "standard").to_problem()
        self.reply = json.dumps({"allocation": allocation_to_mapping(p, p.zeros()), "justification": "zero",
                                 "critique": "none", "accept": True})
        self.delay = delay
        self.plan: list[int] = []
        self.requests = 0
        self.sampling: set[tuple[object, object]] = set()   # (max_tokens, temperature) of every request
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                with srv._lock:
                    srv.requests += 1
                    srv.sampling.add((body.get("max_tokens"), body.get("temperature")))
                    srv.in_flight += 1
                    srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
                    status = srv.plan.pop(0) if srv.plan else 200
                # a prompt-token count like a real tokenizer's (about 4 characters a token), so the
                # client's check for a server that silently cut the prompt does not fire
                n_prompt = sum(len(m.get("content") or "") for m in body.get("messages", [])) // 4 + 1
                try:
                    time.sleep(srv.delay)
                finally:
                    # the call leaves the server's count before its answer is written: a client that reads
                    # the answer, frees its slot and sends the next call must not find this one still counted
                    with srv._lock:
                        srv.in_flight -= 1
                if status != 200:
                    return self._send(status, {"error": {"message": f"scripted {status}"}}, {"Retry-After": "0"})
                self._send(200, {"id": "x", "object": "chat.completion", "created": 0,
                                 "model": body.get("model", "m"),
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": srv.reply}}],
                                 "usage": {"prompt_tokens": n_prompt, "completion_tokens": 7,
                                           "total_tokens": n_prompt + 7}})

            def _send(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def zero_server():
    pytest.importorskip("openai")
    srv = ZeroServer()
    yield srv
    srv.close()


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """The tiny design run once, serially (read-only for the tests that use it)."""
    from fairarena.study.design import to_toml
    from fairarena.study.store import run_study

    cfg = tiny_design()
    root = tmp_path_factory.mktemp("tiny") / "serial"
    run_study(cfg, to_toml(cfg), root)
    return cfg, root
