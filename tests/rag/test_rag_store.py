"""A real Chroma store on disk with the real all-MiniLM-L6-v2 embedder (the 'rag' extra)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
chromadb = pytest.importorskip("chromadb")

from fairarena.errors import InputError  # noqa: E402
from fairarena.rag import FRAMEWORKS, SentenceTransformerEmbedder, VectorStore, load_corpus  # noqa: E402

pytestmark = pytest.mark.rag


@pytest.fixture(scope="module")
def embedder():
    return SentenceTransformerEmbedder()


@pytest.fixture(scope="module")
def store(tmp_path_factory, embedder):
    # Chroma's own default model must never be touched (it would try to download ONNX weights)
    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    original = ONNXMiniLM_L6_V2.__call__

    def boom(self, input):  # pragma: no cover - only runs if the test is about to fail
        raise AssertionError("Chroma's default embedding function was used")

    ONNXMiniLM_L6_V2.__call__ = boom
    try:
        yield VectorStore.open(tmp_path_factory.mktemp("chroma"), load_corpus(), embedder)
    finally:
        ONNXMiniLM_L6_V2.__call__ = original


def test_embedder_is_offline_minilm(embedder):
    import os
    v = embedder.embed(["veil of ignorance", "veil of ignorance", "ventilator"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert np.allclose(v[0], v[1]) and float(v[0] @ v[2]) < 0.9
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_long_chunks_are_embedded_whole(embedder):
    # the second half of a long text changes its vector (no silent truncation at 256 word pieces)
    head = "justice " * 300
    a, b = embedder.embed([head + "ventilator " * 300, head + "poetry " * 300])
    assert len(embedder.windows(head + "ventilator " * 300)) >= 2
    assert float(a @ b) < 0.99


def test_rawlsian_query_retrieves_rawlsian_chunks(store):
    assert store.rebuilt and store.count() == len(store.chunks)
    hits = store.query("Which allocation protects the worst-off patient behind a veil of ignorance? "
                       "Apply maximin and the difference principle.", k=5)
    assert len(hits) == 5
    n_rawls = sum(1 for c in store.chunks.values() if c.framework == "rawlsian")
    assert [h.framework for h in hits[:n_rawls]] == ["rawlsian"] * n_rawls  # every Rawlsian chunk ranks first
    assert hits[0].score > hits[-1].score
    assert all(h.id in store.chunks and h.text == store.chunks[h.id].text for h in hits)


@pytest.mark.parametrize("query, framework", [
    ("maximise the expected number of lives saved; the greatest good for the greatest number", "utilitarian"),
    ("vulnerable children, frail elderly people and those with dependants must not be abandoned", "care"),
    ("entitlements, rights as side constraints, no forced redistribution", "libertarian"),
])
def test_each_framework_is_retrievable(store, query, framework):
    assert store.query(query, k=5)[0].framework == framework


def test_framework_filter(store):
    hits = store.query("survival", "prioritarian", k=5)
    assert hits and {h.framework for h in hits} == {"prioritarian"}
    assert len(hits) == sum(1 for c in store.chunks.values() if c.framework == "prioritarian")


def test_reopen_reuses_and_changed_corpus_rebuilds(store, embedder, tmp_path):
    import shutil
    base = store.count()
    path = shutil.copytree(store.path, tmp_path / "copy")  # the persisted files alone make the store
    again = VectorStore.open(path, load_corpus(), embedder)
    assert not again.rebuilt and again.count() == base
    user = tmp_path / "docs"
    (user / "rawlsian").mkdir(parents=True)
    (user / "rawlsian" / "ward.md").write_text(
        "Ward rule of the Rawlsian committee: the zebra protocol gives the patient with the lowest need "
        "satisfaction the next free bed.", encoding="utf-8")
    grown = VectorStore.open(path, load_corpus([user]), embedder)
    assert grown.rebuilt and grown.count() == base + 1
    assert grown.query("zebra protocol for the next free bed", "rawlsian", k=1)[0].id == "rawlsian/user:ward.md#0"


def test_store_refuses_a_different_embedder(store, tmp_path):
    class Other:
        spec = "st:/other"

        def embed(self, texts):
            return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)

    with pytest.raises(InputError, match="embedder"):
        VectorStore.open(store.path, load_corpus(), Other())
    with pytest.raises(InputError, match="top_k"):
        store.query("x", k=0)
