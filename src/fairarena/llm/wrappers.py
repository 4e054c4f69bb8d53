"""Wrappers around any ``ChatModel``: retry, server concurrency limit, on-disk cache, budget, usage accounting.

They compose; :func:`fairarena.llm.spec.build_model` stacks them as::

    UsageMeter( CachedModel( BudgetedModel( LimitedModel( RetryingModel( backend )))))

so a cache hit costs no budget, no retry and no server slot, and the meter sees every call, cached or
not. Every wrapper passes on the backend's ``context_window``, ``count_tokens`` and ``max_prompt_tokens``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from fairarena.errors import InputError

if TYPE_CHECKING:
    from fairarena.llm.concurrency import AdaptiveLimit, ConcurrencyPolicy
from fairarena.llm.base import (
    BudgetExceededError, CacheMissError, ChatModel, ChatResponse, ContextOverflowError, LLMError, Message,
    ServerUnavailableError, TransientLLMError, ModelWrapper, call_deadline, count_tokens, max_prompt_tokens,
    remaining_time, validate_messages, validate_params,
)


_Wrapper = ModelWrapper  # the wrappers below share its pass-through of name, window and tokens


# --------------------------------------------------------------------------- retry
class RetriesExhaustedError(LLMError):
    def __init__(self, attempts: int, last: Exception, total_timeout: float | None = None) -> None:
        self.attempts = attempts
        self.last = last
        self.total_timeout = total_timeout
        why = f" (total_timeout {total_timeout:g}s spent)" if total_timeout is not None else ""
        super().__init__(f"gave up after {attempts} attempt{'s' if attempts != 1 else ''}{why}: {last}")


class RetryingModel(_Wrapper):
    """Retry transient failures (timeouts, HTTP 429, 5xx) with exponential backoff and jitter.

    The delay before retry ``k`` (``k = 1, 2, ...``) is ``d = min(max_delay, base_delay * 2**(k-1))``
    with "equal jitter": uniformly drawn from ``[d/2, d]``; a server's ``Retry-After`` is honoured
    as a lower bound (still capped by ``max_delay``). A server that does not answer at all is not
    retried (``retry_unavailable=False``): that is a configuration error, reported at once.

    ``total_timeout`` (seconds, ``None`` for none) bounds one call's wall time over all attempts and
    back-off: no sleep or attempt starts past it, and backends that support it (the ``openai`` one)
    shorten their connect/read time-outs to what is left (:func:`fairarena.llm.base.call_deadline`).
    """

    def __init__(self, inner: ChatModel, *, max_attempts: int = 5, base_delay: float = 0.5,
                 max_delay: float = 20.0, seed: int | None = None, retry_unavailable: bool = False,
                 sleep: Callable[[float], None] = time.sleep, total_timeout: float | None = None) -> None:
        super().__init__(inner)
        if max_attempts < 1:
            raise InputError("max_attempts", max_attempts, "at least 1")
        if base_delay < 0 or max_delay < 0:
            raise InputError("base_delay", base_delay, "non-negative delays")
        if total_timeout is not None and not (0 < float(total_timeout) < float("inf")):
            raise InputError("total_timeout", total_timeout, "a positive, finite number of seconds or None")
        self.total_timeout = float(total_timeout) if total_timeout is not None else None
        self.max_attempts = int(max_attempts)
        self.base_delay = float(base_delay)
        self.max_delay = float(max_delay)
        self.retry_unavailable = retry_unavailable
        self._rng = random.Random(seed)
        self._sleep = sleep
        self.delays: list[float] = []  # every delay slept, for inspection

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        d = min(self.max_delay, self.base_delay * (2 ** (retry - 1)))
        d = d / 2 + self._rng.uniform(0, d / 2)
        if retry_after is not None:
            d = max(d, min(self.max_delay, retry_after))
        return d

    def chat(self, messages: Sequence[Message], **kw: Any) -> ChatResponse:
        last: Exception | None = None
        with call_deadline(self.total_timeout):
            for attempt in range(1, self.max_attempts + 1):
                try:
                    resp = self.inner.chat(messages, **kw)
                    resp.attempts = attempt
                    return resp
                except TransientLLMError as exc:
                    last = exc
                    retry_after = exc.retry_after
                except ServerUnavailableError as exc:
                    if not self.retry_unavailable:
                        raise
                    last, retry_after = exc, None
                if attempt < self.max_attempts:
                    d = self.delay(attempt, retry_after)
                    left = remaining_time()
                    if left is not None and d >= left:  # the next attempt would start past total_timeout
                        raise RetriesExhaustedError(attempt, last, self.total_timeout) from last
                    self.delays.append(d)
                    self._sleep(d)
        assert last is not None
        raise RetriesExhaustedError(self.max_attempts, last) from last


# --------------------------------------------------------------------------- server limit
class ServerLimit:
    """An adaptive limit of calls in flight to one model server, shared by every model on that server.

    At most ``current`` calls run at once (``limit`` at the start). A call that needed a retry (the server
    answered 429 or 5xx, timed out, or dropped the reply) lowers ``current`` by one, never below 1: a
    server that keeps refusing gets fewer concurrent calls. After ``4 x current`` calls in a row without a
    retry it rises by one again, up to ``limit`` (additive decrease and increase; the delays themselves,
    ``Retry-After`` included, are :class:`RetryingModel`'s). ``lowest`` is the smallest limit reached.
    """

    def __init__(self, key: str, limit: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InputError("concurrency", limit, f"a positive whole number of calls in flight to {key}")
        self.key = key
        self.limit = limit
        self.current = limit
        self.lowest = limit
        self.in_flight = 0
        self._streak = 0
        self._cond = threading.Condition()

    def acquire(self) -> None:
        with self._cond:
            while self.in_flight >= self.current:
                self._cond.wait()
            self.in_flight += 1

    def release(self, retried: bool, **outcome: Any) -> None:
        """``outcome`` (latency, tokens, Retry-After) is for the adaptive limit; a fixed one ignores it."""
        with self._cond:
            self.in_flight -= 1
            if retried:
                self.current = max(1, self.current - 1)
                self.lowest = min(self.lowest, self.current)
                self._streak = 0
            else:
                self._streak += 1
                if self.current < self.limit and self._streak >= 4 * self.current:
                    self.current += 1
                    self._streak = 0
            if self.current > self.in_flight:   # wake one waiter per free slot, not every waiter
                self._cond.notify(self.current - self.in_flight)

    def to_dict(self) -> dict[str, int]:
        with self._cond:
            return {"limit": self.limit, "current": self.current, "lowest": self.lowest}


_SERVER_LIMITS: dict[str, ServerLimit] = {}
_SERVER_LIMITS_LOCK = threading.Lock()


def server_limit(key: str, limit: "int | ConcurrencyPolicy") -> Any:
    """The process-wide limit of server ``key`` (a base URL; see :func:`fairarena.llm.spec.server_key`).

    Every model built for one server shares it, whatever else its spec says (``?timeout=``, the model
    name). Asked again with a different ``limit``, the smaller one holds. A
    :class:`~fairarena.llm.concurrency.ConcurrencyPolicy` that may grow (``max > start``) gets the adaptive
    :class:`~fairarena.llm.concurrency.AdaptiveLimit` instead (a new policy replaces it while it is idle).
    """
    from fairarena.llm.concurrency import AdaptiveLimit, ConcurrencyPolicy

    if isinstance(limit, ConcurrencyPolicy):
        if limit.adaptive:
            with _SERVER_LIMITS_LOCK:
                cur = _SERVER_LIMITS.get(key)
                if not isinstance(cur, AdaptiveLimit) or (cur.policy != limit and cur.in_flight == 0):
                    cur = _SERVER_LIMITS[key] = AdaptiveLimit(key, limit)   # type: ignore[assignment]
                return cur
        limit = limit.max
    with _SERVER_LIMITS_LOCK:
        got = _SERVER_LIMITS.get(key)
        if isinstance(got, AdaptiveLimit) and got.in_flight == 0:
            got = None
        if got is None:
            got = _SERVER_LIMITS[key] = ServerLimit(key, limit)
        elif isinstance(got, ServerLimit) and limit < got.limit:
            ServerLimit(key, limit)  # validates
            with got._cond:
                got.limit = limit
                got.current = min(got.current, limit)
                got.lowest = min(got.lowest, got.current)
        return got


def server_limits(keys: Sequence[str] | None = None) -> dict[str, dict[str, int]]:
    """``{server: {"limit", "current", "lowest"}}`` for the servers limited in this process (or ``keys``)."""
    with _SERVER_LIMITS_LOCK:
        items = [(k, v) for k, v in _SERVER_LIMITS.items() if keys is None or k in keys]
    return {k: v.to_dict() for k, v in items}


class LimitedModel(_Wrapper):
    """Hold a slot of a :class:`ServerLimit` for each call (a shared one from :func:`server_limit`, or
    a private one when given a number). Sits above :class:`RetryingModel`, whose ``attempts`` tell it
    whether the call needed a retry; a slot is held through the retries' back-off, so a refusing server
    is not sent more calls while it recovers."""

    def __init__(self, inner: ChatModel, limit: "int | ServerLimit | AdaptiveLimit") -> None:
        super().__init__(inner)
        self.server = ServerLimit(f"{inner.backend}:{inner.model}", limit) if isinstance(limit, int) else limit

    @property
    def limit(self) -> int:
        return self.server.limit

    @property
    def current(self) -> int:
        return self.server.current

    @property
    def lowest(self) -> int:
        return self.server.lowest

    def chat(self, messages: Sequence[Message], **kw: Any) -> ChatResponse:
        self.server.acquire()
        retried = False
        outcome: dict[str, Any] = {}
        t0 = time.perf_counter()
        try:
            resp = self.inner.chat(messages, **kw)
            retried = resp.attempts > 1 and not resp.cached
            outcome = {"latency_s": time.perf_counter() - t0, "completion_tokens": resp.usage.completion_tokens}
            return resp
        except (TransientLLMError, RetriesExhaustedError) as exc:
            retried = True
            last = exc.last if isinstance(exc, RetriesExhaustedError) else exc
            outcome = {"retry_after": getattr(last, "retry_after", None)}
            raise
        finally:
            self.server.release(retried, **outcome)


# --------------------------------------------------------------------------- cache
def _request_json(backend: str, model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any]) -> str:
    """The canonical JSON of everything that determines a response (no URL, no key)."""
    return json.dumps({"backend": backend, "model": model, "messages": list(messages), "params": dict(params)},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key(backend: str, model: str, messages: Sequence[Mapping[str, str]], params: Mapping[str, Any]) -> str:
    """sha256 over the canonical JSON of everything that determines a response (no URL, no key)."""
    return hashlib.sha256(_request_json(backend, model, messages, params).encode("utf-8")).hexdigest()


class ResponseCache:
    """SQLite file of responses. Safe across threads of one process; WAL so readers never block."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            # WAL's NORMAL: a commit is not synced to disk (a checkpoint is); an application crash loses
            # nothing, a power loss at most the last answers, which a rerun asks for again. FULL synced
            # every answer, the runner's one disk wait per call.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, backend TEXT, model TEXT, "
                             "request TEXT, response TEXT, created REAL)")
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise InputError("cache", str(self.path), f"an SQLite response cache ({exc})") from None

    def get(self, key: str) -> ChatResponse | None:
        try:
            with self._lock:
                row = self._db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.DatabaseError as exc:
            raise InputError("cache", str(self.path), f"a readable SQLite response cache ({exc})") from None
        if not row:
            return None
        try:
            return ChatResponse.from_dict(json.loads(row[0]))
        except (TypeError, ValueError, KeyError, AttributeError):
            raise InputError("cache", str(self.path), f"responses written by fairarena (the entry {key[:12]} is "
                                                      "not one: delete the cache or that row)") from None

    def put(self, key: str, request: Mapping[str, Any] | str, response: ChatResponse) -> None:
        """Store ``response`` under ``key``; ``request`` (a mapping, or its JSON already made) is kept beside it."""
        row = (key, response.backend, response.model,
               request if isinstance(request, str) else json.dumps(request, sort_keys=True),
               json.dumps(response.to_dict()), time.time())   # serialised outside the lock
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)", row)
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


SQLITE_HEADER = b"SQLite format 3\x00"


def check_cache_file(path: str | os.PathLike[str]) -> Path:
    """Refuse, before any work, a ``--cache`` that cannot be a response cache: a folder, or an existing
    non-empty file that is not SQLite (an empty or missing file becomes a new cache)."""
    p = Path(path)
    if p.is_dir():
        raise InputError("cache", str(p), "an SQLite response-cache file (this is a folder)")
    if p.exists():
        try:
            with open(p, "rb") as fh:
                head = fh.read(len(SQLITE_HEADER))
        except OSError as exc:
            raise InputError("cache", str(p), f"a readable SQLite response-cache file ({exc.strerror})") from None
        if head and head != SQLITE_HEADER:
            raise InputError("cache", str(p), "an SQLite response-cache file (this file is not SQLite)")
    return p


class CachedModel(_Wrapper):
    """Serve repeated requests from an SQLite cache; ``offline=True`` never calls the model
    (a miss raises :class:`CacheMissError`), which replays a study without any server."""

    def __init__(self, inner: ChatModel, cache: ResponseCache | str | os.PathLike[str], *, offline: bool = False) -> None:
        super().__init__(inner)
        self.cache = cache if isinstance(cache, ResponseCache) else ResponseCache(cache)
        self.offline = offline
        self.hits = 0
        self.misses = 0

    def chat(self, messages: Sequence[Message], *, seed: int | None = None, temperature: float = 0.0,
             max_tokens: int = 512, schema: Mapping[str, Any] | None = None) -> ChatResponse:
        msgs = validate_messages(messages)
        params = validate_params(seed, temperature, max_tokens, schema).to_dict()
        request = _request_json(self.backend, self.model, msgs, params)
        key = hashlib.sha256(request.encode("utf-8")).hexdigest()   # cache_key, the JSON kept for put
        hit = self.cache.get(key)
        if hit is not None:
            self.hits += 1
            hit.cached = True
            return hit
        self.misses += 1
        if self.offline:
            raise CacheMissError(f"offline replay: no cached response for {self.backend}:{self.model} "
                                 f"(key {key[:12]}) in {self.cache.path}")
        resp = self.inner.chat(msgs, seed=seed, temperature=temperature, max_tokens=max_tokens, schema=schema)
        self.cache.put(key, request, resp)
        return resp


# --------------------------------------------------------------------------- budget
class BudgetedModel(_Wrapper):
    """Refuse calls once ``max_calls`` calls or ``max_tokens`` tokens (prompt + completion) are spent.

    The check happens before each call against what was already spent, so the last call may overshoot
    the token budget by at most its own size; no call starts once the budget is reached.
    """

    def __init__(self, inner: ChatModel, *, max_calls: int | None = None, max_tokens: int | None = None) -> None:
        super().__init__(inner)
        for name, v in (("max_calls", max_calls), ("max_tokens", max_tokens)):
            if v is not None and (not isinstance(v, int) or v < 0):
                raise InputError(name, v, "a non-negative integer or None")
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self.calls = 0
        self.tokens = 0
        self._lock = threading.Lock()

    def chat(self, messages: Sequence[Message], **kw: Any) -> ChatResponse:
        with self._lock:
            if self.max_calls is not None and self.calls >= self.max_calls:
                raise BudgetExceededError(f"call budget spent: {self.calls} of {self.max_calls} calls used")
            if self.max_tokens is not None and self.tokens >= self.max_tokens:
                raise BudgetExceededError(f"token budget spent: {self.tokens} of {self.max_tokens} tokens used")
            self.calls += 1
        try:
            resp = self.inner.chat(messages, **kw)
        except ContextOverflowError:  # refused before anything was sent: costs no budget
            with self._lock:
                self.calls -= 1
            raise
        with self._lock:
            self.tokens += resp.usage.total_tokens
        return resp


# --------------------------------------------------------------------------- usage
@dataclass
class UsageTotals:
    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    attempts: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)
    cached_prompt_tokens: int = 0   # prompt tokens the server reused from its prefix cache ...
    reuse_reported_tokens: int = 0  # ... out of the prompt tokens of the calls whose server reports it

    @property
    def tokens_per_s(self) -> float:
        """Completion tokens per second of model time (uncached calls only)."""
        live = [r for r in self.records if not r.get("cached") and r.get("ok")]
        t = sum(r["latency_s"] for r in live)
        return sum(r["completion_tokens"] for r in live) / t if t > 0 else 0.0

    def summary(self) -> dict[str, Any]:
        return {"calls": self.calls, "cached_calls": self.cached_calls, "failed_calls": self.failed_calls,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "latency_s": round(self.latency_s, 6), "attempts": self.attempts,
                "completion_tokens_per_s": round(self.tokens_per_s, 3),
                **({"cached_prompt_tokens": self.cached_prompt_tokens,
                    "prompt_reuse": round(self.cached_prompt_tokens / self.reuse_reported_tokens, 4)}
                   if self.reuse_reported_tokens else {})}


class UsageMeter(_Wrapper):
    """Count calls, tokens and latency (wall time measured here, around everything below)."""

    def __init__(self, inner: ChatModel) -> None:
        super().__init__(inner)
        self.totals = UsageTotals()
        self._lock = threading.Lock()

    def chat(self, messages: Sequence[Message], **kw: Any) -> ChatResponse:
        t0 = time.perf_counter()
        try:
            resp = self.inner.chat(messages, **kw)
        except Exception as exc:
            with self._lock:
                self.totals.calls += 1
                self.totals.failed_calls += 1
                self.totals.records.append({"ok": False, "error": type(exc).__name__,
                                            "latency_s": time.perf_counter() - t0})
            raise
        wall = time.perf_counter() - t0
        with self._lock:
            t = self.totals
            t.calls += 1
            t.cached_calls += int(resp.cached)
            t.attempts += resp.attempts
            if not resp.cached:
                t.prompt_tokens += resp.usage.prompt_tokens
                t.completion_tokens += resp.usage.completion_tokens
                t.latency_s += wall
                if resp.usage.cached_tokens is not None:
                    t.cached_prompt_tokens += resp.usage.cached_tokens
                    t.reuse_reported_tokens += resp.usage.prompt_tokens
            t.records.append({"ok": True, "cached": resp.cached, "prompt_tokens": resp.usage.prompt_tokens,
                              "completion_tokens": resp.usage.completion_tokens,
                              "latency_s": wall if not resp.cached else resp.latency_s})
        return resp
