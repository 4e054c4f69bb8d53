"""Retrieval-augmented alignment: a framework corpus, chunking, embedders and a Chroma vector store.

>>> from fairarena.rag import VectorStore, load_corpus          # doctest: +SKIP
>>> store = VectorStore.open("rag-index", load_corpus())         # doctest: +SKIP
>>> [c.id for c in store.query("veil of ignorance", "rawlsian")] # doctest: +SKIP
['rawlsian/rawlsian#0', 'rawlsian/rawlsian#1']

Everything except :mod:`fairarena.rag.corpus` and :mod:`fairarena.rag.chunking` needs the ``rag`` extra.
"""

from __future__ import annotations

from fairarena.lazy import lazy_exports

# name -> module; imported on first use, so importing the package loads nothing heavy
_LAZY = {
    "DEFAULT_CHUNK_TOKENS": "fairarena.rag.chunking",
    "DEFAULT_OVERLAP": "fairarena.rag.chunking",
    "Chunk": "fairarena.rag.chunking",
    "chunk_corpus": "fairarena.rag.chunking",
    "chunk_document": "fairarena.rag.chunking",
    "tokenize": "fairarena.rag.chunking",
    "FRAMEWORK_TITLES": "fairarena.rag.corpus",
    "FRAMEWORKS": "fairarena.rag.corpus",
    "Document": "fairarena.rag.corpus",
    "builtin_documents": "fairarena.rag.corpus",
    "load_corpus": "fairarena.rag.corpus",
    "load_user_documents": "fairarena.rag.corpus",
    "Embedder": "fairarena.rag.embedders",
    "OpenAIEmbedder": "fairarena.rag.embedders",
    "SentenceTransformerEmbedder": "fairarena.rag.embedders",
    "make_embedder": "fairarena.rag.embedders",
    "minilm_path": "fairarena.rag.embedders",
    "DEFAULT_TOP_K": "fairarena.rag.store",
    "RetrievedChunk": "fairarena.rag.store",
    "VectorStore": "fairarena.rag.store",
}

__all__ = [
    "DEFAULT_CHUNK_TOKENS", "DEFAULT_OVERLAP", "DEFAULT_TOP_K", "Chunk", "Document", "Embedder", "FRAMEWORKS",
    "FRAMEWORK_TITLES", "OpenAIEmbedder", "RetrievedChunk", "SentenceTransformerEmbedder", "VectorStore",
    "builtin_documents", "chunk_corpus", "chunk_document", "load_corpus", "load_user_documents",
    "make_embedder", "minilm_path", "tokenize",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
