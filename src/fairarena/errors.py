"""Typed errors. Validation happens once at the edge and names the bad field and value."""

from __future__ import annotations

from typing import Any


class FairArenaError(Exception):
    """Base class for every error fairarena raises on purpose."""


class InputError(FairArenaError, ValueError):
    """Bad user input: names the field, the offending value and what was expected.

    The CLI turns it into a one-line message and exit code 2.
    """

    def __init__(self, field: str, value: Any, expected: str) -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(f"{field} = {_short(value)}: {expected}")


class SolverError(FairArenaError, RuntimeError):
    """A solver did not reach an optimal, trustworthy answer (status is never ignored)."""


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def interrupt_of(exc: BaseException) -> BaseException | None:
    """The interrupt behind ``exc``: ``exc`` itself when it is a :class:`KeyboardInterrupt` (Ctrl-C) or a
    :class:`SystemExit` (the CLI turns SIGTERM into ``SystemExit(143)``), else the first such exception in
    its chain of causes when ``exc`` is a :class:`SystemError`. A signal handler that raises while C code
    is running a Python callback (numba unpickling a compiled function, for one) surfaces as "SystemError:
    ... returned a result with an exception set", caused by the interrupt; it is that interrupt, not a
    failure. None for anything else."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        return exc
    if not isinstance(exc, SystemError):
        return None
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, (KeyboardInterrupt, SystemExit)):
            return cur
        cur = cur.__cause__ or cur.__context__
    return None
