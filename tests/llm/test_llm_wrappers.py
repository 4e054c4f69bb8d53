"""Retry/backoff, cache replay, budget and usage against a real loopback HTTP server."""

from __future__ import annotations

import socket

import pytest

from fairarena.llm import (
    BudgetExceededError, CacheMissError, LLMError, RetriesExhaustedError, ServerUnavailableError, build_model,
)
from fairarena.llm.wrappers import BudgetedModel, RetryingModel, UsageMeter

MSG = [{"role": "user", "content": "Allocate the ventilator."}]


def _no_sleep(model):
    r = model.find(RetryingModel)
    slept = []
    r._sleep = slept.append
    return slept


def test_retries_429_and_500_then_succeeds(fake_server):
    fake_server.plan = [429, 500, 503]
    m = build_model(f"openai:m@{fake_server.base_url}", retries=5, base_delay=0.2, max_delay=5.0, seed=1)
    slept = _no_sleep(m)
    r = m.chat(MSG, seed=1)
    assert r.text == "hello from the fake server"
    assert r.attempts == 4 and len(fake_server.requests) == 4
    # exponential backoff with equal jitter: retry k sleeps in [d/2, d], d = 0.2 * 2**(k-1)
    assert len(slept) == 3
    for k, s in enumerate(slept, start=1):
        d = 0.2 * 2 ** (k - 1)
        assert d / 2 <= s <= d
    assert r.usage.prompt_tokens == 11 and r.usage.completion_tokens == 7
    assert m.totals.attempts == 4 and m.totals.calls == 1


def test_retry_after_header_is_a_lower_bound(fake_server):
    fake_server.plan = [429]
    fake_server.retry_after = "3"
    m = build_model(f"openai:m@{fake_server.base_url}", base_delay=0.01, max_delay=10.0)
    slept = _no_sleep(m)
    m.chat(MSG)
    assert slept == [3.0]


def test_gives_up_after_max_attempts_with_the_last_error(fake_server):
    fake_server.plan = [500] * 10
    m = build_model(f"openai:m@{fake_server.base_url}", retries=3)
    _no_sleep(m)
    with pytest.raises(RetriesExhaustedError, match="gave up after 3 attempts: HTTP 500") as exc:
        m.chat(MSG)
    assert len(fake_server.requests) == 3 and exc.value.attempts == 3
    assert m.totals.failed_calls == 1


def test_client_errors_are_not_retried(fake_server):
    fake_server.plan = [401]
    m = build_model(f"openai:m@{fake_server.base_url}")
    with pytest.raises(LLMError, match="HTTP 401"):
        m.chat(MSG)
    assert len(fake_server.requests) == 1


def test_server_not_running_names_the_base_url():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    m = build_model(f"openai:m@{url}")
    _no_sleep(m)
    with pytest.raises(ServerUnavailableError) as exc:
        m.chat(MSG)
    assert url in str(exc.value)
    assert m.find(RetryingModel).delays == []  # not retried


def test_real_sleep_backoff_is_bounded(fake_server):
    # the one test that really sleeps: two retries at base 0.05 s take between 0.075 and 0.15 s in total
    fake_server.plan = [502, 429]
    m = build_model(f"openai:m@{fake_server.base_url}", base_delay=0.05, seed=0)
    r = m.chat(MSG)
    delays = m.find(RetryingModel).delays
    assert r.attempts == 3 and 0.075 <= sum(delays) <= 0.15


def test_json_schema_falls_back_to_json_object(fake_server):
    fake_server.reject_response_formats = {"json_schema"}
    m = build_model(f"openai:m@{fake_server.base_url}")
    r = m.chat(MSG, schema={"type": "object", "properties": {"ok": {"type": "boolean"}}})
    assert r.json_mode == "json_object" and r.data == {"ok": True, "mode": "json_object"}
    assert [q.get("response_format", {}).get("type") for q in fake_server.requests] == ["json_schema", "json_object"]
    # the working mode is remembered: the next call goes straight to json_object
    m.chat(MSG, schema={"type": "object"})
    assert fake_server.requests[-1]["response_format"]["type"] == "json_object"


def test_json_schema_falls_back_to_prompt(fake_server):
    fake_server.reject_response_formats = {"json_schema", "json_object"}
    m = build_model(f"openai:m@{fake_server.base_url}")
    r = m.chat(MSG, schema={"type": "object"})
    assert r.json_mode == "prompt"
    last = fake_server.requests[-1]
    assert "response_format" not in last and "JSON schema" in last["messages"][-1]["content"]


def test_cache_replays_offline_and_never_stores_the_key(fake_server, tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRARENA_API_KEY", "sk-test-SECRET-123")
    cache = tmp_path / "llm-cache.sqlite"
    online = build_model(f"openai:m@{fake_server.base_url}", cache=cache)
    a = online.chat(MSG, seed=5, max_tokens=50)
    b = online.chat(MSG, seed=5, max_tokens=50)  # hit: the server sees one request
    assert len(fake_server.requests) == 1 and not a.cached and b.cached and b.text == a.text
    assert fake_server.headers[0]["authorization"] == "Bearer sk-test-SECRET-123"
    assert online.totals.cached_calls == 1
    fake_server.close()

    # offline replay: no server, different URL (the cache key has no URL), same answer
    offline = build_model("openai:m@http://127.0.0.1:9/v1", cache=cache, offline=True)
    c = offline.chat(MSG, seed=5, max_tokens=50)
    assert c.cached and c.text == a.text and c.usage == a.usage
    # anything that changes the request is a miss: seed, params, messages, model
    with pytest.raises(CacheMissError):
        offline.chat(MSG, seed=6, max_tokens=50)
    with pytest.raises(CacheMissError):
        offline.chat(MSG, seed=5, max_tokens=51)
    with pytest.raises(CacheMissError):
        build_model("openai:other@http://127.0.0.1:9/v1", cache=cache, offline=True).chat(MSG, seed=5, max_tokens=50)
    assert b"SECRET" not in cache.read_bytes()
    assert "SECRET" not in repr(online.unwrap())


def test_offline_needs_a_cache():
    from fairarena.errors import InputError
    with pytest.raises(InputError, match="cache file"):
        build_model("openai:m@http://127.0.0.1:9/v1", offline=True)


def test_call_budget(fake_server):
    m = build_model(f"openai:m@{fake_server.base_url}", max_calls=2)
    m.chat(MSG)
    m.chat(MSG)
    with pytest.raises(BudgetExceededError, match="2 of 2 calls"):
        m.chat(MSG)
    assert len(fake_server.requests) == 2


def test_token_budget_stops_once_spent(fake_server):
    m = build_model(f"openai:m@{fake_server.base_url}", max_tokens=30)  # 18 tokens a call
    m.chat(MSG)
    m.chat(MSG)  # 18 < 30: allowed, ends at 36
    with pytest.raises(BudgetExceededError, match="36 of 30 tokens"):
        m.chat(MSG)
    assert m.find(BudgetedModel).tokens == 36


def test_cache_hits_cost_no_budget(fake_server, tmp_path):
    m = build_model(f"openai:m@{fake_server.base_url}", cache=tmp_path / "c.sqlite", max_calls=1)
    for _ in range(3):
        m.chat(MSG, seed=1)
    assert m.find(BudgetedModel).calls == 1 and m.find(UsageMeter).totals.cached_calls == 2


def test_a_response_dict_equals_the_recursive_asdict():
    from dataclasses import asdict

    from fairarena.llm.base import ChatResponse, Usage

    r = ChatResponse(text="ok", backend="openai", model="m", usage=Usage(3, 4, cached_tokens=2), latency_s=0.5,
                     attempts=2, finish_reason="stop", json_mode="json_schema")
    want = asdict(r)
    want["usage"] = {**asdict(r.usage), "total_tokens": 7}
    assert r.to_dict() == want and list(r.to_dict()) == list(want)
    assert ChatResponse.from_dict(r.to_dict()) == r


def test_checked_messages_are_checked_once_down_the_stack():
    from fairarena.errors import InputError
    from fairarena.llm.base import CheckedMessages, validate_messages

    msgs = validate_messages([{"role": "user", "content": "hi", "extra": 1}])
    assert type(msgs) is CheckedMessages and msgs == [{"role": "user", "content": "hi"}]
    assert validate_messages(msgs) is msgs                       # not checked (nor copied) again
    with pytest.raises(InputError):
        validate_messages(list(msgs) + [{"role": "robot", "content": "x"}])   # a new list is checked
