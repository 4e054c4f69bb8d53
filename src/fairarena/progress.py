"""Progress of long commands, on stderr.

On a terminal a live rich bar (transient: it disappears when the command ends); otherwise (a log, CI, a
pipe) one plain line every ``every`` seconds and one when the work is complete, each starting with
``progress`` so that a log can be filtered (``grep ^progress``)::

    progress sweep paper (processes): 4,104/8,208 settings  50%  702 settings/s  5.8 s elapsed  about 6 s left

``every = 0`` prints a line at every update. Standard output is never touched, so ``--json`` documents stay
one document; the commands make no progress at all with ``--json`` (and ``2>/dev/null`` silences them
otherwise). Commands take the interval as ``--progress-every SECONDS`` (default 10), checked by
:func:`check_every`. A command whose work is one call that reports no steps (``tourism compare``) says every
``every`` seconds that it is still working (:meth:`Progress.ticking`).

:class:`Progress` counts steps of any unit (settings, rounds, rules); :class:`fairarena.study.progress.RunProgress` is a study run's
(debates, failures, calls, tokens and each model server's level), used by ``fairarena study run``.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from typing import Any, Iterator

from fairarena.cli_common import err_console

DEFAULT_EVERY = 10.0


def check_every(value: Any, field: str = "progress-every") -> float:
    """A ``--progress-every`` value: a finite number of seconds >= 0 (else InputError naming ``field``)."""
    from fairarena.errors import InputError

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or math.isinf(value):
        raise InputError(field, value, "a non-negative number of seconds")
    return float(value)


def _seconds(s: float) -> str:
    if s < 60:
        return f"{s:.1f} s"
    m, s = divmod(int(round(s)), 60)
    if m < 60:
        return f"{m} min {s:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def _rate(r: float) -> str:
    return f"{r:,.0f}" if r >= 100 else f"{r:.3g}"


class Progress:
    """``done`` of ``total`` steps of ``label`` (``update(done)``, ``advance(n)``; ``total`` may be unknown).

    ``terminal`` defaults to whether ``console`` (stderr) is a terminal; ``enabled=False`` makes every call a
    no-op (a command's ``--json`` mode). Plain lines are also kept in ``lines`` (for tests)."""

    def __init__(self, label: str, *, total: int | None = None, unit: str = "steps", terminal: bool | None = None,
                 every: float = DEFAULT_EVERY, clock: Any = None, console: Any = None, enabled: bool = True) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.console = console if console is not None else err_console
        self.terminal = self.console.is_terminal if terminal is None else terminal
        self.every = every
        self.enabled = enabled
        self.clock = clock or time.monotonic
        self.t0 = self.clock()
        self.last_line = -float("inf")
        self.done = 0
        self.bar: Any = None
        self.tid: Any = None
        self.lines: list[str] = []

    def __enter__(self) -> "Progress":
        if self.enabled and self.terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self.bar = Bar(TextColumn("[bold]{task.description}[/]"), BarColumn(), MofNCompleteColumn(),
                           TextColumn("{task.fields[stats]}"), TimeElapsedColumn(),
                           console=self.console, transient=True)
            self.bar.__enter__()
            self.tid = self.bar.add_task(self.label, total=self.total, stats="")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
            self.bar = None

    def elapsed(self) -> float:
        return max(1e-9, self.clock() - self.t0)

    def stats(self, done: int, total: int | None) -> str:
        """The line's text after the label: count, share, rate, elapsed and (when known) time left."""
        dt = self.elapsed()
        rate = done / dt
        parts = [f"{done:,}/{total:,} {self.unit}" if total else f"{done:,} {self.unit}"]
        if total:
            parts.append(f"{done / total:.0%}")
        parts += [f"{_rate(rate)} {self.unit}/s", f"{_seconds(dt)} elapsed"]
        if total and 0 < done < total and rate > 0:
            parts.append(f"about {_seconds((total - done) / rate)} left")
        return "  ".join(parts)

    def update(self, done: int, total: int | None = None) -> None:
        """``done`` steps finished so far (of ``total``, when given: it replaces the one known)."""
        self.done = done
        if total is not None:
            self.total = total
        if self.enabled:
            self._show(done, self.total, lambda: self.stats(done, self.total))

    __call__ = update

    def advance(self, n: int = 1) -> None:
        self.update(self.done + n)

    @contextlib.contextmanager
    def ticking(self) -> Iterator["Progress"]:
        """Around one call that counts no steps (a whole comparison, a debate with a model): a line every
        ``every`` seconds (at least 0.2 s apart) saying it is still working and for how long; on a terminal
        the bar pulses. Enter the progress first (``with Progress(...) as p, p.ticking():``)."""
        if not self.enabled:
            yield self
            return
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(max(self.every, 0.2)):
                self._show(0, None, lambda: f"working, {_seconds(self.elapsed())} elapsed")

        thread = threading.Thread(target=beat, name="progress", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join()

    def _show(self, done: int, total: int | None, text: Any) -> None:
        now = self.clock()
        if self.bar is not None:
            self.bar.update(self.tid, completed=done, total=total, stats=text())
        elif now - self.last_line >= self.every or (total is not None and done >= total):
            self.last_line = now
            line = f"progress {self.label}: {text()}"
            self.lines.append(line)
            self.console.print(line, highlight=False, soft_wrap=True, markup=False)


def per_rule(fn: Any, rules: list[str], progress: Progress, **kw: Any) -> dict[str, Any]:
    """``fn(rules, **kw)`` (an audit returning ``table`` by rule and ``witnesses`` in rule order) as one call per
    rule, ``progress`` advanced after each. The same result as the single call when each rule's cells depend on
    that rule alone (``aggregate audit``'s random-profile and search audits: tested)."""
    res = fn([], **kw)
    for r in rules:
        part = fn([r], **kw)
        res["table"].update(part["table"])
        res["witnesses"] += part["witnesses"]
        progress.advance()
    return res
