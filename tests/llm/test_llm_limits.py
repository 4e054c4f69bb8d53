"""The server concurrency limit is a model-layer wrapper keyed by server, and every wrapper passes on
the context window: a study fits its prompts exactly as a lone debate does (loopback fake server)."""

from __future__ import annotations

import json
import threading

import pytest

from fairarena.llm import build_model, count_tokens, estimate_prompt_tokens, max_prompt_tokens, server_key
from fairarena.llm.wrappers import LimitedModel, RetryingModel, server_limit, server_limits

MSG = [{"role": "user", "content": "Allocate the ventilator."}]


def _zero_reply(srv) -> None:
    from fairarena.allocation.problem import allocation_to_mapping
    from fairarena.triage import sample_cohort

    p = sample_cohort(0, "standard").to_problem()
    srv.reply = json.dumps({"allocation": allocation_to_mapping(p, p.zeros()), "justification": "zero " * 60,
                            "critique": "none " * 60, "accept": True})


def test_server_key_is_the_base_url_whatever_the_options(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    url = "http://127.0.0.1:8000/v1"
    assert server_key(f"openai:m@{url}?timeout=30") == server_key(f"openai:other@{url}/?timeout=31") == url
    assert server_key("openai:gpt-4o-mini") == "https://api.openai.com/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1/")
    assert server_key("openai:qwen2.5:0.5b") == "http://127.0.0.1:11434/v1"
    assert server_key("scripted") is None and server_key("scripted:echo") is None
    assert server_key("llamacpp:smollm2") == server_key("llamacpp:smollm2?n_ctx=512") == "llamacpp:smollm2"


def test_two_specs_for_one_server_share_one_limit(fake_server):
    fake_server.delay = 0.05
    a = build_model(f"openai:m@{fake_server.base_url}?timeout=30", concurrency=2)
    b = build_model(f"openai:m@{fake_server.base_url}?timeout=31", concurrency=2)
    assert a.find(LimitedModel).server is b.find(LimitedModel).server
    threads = [threading.Thread(target=m.chat, args=(MSG,)) for m in (a, b) * 4]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(fake_server.requests) == 8
    assert fake_server.max_in_flight == 2            # concurrent, and never above the one shared limit
    assert server_limits([fake_server.base_url]) == {fake_server.base_url: {"limit": 2, "current": 2, "lowest": 2}}


def test_the_smaller_limit_holds_and_bad_limits_are_refused():
    lim = server_limit("http://127.0.0.1:1/v1", 6)
    assert server_limit("http://127.0.0.1:1/v1", 3) is lim and lim.limit == 3 == lim.current
    assert server_limit("http://127.0.0.1:1/v1", 8).limit == 3
    from fairarena.errors import InputError
    for bad in (0, -1, True, 1.5):
        with pytest.raises(InputError, match="concurrency"):
            server_limit("http://127.0.0.1:2/v1", bad)


def test_a_retried_call_lowers_the_shared_limit(fake_server):
    fake_server.plan = [429]
    fake_server.retry_after = "0"
    m = build_model(f"openai:m@{fake_server.base_url}", concurrency=3, base_delay=0.0)
    m.chat(MSG)
    lim = m.find(LimitedModel)
    assert (lim.limit, lim.current, lim.lowest) == (3, 2, 2)
    for _ in range(8):           # 4 x 2 calls without a retry: back up by one
        m.chat(MSG)
    assert lim.current == 3 and lim.lowest == 2


def test_every_wrapper_passes_on_the_window(fake_server, tmp_path):
    spec = f"openai:m@{fake_server.base_url}?context_window=4096"
    m = build_model(spec, cache=tmp_path / "c.sqlite", max_calls=10, concurrency=2)
    backend = m.find(RetryingModel).inner
    assert m.find(LimitedModel) is not None
    assert m.context_window == backend.context_window == 4096
    assert max_prompt_tokens(m, 900) == max_prompt_tokens(backend, 900) == 3196
    assert count_tokens(m, MSG) == backend.count_tokens(MSG) == estimate_prompt_tokens(MSG)
    # the limit is left out for scripted models (no server) and offline (no call reaches it)
    assert build_model("scripted:echo", concurrency=2).find(LimitedModel) is None
    assert build_model(spec, cache=tmp_path / "c.sqlite", offline=True, concurrency=2).find(LimitedModel) is None


def test_a_study_fits_its_prompts_exactly_as_a_lone_debate(fake_server, tmp_path):
    """A window small enough that the later prompts must be shortened: the study's transcript holds the
    same prompts (and budget records) as ``run_debate`` with models built the way ``fairarena debate``
    builds them. Before the limiter was a model-layer wrapper, the study saw no window, sent the long
    prompts, and the backend refused them (the debate failed with a context overflow)."""
    from fairarena.arena import build_agent, read_transcript, run_debate
    from fairarena.study.design import cohort_of, expand, preset, to_toml
    from fairarena.study.store import load_results, run_study

    _zero_reply(fake_server)

    def lone_debate(spec: str, path):
        cfg = preset("tiny", model_a=spec, model_b=spec, rag="off", cohorts=1, rounds=2,
                     agent_a=["aligned:egalitarian"], opponents=["baseline"])
        t = expand(cfg)[0]
        cohort = cohort_of(t.cohort_seed, t.capacity)
        res = run_debate(cohort, build_agent("A", t.agent_a, t.model_a, cohort, rag="off"),
                         build_agent("B", t.agent_b, t.model_b, cohort, rag="off"), t.debate_config(), transcript=path)
        return cfg, t, res, [e for e in read_transcript(path) if e["type"] == "turn"]

    # the longest prompt without a window, then a window that holds the first turns but not the last ones
    _, task, res, turns = lone_debate(f"openai:m@{fake_server.base_url}", tmp_path / "wide.jsonl")
    assert res.status == "ok"
    longest = max(estimate_prompt_tokens(e["messages"]) for e in turns)
    window = task.debate_config().max_tokens + int(0.75 * longest)
    spec = f"openai:m@{fake_server.base_url}?context_window={window}"
    cfg, task, res, alone = lone_debate(spec, tmp_path / "alone.jsonl")
    assert res.status == "ok" and any(e.get("budget") for e in alone)

    s = run_study(cfg, to_toml(cfg), tmp_path / "st", backend="threads", workers=2)
    rec = next(r for r in load_results(tmp_path / "st") if r["key"] == task.key)
    assert s.failed == 0 and rec["status"] == "ok", rec.get("error")
    study = [e for e in read_transcript(tmp_path / "st" / rec["transcript"]) if e["type"] == "turn"]
    assert [e["messages"] for e in study] == [e["messages"] for e in alone]
    assert [e.get("budget") for e in study] == [e.get("budget") for e in alone]
    run = json.loads((tmp_path / "st" / "runs.jsonl").read_text().splitlines()[-1])
    assert run["server_limits"] == {fake_server.base_url: {"limit": 4, "current": 4, "lowest": 4}}


class _CountingCondition(threading.Condition):
    """A condition that counts how often a waiter woke up."""

    def __init__(self) -> None:
        super().__init__()
        self.wakeups = 0

    def wait(self, timeout=None):  # noqa: ANN001, ANN201
        got = super().wait(timeout)
        self.wakeups += 1
        return got


def _queue_on(limit, n: int, hold: float = 0.0) -> list[threading.Thread]:
    """``n`` threads that each take a slot of ``limit``, hold it ``hold`` seconds (a call) and give it back."""
    import time

    def one() -> None:
        limit.acquire()
        time.sleep(hold)
        limit.release(False, latency_s=0.01, completion_tokens=1)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    return threads


@pytest.mark.parametrize("kind", ["fixed", "adaptive"])
def test_a_returned_call_wakes_one_waiter_not_every_waiter(kind):
    """Hundreds of debates queue on one server in a study: a release that woke them all (notify_all) cost
    each returned call a wake-up of every queued thread. Now one waiter per free slot wakes."""
    import time

    from fairarena.llm.concurrency import AdaptiveLimit, ConcurrencyPolicy
    from fairarena.llm.wrappers import ServerLimit

    limit = ServerLimit("fake", 1) if kind == "fixed" else AdaptiveLimit("fake", ConcurrencyPolicy.fixed(1))
    limit._cond = cond = _CountingCondition()
    limit.acquire()                       # the one slot is taken: everyone below queues
    threads = _queue_on(limit, 30, hold=0.02)
    deadline = time.monotonic() + 10
    while len(cond._waiters) < 30 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(cond._waiters) == 30
    limit.release(False, latency_s=0.01, completion_tokens=1)
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads) and limit.in_flight == 0
    assert cond.wakeups <= 30 + 5          # about one per call (notify_all: 30 + 29 + ... = 465)


def test_a_waiter_queued_before_a_retry_after_hold_still_gets_its_slot():
    """A hold set while threads were already waiting (with no time-out) must not strand them once every
    call in flight has returned."""
    import time

    from fairarena.llm.concurrency import AdaptiveLimit, ConcurrencyPolicy

    limit = AdaptiveLimit("fake", ConcurrencyPolicy(start=1, max=1))
    limit.acquire()
    threads = _queue_on(limit, 3)
    time.sleep(0.1)
    limit.release(True, retry_after=0.3)  # refused with Retry-After 0.3 s: the only call in flight returns
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads) and limit.in_flight == 0


def test_a_queued_caller_keeps_slow_start_growing_before_the_woken_thread_takes_its_slot():
    """Slow start grows +1 per call returned while the limit binds. A rise wakes a queued thread, but until
    that thread runs its slot looks free; a second call returning meanwhile still met a saturated server
    (a caller was queued). Judged on the free slots alone it did not count, and a client busy with its
    own CPU grew about 1.5x per round trip instead of 2x (docs/performance.md)."""
    import time

    from fairarena.llm.concurrency import AdaptiveLimit, ConcurrencyPolicy

    def two_returns(queued: bool) -> int:
        lim = AdaptiveLimit("fake", ConcurrencyPolicy(start=4, max=64))
        for _ in range(4):
            lim.acquire()
        t = threading.Thread(target=lim.acquire, daemon=True) if queued else None
        if t is not None:
            t.start()
            deadline = time.monotonic() + 10
            while lim.waiting < 1 and time.monotonic() < deadline:
                time.sleep(0.005)
            assert lim.waiting == 1
        with lim._cond:   # the woken thread cannot take its slot before this block ends
            lim.release(latency_s=0.2, completion_tokens=10)   # 3 in flight of 4: saturated, 4 -> 5
            lim.release(latency_s=0.2, completion_tokens=10)   # 2 in flight of 5
            level = lim.current
        if t is not None:
            t.join(10)
            assert not t.is_alive() and lim.in_flight == 3 and lim.waiting == 0
        return level

    assert two_returns(queued=True) == 6     # a caller was queued: the limit still binds, 5 -> 6
    assert two_returns(queued=False) == 5    # nobody waiting: a free slot, no growth


def test_latency_growth_must_last_a_round_trip_before_it_backs_off():
    """Calls that all return late at one moment (the client stalled: a garbage collection, hundreds of
    debates starting) are not a server's queue: they neither halve the limit nor end slow start. Latency
    that stays high for a round trip still backs off. Fake clock, no sleeping."""
    from fairarena.llm.concurrency import AdaptiveLimit, ConcurrencyPolicy

    class Clock:
        t = 100.0

        def __call__(self) -> float:
            return self.t

    def round_trip(lim: AdaptiveLimit, latency: float) -> int:
        while lim.try_acquire():
            pass
        n = lim.current
        for _ in range(n):
            lim.release(latency_s=latency, completion_tokens=10)
            while lim.try_acquire():
                pass
        return n

    clock = Clock()
    lim = AdaptiveLimit("s", ConcurrencyPolicy(start=8, max=1024, cooldown_s=0.0), clock=clock)
    levels = []
    for latency in (0.2, 0.2, 0.6, 0.2, 0.2):      # the third round trip's 16... calls all return 3x late at once
        levels.append(round_trip(lim, latency))
        clock.t += 0.2
    assert levels == [8, 16, 32, 64, 128] and lim.decreases == 0 and lim.slow_start
    for _ in range(3):                               # the server queues: every round trip takes 4x as long
        round_trip(lim, 0.8)
        clock.t += 0.8
    assert lim.decreases >= 1 and lim.latency_backoffs > 0 and not lim.slow_start
