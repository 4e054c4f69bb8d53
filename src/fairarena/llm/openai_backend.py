"""Any OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp's server, LM Studio, hosted APIs).

* Transport (``?client=``): ``http`` is :mod:`fairarena.llm.http_client`, a keep-alive pool of the
  standard library's connections (about 0.1 ms of CPU a call where the official client spends 1.5-1.8 ms:
  a study keeps hundreds of calls in flight from one process); ``openai`` is the official ``openai``
  client; ``auto`` (the default) is ``http`` unless an HTTP(S) proxy from the environment applies to
  the base URL, which the official client honours. Both give the same requests, the same typed errors
  and the same retries.

* The API key comes from the environment only (``FAIRARENA_API_KEY``, then ``OPENAI_API_KEY``;
  local servers need none). It is never stored in a transcript, a cache key or a log line.
* Neither transport retries by itself (the official client gets ``max_retries=0``): retrying is the job
  of :class:`fairarena.llm.wrappers.RetryingModel`, which sees the typed errors raised here.
* JSON schema: the request first asks for ``response_format={"type": "json_schema", ...}``
  (OpenAI, vLLM, Ollama); a server that rejects it (HTTP 400/422) is asked for
  ``{"type": "json_object", "schema": ...}`` (llama.cpp's server, grammar-constrained; it answers the
  unsupported ``json_schema`` with an HTTP 500 naming ``response_format``, treated the same); a server
  that rejects that too gets the schema as a prompt instruction. The mode that worked is
  remembered per model object and reported in ``ChatResponse.json_mode``.
* Time-outs: ``connect_timeout`` (default 10 s) to open the connection, ``timeout`` (default 120 s) for
  the server to send the next bytes of its answer (a hanging server fails after it). A
  :class:`~fairarena.llm.wrappers.RetryingModel` above may shorten both to what is left of its
  ``total_timeout`` (see :func:`fairarena.llm.base.call_deadline`).
* The body is parsed here, not by a client: an HTML page, a truncated body or a completion without
  usable ``choices``/``content`` becomes a typed :class:`~fairarena.llm.base.MalformedResponseError`
  (or a retried :class:`~fairarena.llm.base.TruncatedResponseError`) with a one-line message.
* Every message is redacted (:func:`fairarena.llm.redact`), and the key in use is registered as a
  secret, so a server that echoes a rejected key does not get it printed or written.
* ``context_window`` (default 8192, or ``?context_window=N`` in the spec) bounds prompt + ``max_tokens``;
  prompts are counted with :func:`fairarena.llm.base.estimate_prompt_tokens` (no tokenizer over HTTP).
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any, Mapping, Sequence

from fairarena.errors import InputError
from fairarena.llm.base import (
    ChatResponse, ContextMixin, LLMError, MalformedResponseError, Message, PromptTruncatedError,
    ServerUnavailableError, TransientLLMError, TruncatedResponseError, Usage, estimate_prompt_tokens,
    estimate_tokens, remaining_time, schema_instruction, validate_messages, validate_params,
)
from fairarena.llm.http_client import (
    BodyCut, BodyStalled, ConnectFailed, Dropped, HTTPPool, HTTPStatusFailure, NoAnswer,
)
from fairarena.llm.options import fraction, seconds, switch, tokens
from fairarena.llm.redaction import redact, register_secret

API_KEY_ENV = ("FAIRARENA_API_KEY", "OPENAI_API_KEY")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_TIMEOUT = 120.0         # seconds without the next bytes of an answer
DEFAULT_CONNECT_TIMEOUT = 10.0  # seconds to open the connection
DEFAULT_TOTAL_TIMEOUT = 300.0   # seconds for one call over all retries and back-off
DEFAULT_CONTEXT_WINDOW = 8192   # tokens, when the spec names none (Ollama's and llama.cpp's servers run smaller by default)
DEFAULT_TRUNCATION_RATIO = 0.6  # a server count below this share of the client's estimate: the prompt was cut
TRUNCATION_CHECK_MIN_TOKENS = 256  # shorter prompts are not judged (chat-template overheads dominate them)
_JSON_MODES = ("json_schema", "json_object", "prompt")
CLIENTS = ("auto", "http", "openai")  # the transport: see the module's docstring
_CLIENT_LOCK = threading.Lock()  # one pool / official client per model, even when 300 threads call it first at once


def client_choice(name: str, raw: Any) -> str:
    """One of :data:`CLIENTS` (the ``client`` spec option)."""
    v = str(raw).strip().lower()
    if v not in CLIENTS:
        raise InputError(name, raw, "auto, http or openai")
    return v


def proxy_applies(base_url: str) -> bool:
    """Does an HTTP(S) proxy from the environment (``HTTPS_PROXY``, ``ALL_PROXY``, ... less ``NO_PROXY``)
    apply to ``base_url``? The lean transport does not speak to proxies; the official client does."""
    import urllib.request
    from urllib.parse import urlsplit

    url = urlsplit(base_url)
    proxies = urllib.request.getproxies()
    if not (proxies.get(url.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(url.hostname or "")


def api_key_from_env() -> str | None:
    for name in API_KEY_ENV:
        value = os.environ.get(name)
        if value:
            return value
    return None


class OpenAIChatModel(ContextMixin):
    backend = "openai"

    def __init__(self, model: str, base_url: str | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT, api_key_env: str | None = None,
                 context_window: int | None = DEFAULT_CONTEXT_WINDOW, cache_prompt: str = "auto",
                 truncation_ratio: float = DEFAULT_TRUNCATION_RATIO, client: str = "auto") -> None:
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.timeout = seconds("timeout", timeout)
        self.connect_timeout = seconds("connect_timeout", connect_timeout)
        self.context_window = tokens("context_window", context_window) if context_window is not None else None
        self._api_key_env = api_key_env
        # llama.cpp's server reuses the KV cache of a prompt's shared prefix when asked (cache_prompt);
        # other servers ignore the field, OpenAI's own API refuses unknown fields (and caches by itself)
        reuse = switch("cache_prompt", cache_prompt)
        self.cache_prompt = reuse == "on" or (reuse == "auto"
                                              and not self.base_url.split("://", 1)[-1].startswith("api.openai.com"))
        self.truncation_ratio = fraction("truncation_ratio", truncation_ratio)
        self.client = client_choice("client", client)
        self._client: Any = None
        self._pool: HTTPPool | None = None
        self._transport: str | None = None
        self._json_mode_index = 0

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIChatModel(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def transport(self) -> str:
        """``http`` or ``openai``: the transport this model's calls use (``client=auto`` resolved once, at
        the first call: reading the proxy settings costs more than a call's whole HTTP exchange)."""
        if self._transport is None:
            self._transport = self.client if self.client != "auto" else \
                ("openai" if proxy_applies(self.base_url) else "http")
        return self._transport

    def _api_key(self) -> str | None:
        key = os.environ.get(self._api_key_env) if self._api_key_env else api_key_from_env()
        register_secret(key)
        return key

    def _get_client(self) -> Any:
        if self._client is None:
            try:
                import openai
            except ImportError as exc:  # pragma: no cover - depends on the extra
                raise LLMError("the openai backend needs the 'llm' extra: pip install 'fairarena[llm]'") from exc
            with _CLIENT_LOCK:
                if self._client is None:
                    read, connect = self._timeouts()
                    self._client = openai.OpenAI(api_key=self._api_key() or "not-needed", base_url=self.base_url,
                                                 timeout=openai.Timeout(read, connect=connect), max_retries=0)
        return self._client

    def _get_pool(self) -> HTTPPool:
        if self._pool is None:
            with _CLIENT_LOCK:
                if self._pool is None:
                    from fairarena import __version__
                    # the same Authorization header as the official client's (servers without keys ignore it)
                    self._pool = HTTPPool(self.base_url, {
                        "Authorization": f"Bearer {self._api_key() or 'not-needed'}",
                        "Content-Type": "application/json", "Accept": "application/json",
                        "User-Agent": f"fairarena/{__version__}"})
        return self._pool

    def _timeouts(self) -> tuple[float, float]:
        """``(read, connect)`` time-outs for the next attempt, shortened to what is left of the deadline."""
        left = remaining_time()
        read, connect = self.timeout, self.connect_timeout
        if left is not None:
            read, connect = max(0.001, min(read, left)), max(0.001, min(connect, left))
        return read, connect

    def chat(self, messages: Sequence[Message], *, seed: int | None = None, temperature: float = 0.0,
             max_tokens: int = 512, schema: Mapping[str, Any] | None = None) -> ChatResponse:
        msgs = validate_messages(messages)
        params = validate_params(seed, temperature, max_tokens, schema)
        post = self._post_official if self.transport == "openai" else self._post_http

        while True:
            mode = _JSON_MODES[self._json_mode_index] if params.schema is not None else None
            body: dict[str, Any] = {"model": self.model, "messages": msgs,
                                    "temperature": params.temperature, "max_tokens": params.max_tokens}
            if params.seed is not None:
                body["seed"] = params.seed
            if mode == "json_schema":
                body["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": "reply", "schema": dict(params.schema or {}), "strict": False}}
            elif mode == "json_object":
                body["response_format"] = {"type": "json_object", "schema": dict(params.schema or {})}
            elif mode == "prompt":
                body["messages"] = msgs + [{"role": "system", "content": schema_instruction(params.schema or {})}]
            if self.cache_prompt:
                body["cache_prompt"] = True
            self.check_context(body["messages"], params.max_tokens)
            read, connect = self._timeouts()
            t0 = time.perf_counter()
            failure: LLMError | None = None
            try:
                content_type, content = post(body, read, connect, t0)
            except HTTPStatusFailure as exc:
                if self.cache_prompt and exc.status_code in (400, 422) and "cache_prompt" in _raw_text(exc):
                    self.cache_prompt = False  # a server that refuses the field: send it no more
                    continue
                failure = self._status_error(exc, mode)
                if failure is None:  # the server does not support this response_format: degrade
                    self._json_mode_index += 1
                    continue
            if failure is not None:
                # raised outside the except block: no chained exception carries the raw body
                raise failure
            latency = time.perf_counter() - t0
            break

        text, finish_reason, u = parse_completion(content, content_type, self.base_url)
        if u is not None:
            usage = Usage(u[0], u[1], cached_tokens=u[2])
            self._check_truncation(body["messages"], u[0])
        else:
            usage = Usage(sum(estimate_tokens(m["content"]) for m in body["messages"]), estimate_tokens(text),
                          estimated=True)
        return ChatResponse(text=text, backend=self.backend, model=self.model, usage=usage, latency_s=latency,
                            finish_reason=finish_reason, json_mode=mode)

    def _check_truncation(self, messages: list[dict[str, str]], reported: int) -> None:
        """Fail the call when the server's prompt count is far below the client's (a silent cut).

        The client's count is :func:`~fairarena.llm.base.estimate_prompt_tokens`, which over-counts prose
        by about 12 % and under-counts digits and JSON; a server count below ``truncation_ratio`` (0.6) of it
        is not a tokenizer difference. A count of 0 is not judged (some servers report only the tokens they
        had to evaluate, none when the whole prompt was cached), nor a prompt under 256 estimated tokens.
        """
        if self.truncation_ratio <= 0 or reported <= 0:
            return
        sent = estimate_prompt_tokens(messages)
        if sent >= TRUNCATION_CHECK_MIN_TOKENS and reported < self.truncation_ratio * sent:
            window = f"{self.context_window}" if self.context_window is not None else "the prompt's size"
            raise PromptTruncatedError(
                f"{self.base_url} counted {reported} prompt tokens where about {sent} were sent: the server cut the "
                f"prompt to a smaller context window than this spec's {window} (Ollama: set num_ctx, e.g. "
                f"OLLAMA_CONTEXT_LENGTH={window} or PARAMETER num_ctx in the Modelfile; llama.cpp: --ctx-size is "
                f"shared by --parallel slots); or give the spec the server's window with ?context_window=N "
                f"(?truncation_ratio=0 turns this check off)")

    def _past_deadline(self, t0: float) -> None:
        left = remaining_time()
        if left is not None and left <= 0:
            raise TransientLLMError(f"answer from {self.base_url} still arriving after "
                                    f"{time.perf_counter() - t0:.3g}s (total_timeout reached)")

    def _post_http(self, body: dict[str, Any], read: float, connect: float, t0: float) -> tuple[str, bytes]:
        """``(content type, body)`` of a 2xx answer over :mod:`fairarena.llm.http_client`;
        :class:`HTTPStatusFailure` for an HTTP error, a typed :class:`LLMError` for anything else."""
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        failure: LLMError | None = None
        try:
            # the body is read chunk by chunk so that a server dripping bytes slower than the read
            # time-out can still not outlast the call's deadline (total_timeout)
            _, headers, content = self._get_pool().post("/chat/completions", data, connect_timeout=connect,
                                                        read_timeout=read, on_chunk=lambda _n: self._past_deadline(t0))
            return headers.get("content-type", ""), content
        except ConnectFailed as exc:   # nothing listens there: a configuration error, not worth retrying
            failure = ServerUnavailableError(self.base_url, f"no connection within {connect:.3g}s (connect_timeout)"
                                             if exc.timed_out else exc.reason)
        except NoAnswer:
            failure = TransientLLMError(f"no answer from {self.base_url} within {read:.3g}s (timeout)")
        except Dropped as exc:   # the server was reached but dropped the connection mid-request: transient
            failure = TransientLLMError(f"connection to {self.base_url} dropped ({exc.reason})")
        except BodyStalled as exc:
            failure = TransientLLMError(f"answer from {self.base_url} stalled after {exc.received} bytes for longer "
                                        f"than {self.timeout:.3g}s (timeout)")
        except BodyCut as exc:   # headers and part of the body, then the connection closed
            failure = TruncatedResponseError(f"reply from {self.base_url} cut off after {exc.received} bytes of the "
                                             f"body ({exc.reason})")
        raise failure

    def _post_official(self, body: dict[str, Any], read: float, connect: float, t0: float) -> tuple[str, bytes]:
        """The same as :meth:`_post_http` through the official ``openai`` client."""
        client = self._get_client()
        import openai

        kwargs = {k: v for k, v in body.items() if k != "cache_prompt"}
        if body.get("cache_prompt"):
            kwargs["extra_body"] = {"cache_prompt": True}
        failure: Exception | None = None
        try:
            with client.chat.completions.with_streaming_response.create(
                    **kwargs, timeout=openai.Timeout(read, connect=connect)) as raw:
                return raw.headers.get("content-type", ""), self._read_body(raw, t0)
        except openai.APIStatusError as exc:
            failure = HTTPStatusFailure.of(exc.status_code, exc.body, exc.message, dict(exc.response.headers))
        except openai.OpenAIError as exc:
            failure = self._translate(exc, read, connect)
        raise failure  # outside the except block: no chained client exception carries the raw body

    def _read_body(self, raw: Any, t0: float) -> bytes:
        """The whole body. A reply cut off mid-body (the server sent its headers and part of the body,
        then closed the connection, or stopped sending for longer than ``timeout``) is a retried
        :class:`TruncatedResponseError` / :class:`TransientLLMError`, not the transport's exception."""
        chunks: list[bytes] = []
        failure: LLMError | None = None
        try:
            for chunk in raw.iter_bytes():
                chunks.append(chunk)
                self._past_deadline(t0)
        except LLMError:
            raise
        except Exception as exc:  # the client's transport (httpx, or httpx2 in newer openai releases)
            names = {c.__name__ for c in type(exc).__mro__}
            if "TimeoutException" in names:
                failure = TransientLLMError(f"answer from {self.base_url} stalled after {sum(map(len, chunks))} "
                                            f"bytes for longer than {self.timeout:.3g}s (timeout)")
            elif "TransportError" in names:  # RemoteProtocolError, ReadError: the connection closed mid-body
                failure = TruncatedResponseError(f"reply from {self.base_url} cut off after {sum(map(len, chunks))} "
                                                 f"bytes of the body ({type(exc).__name__})")
            else:
                raise
        if failure is not None:
            raise failure  # outside the except block: nothing chained
        return b"".join(chunks)

    def _translate(self, exc: Any, read: float, connect: float) -> LLMError:
        """The typed error for an exception of the official client other than an HTTP status."""
        import openai
        if isinstance(exc, openai.APITimeoutError):
            if refused(exc):  # could not even connect within connect_timeout
                return ServerUnavailableError(self.base_url, f"no connection within {connect:.3g}s (connect_timeout)")
            return TransientLLMError(f"no answer from {self.base_url} within {read:.3g}s (timeout)")
        if isinstance(exc, openai.APIConnectionError):
            if refused(exc):  # nothing listens there: a configuration error, not worth retrying
                return ServerUnavailableError(self.base_url, type(exc.__cause__ or exc).__name__)
            # the server was reached but dropped the connection mid-request: transient
            return TransientLLMError(f"connection to {self.base_url} dropped ({type(exc.__cause__ or exc).__name__})")
        # anything else the client raises: typed, one line, redacted
        return LLMError(f"request to {self.base_url} failed: {type(exc).__name__}: {exc}")

    def _status_error(self, exc: HTTPStatusFailure, mode: str | None) -> LLMError | None:
        """The typed error for an HTTP error answer, or ``None`` when the JSON mode should degrade."""
        status = exc.status_code
        can_degrade = mode is not None and self._json_mode_index < len(_JSON_MODES) - 1
        if status == 429:
            return TransientLLMError(f"HTTP 429 from {self.base_url}", status=429, retry_after=_retry_after(exc))
        if status in (400, 422):
            if can_degrade:
                return None
            return LLMError(f"HTTP {status} from {self.base_url}: {error_detail(exc)}")
        if mode in ("json_schema", "json_object") and "response_format" in _raw_text(exc) and can_degrade:
            return None  # some servers (llama_cpp.server) answer an unsupported response_format with a 500
        if status >= 500 or status in (408, 409):
            return TransientLLMError(f"HTTP {status} from {self.base_url}", status=status,
                                     retry_after=_retry_after(exc))
        if status == 404:
            return LLMError(f"HTTP 404 from {self.base_url}: model {self.model!r} or endpoint not found "
                            f"({error_detail(exc)})")
        return LLMError(f"HTTP {status} from {self.base_url}: {error_detail(exc)}")


def _snippet(content: bytes, n: int = 60) -> str:
    text = " ".join(content[:400].decode("utf-8", errors="replace").split())
    return repr(text[:n] + ("..." if len(text) > n else ""))


def parse_completion(content: bytes, content_type: str = "", base_url: str = "the server"
                     ) -> tuple[str, str | None, tuple[int, int, int | None] | None]:
    """``(text, finish_reason, (prompt_tokens, completion_tokens, cached_tokens) or None)`` from a
    chat-completion body; ``cached_tokens`` (None when not reported) is the prompt prefix the server
    reused: ``usage.prompt_tokens_details.cached_tokens`` (OpenAI, vLLM, newer llama.cpp), else
    llama.cpp's ``timings.cache_n``.

    Raises :class:`TruncatedResponseError` (retried) for an empty or cut-off body and a completion without
    choices, :class:`MalformedResponseError` for anything else that is not a usable completion.
    """
    ctype = (content_type or "").split(";")[0].strip() or "no content-type"
    if not content.strip():
        raise TruncatedResponseError(f"empty body from {base_url} (HTTP 200, {ctype})")
    try:
        obj = json.loads(content)
    except (UnicodeDecodeError, ValueError, RecursionError):
        if content.lstrip()[:1] in (b"{", b"["):  # JSON that was cut off (or broken) on the way
            raise TruncatedResponseError(f"truncated or invalid JSON from {base_url} ({len(content)} bytes, "
                                         f"ends {_snippet(content[-60:])})") from None
        raise MalformedResponseError(f"{base_url} answered with a body that is not JSON ({ctype}, {len(content)} "
                                     f"bytes, starts {_snippet(content)}): is the base URL an OpenAI-compatible "
                                     "API (usually ending in /v1)?") from None
    if not isinstance(obj, dict):
        raise MalformedResponseError(f"{base_url} answered with JSON that is not a chat completion "
                                     f"(a {type(obj).__name__}, starts {_snippet(content)})")
    if "error" in obj and not obj.get("choices"):
        err = obj["error"]
        msg = err.get("message") if isinstance(err, dict) else err
        raise MalformedResponseError(f"{base_url} answered HTTP 200 with an error: {str(msg)[:200]}")
    choices = obj.get("choices")
    if choices is None or choices == []:
        raise TruncatedResponseError(f"completion from {base_url} has no choices")
    if not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise MalformedResponseError(f"completion from {base_url} has malformed choices "
                                     f"({type(choices).__name__}, expected a list of objects)")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise MalformedResponseError(f"completion from {base_url} has no message object in choices[0] "
                                     f"(got {type(message).__name__})")
    text = message.get("content")
    if text is None:
        refusal = message.get("refusal")
        why = f"refusal: {str(refusal)[:200]}" if refusal else "content is null"
        raise MalformedResponseError(f"completion from {base_url} carries no text ({why})")
    if not isinstance(text, str):
        raise MalformedResponseError(f"completion from {base_url} has content of type {type(text).__name__}, "
                                     "expected a string")
    finish = choice.get("finish_reason")
    finish = finish if isinstance(finish, str) else None
    u = obj.get("usage")
    usage = None
    if isinstance(u, dict):
        p, c = u.get("prompt_tokens"), u.get("completion_tokens")
        if (isinstance(p, int) and isinstance(c, int) and not isinstance(p, bool) and not isinstance(c, bool)
                and p >= 0 and c >= 0):
            usage = (p, c, _cached_tokens(obj, u))
    return text, finish, usage


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _cached_tokens(obj: dict[str, Any], usage: dict[str, Any]) -> int | None:
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and _count(details.get("cached_tokens")) is not None:
        return _count(details.get("cached_tokens"))
    timings = obj.get("timings")
    if isinstance(timings, dict):
        return _count(timings.get("cache_n"))
    return None


def refused(exc: BaseException) -> bool:
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
        headers = exc.headers if isinstance(exc, HTTPStatusFailure) else exc.response.headers
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def _raw_text(exc: Any) -> str:
    return f"{getattr(exc, 'message', '') or exc} {getattr(exc, 'body', '') or ''}"


def error_detail(exc: Any, limit: int = 300) -> str:
    """One redacted line describing an HTTP error: the server's error message (with its code), else
    the body (an HTML page reduced to its words), at most ``limit`` characters."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and body.get("message"):
        text = str(body["message"])
        if body.get("code"):
            text += f" ({body['code']})"
    elif isinstance(body, str) and body.strip():
        text = body
    elif body is not None and not isinstance(body, str):
        text = json.dumps(body, default=str)
    else:
        text = str(getattr(exc, "message", "") or exc)
    if "<" in text and ">" in text:  # an HTML error page: keep its words
        import re
        text = re.sub(r"<[^>]*>", " ", text)
    text = redact(" ".join(text.split()))
    return text if len(text) < limit else text[: limit - 3] + "..."
