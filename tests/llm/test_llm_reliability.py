"""Model faults against the loopback fake server: bodies that are not completions, hanging servers,
keys echoed back; options in the spec; the context window."""

from __future__ import annotations

import json
import time

import pytest

from fairarena.errors import InputError
from fairarena.llm import (
    ContextOverflowError, LLMError, MalformedResponseError, RetriesExhaustedError, ServerUnavailableError,
    TransientLLMError, build_model, parse_model_spec, redact,
)
from fairarena.llm.base import call_deadline, estimate_prompt_tokens, remaining_time
from fairarena.llm.openai_backend import parse_completion
from fairarena.llm.wrappers import RetryingModel

MSG = [{"role": "user", "content": "Allocate the ventilator."}]
KEY = "fa-live-7Qx2LmN9pR4sT8vW1yZ3"  # not an sk- shape: only redaction by value can catch it


def _model(srv, spec_opts: str = "", **kw):
    m = build_model(f"openai:m@{srv.base_url}{spec_opts}", **kw)
    slept: list[float] = []
    m.find(RetryingModel)._sleep = slept.append
    return m, slept


# ----------------------------------------------------------------------------- bodies that are not completions
@pytest.mark.parametrize("raw, kind, fragment", [
    ((200, "text/html", b"<html><body><h1>Welcome to nginx!</h1></body></html>"), MalformedResponseError,
     "body that is not JSON (text/html"),
    ((200, "text/plain", b"upstream connect error or disconnect/reset before headers"), MalformedResponseError,
     "not JSON (text/plain"),
    ((200, "application/json", b'{"id": "x", "choices": [{"message": {"content": "hel'), TransientLLMError,
     "truncated or invalid JSON"),
    ((200, "application/json", b""), TransientLLMError, "empty body"),
    ((200, "application/json", b"[1, 2, 3]"), MalformedResponseError, "not a chat completion (a list"),
    ((200, "application/json", b"\xff\xfe\x00garbage"), MalformedResponseError, "not JSON"),
])
def test_non_completion_bodies_are_typed_one_line_errors(fake_server, raw, kind, fragment):
    fake_server.raw = raw
    m, _ = _model(fake_server, retries=2)
    with pytest.raises(LLMError) as exc:
        m.chat(MSG)
    err = exc.value.last if isinstance(exc.value, RetriesExhaustedError) else exc.value
    assert isinstance(err, kind), repr(exc.value)
    assert fragment in str(exc.value)
    assert "\n" not in str(exc.value) and fake_server.base_url in str(exc.value)
    # retried only when it may be a transient cut-off
    assert len(fake_server.requests) == (2 if kind is TransientLLMError else 1)


@pytest.mark.parametrize("completion, kind, fragment", [
    ({"id": "x", "object": "chat.completion"}, TransientLLMError, "no choices"),
    ({"choices": []}, TransientLLMError, "no choices"),
    ({"choices": "abc"}, MalformedResponseError, "malformed choices"),
    ({"choices": [None]}, MalformedResponseError, "malformed choices"),
    ({"choices": [{"index": 0}]}, MalformedResponseError, "no message object"),
    ({"choices": [{"message": {"role": "assistant", "content": None}}]}, MalformedResponseError, "content is null"),
    ({"choices": [{"message": {"content": None, "refusal": "I can't"}}]}, MalformedResponseError, "refusal: I can't"),
    ({"choices": [{"message": {"content": 42}}]}, MalformedResponseError, "content of type int"),
    ({"error": {"message": "model is loading"}}, MalformedResponseError, "HTTP 200 with an error: model is loading"),
])
def test_malformed_completions_are_typed(fake_server, completion, kind, fragment):
    fake_server.completion = completion
    m, _ = _model(fake_server, retries=1)
    with pytest.raises(LLMError) as exc:
        m.chat(MSG)
    err = exc.value.last if isinstance(exc.value, RetriesExhaustedError) else exc.value
    assert isinstance(err, kind) and fragment in str(exc.value)


def test_odd_but_usable_completion_fields_are_tolerated(fake_server):
    fake_server.completion = {"choices": [{"message": {"content": "ok"}, "finish_reason": 7}],
                              "usage": {"prompt_tokens": "11", "completion_tokens": None}}
    m, _ = _model(fake_server)
    r = m.chat(MSG)
    assert r.text == "ok" and r.finish_reason is None
    assert r.usage.estimated and r.usage.prompt_tokens > 0  # bad usage types: estimated, not trusted


def test_parse_completion_pins_the_good_case():
    body = json.dumps({"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 3, "completion_tokens": 1}}).encode()
    assert parse_completion(body, "application/json") == ("hi", "stop", (3, 1, None))


def test_html_error_pages_become_one_line(fake_server):
    fake_server.raw = (502, "text/html", b"<html>\n<head><title>502 Bad Gateway</title></head>\n<body>nginx</body></html>")
    m, _ = _model(fake_server, retries=1)
    with pytest.raises(RetriesExhaustedError) as exc:
        m.chat(MSG)
    assert "HTTP 502" in str(exc.value) and "\n" not in str(exc.value)
    fake_server.raw = (403, "text/html", b"<html>\n<body><h1>Forbidden</h1>\n</body></html>")
    with pytest.raises(LLMError) as exc:
        m.chat(MSG)
    assert "HTTP 403" in str(exc.value) and "Forbidden" in str(exc.value) and "<" not in str(exc.value)


# ----------------------------------------------------------------------------- time-outs
def test_a_hanging_server_fails_within_the_read_timeout(fake_server):
    fake_server.hang = 60
    m, slept = _model(fake_server, "?timeout=0.5", retries=1)
    t0 = time.monotonic()
    with pytest.raises(RetriesExhaustedError, match=r"no answer from .* within 0.5s \(timeout\)"):
        m.chat(MSG)
    assert time.monotonic() - t0 < 30  # far below the 60 s hang; the bound itself is pinned in the message


def test_total_timeout_bounds_all_attempts(fake_server):
    fake_server.hang = 60
    m = build_model(f"openai:m@{fake_server.base_url}?timeout=5&total_timeout=0.8", retries=50, base_delay=0.01,
                    max_delay=0.01)
    t0 = time.monotonic()
    with pytest.raises(RetriesExhaustedError, match=r"total_timeout 0.8s spent"):
        m.chat(MSG)
    took = time.monotonic() - t0
    assert took < 30
    # every attempt's read time-out was cut to what was left of the 0.8 s: far fewer than 50 attempts
    assert 1 <= len(fake_server.requests) < 50


def test_call_deadline_nests_to_the_earlier_one():
    assert remaining_time() is None
    with call_deadline(100):
        with call_deadline(1000):
            assert remaining_time() <= 100
        with call_deadline(1):
            assert remaining_time() <= 1
    assert remaining_time() is None


def test_timeouts_reach_the_client_and_kwargs_are_overridden_by_the_spec(fake_server):
    m = build_model(f"openai:m@{fake_server.base_url}?connect_timeout=2", timeout=7, total_timeout=30)
    inner = m.unwrap()
    assert (inner.timeout, inner.connect_timeout) == (7.0, 2.0)
    assert m.find(RetryingModel).total_timeout == 30.0
    m2 = build_model(f"openai:m@{fake_server.base_url}?timeout=3", timeout=7)
    assert m2.unwrap().timeout == 3.0
    # defaults: 120 s read, 10 s connect, 300 s over all retries
    d = build_model(f"openai:m@{fake_server.base_url}")
    assert (d.unwrap().timeout, d.unwrap().connect_timeout, d.find(RetryingModel).total_timeout) == (120.0, 10.0, 300.0)


@pytest.mark.parametrize("spec, fragment", [
    ("openai:m@http://127.0.0.1:1/v1?timeout=0", "option timeout='0': a positive, finite number of seconds"),
    ("openai:m@http://127.0.0.1:1/v1?timeout=nan", "option timeout='nan'"),
    ("openai:m@http://127.0.0.1:1/v1?timeout=abc", "option timeout='abc'"),
    ("openai:m@http://127.0.0.1:1/v1?connect_timeout=-1", "option connect_timeout='-1'"),
    ("openai:m@http://127.0.0.1:1/v1?context_window=8", "option context_window='8'"),
    ("openai:m@http://127.0.0.1:1/v1?retries=3", "'retries' is not one"),
    ("openai:m@http://127.0.0.1:1/v1?timeout=1&timeout=2", "option 'timeout' once"),
    ("openai:m@http://127.0.0.1:1/v1?timeout", "?name=value"),
    ("llamacpp:smollm2?n_ctx=abc", "option n_ctx='abc'"),
    ("llamacpp:smollm2?n_ctx=99999999", "from 16 to 1048576"),
    ("openai:m?context_window=1e9", "option context_window='1e9'"),
    ("openai:m?timeout=1e309", "option timeout='1e309'"),
    ("scripted:echo?x=1", "takes none"),
])
def test_bad_spec_options_are_input_errors_at_parse_time(spec, fragment):
    with pytest.raises(InputError) as exc:
        parse_model_spec(spec)
    assert exc.value.field == "model" and fragment in str(exc.value)


def test_spec_options_round_trip_through_str():
    s = "openai:qwen2.5:0.5b@http://127.0.0.1:11434/v1?timeout=30&connect_timeout=5"
    ms = parse_model_spec(s)
    assert (ms.model, ms.base_url, ms.opts) == ("qwen2.5:0.5b", "http://127.0.0.1:11434/v1",
                                                 {"timeout": 30.0, "connect_timeout": 5.0})
    assert parse_model_spec(str(ms)) == ms


def test_a_bad_keyword_option_is_an_input_error_and_another_backends_is_ignored():
    with pytest.raises(InputError) as exc:
        build_model("scripted:echo", timout=3)
    assert exc.value.field == "timout" and "connect_timeout" in str(exc.value)
    assert build_model("scripted:echo", timeout=3).chat(MSG).text == MSG[0]["content"]


# ----------------------------------------------------------------------------- secrets
def test_an_echoed_key_never_reaches_the_error(fake_server, monkeypatch):
    monkeypatch.setenv("FAIRARENA_API_KEY", KEY)
    fake_server.echo_key = True
    m, _ = _model(fake_server)
    with pytest.raises(LLMError) as exc:
        m.chat(MSG)
    assert fake_server.headers[-1]["authorization"] == f"Bearer {KEY}"  # the server did see it
    assert "HTTP 401" in str(exc.value) and KEY not in str(exc.value) and "[REDACTED]" in str(exc.value)
    assert exc.value.__cause__ is None and exc.value.__context__ is None or KEY not in repr(exc.value.__context__)
    assert KEY not in json.dumps(m.totals.records)


def test_redact_by_value_and_by_shape():
    assert redact(f"key={KEY}!", secrets=[KEY]) == "key=[REDACTED]!"
    assert redact("Authorization: Bearer abc.def-ghi_jkl") == "Authorization: Bearer [REDACTED]"
    assert redact("Incorrect API key provided: sk-proj-AbC123dEf456GhI789.") == \
        "Incorrect API key provided: [REDACTED]."
    assert redact('x-api-key: "9f86d081884c7d659a2feaa0c55ad015"') == 'x-api-key: "[REDACTED]"'
    assert redact("token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N") == \
        "token=[REDACTED]"
    # ordinary text, numbers, hashes outside an auth context and short "keys" are kept
    for keep in ("the token budget is spent", "Basic needs come first", "risk-adjusted allocation",
                 "prompt of 4142 tokens exceeds the context window of 4096",
                 "cache 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"):
        assert redact(keep) == keep
    assert redact("not-needed", secrets=["x"]) == "not-needed"
    assert redact(None) is None and redact(3) == 3


def test_redact_uses_the_environment_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert KEY not in redact(f"rejected {KEY} (a key of odd shape)")


def test_redact_obj_walks_records(monkeypatch):
    from fairarena.llm import redact_obj
    monkeypatch.setenv("FAIRARENA_API_KEY", KEY)
    rec = {"error": f"bad key {KEY}", "nested": [{"t": (KEY, 1)}], KEY: 2}
    out = redact_obj(rec)
    assert KEY not in json.dumps(out) and out["nested"][0]["t"][1] == 1


def test_every_llm_error_is_redacted_at_construction(monkeypatch):
    monkeypatch.setenv("FAIRARENA_API_KEY", KEY)
    for err in (LLMError(f"x {KEY}"), TransientLLMError(f"y {KEY}", status=500),
                ServerUnavailableError("http://h/v1", KEY), RetriesExhaustedError(2, LLMError(f"z\n{KEY}"))):
        assert KEY not in str(err) and "\n" not in str(err)


# ----------------------------------------------------------------------------- context window
def test_openai_refuses_a_prompt_beyond_its_context_window(fake_server):
    m, _ = _model(fake_server, "?context_window=64")
    assert m.context_window == 64 and m.max_prompt_tokens(16) == 48
    short = [{"role": "user", "content": "x" * 50}]
    assert m.count_tokens(short) == estimate_prompt_tokens(short) == 8 + 15 + 8
    m.chat(short, max_tokens=16)
    with pytest.raises(ContextOverflowError) as exc:
        m.chat([{"role": "user", "content": "x" * 200}], max_tokens=16)
    e = exc.value
    assert (e.prompt_tokens, e.max_tokens, e.context_window) == (74, 16, 64)
    assert "at most 48 tokens" in str(e)
    assert len(fake_server.requests) == 1  # nothing was sent for the refused prompt


def test_prompt_estimate_is_conservative_against_the_four_chars_rule():
    text = "The ventilator goes to the patient with the best prognosis. " * 20
    est = estimate_prompt_tokens([{"role": "user", "content": text}])
    assert est >= len(text) / 3.5 and est >= len(text) / 4 * 1.1


def test_scripted_models_have_no_window():
    m = build_model("scripted:echo")
    assert m.context_window is None and m.max_prompt_tokens(100) is None
    assert m.count_tokens(MSG) == estimate_prompt_tokens(MSG)


# ----------------------------------------------------------------------------- GGUF header
def _gguf(path, kvs, version=3):
    import struct

    def s(x):
        b = x.encode()
        return struct.pack("<Q", len(b)) + b
    out = b"GGUF" + struct.pack("<I", version) + struct.pack("<Q", 0) + struct.pack("<Q", len(kvs))
    for key, vtype, payload in kvs:
        out += s(key) + struct.pack("<I", vtype) + payload
    path.write_bytes(out + b"\0" * 64)
    return path


def test_gguf_header_reader_finds_the_trained_context(tmp_path):
    import struct

    from fairarena.llm.llamacpp_backend import LlamaCppChatModel, gguf_metadata, trained_context
    vocab = struct.pack("<I", 8) + struct.pack("<Q", 3) + b"".join(
        struct.pack("<Q", len(w)) + w for w in (b"a", b"bb", b"<|im_end|>"))
    f = _gguf(tmp_path / "m.gguf", [
        ("general.architecture", 8, struct.pack("<Q", 5) + b"llama"),
        ("tokenizer.ggml.tokens", 9, vocab),                      # an array of strings, skipped
        ("tokenizer.ggml.scores", 9, struct.pack("<I", 6) + struct.pack("<Q", 2) + struct.pack("<ff", 0.5, 1.0)),
        ("general.flag", 7, struct.pack("<?", True)),
        ("llama.context_length", 4, struct.pack("<I", 32768)),
        ("llama.rope.freq_base", 6, struct.pack("<f", 10000.0)),
    ])
    meta = gguf_metadata(f)
    assert meta == {"general.architecture": "llama", "general.flag": True, "llama.context_length": 32768,
                    "llama.rope.freq_base": 10000.0}
    assert trained_context(f) == 32768
    # n_ctx: the trained context capped at max_n_ctx (default 8192), or set explicitly
    assert LlamaCppChatModel(f).context_window == 8192
    assert LlamaCppChatModel(f, max_n_ctx=65536).context_window == 32768
    assert LlamaCppChatModel(f, n_ctx=2048).max_prompt_tokens(512) == 1536
    assert build_model(f"llamacpp:{f}?max_n_ctx=16384").context_window == 16384


def test_gguf_reader_refuses_other_files_and_falls_back(tmp_path):
    from fairarena.llm.llamacpp_backend import FALLBACK_N_CTX, LlamaCppChatModel, gguf_metadata, trained_context
    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"NOTGGUF" + b"\0" * 32)
    with pytest.raises(ValueError, match="not a GGUF"):
        gguf_metadata(bad)
    assert trained_context(bad) is None and LlamaCppChatModel(bad).context_window == FALLBACK_N_CTX
    cut = _gguf(tmp_path / "cut.gguf", [("general.architecture", 8, b"\x05")])
    assert trained_context(cut) is None


def test_offline_replay_reports_the_live_window(tmp_path, fake_server):
    live = build_model(f"openai:m@{fake_server.base_url}?context_window=4096", cache=tmp_path / "c.sqlite")
    off = build_model(f"openai:m@{fake_server.base_url}?context_window=4096", cache=tmp_path / "c.sqlite",
                      offline=True)
    assert off.context_window == live.context_window == 4096
    assert off.max_prompt_tokens(96) == 4000 and off.count_tokens(MSG) == live.count_tokens(MSG)
    gone = build_model(f"llamacpp:{tmp_path / 'elsewhere.gguf'}", cache=tmp_path / "c.sqlite", offline=True)
    assert gone.context_window is None and gone.count_tokens(MSG) == estimate_prompt_tokens(MSG)


def test_credentials_in_urls_are_redacted():
    assert redact("via https://bob:s3cretpass@proxy.local:8080/v1") == "via https://bob:[REDACTED]@proxy.local:8080/v1"
    assert redact("GET /v1/models?key=AIzaSyA-1234&alt=json") == "GET /v1/models?key=[REDACTED]&alt=json"
    assert redact("http://127.0.0.1:8080/v1?alt=json") == "http://127.0.0.1:8080/v1?alt=json"


def test_llm_errors_survive_pickling(monkeypatch):
    import pickle

    from fairarena.llm.base import TruncatedResponseError
    monkeypatch.setenv("FAIRARENA_API_KEY", KEY)
    errors = [LLMError("plain"), TransientLLMError("t", status=503, retry_after=2.0),
              ServerUnavailableError("http://h/v1", "refused"), ContextOverflowError(10, 5, 12, "m"),
              RetriesExhaustedError(3, TruncatedResponseError(f"cut {KEY}")), MalformedResponseError("html")]
    for e in errors:
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is type(e) and str(back) == str(e) and back.__dict__.keys() == e.__dict__.keys()
    assert pickle.loads(pickle.dumps(errors[1])).status == 503
    back = pickle.loads(pickle.dumps(errors[4]))
    assert back.attempts == 3 and isinstance(back.last, TruncatedResponseError) and KEY not in str(back)


def test_connect_timeout_names_the_option():
    """A listening socket whose accept queue is full: the handshake is never completed (Linux drops the SYN)."""
    import socket
    pytest.importorskip("openai")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = srv.getsockname()[1]
    fill = []
    try:
        for _ in range(3):
            c = socket.socket()
            c.setblocking(False)
            try:
                c.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            fill.append(c)
        time.sleep(0.1)
        m = build_model(f"openai:m@http://127.0.0.1:{port}/v1?connect_timeout=0.5&timeout=60", retries=3)
        with pytest.raises(ServerUnavailableError, match=r"no connection within 0.5s \(connect_timeout\)"):
            m.chat(MSG)
        assert m.find(RetryingModel).delays == []  # not retried: a configuration error
    finally:
        for c in fill:
            c.close()
        srv.close()


def test_a_refused_prompt_costs_no_budget_and_no_retry(fake_server):
    from fairarena.llm.wrappers import BudgetedModel
    m, slept = _model(fake_server, "?context_window=32", max_calls=1)
    with pytest.raises(ContextOverflowError):
        m.chat([{"role": "user", "content": "x" * 500}], max_tokens=8)
    assert m.find(BudgetedModel).calls == 0 and slept == [] and fake_server.requests == []
    assert m.chat([{"role": "user", "content": "hi"}], max_tokens=8).text == "hello from the fake server"


def test_a_server_dripping_its_answer_cannot_outlast_total_timeout(fake_server):
    """Each byte arrives well within the read time-out, so only the call's deadline can end it."""
    fake_server.drip = 0.2  # ~1000 bytes: 200 s for the whole body
    m = build_model(f"openai:m@{fake_server.base_url}?timeout=5&total_timeout=1.5", retries=3, base_delay=0.01)
    with pytest.raises(RetriesExhaustedError, match=r"still arriving after .*total_timeout reached"):
        m.chat(MSG)
    assert len(fake_server.requests) == 1


def test_redact_handles_hostile_lengths_and_keeps_what_is_not_a_key():
    """Inputs that made an earlier pattern backtrack without end (a keyword followed by a long blank run)."""
    blank = "token" + " " * 20000 + "x"
    assert redact(blank) == blank
    assert redact("sk-" + "a-" * 5000) == "[REDACTED]"
    assert redact("Bearer " + "a" * 10000 + "!") == "Bearer [REDACTED]!"
    assert redact("http://" + "a:" * 5000 + "b") == "http://" + "a:" * 5000 + "b"
    assert redact("password" + ":" * 5000) == "password" + ":" * 5000
    prose = "The token budget and the secret of a fair allocation is need. " * 2000
    assert redact(prose) == prose


def test_a_lone_surrogate_is_an_input_error_not_a_traceback():
    m = build_model("scripted:echo")
    with pytest.raises(InputError) as exc:
        m.chat([{"role": "user", "content": "quoted document \udcff end"}])
    assert exc.value.field == "messages[0].content" and "lone surrogate at character 16" in str(exc.value)


def test_a_corrupt_cache_entry_is_an_input_error(tmp_path):
    import sqlite3
    path = tmp_path / "c.sqlite"
    m = build_model("scripted:echo", cache=path)
    m.chat(MSG)
    db = sqlite3.connect(path)
    db.execute("UPDATE responses SET response = '{\"text\": 1'")
    db.commit()
    db.close()
    again = build_model("scripted:echo", cache=path)
    with pytest.raises(InputError) as exc:
        again.chat(MSG)
    assert exc.value.field == "cache" and "not one" in str(exc.value)


# ----------------------------------------------------------------------------- a reply cut off mid-body
def test_a_reply_cut_off_mid_body_is_retried(fake_server):
    fake_server.partial = 1  # headers and half the body, then the connection closes
    m, slept = _model(fake_server, retries=3)
    r = m.chat(MSG)
    assert r.text == "hello from the fake server" and r.attempts == 2 and len(slept) == 1
    assert len(fake_server.requests) == 2


@pytest.mark.parametrize("client, transport_error", [("http", "IncompleteRead"), ("openai", "RemoteProtocolError")])
def test_a_reply_cut_off_every_time_fails_cleanly(fake_server, client, transport_error):
    fake_server.partial = 10
    m, slept = _model(fake_server, f"?client={client}", retries=3)
    with pytest.raises(RetriesExhaustedError, match=r"gave up after 3 attempts: reply from .* cut off after \d+ "
                                                    rf"bytes of the body \({transport_error}\)") as exc:
        m.chat(MSG)
    assert exc.value.__cause__ is not None and exc.value.__cause__.__cause__ is None  # no transport error chained
    assert len(fake_server.requests) == 3 and m.totals.failed_calls == 1


def test_debate_against_a_server_that_drops_every_body_is_one_line(fake_server, tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    fake_server.partial = 1000
    exe = Path(sys.executable).with_name("fairarena")
    p = subprocess.run([str(exe), "debate", "--model", f"openai:m@{fake_server.base_url}?total_timeout=6",
                        "--rounds", "1", "--rag", "off"], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "FAIRARENA_API_KEY": ""})
    said = f"exit {p.returncode}\nstdout: {p.stdout[-800:]}\nstderr: {p.stderr[-800:]}"
    assert p.returncode == 2, said
    assert "Traceback" not in p.stderr + p.stdout and "cut off after" in p.stderr, said


# ----------------------------------------------------------------------------- redaction of model output
def _redact_every_pattern(text: str) -> str:
    """The slow obvious form: every pattern on every text (what redact did before its substring checks)."""
    from fairarena.llm import redaction as r

    out = text
    for s in r.known_secrets():
        out = out.replace(s, r.REDACTED)
    out = r._SHAPES[0].sub(r.REDACTED, out)
    out = r._SHAPES[1].sub(lambda m: f"{m.group(1)}{m.group(2)}{r.REDACTED}", out)
    out = r._SHAPES[2].sub(lambda m: f"{m.group(1)}{m.group(2)}{r.REDACTED}", out)
    out = r._SHAPES[3].sub(r.REDACTED, out)
    out = r._SHAPES[4].sub(lambda m: f"{m.group(1)}{m.group(2)}{r.REDACTED}", out)
    out = r._SHAPES[5].sub(lambda m: f"{m.group(1)}{r.REDACTED}", out)
    return r._AUTH_CONTEXT.sub(lambda m: f"{m.group(1)}{m.group(2)}{r.REDACTED}", out)


_PIECES = ["sk-abc123def456ghi789", "Bearer abcdefgh1234", "BASIC dXNlcjpwYXNzMQ==", "eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0",
           "https://user:pw1234@host", "?api_key=abc123", "&token=zz9", "api_key", "Authorization: ", "X-API-KEY=",
           "password is ", "secret", "credentials", "0123456789abcdef0123456789abcdef", "Ab3dEf6hIj9lMn2pQr5t",
           " ", "\n", "=", "?", "&", "@", "://", "P3 keeps the ventilator", '{"justification": "', '"}', "token"]


def test_redact_with_substring_checks_equals_every_pattern_applied():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=6), max_size=12))
    def check(parts):
        text = "".join(parts)
        assert redact(text) == _redact_every_pattern(text)

    check()


def test_every_model_reply_is_redacted_where_it_is_made(fake_server, monkeypatch, tmp_path):
    from fairarena.llm import ChatResponse
    from fairarena.llm.wrappers import ResponseCache

    monkeypatch.setenv("FAIRARENA_API_KEY", KEY)
    fake_server.reply = "I was told ECHO"
    fake_server.echo_key_in_reply = True
    m = build_model(f"openai:m@{fake_server.base_url}", cache=tmp_path / "c.sqlite")
    r = m.chat(MSG)
    assert KEY not in r.text and r.text.startswith("I was told [REDACTED] (Authorization: Bearer [REDACTED])")
    # an entry written before redaction (a cache from an older version) is redacted when read
    cache = ResponseCache(tmp_path / "old.sqlite")
    raw = {"text": f"leaked {KEY}", "backend": "openai", "model": "m"}
    cache._db.execute("INSERT INTO responses VALUES (?, ?, ?, ?, ?, ?)", ("k", "openai", "m", "{}", json.dumps(raw), 0.0))
    assert cache.get("k").text == "leaked [REDACTED]"
    assert ChatResponse(text=KEY, backend="scripted", model="x").text == "[REDACTED]"
