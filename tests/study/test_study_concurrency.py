"""The adaptive per-server concurrency controller (fairarena.llm.concurrency), driven by a fake clock:
slow start, additive increase, multiplicative back-off on refusals and on latency growth, the cooldown,
Retry-After, and the replica router. No sleeping, no timing."""

from __future__ import annotations

import pytest

from fairarena.errors import InputError
from fairarena.llm.concurrency import AdaptiveLimit, ConcurrencyPolicy, ReplicaRouter


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def fill(lim: AdaptiveLimit) -> int:
    n = 0
    while lim.try_acquire():
        n += 1
    return n


def round_trip(lim: AdaptiveLimit, latency: float = 0.2, tokens: int = 10) -> int:
    """One round trip of a server kept busy: the slots are full; each of the ``current`` calls returns after
    ``latency`` and its slot (and any new one) is taken again at once. Returns the level it ran at."""
    fill(lim)
    n = lim.current
    for _ in range(n):
        lim.release(latency_s=latency, completion_tokens=tokens)
        fill(lim)
    return n


def drain(lim: AdaptiveLimit) -> None:
    while lim.in_flight:
        lim.release(latency_s=None)


def test_slow_start_doubles_per_round_trip_up_to_max():
    lim = AdaptiveLimit("s", ConcurrencyPolicy(start=4, max=64), clock=Clock())
    assert [round_trip(lim) for _ in range(6)] == [4, 8, 16, 32, 64, 64]
    assert lim.current == 64 == lim.highest


def test_refusal_halves_once_per_cooldown_then_grows_additively():
    clock = Clock()
    lim = AdaptiveLimit("s", ConcurrencyPolicy(start=32, max=64, cooldown_s=1.0), clock=clock)
    assert fill(lim) == 32
    for _ in range(5):                       # five calls of the same round trip refused: one decrease
        lim.release(True, retry_after=None)
    assert lim.current == 16 and lim.decreases == 1 and lim.congestion == 5
    drain(lim)
    clock.t += 2.0                            # after the cooldown a new refusal counts again
    assert fill(lim) == 16
    lim.release(True)
    assert lim.current == 8 and lim.lowest == 8 and lim.decreases == 2
    drain(lim)
    # congestion ended slow start: +1 per round trip from now on (no doubling)
    assert [round_trip(lim) for _ in range(4)] == [8, 9, 10, 11]


def test_retry_after_holds_every_new_call():
    clock = Clock()
    lim = AdaptiveLimit("s", ConcurrencyPolicy(start=4, max=4), clock=clock)
    assert lim.try_acquire()
    lim.release(True, retry_after=3.0)
    assert lim.free() == 0 and not lim.try_acquire()
    clock.t += 3.01
    assert lim.try_acquire()


def test_latency_growth_backs_off_and_a_steady_latency_does_not():
    clock = Clock()
    lim = AdaptiveLimit("s", ConcurrencyPolicy(start=8, max=8, cooldown_s=0.0), clock=clock)
    for _ in range(20):
        round_trip(lim, 0.2)
    assert lim.current == 8 and lim.latency_backoffs == 0
    for _ in range(10):                        # the server queues: each call takes 3x as long
        round_trip(lim, 0.6)
        clock.t += 1.0
    assert lim.latency_backoffs > 0 and lim.current < 8
    # longer replies at the same time per token are not congestion
    lim2 = AdaptiveLimit("t", ConcurrencyPolicy(start=8, max=8), clock=clock)
    for k in range(30):
        round_trip(lim2, 0.02 * (10 + 20 * (k % 3)), 10 + 20 * (k % 3))
    assert lim2.latency_backoffs == 0


def test_no_growth_while_the_server_is_not_the_bottleneck():
    lim = AdaptiveLimit("s", ConcurrencyPolicy(start=4, max=64), clock=Clock())
    for _ in range(50):
        assert lim.try_acquire() and lim.try_acquire()
        lim.release(latency_s=0.2, completion_tokens=10)     # two calls at a time: the limit never binds
        lim.release(latency_s=0.2, completion_tokens=10)
    assert lim.current == 4


def test_fixed_ceiling_and_floor():
    lim = AdaptiveLimit("s", ConcurrencyPolicy.fixed(3), clock=Clock())
    assert [round_trip(lim) for _ in range(3)] == [3, 3, 3]
    clock = Clock()
    lo = AdaptiveLimit("s", ConcurrencyPolicy(start=2, max=2, min=1, cooldown_s=0.0), clock=clock)
    for _ in range(5):
        assert lo.try_acquire()
        lo.release(True)
    assert lo.current == 1 and lo.to_dict()["lowest"] == 1


def test_router_sends_each_call_to_the_replica_with_most_free_slots():
    class Echo:
        backend, model, context_window = "fake", "m", 4096

        def __init__(self, name):
            self.name = name

        def chat(self, messages, **kw):
            return self.name

    a = AdaptiveLimit("a", ConcurrencyPolicy.fixed(2), clock=Clock())
    b = AdaptiveLimit("b", ConcurrencyPolicy.fixed(4), clock=Clock())
    r = ReplicaRouter([(Echo("a"), a), (Echo("b"), b)])
    assert r.context_window == 4096 and r.model == "m"
    assert r.chat([]) == "b"                      # 4 free beat 2 free
    b.try_acquire(), b.try_acquire(), b.try_acquire()
    assert r.chat([]) == "a"                      # 1 free vs 2 free
    assert r.routed == [1, 1]


@pytest.mark.parametrize("value, field", [
    (0, "c"), (True, "c"), ("8", "c"), ({"start": 5, "max": 4}, "c.start"), ({"min": 0}, "c.min"),
    ({"decrease": 1.0}, "c.decrease"), ({"cooldown_s": -1}, "c.cooldown_s"), ({"latency_tolerance": 0.5}, "c.latency_tolerance"),
    ({"slots": 4}, "c.slots"),
])
def test_policy_values_are_checked(value, field):
    with pytest.raises(InputError) as exc:
        ConcurrencyPolicy.of(value, "c")
    assert exc.value.field == field


def test_policy_forms():
    assert ConcurrencyPolicy.of(6) == ConcurrencyPolicy(start=6, max=6) and not ConcurrencyPolicy.of(6).adaptive
    assert ConcurrencyPolicy.of({"max": 256}) == ConcurrencyPolicy(start=4, max=256)
    assert ConcurrencyPolicy.of({"start": 16}) == ConcurrencyPolicy(start=16, max=16)
