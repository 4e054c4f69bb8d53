"""Backends and scripts live in Registry objects; a backend registered from outside parses its own spec."""

from __future__ import annotations

import pytest

from fairarena.errors import InputError
from fairarena.llm import BACKENDS, SCRIPTS, ModelSpec, build_model, parse_model_spec, register_script, scripts
from fairarena.llm.options import Option, seconds
from fairarena.llm.spec import register_backend, spec_forms
from fairarena.llm.wrappers import RetryingModel
from fairarena.registry import Registry


def test_the_shipped_backends_and_their_forms():
    assert isinstance(BACKENDS, Registry) and BACKENDS.names() == ("scripted", "openai", "llamacpp")
    assert BACKENDS.names(extra="llm") == ("openai",)
    forms = spec_forms()
    for name in BACKENDS:
        assert BACKENDS.entry(name).form in forms
    with pytest.raises(InputError) as exc:
        parse_model_spec("ollama:llama3")
    assert "scripted, openai, llamacpp" in str(exc.value) and "openai:MODEL[@" in str(exc.value)


def test_a_backend_registered_outside_parses_its_own_spec():
    seen = {}

    def parse(rest, spec):
        host, _, model = rest.partition("/")
        if not model:
            raise InputError("model", spec, "toy:HOST/MODEL")
        return ModelSpec("toy", model, f"toy://{host}")

    @register_backend("toy", description="a test backend", parse=parse,
                      options={"patience": Option(seconds, "how long", 2.0)}, form="toy:HOST/MODEL")
    def build(spec, opts):
        seen["opts"] = opts
        from fairarena.llm import ScriptedChatModel
        return ScriptedChatModel(lambda m, p: f"{spec.base_url} {opts['patience']:g}", name=spec.model)

    try:
        ms = parse_model_spec("toy:h1/m1?patience=5")
        assert ms == ModelSpec("toy", "m1", "toy://h1", (("patience", 5.0),))
        m = build_model(ms)
        assert m.chat([{"role": "user", "content": "x"}]).text == "toy://h1 5"
        assert m.find(RetryingModel) is not None  # retried unless the backend says otherwise
        assert build_model("toy:h1/m1", patience=3).chat([{"role": "user", "content": "x"}]).text == "toy://h1 3"
        with pytest.raises(InputError, match="toy:HOST/MODEL"):
            parse_model_spec("toy:h1")
        with pytest.raises(InputError, match="patience"):
            parse_model_spec("toy:h1/m1?speed=1")
        assert "toy:HOST/MODEL" in spec_forms()
        with pytest.raises(ValueError, match="already registered"):
            register_backend("toy", description="again")(build)
    finally:
        BACKENDS.remove("toy")
    with pytest.raises(InputError, match="known backend"):
        parse_model_spec("toy:h1/m1")


def test_scripts_are_a_registry_and_duplicates_are_refused():
    assert isinstance(SCRIPTS, Registry) and "echo" in SCRIPTS

    def one(messages, params):
        """Always one."""
        return "1"

    register_script("test-one", one)
    try:
        assert scripts()["test-one"] == "Always one." and SCRIPTS.entry("test-one").description == "Always one."
        with pytest.raises(ValueError, match="already registered"):
            register_script("test-one", lambda m, p: "2")
        register_script("test-one", lambda m, p: "2", replace=True)
        assert build_model("scripted:test-one").chat([{"role": "user", "content": "x"}]).text == "2"
    finally:
        SCRIPTS.remove("test-one")
    with pytest.raises(InputError, match="registered script"):
        build_model("scripted:test-one")
