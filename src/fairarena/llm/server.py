"""Start llama-cpp-python's OpenAI-compatible server on loopback (tests, demos, benchmarks).

>>> with llama_server(bundled_gguf("smollm2")) as base_url:      # doctest: +SKIP
...     model = build_model(f"openai:smollm2@{base_url}")

The server is a child process bound to 127.0.0.1 on a free port; it is stopped (terminate, then kill)
when the block exits. Its log goes to a temporary file quoted in the error if it fails to start.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

from fairarena.llm.base import LLMError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def llama_server(model_path: str | os.PathLike[str], *, port: int | None = None, n_ctx: int = 4096,
                 n_threads: int | None = None, startup_timeout: float = 120.0,
                 model_alias: str | None = None) -> Iterator[str]:
    port = port or free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(n_threads or max(1, os.cpu_count() or 1))]
    if model_alias:
        cmd += ["--model_alias", model_alias]
    log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(proc, f"{base_url}/models", Path(log.name), startup_timeout, "llama_cpp.server")
        yield base_url
    finally:
        stop(proc)
        log.close()


def wait_ready(proc: subprocess.Popen, url: str, log: Path, timeout: float, name: str) -> None:
    """Wait until ``url`` answers 200 (a started server's health or models route). LLMError naming ``name``
    and quoting the end of ``log`` when the process exits first, or when ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise LLMError(f"{name} exited with code {proc.returncode}; log: {log}\n"
                           + log.read_text(errors="replace")[-2000:])
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise LLMError(f"{name} did not answer at {url} within {timeout:g}s; log: {log}")
        time.sleep(0.1)


def stop(proc: subprocess.Popen) -> None:
    """Terminate a server process; kill it if it has not exited 10 s later."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
