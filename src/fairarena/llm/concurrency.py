"""Adaptive concurrency per model server: how many calls may be in flight to one base URL.

One :class:`AdaptiveLimit` per server (keyed by base URL, :func:`server_limit`), shared by every model
object, thread and debate of the process that talks to that server. It is an AIMD controller, as in
TCP congestion control:

- **start** at ``policy.start`` calls in flight;
- **grow** while the server keeps up: while it is saturated (every allowed call was in flight when one
  returned, or callers were queued for a slot), +1 per call returned ("slow start", so the level doubles
  per round trip) until the first sign of congestion, then +1 per ``limit`` calls returned (additive
  increase, +1 per round trip); never above ``policy.max``. The queue counts because a slot the last rise
  opened may not be taken yet by the thread woken for it: judged on the slots alone, a client busy with
  its own CPU (hundreds of debates starting) grew about 1.5x per round trip instead of 2x;
- **back off** multiplicatively (``limit x policy.decrease``, never below ``policy.min``) on a sign of
  congestion: an HTTP 429 or 5xx, a time-out or a dropped reply (what
  :class:`~fairarena.llm.base.TransientLLMError` stands for), or latency growth (the smoothed time per
  completion token above ``policy.latency_tolerance`` x its baseline, the lowest smoothed value seen, and
  staying above it for a smoothed round trip: a burst of late returns at one moment is the client's own
  stall, not a server's queue);
- **cooldown:** after a decrease no further decrease for ``max(policy.cooldown_s, one smoothed round
  trip)``, so the calls sent at the old level, which return slow or refused, count once;
- **Retry-After:** a refusal's ``Retry-After`` holds every new call to that server until it passed.

A controller has the interface of :class:`fairarena.llm.wrappers.ServerLimit` (``acquire``,
``release(retried, ...)``, ``limit`` the ceiling, ``current`` the level now, ``lowest``, ``to_dict``), so
:class:`fairarena.llm.wrappers.LimitedModel` holds its slots; :func:`fairarena.llm.wrappers.server_limit`
makes one for a server given a :class:`ConcurrencyPolicy` that may grow (``max > start``), and the plain
fixed :class:`~fairarena.llm.wrappers.ServerLimit` for an integer. :class:`ReplicaRouter` spreads calls
over several servers of one model (data-parallel replicas), each with its own limit: a call goes to the
replica with the most free slots.

The clock is injectable: the tests drive the controller without sleeping.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from fairarena.errors import InputError
from fairarena.llm.base import ChatModel, ChatResponse, Message, ModelWrapper

@dataclass(frozen=True)
class ConcurrencyPolicy:
    """How one server's limit moves. ``start == max`` is a fixed ceiling (back-off only)."""

    start: int = 4
    max: int = 4
    min: int = 1
    decrease: float = 0.5              # multiplicative back-off factor
    cooldown_s: float = 1.0            # least time between two decreases (at least one round trip)
    latency_tolerance: float = 2.0     # smoothed time per token above this x baseline is congestion
    latency_samples: int = 8           # calls before latency growth is judged at all

    def __post_init__(self) -> None:
        for name in ("start", "max", "min", "latency_samples"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError(f"concurrency.{name}", v, "a positive integer")
        if not self.min <= self.start <= self.max:
            raise InputError("concurrency.start", self.start, f"between min {self.min} and max {self.max}")
        if not 0 < self.decrease < 1:
            raise InputError("concurrency.decrease", self.decrease, "a factor strictly between 0 and 1")
        if not (self.cooldown_s >= 0 and math.isfinite(self.cooldown_s)):
            raise InputError("concurrency.cooldown_s", self.cooldown_s, "a non-negative number of seconds")
        if not (self.latency_tolerance > 1 and math.isfinite(self.latency_tolerance)):
            raise InputError("concurrency.latency_tolerance", self.latency_tolerance, "a finite factor above 1")

    @classmethod
    def fixed(cls, n: int) -> "ConcurrencyPolicy":
        return cls(start=n, max=n)

    @classmethod
    def of(cls, value: "int | Mapping[str, Any] | ConcurrencyPolicy", field: str = "concurrency") -> "ConcurrencyPolicy":
        """A policy from a design's value: an integer (a fixed ceiling) or a table ``{start = S, max = M}``
        (optionally ``min``, ``decrease``, ``cooldown_s``, ``latency_tolerance``); errors name ``field``."""
        if isinstance(value, ConcurrencyPolicy):
            return value
        if isinstance(value, bool) or not isinstance(value, (int, Mapping)):
            raise InputError(field, value, "a positive integer (a fixed limit) or a table {start = S, max = M}")
        if isinstance(value, int):
            if value < 1:
                raise InputError(field, value, "a positive integer (a fixed limit) or a table {start = S, max = M}")
            return cls.fixed(value)
        allowed = set(cls.__dataclass_fields__)
        for k in value:
            if k not in allowed:
                raise InputError(f"{field}.{k}", value[k], f"a concurrency setting ({', '.join(sorted(allowed))})")
        kw = dict(value)
        if "max" not in kw and "start" in kw:
            kw["max"] = max(int(kw["start"]) if isinstance(kw["start"], int) else 1, cls.max)
        if "start" not in kw and "max" in kw:
            kw["start"] = min(cls.start, kw["max"]) if isinstance(kw["max"], int) else kw["max"]
        try:
            return cls(**kw)
        except InputError as exc:
            raise InputError(field + exc.field.removeprefix("concurrency"), exc.value, exc.expected) from None
        except TypeError as exc:   # pragma: no cover - every key was checked above
            raise InputError(field, value, str(exc)) from None

    @property
    def adaptive(self) -> bool:
        return self.max > self.start

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class AdaptiveLimit:
    """The calls in flight to one server and the AIMD limit on them (see the module's text)."""

    def __init__(self, key: str, policy: ConcurrencyPolicy, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.key = key
        self.policy = policy
        self.clock = clock
        self.level = float(policy.start)
        self.in_flight = 0
        self.peak_in_flight = 0
        self.lowest = policy.start
        self.highest = policy.start
        self.slow_start = policy.adaptive
        self.calls = 0
        self.congestion = 0            # calls that met a refusal or a time-out (retried)
        self.latency_backoffs = 0
        self.decreases = 0
        self.blocked_until = 0.0       # Retry-After: no new call before this
        self._cool_until = 0.0
        self._tpt: float | None = None     # smoothed seconds per completion token
        self._baseline: float | None = None
        self._rtt: float | None = None     # smoothed seconds per call
        self._samples = 0
        self._above_since: float | None = None   # since when the smoothed time per token is above tolerance
        self._above_ref = 0.0                    # the baseline it is judged against meanwhile
        self._credit = 0                   # saturated calls since the last additive step
        self.waiting = 0                   # callers queued in acquire (demand beyond the level)
        self._cond = threading.Condition()

    # -- the ServerLimit interface ----------------------------------------------------------------
    @property
    def limit(self) -> int:
        """The ceiling (``policy.max``)."""
        return self.policy.max

    @property
    def current(self) -> int:
        """Calls allowed in flight now."""
        return max(self.policy.min, int(self.level))

    def free(self) -> int:
        """Slots free now (0 while a Retry-After holds)."""
        if self.clock() < self.blocked_until:
            return 0
        return self.current - self.in_flight

    def try_acquire(self) -> bool:
        with self._cond:
            if self.free() <= 0:
                return False
            self._took()
            return True

    def acquire(self) -> None:
        with self._cond:
            if self.free() <= 0:
                self.waiting += 1
                try:
                    while self.free() <= 0:
                        left = self.blocked_until - self.clock()
                        self._cond.wait(left if left > 0 else None)
                finally:
                    self.waiting -= 1
            self._took()

    def _took(self) -> None:
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def release(self, retried: bool = False, *, latency_s: float | None = None,
                completion_tokens: int | None = None, retry_after: float | None = None) -> None:
        """A call ended: ``retried`` when it met a refusal or a time-out (``retry_after``: the server's
        Retry-After, when it gave one), else its latency and completion tokens (None: nothing to learn)."""
        with self._cond:
            self.in_flight -= 1
            now = self.clock()
            self.calls += 1
            if retry_after is not None and retry_after > 0:
                self.blocked_until = max(self.blocked_until, now + retry_after)
            if retried:
                self.congestion += 1
                self._decrease(now)
            elif latency_s is not None:
                # the limit binds: the call ran with every slot taken, or callers are queued for a slot (a
                # slot freed by the last level rise may not be taken yet, by a thread still waking up)
                saturated = self.in_flight + 1 >= self.current or self.waiting > 0
                if self._latency_grew(latency_s, completion_tokens, now):
                    self.latency_backoffs += 1
                    self._decrease(now)
                elif saturated and self.level < self.policy.max:
                    self._credit += 1
                    if self.slow_start or self._credit >= self.current:   # +1 per call, or per `current` calls
                        self.level = min(float(self.policy.max), float(self.current + 1))
                        self._credit = 0
                    self.highest = max(self.highest, self.current)
            # wake as many waiters as there are free slots, not all of them: with hundreds of debates
            # queued on one server, waking every one per returned call cost more CPU than the call itself
            if now < self.blocked_until:
                self._cond.notify_all()   # a Retry-After hold: every waiter waits again with its time-out
            elif self.current > self.in_flight:
                self._cond.notify(self.current - self.in_flight)

    def _latency_grew(self, latency_s: float, completion_tokens: int | None, now: float) -> bool:
        a = 0.2
        tpt = latency_s / max(1, completion_tokens or 1)
        self._rtt = rtt = latency_s if self._rtt is None else (1 - a) * self._rtt + a * latency_s
        self._tpt = tpt if self._tpt is None else (1 - a) * self._tpt + a * tpt
        self._samples += 1
        if self._baseline is None or self._tpt < self._baseline:
            self._baseline = self._tpt
        else:   # the workload may change (longer prompts in later rounds): the baseline creeps up slowly
            self._baseline += 0.002 * (self._tpt - self._baseline)
        # growth that lasts: above tolerance for a smoothed round trip, judged against the baseline of the
        # moment it began (the baseline creeps on meanwhile). Calls that all return late at once (the
        # client itself stalled: a garbage collection, hundreds of debates starting) are not a server's
        # queue. Counted at once, a lone signal (one call) halved a slow start below 17 in a run of the
        # runner benchmark, which then grew +1 per round trip: efficiency 0.69 instead of 0.9
        tol = self.policy.latency_tolerance
        if self._above_since is None:
            if self._samples < self.policy.latency_samples or self._tpt <= tol * self._baseline:
                return False
            self._above_since, self._above_ref = now, self._baseline
            return False
        if self._tpt <= tol * self._above_ref:
            self._above_since = None
            return False
        if now - self._above_since < rtt:
            return False
        self._above_since = None          # one signal per round trip above; the next needs its own
        return True

    def _decrease(self, now: float) -> None:
        self.slow_start = False
        if now < self._cool_until:
            return
        self.level = max(float(self.policy.min), self.level * self.policy.decrease)
        self.lowest = min(self.lowest, self.current)
        self.decreases += 1
        self._cool_until = now + max(self.policy.cooldown_s, self._rtt or 0.0)

    def to_dict(self) -> dict[str, Any]:
        with self._cond:
            return {"limit": self.limit, "current": self.current, "lowest": self.lowest, "highest": self.highest,
                    "in_flight": self.in_flight, "peak_in_flight": self.peak_in_flight, "calls": self.calls,
                    "congestion": self.congestion, "latency_backoffs": self.latency_backoffs,
                    "decreases": self.decreases, "start": self.policy.start}


class ReplicaRouter(ModelWrapper):
    """Several servers of one model (data-parallel replicas), each behind its own limit: a call goes to
    the replica with the most free slots (ties: the first listed) and waits there. ``inner`` is the first
    replica (the context window and token counting are read from it).

    ``replicas``: ``(model, limit)`` pairs, the limit any object with ``current`` and ``in_flight``
    (:class:`AdaptiveLimit` or :class:`fairarena.llm.wrappers.ServerLimit`); each model holds its own slot."""

    def __init__(self, replicas: Sequence[tuple[ChatModel, Any]]) -> None:
        if not replicas:
            raise InputError("replicas", [], "at least one server")
        self.replicas = list(replicas)
        super().__init__(self.replicas[0][0])
        self.routed = [0] * len(self.replicas)
        self._lock = threading.Lock()

    def pick(self) -> int:
        """The index of the replica with the most free slots now."""
        free = [lim.current - lim.in_flight for _, lim in self.replicas]
        return max(range(len(free)), key=lambda i: (free[i], -i))

    def chat(self, messages: Sequence[Message], **kw: Any) -> ChatResponse:
        with self._lock:
            i = self.pick()
            self.routed[i] += 1
        return self.replicas[i][0].chat(messages, **kw)
