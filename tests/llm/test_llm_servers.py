"""Servers as servers: what the study and tourism commands do when the server is not there, or the
response cache is not one (loopback only: port 9 on 127.0.0.1 is the discard port nobody listens on)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fairarena.errors import InputError
from fairarena.llm import ServerUnavailableError
from fairarena.llm.spec import check_reachable

FAIRARENA = str(Path(sys.executable).with_name("fairarena"))
DOWN = "http://127.0.0.1:9/v1"


def _study(tmp_path, url: str) -> Path:
    from fairarena.study.design import preset, to_toml

    spec = f"openai:m@{url}"
    study = tmp_path / "study.toml"
    study.write_text(to_toml(preset("tiny", model_a=spec, model_b=spec, rag="off", cohorts=1)))
    return study


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([FAIRARENA, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "FAIRARENA_API_KEY": ""})


def test_preflight_names_the_unreachable_server_once(fake_server):
    check_reachable([f"openai:m@{fake_server.base_url}", "scripted", "llamacpp:smollm2"])  # answers: no error
    with pytest.raises(ServerUnavailableError, match=r"no LLM server answers at http://127.0.0.1:9/v1 .*\[") as exc:
        check_reachable([f"openai:m@{fake_server.base_url}", f"openai:m@{DOWN}?timeout=5"])
    assert "\n" not in str(exc.value)
    assert fake_server.requests == []   # a connection only: nothing was sent


def test_study_run_against_an_unreachable_server_is_one_line_exit_2(tmp_path):
    out = tmp_path / "st"
    p = _cli("study", "run", str(_study(tmp_path, DOWN)), "--out", str(out))
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and "no LLM server answers at http://127.0.0.1:9/v1" in p.stderr
    assert "Traceback" not in p.stderr and not out.exists()


@pytest.mark.parametrize("kind", ["folder", "text"])
def test_a_cache_that_is_a_folder_or_not_sqlite_is_refused_up_front(fake_server, tmp_path, kind):
    from fairarena.study.design import preset, to_toml
    from fairarena.study.store import run_study

    cache = tmp_path / "cache"
    if kind == "folder":
        cache.mkdir()
    else:
        cache.write_text("not a database\n")
    spec = f"openai:m@{fake_server.base_url}"
    cfg = preset("tiny", model_a=spec, model_b=spec, rag="off", cohorts=1)
    with pytest.raises(InputError) as exc:
        run_study(cfg, to_toml(cfg), tmp_path / "st", cache=cache)
    assert exc.value.field == "cache" and ("folder" if kind == "folder" else "not SQLite") in exc.value.expected
    assert not (tmp_path / "st").exists() and fake_server.requests == []
    p = _cli("study", "run", str(_study(tmp_path, fake_server.base_url)), "--out", str(tmp_path / "st2"),
             "--cache", str(cache))
    assert p.returncode == 2 and p.stderr.startswith("error: cache = ") and "Traceback" not in p.stderr, p.stderr
    assert not (tmp_path / "st2").exists()


def test_an_empty_or_new_cache_file_is_accepted(tmp_path):
    from fairarena.llm.wrappers import check_cache_file

    (tmp_path / "empty.sqlite").write_bytes(b"")
    assert check_cache_file(tmp_path / "empty.sqlite") == tmp_path / "empty.sqlite"
    assert check_cache_file(tmp_path / "new.sqlite") == tmp_path / "new.sqlite"


def test_tourism_run_against_an_unreachable_model_exits_non_zero(tmp_path):
    dest = tmp_path / "d.json"
    assert _cli("tourism", "destination", "--seed", "0", "--pois", "12", "--out", str(dest)).returncode == 0
    p = _cli("tourism", "run", "--destination", str(dest), "--decision", "flows", "--model", f"openai:m@{DOWN}",
             "--rounds", "1")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "debate failed" in p.stderr and "127.0.0.1:9" in p.stderr and "Traceback" not in p.stderr


# ----------------------------------------------------------------------------- silent truncation (Ollama's num_ctx)
LONG = [{"role": "system", "content": "You allocate scarce ICU resources. " * 40},
        {"role": "user", "content": "| P1 | 62 | 0.40 |\n" * 120}]


def _model(srv, opts: str = ""):
    from fairarena.llm import build_model
    from fairarena.llm.wrappers import RetryingModel

    m = build_model(f"openai:m@{srv.base_url}{opts}")
    m.find(RetryingModel)._sleep = lambda d: None
    return m


def test_a_prompt_the_server_cut_fails_the_call_naming_num_ctx(fake_server):
    from fairarena.llm import PromptTruncatedError, estimate_prompt_tokens

    sent = estimate_prompt_tokens(LONG)
    fake_server.prompt_tokens = 2048 if sent > 4000 else sent // 3   # what Ollama reports after cutting the start
    m = _model(fake_server)
    with pytest.raises(PromptTruncatedError, match=r"counted \d+ prompt tokens where about \d+ were sent.*num_ctx"):
        m.chat(LONG)
    assert len(fake_server.requests) == 1     # not retried: the same prompt would be cut again


def test_a_full_count_passes_and_the_check_can_be_turned_off(fake_server):
    from fairarena.llm import estimate_prompt_tokens

    sent = estimate_prompt_tokens(LONG)
    for reported in (sent, int(0.65 * sent), int(1.4 * sent), 0):   # tokenizer differences; 0 = not reported
        fake_server.prompt_tokens = reported
        assert _model(fake_server).chat(LONG).usage.prompt_tokens == reported
    fake_server.prompt_tokens = 11                # a short prompt is not judged
    assert _model(fake_server).chat([{"role": "user", "content": "hi"}]).text
    fake_server.prompt_tokens = sent // 10
    assert _model(fake_server, "?truncation_ratio=0").chat(LONG).usage.prompt_tokens == sent // 10


def test_a_debate_on_a_cutting_server_fails_with_the_setting_named(fake_server, tmp_path):
    from fairarena.arena import DebateConfig, build_agent, run_debate
    from fairarena.triage import sample_cohort

    fake_server.prompt_tokens = 100           # every prompt of the debate is several hundred tokens
    cohort = sample_cohort(0, "standard")
    spec = f"openai:m@{fake_server.base_url}"
    res = run_debate(cohort, build_agent("A", "aligned:care", spec, cohort, rag="off"),
                     build_agent("B", "baseline", spec, cohort, rag="off"), DebateConfig(rounds=1))
    assert res.status == "failed" and "counted 100 prompt tokens where about" in res.error and "num_ctx" in res.error


# ----------------------------------------------------------------------------- prefix reuse (cache_prompt)
def test_cache_prompt_is_sent_and_the_reused_share_is_accounted(fake_server):
    fake_server.timings = {"cache_n": 9, "prompt_n": 2}     # llama.cpp's server: 9 of 11 prompt tokens reused
    m = _model(fake_server)
    r = m.chat([{"role": "user", "content": "hi"}])
    assert fake_server.requests[-1]["cache_prompt"] is True
    assert r.usage.cached_tokens == 9 and r.usage.prompt_tokens == 11
    fake_server.timings = None
    fake_server.completion = {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": 40, "completion_tokens": 1,
                                        "prompt_tokens_details": {"cached_tokens": 32}}}   # OpenAI, vLLM
    assert m.chat([{"role": "user", "content": "again"}]).usage.cached_tokens == 32
    assert m.totals.summary()["cached_prompt_tokens"] == 41 and m.totals.summary()["prompt_reuse"] == round(41 / 51, 4)
    fake_server.completion = None
    assert _model(fake_server).chat([{"role": "user", "content": "x"}]).usage.cached_tokens is None  # not reported
    assert "prompt_reuse" not in _model(fake_server).totals.summary()


def test_cache_prompt_off_for_openai_and_on_request_and_dropped_when_refused(fake_server):
    from fairarena.llm.openai_backend import OpenAIChatModel

    assert not OpenAIChatModel("gpt-4o-mini", "https://api.openai.com/v1").cache_prompt
    assert OpenAIChatModel("gpt-4o-mini", "https://api.openai.com/v1", cache_prompt="on").cache_prompt
    _model(fake_server, "?cache_prompt=off").chat([{"role": "user", "content": "hi"}])
    assert "cache_prompt" not in fake_server.requests[-1]
    fake_server.reject_fields = {"cache_prompt"}    # a server that refuses fields it does not know
    m = _model(fake_server)
    assert m.chat([{"role": "user", "content": "hi"}]).text and m.chat([{"role": "user", "content": "ho"}]).text
    sent = [("cache_prompt" in r) for r in fake_server.requests[-3:]]
    assert sent == [True, False, False]             # refused once, then never sent again
