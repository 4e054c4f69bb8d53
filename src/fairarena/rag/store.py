"""Vector store: Chroma persisted on disk, always with the project's own embedding function
(Chroma's default ONNX model is never instantiated, so it never downloads anything).

One collection holds every chunk with its framework as metadata; a query is filtered to one
framework. The collection records the embedder spec and a fingerprint of the corpus and chunking;
reopening with the same corpus reuses the stored vectors, a changed corpus rebuilds them, and a
different embedder is an error (vectors from two models are not comparable).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from fairarena.errors import InputError
from fairarena.rag.chunking import DEFAULT_CHUNK_TOKENS, DEFAULT_OVERLAP, Chunk, chunk_corpus
from fairarena.rag.corpus import Document
from fairarena.rag.embedders import Embedder, make_embedder

DEFAULT_TOP_K = 5
COLLECTION = "fairarena_corpus"


@dataclass(frozen=True)
class RetrievedChunk:
    id: str
    framework: str
    text: str
    score: float  # cosine similarity in [-1, 1]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "framework": self.framework, "score": round(self.score, 6)}


def _chroma_ef(embedder: Embedder) -> Any:
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

    class FairarenaEmbeddingFunction(EmbeddingFunction[Documents]):
        def __init__(self, inner: Embedder) -> None:
            self.inner = inner

        def __call__(self, input: Documents) -> Embeddings:
            return list(self.inner.embed(list(input)))

        @staticmethod
        def name() -> str:
            return "fairarena"

        def default_space(self) -> Any:
            return "cosine"

        def supported_spaces(self) -> Any:
            return ["cosine"]

        def get_config(self) -> dict[str, Any]:
            return {"embedder": self.inner.spec}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> "FairarenaEmbeddingFunction":
            return FairarenaEmbeddingFunction(make_embedder(config["embedder"]))

        def is_legacy(self) -> bool:
            return False

    return FairarenaEmbeddingFunction(embedder)


def corpus_fingerprint(chunks: Sequence[Chunk], embedder_spec: str, size: int, overlap: int) -> str:
    h = hashlib.sha256(json.dumps([embedder_spec, size, overlap], sort_keys=True).encode())
    for c in chunks:
        h.update(c.id.encode())
        h.update(hashlib.sha256(c.text.encode("utf-8")).digest())
    return h.hexdigest()[:32]


@dataclass
class VectorStore:
    path: Path
    embedder: Embedder
    chunk_size: int = DEFAULT_CHUNK_TOKENS
    chunk_overlap: int = DEFAULT_OVERLAP
    rebuilt: bool = False
    chunks: dict[str, Chunk] = field(default_factory=dict)
    _collection: Any = None

    @classmethod
    def open(cls, path: str | os.PathLike[str], documents: Iterable[Document], embedder: Embedder | str = "minilm",
             *, chunk_size: int = DEFAULT_CHUNK_TOKENS, chunk_overlap: int = DEFAULT_OVERLAP) -> "VectorStore":
        try:
            import chromadb
            from chromadb.config import Settings
        except ImportError as exc:  # pragma: no cover - depends on the extra
            raise InputError("rag", "chromadb", "the 'rag' extra: pip install 'fairarena[rag]'") from exc
        emb = make_embedder(embedder) if isinstance(embedder, str) else embedder
        chunks = chunk_corpus(list(documents), chunk_size, chunk_overlap)
        if not chunks:
            raise InputError("corpus", [], "at least one non-empty document")
        fp = corpus_fingerprint(chunks, emb.spec, chunk_size, chunk_overlap)
        store = cls(Path(path), emb, chunk_size, chunk_overlap, chunks={c.id: c for c in chunks})
        store.path.mkdir(parents=True, exist_ok=True)
        client = chromadb.PersistentClient(path=str(store.path),
                                           settings=Settings(anonymized_telemetry=False, allow_reset=False))
        ef = _chroma_ef(emb)
        existing = {c.name if hasattr(c, "name") else c for c in client.list_collections()}
        if COLLECTION in existing:
            col = client.get_collection(COLLECTION, embedding_function=ef)
            meta = col.metadata or {}
            if meta.get("embedder") != emb.spec:
                raise InputError("embedder", emb.spec,
                                 f"the embedder this store was built with ({meta.get('embedder')}); use another --rag-dir")
            if meta.get("fingerprint") == fp and col.count() == len(chunks):
                store._collection = col
                return store
            client.delete_collection(COLLECTION)
        col = client.create_collection(COLLECTION, embedding_function=ef, configuration={"hnsw": {"space": "cosine"}},
                                       metadata={"embedder": emb.spec, "fingerprint": fp,
                                                 "chunk_size": chunk_size, "chunk_overlap": chunk_overlap})
        vectors = emb.embed([c.text for c in chunks])
        col.add(ids=[c.id for c in chunks], documents=[c.text for c in chunks], embeddings=list(vectors),
                metadatas=[{"framework": c.framework, "document": c.document, "index": c.index,
                            "start": c.start, "end": c.end} for c in chunks])
        store._collection = col
        store.rebuilt = True
        return store

    def count(self) -> int:
        return int(self._collection.count())

    def query(self, text: str, framework: str | None = None, k: int = DEFAULT_TOP_K) -> list[RetrievedChunk]:
        if not isinstance(k, int) or k < 1:
            raise InputError("top_k", k, "a positive integer")
        vec = self.embedder.embed([text])
        res = self._collection.query(query_embeddings=list(vec), n_results=k,
                                     where={"framework": framework} if framework else None,
                                     include=["documents", "metadatas", "distances"])
        out = []
        for cid, doc, meta, dist in zip(res["ids"][0], res["documents"][0], res["metadatas"][0], res["distances"][0]):
            out.append(RetrievedChunk(cid, str(meta["framework"]), doc or "", 1.0 - float(dist)))
        return out
