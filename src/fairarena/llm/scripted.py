"""The ``scripted`` backend: a ``ChatModel`` that delegates to a plain Python callable.

It needs nothing installed and is deterministic when the callable is. The arena registers its
deterministic negotiator here (``register_script("negotiator", fn)``), tests register small
scripts. A script receives the validated messages and a :class:`ChatParams` and returns the reply
text (a ``dict``/``list`` is serialised to JSON).
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Mapping, Sequence

from fairarena.errors import InputError
from fairarena.llm.base import (
    ChatParams, ChatResponse, Message, Usage, estimate_tokens, validate_messages, validate_params,
)

Script = Callable[[list[dict[str, str]], ChatParams], Any]

_SCRIPTS: dict[str, tuple[Script, str]] = {}


def register_script(name: str, func: Script | None = None, *, description: str = "") -> Any:
    """Register a script under ``name`` (usable as ``scripted:name``); works as a decorator too."""

    def deco(f: Script) -> Script:
        _SCRIPTS[name] = (f, description or (f.__doc__ or "").strip().split("\n")[0])
        return f

    return deco(func) if func is not None else deco


def scripts() -> dict[str, str]:
    """Registered script names and one-line descriptions."""
    return {name: desc for name, (_, desc) in sorted(_SCRIPTS.items())}


def get_script(name: str) -> Script:
    if name not in _SCRIPTS:
        known = ", ".join(sorted(_SCRIPTS)) or "none registered"
        raise InputError("model", f"scripted:{name}", f"a registered script ({known})")
    return _SCRIPTS[name][0]


def _echo(messages: list[dict[str, str]], params: ChatParams) -> str:
    """Echo the last user message (a smoke-test script)."""
    return next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")


register_script("echo", _echo)


class ScriptedChatModel:
    backend = "scripted"

    def __init__(self, func: Script, name: str = "custom") -> None:
        if not callable(func):
            raise InputError("script", func, "a callable (messages, params) -> str | dict")
        self.func = func
        self.model = name

    def __repr__(self) -> str:
        return f"ScriptedChatModel({self.model!r})"

    def chat(self, messages: Sequence[Message], *, seed: int | None = None, temperature: float = 0.0,
             max_tokens: int = 512, schema: Mapping[str, Any] | None = None) -> ChatResponse:
        msgs = validate_messages(messages)
        params = validate_params(seed, temperature, max_tokens, schema)
        t0 = time.perf_counter()
        out = self.func(msgs, params)
        text = out if isinstance(out, str) else json.dumps(out)
        latency = time.perf_counter() - t0
        usage = Usage(sum(estimate_tokens(m["content"]) for m in msgs), estimate_tokens(text), estimated=True)
        return ChatResponse(text=text, backend=self.backend, model=self.model, usage=usage, latency_s=latency,
                            finish_reason="stop", json_mode="native" if params.schema is not None else None)
