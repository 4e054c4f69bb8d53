"""A study against a real loopback HTTP server (OpenAI-compatible; answers every turn with a valid
allocation): the per-server concurrency limit, 429 + Retry-After through the retry wrapper, and an
offline replay from the shared SQLite cache with identical results."""

from __future__ import annotations

import pytest

from fairarena.errors import InputError
from fairarena.study.design import expand, to_toml
from fairarena.study.store import load_results, run_study

from .conftest import outcome, tiny_design


def _design(url, **kw):
    return tiny_design(model_a=f"openai:m@{url}", model_b=f"openai:m@{url}", rag="off", **kw)


def test_threads_respect_the_per_server_limit(zero_server, tmp_path):
    zero_server.delay = 0.03
    cfg = _design(zero_server.base_url, concurrency={zero_server.base_url: 2})
    s = run_study(cfg, to_toml(cfg), tmp_path / "st", backend="threads", workers=6)
    assert s.ok == len(expand(cfg)) and s.failed == 0
    assert zero_server.max_in_flight == 2          # concurrent, and never above the limit
    # every debate: 1 round x 2 agents, 2 finals, draft + decide; repeated prompts come from the cache
    recs = load_results(tmp_path / "st")
    calls = sum(r["usage"][w]["calls"] for r in recs for w in "ab")
    cached = sum(r["usage"][w]["cached_calls"] for r in recs for w in "ab")
    assert calls == 6 * len(recs) and zero_server.requests == calls - cached and cached > 0


def test_429_with_retry_after_is_retried(zero_server, tmp_path):
    zero_server.plan = [429, 429]
    cfg = _design(zero_server.base_url)
    s = run_study(cfg, to_toml(cfg), tmp_path / "st")
    assert s.ok == len(expand(cfg)) and s.failed == 0
    first = load_results(tmp_path / "st")[0]
    assert first["usage"]["a"]["calls"] >= 1
    recs = load_results(tmp_path / "st")
    live = sum(r["usage"][w]["calls"] - r["usage"][w]["cached_calls"] for r in recs for w in "ab")
    assert zero_server.requests == live + 2               # the two 429s were retried, not lost


def test_offline_replay_gives_identical_results(zero_server, tmp_path):
    cfg = _design(zero_server.base_url)
    live = run_study(cfg, to_toml(cfg), tmp_path / "live")
    assert live.ok == len(expand(cfg))
    n = zero_server.requests
    cache = tmp_path / "live" / "responses.sqlite"
    assert cache.is_file()
    zero_server.close()
    replay = run_study(cfg, to_toml(cfg), tmp_path / "replay", offline=True, cache=cache)
    assert replay.ok == len(expand(cfg)) and zero_server.requests == n
    a = [outcome(r) for r in load_results(tmp_path / "live")]
    b = [outcome(r) for r in load_results(tmp_path / "replay")]
    assert a == b
    assert all(r["usage"]["a"]["cached_calls"] == r["usage"]["a"]["calls"] for r in load_results(tmp_path / "replay"))


def test_offline_without_a_cache_is_refused_before_any_write(tmp_path):
    cfg = _design("http://127.0.0.1:9/v1")
    with pytest.raises(InputError) as exc:
        run_study(cfg, to_toml(cfg), tmp_path / "st", offline=True)
    assert exc.value.field == "cache" and not (tmp_path / "st").exists()


def test_unreachable_server_is_refused_in_preflight_before_any_write(tmp_path):
    from fairarena.llm import ServerUnavailableError

    cfg = _design("http://127.0.0.1:9/v1", cohorts=1)
    with pytest.raises(ServerUnavailableError, match="127.0.0.1:9"):
        run_study(cfg, to_toml(cfg), tmp_path / "st")
    assert not (tmp_path / "st").exists()


def test_limit_drops_while_the_server_refuses_and_recovers():
    import threading

    from fairarena.study.store import LimitedModel
    from fairarena.llm import ChatResponse, TransientLLMError, Usage
    from fairarena.llm.wrappers import RetryingModel, UsageMeter

    class Flaky:
        backend, model = "fake", "m"

        def __init__(self):
            self.refuse = 0
            self.lock = threading.Lock()

        def chat(self, messages, **kw):
            with self.lock:
                if self.refuse > 0:
                    self.refuse -= 1
                    raise TransientLLMError("429", status=429, retry_after=0.0)
            return ChatResponse(text="ok", backend="fake", model="m", usage=Usage(1, 1))

    inner = Flaky()
    m = LimitedModel(UsageMeter(RetryingModel(inner, max_attempts=5, sleep=lambda d: None)), 4)
    msgs = [{"role": "user", "content": "hi"}]
    for _ in range(3):                      # three calls that each needed one retry
        inner.refuse = 1
        m.chat(msgs)
    assert m.current == 1 == m.lowest
    m.chat(msgs)
    for _ in range(3):                      # 4 x 1 calls without a retry: back to 2
        m.chat(msgs)
    assert m.current == 2
    for _ in range(100):
        m.chat(msgs)
    assert m.current == 4 and m.lowest == 1
