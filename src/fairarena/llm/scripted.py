"""The ``scripted`` backend: a ``ChatModel`` that delegates to a plain Python callable.

It needs nothing installed and is deterministic when the callable is. The arena registers its
deterministic negotiator here (``register_script("negotiator", fn)``), tests register small
scripts; :data:`SCRIPTS` (a :class:`~fairarena.registry.Registry`) holds them all. A script
receives the validated messages and a :class:`ChatParams` and returns the reply text (a
``dict``/``list`` is serialised to JSON).
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Mapping, Sequence

from fairarena.errors import InputError
from fairarena.llm.base import (
    ChatParams, ChatResponse, ContextMixin, Message, Usage, estimate_tokens, validate_messages, validate_params,
)
from fairarena.registry import Registry

Script = Callable[[list[dict[str, str]], ChatParams], Any]

SCRIPTS: Registry[Script] = Registry("script", field="model")


def register_script(name: str, func: Script | None = None, *, description: str = "", replace: bool = False) -> Any:
    """Register a script under ``name`` (usable as ``scripted:name``); works as a decorator too.

    A name already taken raises ``ValueError`` unless ``replace=True``.
    """

    def deco(f: Script) -> Script:
        SCRIPTS.add(name, f, description=description or (f.__doc__ or "").strip().split("\n")[0], replace=replace)
        return f

    return deco(func) if func is not None else deco


def scripts() -> dict[str, str]:
    """Registered script names and one-line descriptions."""
    return {e.name: e.description for e in sorted(SCRIPTS.entries(), key=lambda e: e.name)}


def get_script(name: str) -> Script:
    if name not in SCRIPTS:
        known = ", ".join(sorted(SCRIPTS)) or "none registered"
        raise InputError("model", f"scripted:{name}", f"a registered script ({known})")
    return SCRIPTS[name]


def _echo(messages: list[dict[str, str]], params: ChatParams) -> str:
    """Echo the last user message (a smoke-test script)."""
    return next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")


register_script("echo", _echo)


class ScriptedChatModel(ContextMixin):
    """No context window (``context_window = None``); prompts are counted with the documented estimate."""

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
