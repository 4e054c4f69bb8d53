"""How close the study runner gets to what a model server can deliver (issue 20).

    .venv/bin/python -u benchmarks/bench_runner.py [--slots 64] [--latency 0.2] [--sweep 16,32,64,128]
                                                    [--cohorts 50] [--policy adaptive|fixed] [--workers N]

A FAKE OpenAI-compatible server (no model: ``FakeSlotServer`` below) runs in its own process on loopback.
It answers each chat completion after a fixed latency with S parallel slots (a call waits for a slot,
then sleeps the latency), like a server with S batch slots and a fixed time per call. Its reply is a
valid proposal for whatever cohort the prompt shows (nobody gets anything: the patients and their
needed resources are read from the prompt's table), with ``accept: true`` for decision turns, so every
debate of the paper preset runs its full course without repairs.

The runner is ``fairarena.experiments.study_store.run_study`` as ``fairarena study run`` calls it:
the paper preset's 600 debates (``--cohorts`` fewer for a quick look), both agents on the fake server,
``--backend threads`` with its default number of debates in flight, the response cache on (the rounds
an opponent shares are answered from it, as in a real study), retrieval off. The server's own policy:
``adaptive`` (``concurrency = {url = {start = 8, max = 4 S}}``: the controller has to find S by itself)
or ``fixed`` (``concurrency = {url = S}``).

Figures (one JSON line per S):
- ``efficiency`` = ideal makespan / measured makespan, the ideal being (calls the server answered x
  latency / S): 1.0 means the server never had an idle slot; target >= 0.9 at S = 64;
- ``client_ms_per_call``: the runner process's CPU time (user + system) per call the server answered,
  everything the client does between two calls (the arena's prompt building and scoring, the HTTP client,
  the response cache, the store); target < 2 ms;
- ``client_ms_per_turn``: the same CPU per model call the debates made (``turns``: the server's calls and
  the ones answered from the response cache, which cost the arena's work but no HTTP);
- ``slots_busy_by_tenth``: the share of the S slots busy in each tenth of the span from the first call to
  the last reply (where the idle time goes: the ramp, the middle, the tail);
- ``before_first_call_s`` / ``after_last_reply_s``: the runner's time outside that span (the study's
  set-up before the server's first call; after its last reply, the last commits, closing the thread pool,
  the results table);
- ``limit_decreases`` / ``latency_backoffs``: the adaptive controller's back-offs and its latency-growth
  signals (one early signal ends slow start, and the level then grows +1 per round trip);
- ``server_ms_per_call``: the fake server's own CPU per call (HTTP, JSON, the reply). It is not the
  client's overhead, but on a 2-core machine it competes with the client for the same cores;
- ``peak_rss_mb`` of the runner process (``ru_maxrss``), the server's peak calls in flight, the
  controller's final and lowest level, and the machine's load average beside them.

Not a unit test; the machine it runs on is shared, so the load average is printed with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROW = re.compile(r"^\| (P\d+) \|.*\| ([^|]*) \|\s*$", re.M)
NEED = re.compile(r"([A-Za-z][A-Za-z0-9_]*) \d+")


def zero_reply(prompt: str) -> str:
    """A valid proposal giving nobody anything, for the cohort whose table ``prompt`` shows."""
    alloc = {pid: {res: 0 for res in NEED.findall(needs)} for pid, needs in ROW.findall(prompt)}
    return json.dumps({"allocation": alloc, "justification": "fake server: nobody gets anything",
                       "critique": "none", "accept": True})


class FakeSlotServer:
    """A FAKE OpenAI-compatible chat server (asyncio, HTTP/1.1 keep-alive): S slots, fixed latency."""

    def __init__(self, slots: int, latency: float) -> None:
        self.slots = slots
        self.latency = latency
        self.sem: asyncio.Semaphore | None = None
        self.requests = 0
        self.in_flight = 0
        self.peak = 0
        self.busy_since: float | None = None
        self.replies: dict[str, str] = {}
        self.cpu0 = 0.0
        self.busy = 0                                # slots serving a call now
        self.events: list[tuple[float, int]] = []    # (time, busy slots from then on)

    def utilisation(self, parts: int = 10) -> dict:
        """Busy slots over the span from the first call to the last reply: the span, and the share of the
        S slots busy in each tenth of it (where the ideal's idle time went: ramp-up, middle, tail)."""
        if not self.events:
            return {"span_s": 0.0, "by_tenth": [], "first": None, "last": None}
        t0, t1 = self.events[0][0], self.events[-1][0]
        span = max(t1 - t0, 1e-9)
        area = [0.0] * parts
        for (ta, busy), (tb, _) in zip(self.events, self.events[1:]):
            a = ta
            while a < tb:   # spread [ta, tb) over the buckets it covers
                k = min(parts - 1, int((a - t0) / span * parts))
                end = min(tb, t0 + (k + 1) * span / parts)
                area[k] += busy * (end - a)
                a = end if end > a else tb
        return {"span_s": round(span, 2), "by_tenth": [round(x / (self.slots * span / parts), 3) for x in area],
                "first": t0, "last": t1}   # time.monotonic(): one clock for every process of the machine

    def reply_for(self, body: dict) -> str:
        prompt = next((m["content"] for m in body.get("messages", []) if "| P1 |" in m.get("content", "")), "")
        table = "\n".join(line for line in prompt.splitlines() if line.startswith("| P"))
        hit = self.replies.get(table)
        if hit is None:
            hit = self.replies[table] = zero_reply(prompt)
        return hit

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                length = 0
                for h in lines[1:]:
                    if h.lower().startswith("content-length:"):
                        length = int(h.split(":", 1)[1])
                data = await reader.readexactly(length) if length else b""
                if method == "GET" and path.endswith("/stats"):
                    out = json.dumps({"requests": self.requests, "peak_in_flight": self.peak,
                                      "cpu_s": time.process_time() - self.cpu0, **self.utilisation()}).encode()
                elif method == "GET":
                    out = json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode()
                else:
                    body = json.loads(data or b"{}")
                    self.requests += 1
                    self.in_flight += 1
                    self.peak = max(self.peak, self.in_flight)
                    try:
                        assert self.sem is not None
                        async with self.sem:
                            self.busy += 1
                            self.events.append((time.monotonic(), self.busy))
                            try:
                                await asyncio.sleep(self.latency)
                            finally:
                                self.busy -= 1
                                self.events.append((time.monotonic(), self.busy))
                    finally:
                        self.in_flight -= 1
                    text = self.reply_for(body)
                    out = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                                      "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant", "content": text}}],
                                      "usage": {"prompt_tokens": len(data) // 4, "completion_tokens": len(text) // 4,
                                                "total_tokens": (len(data) + len(text)) // 4}}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(out)).encode() + b"\r\nConnection: keep-alive\r\n\r\n" + out)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def serve(self, port: int) -> None:
        self.sem = asyncio.Semaphore(self.slots)
        self.cpu0 = time.process_time()  # the server's own CPU is counted from here (imports done)
        srv = await asyncio.start_server(self.handle, "127.0.0.1", port, backlog=1024)
        print("ready", flush=True)
        async with srv:
            await srv.serve_forever()


def start_server(slots: int, latency: float) -> tuple[subprocess.Popen, str]:
    from fairarena.llm.server import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--slots", str(slots),
                             "--latency", str(latency)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc, f"http://127.0.0.1:{port}/v1"


def server_stats(url: str) -> dict:
    with urllib.request.urlopen(url + "/stats", timeout=10) as r:
        return json.loads(r.read())


def run_once(slots: int, latency: float, cohorts: int, policy: str, workers: int | None = None) -> dict:
    from fairarena.experiments.study import preset, to_toml
    from fairarena.experiments.study_store import live_stats, run_study
    from fairarena.llm.wrappers import server_limits

    proc, url = start_server(slots, latency)
    try:
        conc = {url: {"start": 8, "max": 4 * slots}} if policy == "adaptive" else {url: slots}
        cfg = preset("paper", cohorts=cohorts, model_a=f"openai:fake@{url}", model_b=f"openai:fake@{url}",
                     rag="off", concurrency=conc)
        with tempfile.TemporaryDirectory() as tmp:
            la = "%.2f %.2f %.2f" % os.getloadavg()
            turns0 = live_stats()["calls"]
            c0 = os.times()
            m0 = time.monotonic()
            t0 = time.perf_counter()
            s = run_study(cfg, to_toml(cfg), Path(tmp) / "st", backend="threads", workers=workers)
            wall = time.perf_counter() - t0
            m1 = time.monotonic()
            c1 = os.times()
            turns = live_stats()["calls"] - turns0
        st = server_stats(url)
        cpu = (c1.user - c0.user) + (c1.system - c0.system)
        ideal = st["requests"] * latency / slots
        lim = server_limits().get(url, {})
        return {"slots": slots, "latency_s": latency, "policy": policy, "debates": s.total, "ok": s.ok,
                "failed": s.failed, "workers": s.workers, "server_calls": st["requests"],
                "ideal_s": round(ideal, 2), "wall_s": round(wall, 2), "efficiency": round(ideal / wall, 3),
                "client_ms_per_call": round(1000 * cpu / max(1, st["requests"]), 2),
                "client_ms_per_turn": round(1000 * cpu / max(1, turns), 2), "turns": turns,
                "server_ms_per_call": round(1000 * st["cpu_s"] / max(1, st["requests"]), 2),
                "server_peak_in_flight": st["peak_in_flight"],
                "server_busy_span_s": st["span_s"], "slots_busy_by_tenth": st["by_tenth"],
                "before_first_call_s": round(st["first"] - m0, 2) if st["first"] else None,
                "after_last_reply_s": round(m1 - st["last"], 2) if st["last"] else None,
                "limit_final": lim.get("current"),
                "limit_lowest": lim.get("lowest"), "limit_highest": lim.get("highest"),
                "limit_decreases": lim.get("decreases"), "latency_backoffs": lim.get("latency_backoffs"),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "load_before": la, "load_after": "%.2f %.2f %.2f" % os.getloadavg()}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--slots", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--sweep", default="", help="comma-separated S values run after --slots (e.g. 16,32,128)")
    ap.add_argument("--cohorts", type=int, default=50)
    ap.add_argument("--policy", choices=("adaptive", "fixed"), default="adaptive")
    ap.add_argument("--workers", type=int, default=None, help="debates in flight (default: the runner's own)")
    args = ap.parse_args()
    if args.serve:
        asyncio.run(FakeSlotServer(args.slots, args.latency).serve(args.serve))
        return
    for s in [args.slots] + [int(x) for x in args.sweep.split(",") if x]:
        print(json.dumps(run_once(s, args.latency, args.cohorts, args.policy, args.workers)), flush=True)


if __name__ == "__main__":
    main()
