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
