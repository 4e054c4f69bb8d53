"""The one direction vocabulary of metrics: ``max`` (higher is better) or ``min`` (lower is better).

A module of its own, without numpy or scipy, so that code that only compares metrics (the emergence
measures, the copy measures a study's workers compute) loads no statistics library;
:mod:`fairarena.stats.paired` re-exports it.
"""

from __future__ import annotations

from fairarena.errors import InputError

_DIRECTIONS = {"max": 1, "min": -1}
#: the words files written before the one vocabulary hold for ``max`` / ``min`` (read by
#: :func:`canonical_direction` only)
_LEGACY_DIRECTIONS = {"higher": "max", "lower": "min"}


def direction_sign(direction: str) -> int:
    """+1 for ``max`` (higher is better), -1 for ``min`` (lower is better); anything else is an InputError."""
    try:
        return _DIRECTIONS[direction]
    except (KeyError, TypeError):
        raise InputError("direction", direction, "one of max, min") from None


def canonical_direction(direction: str) -> str:
    """``max`` or ``min`` for a direction read from a stored file.

    The legacy read path: statistics files (and the ``claim`` of their noise figures) written before the
    package had one direction vocabulary hold ``higher`` / ``lower``; this is the one place that maps them
    to ``max`` / ``min``. Nothing else accepts them: code that produces or compares a direction uses
    ``max`` / ``min`` (:func:`direction_sign`)."""
    d = _LEGACY_DIRECTIONS.get(direction, direction) if isinstance(direction, str) else direction
    direction_sign(d)
    return d


def better_word(direction: str) -> str:
    """The direction in prose: ``"higher"`` for ``max``, ``"lower"`` for ``min`` (as in "higher is better")."""
    return "higher" if direction_sign(direction) > 0 else "lower"


__all__ = ["better_word", "canonical_direction", "direction_sign"]
