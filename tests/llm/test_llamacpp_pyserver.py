"""A study served by two real ``python -m llama_cpp.server`` processes (llama-cpp-python, the real
SmolLM2-135M GGUF), run as two replicas of one model: the study's ``replicas`` table lists both base URLs
and ``concurrency`` gives each one call in flight (the server answers one request at a time: one model
behind a lock, no slots). This is the 2-slot set-up that runs wherever ``make test`` ran;
tests/llm/test_llamacpp_server.py does the same with llama.cpp's native ``llama-server --parallel 2``
when one is built.

What is observed comes from the servers, started with ``--verbose True`` (their log) and ``--cache True``
(llama-cpp-python's ``LlamaRAMCache``: after each completion the model's state is saved under its prompt
and completion tokens, and a new prompt starts from the saved state sharing its longest prefix):

* each request's block in the server's log: ``Llama.generate: N prefix-match hit, remaining M prompt
  tokens to eval`` (no such line: nothing reused), ``Llama._create_completion: cache hit`` (a saved state
  was restored) and ``llama_perf_context_print: ... total time = T ms``, the time the model was busy;
* the concurrency reached the servers: both answered calls, and at one moment both were computing (each
  end-of-request line is timestamped by the test as it appears; the request was busy over the T ms
  before it);
* the prefix cache: every later prompt (an agent's final) answered by the replica that answered the same
  agent's earlier prompt is served from that prompt's saved state (the prompts put the stable part
  first). The replica router has no prefix affinity, so a later prompt may land on the other replica;
  when none landed on its earlier prompt's replica, the test sends one there itself.

The client sends ``cache_prompt: true`` (its default for a local server); llama_cpp.server's request
model ignores fields it does not know, so the field is accepted and changes nothing (the one refusal per
replica, an HTTP 500 validation error, names only the ``json_schema`` response format, which the client
then drops for ``json_object``; every call the records count is a 200): the reuse is the server's own (``--cache``), and its replies report no reused tokens, so the
records' ``serving.prompt_reuse`` stays empty. A 135M model's proposals are nonsense: structure and
serving are asserted, never values.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import pytest

pytest.importorskip("llama_cpp.server.app")   # llama-cpp-python[server] (fastapi, uvicorn, sse-starlette)

from fairarena.arena.transcript import iter_turns, read_transcript  # noqa: E402
from fairarena.study.design import expand, load_study, preset, to_toml  # noqa: E402
from fairarena.study.store import load_results, transcript_path  # noqa: E402
from fairarena.llm.server import free_port, stop, wait_ready  # noqa: E402

pytestmark = [pytest.mark.llm, pytest.mark.slow]

CTX = 4096


# --------------------------------------------------------------------------- the servers and their logs
@dataclass
class Request:
    """One completion in a server's log."""

    reused: int             # prompt tokens taken from the model's state (the prefix-match hit), 0 if none
    evaluated: int          # prompt tokens computed
    busy_s: float           # llama.cpp's "total time" of the request
    restored: bool          # a state saved by --cache was loaded first ("cache hit")
    seen: tuple[float, float] = (0.0, 0.0)   # the test's clock: last read without the line, first read with it

    @property
    def prompt_tokens(self) -> int:
        return self.reused + self.evaluated


@dataclass
class PyServer:
    """A ``python -m llama_cpp.server`` child process and what its log said so far."""

    url: str
    log: Path
    proc: subprocess.Popen
    requests: list[Request] = field(default_factory=list)
    answered: int = 0        # POST /v1/chat/completions answered 200
    _pos: int = 0
    _buf: bytes = b""
    _pending: dict = field(default_factory=dict)
    _last_read: float = 0.0

    def poll(self) -> None:
        """Read the log's new lines; timestamp each request's end line."""
        now = time.monotonic()
        with open(self.log, "rb") as fh:
            fh.seek(self._pos)
            data = fh.read()
        self._pos += len(data)
        *lines, self._buf = (self._buf + data).split(b"\n")
        for raw in lines:
            line = raw.decode(errors="replace")
            if "Llama._create_completion: cache hit" in line:
                self._pending["restored"] = True
            elif m := re.search(r"Llama\.generate: (\d+) prefix-match hit", line):
                self._pending["reused"] = int(m.group(1))
            elif m := re.search(r"prompt eval time =.*/\s*(\d+) tokens", line):
                self._pending["evaluated"] = int(m.group(1))
            elif m := re.search(r"\btotal time =\s*([\d.]+) ms", line):
                p, self._pending = self._pending, {}
                self.requests.append(Request(p.get("reused", 0), p.get("evaluated", 0), float(m.group(1)) / 1000,
                                             p.get("restored", False), (self._last_read, now)))
            elif '"POST /v1/chat/completions HTTP/1.1" 200' in line:
                self.answered += 1
        self._last_read = now


@contextlib.contextmanager
def py_servers(gguf: Path, n: int, tmp: Path) -> Iterator[list[PyServer]]:
    """``n`` llama_cpp.server processes on free loopback ports, one thread each, verbose, with the RAM
    prompt cache; started together, stopped (terminate, then kill) on exit."""
    servers: list[PyServer] = []
    try:
        for i in range(n):
            port = free_port()
            log = tmp / f"llama_cpp_server_{i}.log"
            with open(log, "wb") as out:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
                     "--port", str(port), "--n_ctx", str(CTX), "--n_threads", "1", "--n_threads_batch", "1",
                     "--cache", "True", "--verbose", "True"], stdout=out, stderr=subprocess.STDOUT)
            servers.append(PyServer(f"http://127.0.0.1:{port}/v1", log, proc))
        for s in servers:                  # started together above, then waited for one by one
            wait_ready(s.proc, f"{s.url}/models", s.log, 120, "llama_cpp.server")
            s.poll()
        yield servers
    finally:
        for s in servers:
            stop(s.proc)


def watch(servers: Sequence[PyServer], until: subprocess.Popen, timeout: float, every: float = 0.02) -> None:
    """Poll the servers' logs until ``until`` exits (or fail after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while until.poll() is None:
        if time.monotonic() > deadline:
            until.kill()
            pytest.fail(f"the study did not finish within {timeout:g} s")
        for s in servers:
            s.poll()
        time.sleep(every)
    for s in servers:
        s.poll()


def both_busy(a: Sequence[Request], b: Sequence[Request]) -> float:
    """The longest time both servers were surely computing at once (0: never). A request surely ran over
    [first read with its end line - its total time, last read without it]."""
    def sure(r: Request) -> tuple[float, float]:
        return r.seen[1] - r.busy_s, r.seen[0]
    best = 0.0
    for x in a:
        for y in b:
            (x0, x1), (y0, y1) = sure(x), sure(y)
            best = max(best, min(x1, y1) - max(x0, y0))
    return best


def post(url: str, messages: list[dict], max_tokens: int) -> dict:
    req = urllib.request.Request(f"{url}/chat/completions", method="POST", headers={"Content-Type": "application/json"},
                                 data=json.dumps({"messages": messages, "max_tokens": max_tokens, "temperature": 0,
                                                  "cache_prompt": True}).encode())
    with urllib.request.urlopen(req, timeout=300) as r:
        return json.loads(r.read())


# --------------------------------------------------------------------------- the test
@pytest.fixture(scope="module")
def gguf() -> Path:
    from fairarena.llm.llamacpp_backend import bundled_gguf

    try:
        return Path(bundled_gguf("smollm2"))
    except Exception as exc:  # installed by `make test`
        pytest.skip(f"SmolLM2 GGUF not installed: {exc}")


def test_study_on_two_llama_cpp_server_replicas_reaches_both_at_once_and_reuses_prefixes(gguf, tmp_path):
    with py_servers(gguf, 2, tmp_path) as servers:
        urls = [s.url for s in servers]
        spec = f"openai:smollm2@{urls[0]}?context_window={CTX}"
        # two debates (cohorts 0 and 1: their prompts differ after the common rules, so the response
        # cache answers none of them), no control: 8 calls, 2 in flight at most
        cfg = preset("tiny", cohorts=2, agent_a=["aligned:care"], opponents=["baseline"], baseline_control=False,
                     model_a=spec, model_b=spec, rag="off", rounds=1, max_repairs=0, max_tokens=16,
                     closing=["mean-repair"], proposal_format="priorities",
                     replicas={urls[0]: urls}, concurrency={u: 1 for u in urls})
        study = tmp_path / "study.toml"
        study.write_text(to_toml(cfg))
        cfg, _ = load_study(study)
        tasks = expand(cfg)
        assert len(tasks) == 2
        root = tmp_path / "st"
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "fairarena.cli", "study", "run", str(study), "--out", str(root),
                                 "--backend", "threads", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        watch(servers, proc, timeout=600)
        out, err = proc.communicate()
        study_s = time.monotonic() - t0
        assert proc.returncode == 0, err.decode()[-2000:]
        summary = json.loads(out)
        assert summary["ok"] == 2 and summary["failed"] == 0

        # -- the records: what the runner did
        rows = load_results(root)
        turns = []
        for x in rows:
            assert x["status"] == "ok", x.get("error")
            serve = x["serving"]
            assert list(serve["servers"]) == urls                       # each replica by its own URL
            assert all(v["limit"] == 1 and v["current"] == 1 for v in serve["servers"].values())
            assert serve["cached_prompt_tokens"] is None and serve["prompt_reuse"] is None   # none reported
            for t in iter_turns(read_transcript(transcript_path(root, x["key"]))):
                if not t["cached"]:
                    turns.append((x["key"], t))
        calls = sum(x["usage"][w]["calls"] - x["usage"][w]["cached_calls"] for x in rows for w in "ab")
        assert len(turns) == calls == 8

        # -- (a) the concurrency reached the servers
        assert [s.answered >= 1 for s in servers] == [True, True]        # both replicas answered calls
        assert sum(s.answered for s in servers) == calls                 # ... every call of the study, once
        assert [len(s.requests) for s in servers] == [s.answered for s in servers]
        per_replica = [s.answered for s in servers]
        overlap = both_busy(servers[0].requests, servers[1].requests)
        assert overlap > 0                                               # both computing at one moment

        # which replica answered which turn: by its prompt's length in tokens (the server's own count,
        # the reply's usage.prompt_tokens); a length two requests share is left unattributed
        sizes = Counter(r.prompt_tokens for s in servers for r in s.requests)
        assert sizes == Counter(t["usage"]["prompt_tokens"] for _, t in turns)   # the logs and records agree
        where = {r.prompt_tokens: (i, r) for i, s in enumerate(servers) for r in s.requests
                 if sizes[r.prompt_tokens] == 1}

        # -- (b) an agent's later prompt, on the replica that has its earlier one, starts from its state
        streams: dict[tuple[str, str], dict[str, dict]] = {}
        for key, t in turns:
            streams.setdefault((key, t["agent"]), {})[t["phase"]] = t
        assert len(streams) == 4 and all(set(v) == {"round", "final"} for v in streams.values())
        stayed, moved = [], []
        for k, v in streams.items():
            first, later = (where.get(v[p]["usage"]["prompt_tokens"]) for p in ("round", "final"))
            if first and later:
                (stayed if first[0] == later[0] else moved).append((k, first, later))
        for _, (_, r1), (_, r2) in stayed:
            assert r2.restored and r2.reused >= 0.5 * r2.prompt_tokens, (r1, r2)
        replayed = None
        assert stayed or moved, f"no agent's two prompts attributed to a replica: {sizes}"
        if not stayed:   # the router sent every later prompt elsewhere: send one where its earlier prompt is
            k, (i, r1), _ = moved[0]
            final = streams[k]["final"]
            n = len(servers[i].requests)
            reply = post(servers[i].url, final["messages"], max_tokens=1)
            deadline = time.monotonic() + 30
            while len(servers[i].requests) == n and time.monotonic() < deadline:
                servers[i].poll()
                time.sleep(0.05)
            replayed = servers[i].requests[n]
            assert reply["usage"]["prompt_tokens"] == replayed.prompt_tokens == final["usage"]["prompt_tokens"]
            assert replayed.restored and replayed.reused >= 0.5 * replayed.prompt_tokens, (r1, replayed)

        print(f"\nllama_cpp.server replicas: study {study_s:.1f} s, calls per replica "
              f"{per_replica}, both busy for {overlap:.1f} s at once",
              "\n  requests (reused/prompt, restored):",
              [[(r.reused, r.prompt_tokens, r.restored) for r in s.requests] for s in servers],
              f"\n  later prompts on their earlier prompt's replica {len(stayed)}, on the other {len(moved)}:",
              [(k[1], r2.reused, r2.prompt_tokens) for k, _, (_, r2) in stayed],
              [(k[1], r2.reused, r2.prompt_tokens) for k, _, (_, r2) in moved],
              "replayed:", replayed and (replayed.reused, replayed.prompt_tokens))
