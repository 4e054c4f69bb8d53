"""Work done in a second process while this one goes on: a study report's figures and debate bodies.

A study report of 2,000 debates spends about 3 s turning its matplotlib figures into SVG and as long
building its debates' compressed bodies, and neither depends on the other nor on most of the analysis.
:class:`Background` runs a function in a forked child (a copy of this process: it computes exactly what
this process would) and :meth:`Background.result` gives its value, sent back pickled through a pipe;
:func:`render_figures` is that for figure builders (functions that make a
:class:`~matplotlib.figure.Figure`; :func:`fairarena.report.figures.svg_of` draws each). A test compares
the reports built with and without the second process, byte for byte.

Where the child cannot be used, the function runs here instead, when :meth:`Background.result` is
called -- the same value, only later:

- no ``os.fork`` or not Linux (macOS's system libraries are not safe to use after a fork), or a single
  usable CPU (no second core to gain);
- ``jobs=1`` (``fairarena study report --jobs 1``);
- no child can be started (no process, memory or file descriptor left);
- the child fails, exits without a complete answer, or has not answered :data:`TIMEOUT` seconds after
  :meth:`Background.result` started waiting (it is then killed).

The function must not write to files or the terminal: it computes. The child uses neither standard output
nor standard error (warnings are silenced in it; a rich progress bar or the "still working" thread of the
parent, which may hold the terminal's lock at the moment of the fork, live on only in the parent) and ends
with ``os._exit``, never running the parent's clean-up. It is never an orphan: it ends within
:data:`fairarena.execution.PARENT_POLL` seconds of its parent's death (the parent watch of the
``processes`` backend's workers), and :meth:`Background.close` (or leaving the ``with`` block, also on an
error) kills and reaps a child whose answer is no longer wanted.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

TIMEOUT = 120.0
"""Seconds :meth:`Background.result` waits for the child (about 3 s at 2,000 debates on an idle machine)
before computing the value itself."""


def _fork_is_safe() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def can_fork() -> bool:
    """Can work go to a forked child here: Linux, ``os.fork``, two or more usable CPUs."""
    from fairarena.execution import default_workers

    return _fork_is_safe() and default_workers() >= 2


def use_child(jobs: int | None) -> bool:
    """``jobs`` 2: a child wherever fork is safe (Linux), even on one CPU; 1: never; None: :func:`can_fork`."""
    return jobs != 1 and (_fork_is_safe() if jobs == 2 else can_fork())


def _child(fn: Callable[[], Any], parent: int, w: int) -> None:
    """The child's whole life: ``fn()``, its value pickled to ``w``, ``os._exit`` (never returns)."""
    code = 1
    try:
        from fairarena.execution import watch_parent

        watch_parent(parent)
        warnings.simplefilter("ignore")
        data = pickle.dumps(fn(), protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            view = view[os.write(w, view):]
        code = 0
    except BaseException:           # noqa: BLE001 - the parent computes the value itself
        code = 1
    finally:
        os._exit(code)


class Background:
    """``fn()``, computed in a forked child from now on (where ``jobs`` and the machine allow) or here
    when :meth:`result` is called. ``check(value)``: is the child's answer well formed (else it is
    computed here)."""

    def __init__(self, fn: Callable[[], Any], *, jobs: int | None = None,
                 check: Callable[[Any], bool] | None = None) -> None:
        self.fn, self.check = fn, check
        self.pid: int | None = None
        self.forked = False          # a child was started (whether its answer was used: :attr:`used_child`)
        self.used_child = False
        self._r: int | None = None
        if not use_child(jobs):
            return
        parent = os.getpid()
        try:
            r, w = os.pipe()
        except OSError:              # no file descriptor left: the work is done here
            return
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)   # Python 3.12+: a fork with threads alive
                pid = os.fork()
        except OSError:              # no process or memory for a child (EAGAIN, ENOMEM): done here
            os.close(r)
            os.close(w)
            return
        if pid == 0:                                              # pragma: no cover - the child
            os.close(r)
            _child(fn, parent, w)
        os.close(w)
        self.pid, self._r, self.forked = pid, r, True

    def _collect(self, timeout: float) -> tuple[bool, Any]:
        """``(True, the child's value)``, or ``(False, None)``: it failed, answered something malformed,
        or ran out of time."""
        assert self._r is not None and self.pid is not None
        chunks, deadline = [], time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._r], [], [], left)[0]:
                    return False, None
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self._r)
            self._r = None
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
            return False, None
        try:
            value = pickle.loads(b"".join(chunks))
        except Exception:            # noqa: BLE001 - a truncated answer
            return False, None
        return (True, value) if self.check is None or self.check(value) else (False, None)

    def result(self, timeout: float = TIMEOUT) -> Any:
        """The value (from the child, else computed here)."""
        if self._r is not None:
            try:
                ok, value = self._collect(timeout)
            finally:
                self.close()
            if ok:
                self.used_child = True
                return value
        return self.fn()

    def close(self) -> None:
        """Kill and reap the child if it still runs (idempotent)."""
        if self._r is not None:
            os.close(self._r)
            self._r = None
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = None

    def __enter__(self) -> Background:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _render(builders: Sequence[Callable[[], Any]]) -> list[str]:
    from fairarena.report.figures import svg_of

    return [svg_of(b()) for b in builders]


def render_figures(builders: Sequence[Callable[[], Any]], *, jobs: int | None = None) -> Background:
    """The SVG texts (:func:`fairarena.report.figures.svg_of`, no id prefix) of the figures ``builders``
    make (each a function returning a matplotlib Figure), in order: :meth:`Background.result`. ``jobs``:
    1 renders them in this process when the result is asked for; 2 (None: where :func:`can_fork`) in a
    forked child from now on. No builders: nothing is started."""
    builders = list(builders)
    n = len(builders)
    return Background(lambda: _render(builders), jobs=1 if not builders else jobs,
                      check=lambda v: isinstance(v, list) and len(v) == n and all(isinstance(s, str) for s in v))


__all__ = ["TIMEOUT", "Background", "can_fork", "render_figures", "use_child"]
