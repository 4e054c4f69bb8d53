"""Model specs, the scripted backend, message validation."""

from __future__ import annotations

import pytest

from fairarena.errors import InputError
from fairarena.llm import ModelSpec, ScriptedChatModel, build_model, parse_model_spec, register_script
from fairarena.llm.base import ChatResponse, Usage


@pytest.mark.parametrize("spec, expected", [
    ("scripted", ModelSpec("scripted", "negotiator")),
    ("scripted:echo", ModelSpec("scripted", "echo")),
    ("openai:llama3.3@http://127.0.0.1:11434/v1", ModelSpec("openai", "llama3.3", "http://127.0.0.1:11434/v1")),
    ("openai:qwen2.5:0.5b@https://host/v1/", ModelSpec("openai", "qwen2.5:0.5b", "https://host/v1")),
    ("openai:gpt-4o-mini", ModelSpec("openai", "gpt-4o-mini", None)),
    ("llamacpp:/models/x.gguf", ModelSpec("llamacpp", "/models/x.gguf")),
    ("llamacpp:smollm2", ModelSpec("llamacpp", "smollm2")),
])
def test_parse_good_specs(spec, expected):
    assert parse_model_spec(spec) == expected


@pytest.mark.parametrize("spec, fragment", [
    ("", "scripted[:NAME]"),
    ("gpt4", "known backend"),
    ("ollama:llama3", "known backend"),
    ("openai:", "a model after"),
    ("openai:m@ftp://host", "http:// or https://"),
    ("openai:@http://127.0.0.1:1/v1", "model name before"),
    ("llamacpp:model.bin", ".gguf"),
    ("scripted:", "scripted:NAME"),
])
def test_parse_bad_specs_name_the_field(spec, fragment):
    with pytest.raises(InputError) as exc:
        parse_model_spec(spec)
    assert exc.value.field == "model"
    assert fragment in str(exc.value)


def test_unknown_script_and_missing_gguf_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="registered script"):
        build_model("scripted:no-such-script")
    with pytest.raises(InputError, match="existing GGUF"):
        build_model(f"llamacpp:{tmp_path / 'missing.gguf'}")


def test_scripted_backend_delegates_and_serialises_json():
    seen = {}

    def script(messages, params):
        seen["params"] = params
        return {"answer": messages[-1]["content"].upper(), "seed": params.seed}

    register_script("test-upper", script)
    m = build_model("scripted:test-upper")
    r = m.chat([{"role": "system", "content": "s"}, {"role": "user", "content": "abc"}], seed=3,
               temperature=0.5, max_tokens=9, schema={"type": "object"})
    assert r.data == {"answer": "ABC", "seed": 3}
    assert (seen["params"].temperature, seen["params"].max_tokens) == (0.5, 9)
    assert r.backend == "scripted" and r.model == "test-upper"
    assert m.totals.calls == 1 and m.totals.completion_tokens == r.usage.completion_tokens > 0


@pytest.mark.parametrize("messages, field", [
    ([], "messages"),
    ([{"role": "robot", "content": "x"}], "messages[0].role"),
    ([{"role": "user", "content": 3}], "messages[0].content"),
])
def test_bad_messages(messages, field):
    m = ScriptedChatModel(lambda msgs, p: "x")
    with pytest.raises(InputError) as exc:
        m.chat(messages)
    assert exc.value.field == field


@pytest.mark.parametrize("kw, field", [({"temperature": 3.0}, "temperature"), ({"max_tokens": 0}, "max_tokens"),
                                      ({"seed": -1}, "seed"), ({"schema": "x"}, "schema")])
def test_bad_params(kw, field):
    m = ScriptedChatModel(lambda msgs, p: "x")
    with pytest.raises(InputError) as exc:
        m.chat([{"role": "user", "content": "x"}], **kw)
    assert exc.value.field == field


def test_response_round_trips_through_dict():
    r = ChatResponse("t", "openai", "m", Usage(3, 4), 0.5, attempts=2, json_mode="json_schema")
    back = ChatResponse.from_dict(r.to_dict())
    assert back == r and back.usage.total_tokens == 7
