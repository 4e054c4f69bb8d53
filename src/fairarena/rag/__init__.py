"""Retrieval-augmented alignment: a framework corpus, chunking, embedders and a Chroma vector store.

>>> from fairarena.rag import VectorStore, load_corpus          # doctest: +SKIP
>>> store = VectorStore.open("rag-index", load_corpus())         # doctest: +SKIP
>>> [c.id for c in store.query("veil of ignorance", "rawlsian")] # doctest: +SKIP
['rawlsian/rawlsian#0', 'rawlsian/rawlsian#1']

Everything except :mod:`fairarena.rag.corpus` and :mod:`fairarena.rag.chunking` needs the ``rag`` extra.
"""

from fairarena.rag.chunking import DEFAULT_CHUNK_TOKENS, DEFAULT_OVERLAP, Chunk, chunk_corpus, chunk_document, tokenize
from fairarena.rag.corpus import FRAMEWORK_TITLES, FRAMEWORKS, Document, builtin_documents, load_corpus, load_user_documents
from fairarena.rag.embedders import Embedder, OpenAIEmbedder, SentenceTransformerEmbedder, make_embedder, minilm_path
from fairarena.rag.store import DEFAULT_TOP_K, RetrievedChunk, VectorStore

__all__ = [
    "DEFAULT_CHUNK_TOKENS", "DEFAULT_OVERLAP", "DEFAULT_TOP_K", "Chunk", "Document", "Embedder", "FRAMEWORKS",
    "FRAMEWORK_TITLES", "OpenAIEmbedder", "RetrievedChunk", "SentenceTransformerEmbedder", "VectorStore",
    "builtin_documents", "chunk_corpus", "chunk_document", "load_corpus", "load_user_documents", "make_embedder",
    "minilm_path", "tokenize",
]
