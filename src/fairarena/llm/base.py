"""The ``ChatModel`` protocol: messages in, text (or JSON) out.

Every backend (OpenAI-compatible HTTP, in-process llama.cpp, scripted) and every wrapper
(retry, cache, budget, usage) implements the same single method, so agents never know which
one they talk to::

    reply = model.chat(messages, seed=7, temperature=0.0, max_tokens=512, schema=SCHEMA)
    reply.text, reply.data, reply.usage.completion_tokens, reply.latency_s

LLM output is data: it is never executed and never used as a file path.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import math
import time
from dataclasses import dataclass, field, fields
from typing import Any, Iterator, Mapping, Protocol, Sequence, runtime_checkable

from fairarena.errors import FairArenaError, InputError
from fairarena.llm.redaction import redact

ROLES = ("system", "user", "assistant")

Message = Mapping[str, str]  # {"role": "system"|"user"|"assistant", "content": str}


class LLMError(FairArenaError):
    """A language-model call failed for good (after any retries).

    The message is one line and passed through :func:`fairarena.llm.redact` when the error is
    made, so a server that echoes a rejected key never gets it into a log, a transcript or a terminal.
    """

    def __init__(self, message: str = "", *args: Any) -> None:
        text = " ".join(str(message).split())  # one line
        super().__init__(redact(text), *args)

    def __reduce__(self) -> Any:
        # picklable whatever the subclass's constructor takes (errors cross process boundaries in studies)
        return (_rebuild_error, (type(self), str(self), dict(self.__dict__)))


def _rebuild_error(cls: type, message: str, state: dict[str, Any]) -> "LLMError":
    err = cls.__new__(cls)
    Exception.__init__(err, message)
    err.__dict__.update(state)
    return err


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


class MalformedResponseError(LLMError):
    """The server answered, but not with a chat completion: a body that is not JSON (an HTML page, a
    proxy's error text), or JSON without usable ``choices`` / ``message`` / ``content``. Not retried:
    the base URL most likely points at something that is not an OpenAI-compatible API."""


class TruncatedResponseError(TransientLLMError):
    """The body was cut off mid-JSON, or held no choices (a dropped stream, a proxy time-out): retried."""


class ContextOverflowError(LLMError):
    """The prompt plus the requested completion would not fit the model's context window.

    Raised *before* the call (nothing is sent); carries the counts so a caller can shorten the prompt.
    """

    def __init__(self, prompt_tokens: int, max_tokens: int, context_window: int, model: str = "",
                 counted: str = "") -> None:
        self.prompt_tokens = int(prompt_tokens)
        self.max_tokens = int(max_tokens)
        self.context_window = int(context_window)
        who = f" of {model}" if model else ""
        how = f" ({counted})" if counted else ""
        super().__init__(f"prompt of {prompt_tokens} tokens{how} + max_tokens {max_tokens} exceeds the context "
                         f"window{who} of {context_window} tokens: shorten the prompt to at most "
                         f"{max(0, context_window - max_tokens)} tokens or lower max_tokens")


class PromptTruncatedError(LLMError):
    """The server counted far fewer prompt tokens than were sent: it cut the prompt to fit a smaller
    context window than the spec's (Ollama's ``num_ctx``). Not retried: the same prompt is cut again."""


class BudgetExceededError(LLMError):
    """The call or token budget of a model is spent."""


class CacheMissError(LLMError):
    """Offline replay asked for a response that is not in the cache."""


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False  # True when the backend reports no counts and we estimated them
    # prompt tokens the server reused from its prefix cache, when it says (OpenAI's and vLLM's
    # usage.prompt_tokens_details.cached_tokens, llama.cpp's timings.cache_n); None: not reported
    cached_tokens: int | None = None

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

    def __post_init__(self) -> None:
        # model output is redacted where it is made, before anything can write or print it (a server that
        # echoes the Authorization header inside a normal completion; a cached entry written before)
        self.text = redact(self.text)
        self.finish_reason = redact(self.finish_reason)

    @property
    def data(self) -> Any:
        """The reply parsed as JSON, or None when it is not plain JSON (see arena.parsing for the robust parser)."""
        try:
            return json.loads(self.text)
        except (TypeError, ValueError):
            return None

    def to_dict(self) -> dict[str, Any]:
        # every field is a scalar: a shallow copy, not dataclasses.asdict's recursive deep copy (a tenth of
        # the response cache's work per call)
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        u = self.usage
        out["usage"] = {**{f.name: getattr(u, f.name) for f in fields(u)}, "total_tokens": u.total_tokens}
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
    """One method. ``backend`` and ``model`` identify the model (cache keys, transcripts).

    Every model in this package also has ``context_window`` (tokens, ``None`` for no limit),
    ``count_tokens(messages)`` and ``max_prompt_tokens(max_tokens)`` (see :class:`ContextMixin`); for a
    model object from elsewhere use the functions :func:`context_window`, :func:`count_tokens` and
    :func:`max_prompt_tokens`, which fall back to no window and :func:`estimate_prompt_tokens`.
    """

    backend: str
    model: str

    def chat(self, messages: Sequence[Message], *, seed: int | None = None, temperature: float = 0.0,
             max_tokens: int = 512, schema: Mapping[str, Any] | None = None) -> ChatResponse: ...


class CheckedMessages(list):  # type: ignore[type-arg]
    """A message list :func:`validate_messages` returned: passed down a stack of wrappers to the backend, it is
    not checked again at every layer (each check encodes every message; prompts run to several kB)."""


def validate_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Check the message list once at the edge; returns plain dicts (a :class:`CheckedMessages`, which this
    returns as it is: do not add to it)."""
    if type(messages) is CheckedMessages:
        return messages
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
        try:
            content.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate (text decoded with surrogateescape)
            raise InputError(f"messages[{i}].content", content[max(0, exc.start - 20):exc.end + 20],
                             f"text that is valid Unicode (a lone surrogate at character {exc.start})") from None
        out.append({"role": role, "content": content})
    return CheckedMessages(out)


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
    """Rough token count (about 4 characters a token) for usage accounting when a backend reports none."""
    return max(1, (len(text) + 3) // 4) if text else 0


CHARS_PER_TOKEN_ESTIMATE = 3.5
MESSAGE_OVERHEAD_TOKENS = 8  # role markers and separators of a chat template, per message
PROMPT_OVERHEAD_TOKENS = 8   # the template's start and the assistant turn header


def estimate_prompt_tokens(messages: Sequence[Message]) -> int:
    """A conservative prompt-token count for backends without a tokenizer at hand.

    ``ceil(len(content) / 3.5)`` per message plus :data:`MESSAGE_OVERHEAD_TOKENS` per message and
    :data:`PROMPT_OVERHEAD_TOKENS` once. English text runs at about 4 characters a token with the BPE
    tokenizers of current chat models, so 3.5 over-counts by about 12 % on prose (more safety on
    numbers and JSON, which tokenise denser); the point is never to under-count.
    """
    total = PROMPT_OVERHEAD_TOKENS
    for m in messages:
        total += math.ceil(len(m.get("content") or "") / CHARS_PER_TOKEN_ESTIMATE) + MESSAGE_OVERHEAD_TOKENS
    return total


class ContextMixin:
    """Token counting and the context window, shared by the backends.

    ``context_window`` is the model's window in tokens (``None``: unbounded or unknown, no check);
    :meth:`count_tokens` counts a prompt the way the backend will see it; :meth:`max_prompt_tokens`
    is the largest prompt that still leaves room for ``max_tokens`` of reply;
    :meth:`check_context` raises :class:`ContextOverflowError` before a call that would not fit.
    """

    context_window: int | None = None
    token_count_method = f"estimate: ceil(chars / {CHARS_PER_TOKEN_ESTIMATE}) + {MESSAGE_OVERHEAD_TOKENS} per message"

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return estimate_prompt_tokens(validate_messages(messages))

    def max_prompt_tokens(self, max_tokens: int = 512) -> int | None:
        if self.context_window is None:
            return None
        return max(0, int(self.context_window) - int(max_tokens))

    def check_context(self, messages: Sequence[Message], max_tokens: int) -> int | None:
        """The prompt's token count, after checking it fits with ``max_tokens`` of reply (``None``
        when the window is unbounded and nothing was counted)."""
        if self.context_window is None:
            return None
        n = self.count_tokens(messages)
        if n + max_tokens > self.context_window:
            raise ContextOverflowError(n, max_tokens, self.context_window, getattr(self, "model", ""),
                                       self.token_count_method)
        return n


def context_window(model: Any) -> int | None:
    """The context window of any chat model (``None`` when it declares none)."""
    return getattr(model, "context_window", None)


def count_tokens(model: Any, messages: Sequence[Message]) -> int:
    """Prompt tokens of ``messages`` for ``model``: its own counter, else :func:`estimate_prompt_tokens`."""
    fn = getattr(model, "count_tokens", None)
    return int(fn(messages)) if callable(fn) else estimate_prompt_tokens(validate_messages(messages))


def max_prompt_tokens(model: Any, max_tokens: int = 512) -> int | None:
    """The largest prompt ``model`` takes with ``max_tokens`` of reply (``None``: no limit)."""
    fn = getattr(model, "max_prompt_tokens", None)
    if callable(fn):
        return fn(max_tokens)
    w = context_window(model)
    return None if w is None else max(0, int(w) - int(max_tokens))


_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("fairarena_llm_deadline", default=None)


@contextlib.contextmanager
def call_deadline(seconds: float | None) -> Iterator[None]:
    """Within the block, backends shorten their time-outs to what is left of ``seconds`` from now.

    :class:`~fairarena.llm.wrappers.RetryingModel` opens one around all attempts of a call, so its
    ``total_timeout`` bounds the call's wall time, retries and back-off included. Nested deadlines keep
    the earlier one.
    """
    if seconds is None:
        yield
        return
    new = time.monotonic() + float(seconds)
    old = _DEADLINE.get()
    token = _DEADLINE.set(new if old is None else min(old, new))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def remaining_time() -> float | None:
    """Seconds left before the innermost :func:`call_deadline` (``None``: no deadline)."""
    d = _DEADLINE.get()
    return None if d is None else d - time.monotonic()


def schema_instruction(schema: Mapping[str, Any]) -> str:
    """The prompt-side fallback when a server cannot constrain output to a schema."""
    return ("Answer with one JSON object only, no prose, matching this JSON schema:\n"
            + json.dumps(schema, sort_keys=True))


class ModelWrapper:
    """The base of every model wrapper (retry, limit, cache, budget, usage, replica router): ``inner`` is
    the wrapped model, and the model's name, context window and token counting pass through unchanged, so
    prompt fitting works on any stack."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner

    @property
    def backend(self) -> str:
        return self.inner.backend

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def context_window(self) -> int | None:
        return getattr(self.inner, "context_window", None)

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return count_tokens(self.inner, messages)

    def max_prompt_tokens(self, max_tokens: int = 512) -> int | None:
        return max_prompt_tokens(self.inner, max_tokens)

    def unwrap(self) -> ChatModel:
        m: Any = self
        while isinstance(m, ModelWrapper):
            m = m.inner
        return m

    def find(self, kind: type) -> Any:
        """The first wrapper of type ``kind`` in this stack (or None)."""
        m: Any = self
        while m is not None:
            if isinstance(m, kind):
                return m
            m = getattr(m, "inner", None)
        return None
