"""Any OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp's server, LM Studio, hosted APIs)
through the official ``openai`` client.

* The API key comes from the environment only (``FAIRARENA_API_KEY``, then ``OPENAI_API_KEY``;
  local servers need none). It is never stored in a transcript, a cache key or a log line.
* The client's own retries are switched off (``max_retries=0``): retrying is the job of
  :class:`fairarena.llm.wrappers.RetryingModel`, which sees the typed errors raised here.
* JSON schema: the request first asks for ``response_format={"type": "json_schema", ...}``
  (OpenAI, vLLM, Ollama); a server that rejects it (HTTP 400/422) is asked for
  ``{"type": "json_object", "schema": ...}`` (llama.cpp's server, grammar-constrained; it answers the
  unsupported ``json_schema`` with an HTTP 500 naming ``response_format``, treated the same); a server
  that rejects that too gets the schema as a prompt instruction. The mode that worked is
  remembered per model object and reported in ``ChatResponse.json_mode``.
"""

from __future__ import annotations

import os
import time
from typing import Any, Mapping, Sequence

from fairarena.llm.base import (
    ChatResponse, LLMError, Message, ServerUnavailableError, TransientLLMError, Usage,
    estimate_tokens, schema_instruction, validate_messages, validate_params,
)

API_KEY_ENV = ("FAIRARENA_API_KEY", "OPENAI_API_KEY")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
_JSON_MODES = ("json_schema", "json_object", "prompt")


def api_key_from_env() -> str | None:
    for name in API_KEY_ENV:
        value = os.environ.get(name)
        if value:
            return value
    return None


class OpenAIChatModel:
    backend = "openai"

    def __init__(self, model: str, base_url: str | None = None, *, timeout: float = 120.0,
                 api_key_env: str | None = None) -> None:
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.timeout = float(timeout)
        self._api_key_env = api_key_env
        self._client: Any = None
        self._json_mode_index = 0

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIChatModel(model={self.model!r}, base_url={self.base_url!r})"

    def _get_client(self) -> Any:
        if self._client is None:
            try:
                import openai
            except ImportError as exc:  # pragma: no cover - depends on the extra
                raise LLMError("the openai backend needs the 'llm' extra: pip install 'fairarena[llm]'") from exc
            key = os.environ.get(self._api_key_env) if self._api_key_env else api_key_from_env()
            self._client = openai.OpenAI(api_key=key or "not-needed", base_url=self.base_url,
                                         timeout=self.timeout, max_retries=0)
        return self._client

    def chat(self, messages: Sequence[Message], *, seed: int | None = None, temperature: float = 0.0,
             max_tokens: int = 512, schema: Mapping[str, Any] | None = None) -> ChatResponse:
        msgs = validate_messages(messages)
        params = validate_params(seed, temperature, max_tokens, schema)
        client = self._get_client()
        import openai

        while True:
            mode = _JSON_MODES[self._json_mode_index] if params.schema is not None else None
            kwargs: dict[str, Any] = {"model": self.model, "messages": msgs,
                                      "temperature": params.temperature, "max_tokens": params.max_tokens}
            if params.seed is not None:
                kwargs["seed"] = params.seed
            if mode == "json_schema":
                kwargs["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": "reply", "schema": dict(params.schema or {}), "strict": False}}
            elif mode == "json_object":
                kwargs["response_format"] = {"type": "json_object", "schema": dict(params.schema or {})}
            elif mode == "prompt":
                kwargs["messages"] = msgs + [{"role": "system", "content": schema_instruction(params.schema or {})}]
            t0 = time.perf_counter()
            try:
                resp = client.chat.completions.create(**kwargs)
            except openai.APITimeoutError as exc:
                raise TransientLLMError(f"timeout after {self.timeout:g}s from {self.base_url}") from exc
            except openai.APIConnectionError as exc:
                if _refused(exc):  # nothing listens there: a configuration error, not worth retrying
                    raise ServerUnavailableError(self.base_url, type(exc.__cause__ or exc).__name__) from exc
                # the server was reached but dropped the connection mid-request: transient
                raise TransientLLMError(f"connection to {self.base_url} dropped "
                                        f"({type(exc.__cause__ or exc).__name__})") from exc
            except openai.RateLimitError as exc:
                raise TransientLLMError(f"HTTP 429 from {self.base_url}", status=429,
                                        retry_after=_retry_after(exc)) from exc
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if mode is not None and self._json_mode_index < len(_JSON_MODES) - 1:
                    self._json_mode_index += 1  # server does not support this response_format: degrade
                    continue
                raise LLMError(f"HTTP {exc.status_code} from {self.base_url}: {_message(exc)}") from exc
            except openai.APIStatusError as exc:
                if (mode in ("json_schema", "json_object") and "response_format" in _message(exc)
                        and self._json_mode_index < len(_JSON_MODES) - 1):
                    # some servers (llama_cpp.server) answer an unsupported response_format with a 500
                    self._json_mode_index += 1
                    continue
                if exc.status_code >= 500 or exc.status_code in (408, 409):
                    raise TransientLLMError(f"HTTP {exc.status_code} from {self.base_url}",
                                            status=exc.status_code, retry_after=_retry_after(exc)) from exc
                if exc.status_code == 404:
                    raise LLMError(f"HTTP 404 from {self.base_url}: model {self.model!r} or endpoint not found "
                                   f"({_message(exc)})") from exc
                raise LLMError(f"HTTP {exc.status_code} from {self.base_url}: {_message(exc)}") from exc
            latency = time.perf_counter() - t0
            break

        if not getattr(resp, "choices", None):
            raise TransientLLMError(f"empty completion from {self.base_url}")
        choice = resp.choices[0]
        text = choice.message.content or ""
        u = getattr(resp, "usage", None)
        if u is not None and getattr(u, "completion_tokens", None) is not None:
            usage = Usage(int(u.prompt_tokens or 0), int(u.completion_tokens or 0))
        else:
            usage = Usage(sum(estimate_tokens(m["content"]) for m in msgs), estimate_tokens(text), estimated=True)
        return ChatResponse(text=text, backend=self.backend, model=self.model, usage=usage, latency_s=latency,
                            finish_reason=getattr(choice, "finish_reason", None), json_mode=mode)


def _refused(exc: BaseException) -> bool:
    """True when the connection could not be opened at all (refused, unknown host, connect timeout)."""
    seen: BaseException | None = exc
    while seen is not None:
        names = {c.__name__ for c in type(seen).__mro__}
        if names & {"ConnectError", "ConnectTimeout", "ConnectionRefusedError", "gaierror"}:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _retry_after(exc: Any) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def _message(exc: Any) -> str:
    text = str(getattr(exc, "message", "") or exc)
    body = getattr(exc, "body", None)
    if body is not None and "response_format" not in text:
        text += " " + str(body)
    return text if len(text) < 300 else text[:297] + "..."
