"""Embedder specs come from one registry (EMBEDDERS); no model is loaded here."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.errors import InputError
from fairarena.rag.embedders import EMBEDDERS, OpenAIEmbedder, make_embedder


@pytest.mark.parametrize("spec, fragment", [
    ("bogus", "minilm | st:/path/to/model | openai:MODEL@BASE_URL"),
    ("st:", "st:/path/to/model"),
    ("minilm:extra", "minilm (no argument)"),
    ("openai:m@ftp://x", "http:// or https://"),
])
def test_bad_embedder_specs_are_input_errors(spec, fragment):
    with pytest.raises(InputError) as exc:
        make_embedder(spec)
    assert fragment in str(exc.value)


def test_openai_embedder_takes_the_spec_timeout():
    e = make_embedder("openai:nomic@http://127.0.0.1:1/v1?timeout=7")
    assert isinstance(e, OpenAIEmbedder) and e.timeout == 7.0 and e.base_url == "http://127.0.0.1:1/v1"


def test_an_embedder_registered_outside_is_usable_by_spec():
    class Ones:
        spec = "ones"

        def embed(self, texts):
            return np.ones((len(texts), 3))

    EMBEDDERS.add("ones", lambda rest, spec: Ones(), form="ones")
    try:
        assert make_embedder("ones").embed(["a", "b"]).shape == (2, 3)
        with pytest.raises(InputError, match="ones"):
            make_embedder("nope")
    finally:
        EMBEDDERS.remove("ones")
