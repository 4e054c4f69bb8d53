"""The ``ChatModel`` protocol: messages in, text (or JSON) out.

Every backend (OpenAI-compatible HTTP, in-process llama.cpp, scripted) and every wrapper
(retry, cache, budget, usage) implements the same single method, so agents never know which
one they talk to::

    reply = model.chat(messages, seed=7, temperature=0.0, max_tokens=512, schema=SCHEMA)
    reply.text, reply.data, reply.usage.completion_tokens, reply.latency_s

LLM output is data: it is never executed and never used as a file path.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from fairarena.errors import FairArenaError, InputError

ROLES = ("system", "user", "assistant")

Message = Mapping[str, str]  # {"role": "system"|"user"|"assistant", "content": str}


class LLMError(FairArenaError):
    """A language-model call failed for good (after any retries)."""


class TransientLLMError(LLMError):
    """A failure worth retrying: timeout, HTTP 429, HTTP 5xx."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class ServerUnavailableError(LLMError):
    """Nothing answers at the configured base URL (server not running, wrong port)."""

    def __init__(self, base_url: str, detail: str = "") -> None:
        self.base_url = base_url
        msg = (f"no LLM server answers at {base_url} — is it running? "
               f"(start it, or pass a different base URL in the model spec)")
        super().__init__(msg + (f" [{detail}]" if detail else ""))


class BudgetExceededError(LLMError):
    """The call or token budget of a model is spent."""


class CacheMissError(LLMError):
    """Offline replay asked for a response that is not in the cache."""


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False  # True when the backend reports no counts and we estimated them

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class ChatParams:
    """Everything besides the messages that can change a response (part of the cache key)."""

    seed: int | None = None
    temperature: float = 0.0
    max_tokens: int = 512
    schema: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "temperature": self.temperature, "max_tokens": self.max_tokens,
                "schema": self.schema}


@dataclass
class ChatResponse:
    text: str
    backend: str
    model: str
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 1
    finish_reason: str | None = None
    json_mode: str | None = None  # how the schema was enforced: json_schema | json_object | prompt | grammar

    @property
    def data(self) -> Any:
        """The reply parsed as JSON, or None when it is not plain JSON (see arena.parsing for the robust parser)."""
        try:
            return json.loads(self.text)
        except (TypeError, ValueError):
            return None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["usage"] = {**asdict(self.usage), "total_tokens": self.usage.total_tokens}
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ChatResponse":
        u = dict(d.get("usage") or {})
        u.pop("total_tokens", None)
        return cls(text=d["text"], backend=d["backend"], model=d["model"], usage=Usage(**u),
                   latency_s=float(d.get("latency_s", 0.0)), cached=bool(d.get("cached", False)),
                   attempts=int(d.get("attempts", 1)), finish_reason=d.get("finish_reason"),
                   json_mode=d.get("json_mode"))


@runtime_checkable
class ChatModel(Protocol):
    """One method. ``backend`` and ``model`` identify the model (cache keys, transcripts)."""

    backend: str
    model: str

    def chat(self, messages: Sequence[Message], *, seed: int | None = None, temperature: float = 0.0,
             max_tokens: int = 512, schema: Mapping[str, Any] | None = None) -> ChatResponse: ...


def validate_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Check the message list once at the edge; returns plain dicts."""
    if not messages:
        raise InputError("messages", messages, "at least one message")
    out: list[dict[str, str]] = []
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, Mapping) else None
        content = m.get("content") if isinstance(m, Mapping) else None
        if role not in ROLES:
            raise InputError(f"messages[{i}].role", role, f"one of {', '.join(ROLES)}")
        if not isinstance(content, str):
            raise InputError(f"messages[{i}].content", content, "a string")
        out.append({"role": role, "content": content})
    return out


def validate_params(seed: int | None, temperature: float, max_tokens: int,
                    schema: Mapping[str, Any] | None) -> ChatParams:
    if seed is not None and (not isinstance(seed, int) or seed < 0):
        raise InputError("seed", seed, "a non-negative integer or None")
    if not (0.0 <= float(temperature) <= 2.0):
        raise InputError("temperature", temperature, "a number in [0, 2]")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise InputError("max_tokens", max_tokens, "a positive integer")
    if schema is not None and not isinstance(schema, Mapping):
        raise InputError("schema", schema, "a JSON schema object (dict) or None")
    return ChatParams(seed=seed, temperature=float(temperature), max_tokens=max_tokens,
                      schema=dict(schema) if schema is not None else None)


def estimate_tokens(text: str) -> int:
    """Rough token count (about 4 characters a token) for backends that report none."""
    return max(1, (len(text) + 3) // 4) if text else 0


def schema_instruction(schema: Mapping[str, Any]) -> str:
    """The prompt-side fallback when a server cannot constrain output to a schema."""
    return ("Answer with one JSON object only, no prose, matching this JSON schema:\n"
            + json.dumps(schema, sort_keys=True))
