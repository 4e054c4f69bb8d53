"""Typed options of a model backend, as written after ``?`` in a model spec (``...?timeout=30&n_ctx=2048``).

Each converter takes ``(name, raw)`` and returns the value or raises an :class:`~fairarena.errors.InputError`
naming the option, so a bad option is refused when the spec is parsed, before any work.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping
from urllib.parse import parse_qsl

from fairarena.errors import InputError


def seconds(name: str, raw: Any) -> float:
    """A positive, finite number of seconds."""
    try:
        v = float(raw)
    except (TypeError, ValueError):
        raise InputError(name, raw, "a positive number of seconds") from None
    if not (v > 0) or not math.isfinite(v):
        raise InputError(name, raw, "a positive, finite number of seconds")
    return v


MAX_CONTEXT_TOKENS = 1 << 20  # no model today has a window beyond a million tokens: a larger value is a typo


def tokens(name: str, raw: Any) -> int:
    """A whole number of tokens, from 16 to :data:`MAX_CONTEXT_TOKENS`."""
    try:
        v = int(str(raw)) if not isinstance(raw, int) else raw
    except (TypeError, ValueError):
        raise InputError(name, raw, "a whole number of tokens") from None
    if isinstance(v, bool) or not 16 <= v <= MAX_CONTEXT_TOKENS:
        raise InputError(name, raw, f"a whole number of tokens from 16 to {MAX_CONTEXT_TOKENS}")
    return v


def count(name: str, raw: Any) -> int:
    """A positive whole number."""
    try:
        v = int(str(raw)) if not isinstance(raw, int) else raw
    except (TypeError, ValueError):
        raise InputError(name, raw, "a positive whole number") from None
    if isinstance(v, bool) or v < 1:
        raise InputError(name, raw, "a positive whole number")
    return v


def fraction(name: str, raw: Any) -> float:
    """A number from 0 to 1."""
    try:
        v = float(raw)
    except (TypeError, ValueError):
        raise InputError(name, raw, "a number from 0 to 1") from None
    if not 0.0 <= v <= 1.0:
        raise InputError(name, raw, "a number from 0 to 1")
    return v


SWITCH = ("auto", "on", "off")


def switch(name: str, raw: Any) -> str:
    """``auto``, ``on`` or ``off`` (also true/false, 1/0, yes/no)."""
    v = str(raw).strip().lower()
    v = {"true": "on", "1": "on", "yes": "on", "false": "off", "0": "off", "no": "off"}.get(v, v)
    if v not in SWITCH:
        raise InputError(name, raw, "auto, on or off")
    return v


@dataclass(frozen=True)
class Option:
    convert: Callable[[str, Any], Any]
    description: str
    default: Any = None


def parse_options(spec: str, query: str, options: Mapping[str, Option]) -> tuple[tuple[str, Any], ...]:
    """Validate ``a=1&b=2`` against a backend's options; returns sorted ``(name, value)`` pairs."""
    if not query:
        return ()
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise InputError("model", spec, "options as ?name=value&name=value") from None
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k not in options:
            known = ", ".join(options) or "none"
            raise InputError("model", spec, f"options of this backend ({known}); {k!r} is not one")
        if k in out:
            raise InputError("model", spec, f"option {k!r} once")
        try:
            out[k] = options[k].convert(k, v)
        except InputError as exc:  # name the spec the user wrote, and the option inside it
            raise InputError("model", spec, f"option {k}={v!r}: {exc.expected}") from None
    return tuple(sorted(out.items()))
