"""A study run's progress line: debates, calls, tokens and each server's concurrency (:class:`RunProgress`).

It lives in the study package because it reads the study's own counters
(:func:`fairarena.study.store.live_stats`); the generic progress display is :mod:`fairarena.progress`, which
imports nothing from the study package.
"""

from __future__ import annotations

from typing import Any

from fairarena.progress import DEFAULT_EVERY, Progress
from fairarena.study.store import live_stats

__all__ = ["RunProgress"]


class RunProgress(Progress):
    """Progress of a study run: debates/s, calls/s, tokens/s, each server's concurrency now and the error
    rates. On a terminal a live rich line; otherwise one plain line to stderr every ``every`` seconds
    (and at the end), so a log of a long run shows how it went. Called as ``progress(done, failed, inflight,
    total)`` by :func:`fairarena.study.store.run_study`."""

    def __init__(self, name: str, backend: str, *, terminal: bool, every: float = DEFAULT_EVERY,
                 clock: Any = None, console: Any = None) -> None:
        super().__init__(f"study {name} ({backend})", unit="debates", terminal=terminal, every=every, clock=clock,
                         console=console)
        self.name = name
        self.backend = backend

    def stats(self, done: int, failed: int, inflight: int, total: int) -> str:  # type: ignore[override]
        st = live_stats()
        dt = self.elapsed()
        live = st["calls"] - st["cached_calls"]
        parts = [f"{done}/{total} debates", f"failed {failed}", f"in flight {inflight}",
                 f"{done / dt:.2f} debates/s"]
        if st["calls"]:
            parts += [f"{live / dt:.1f} calls/s", f"{(st['prompt_tokens'] + st['completion_tokens']) / dt:.0f} tok/s",
                      f"call errors {st['failed_calls'] / st['calls']:.1%}"]
        for url, srv in st["servers"].items():
            retries = f", backed off {srv['decreases']}x" if srv.get("decreases") else ""
            parts.append(f"{url} x{srv['current']}/{srv['limit']}{retries}")
        return "  ".join(parts)

    def __call__(self, done: int, failed: int, inflight: int, total: int) -> None:  # type: ignore[override]
        self.done, self.total = done, total
        self._show(done, total, lambda: self.stats(done, failed, inflight, total))
