"""Chunking: fixed-size windows of tokens with overlap (default 512 tokens, 64 overlap).

Tokeniser (documented, dependency-free, deterministic): a token is a maximal run of word characters
or a single non-space, non-word character — the regular expression ``\\w+|[^\\w\\s]`` (Unicode
aware). "Rawls's veil" is 4 tokens: ``Rawls``, ``'``, ``s``, ``veil``. English prose averages about
1.2 of these tokens per word; a sentence-piece/word-piece tokeniser gives somewhat more.

A chunk's text is the exact slice of the source text from its first to its last token, so chunks
quote the source verbatim. Chunk ``i`` starts at token ``i * (size - overlap)``; the last chunk
may be shorter; a text with no more than ``size`` tokens is a single chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fairarena.errors import InputError
from fairarena.rag.corpus import Document

TOKEN_RE = re.compile(r"\w+|[^\w\s]")
DEFAULT_CHUNK_TOKENS = 512
DEFAULT_OVERLAP = 64


@dataclass(frozen=True)
class Chunk:
    id: str          # "<framework>/<document>#<index>"
    framework: str
    document: str
    index: int
    text: str
    start: int       # character offsets into the document text
    end: int
    n_tokens: int


def tokenize(text: str) -> list[str]:
    return TOKEN_RE.findall(text)


def count_tokens(text: str) -> int:
    return sum(1 for _ in TOKEN_RE.finditer(text))


def chunk_text(text: str, size: int = DEFAULT_CHUNK_TOKENS, overlap: int = DEFAULT_OVERLAP) -> list[tuple[int, int, int]]:
    """(start_char, end_char, n_tokens) of each chunk of ``text``."""
    if not isinstance(size, int) or size < 1:
        raise InputError("chunk_size", size, "a positive integer number of tokens")
    if not isinstance(overlap, int) or not 0 <= overlap < size:
        raise InputError("chunk_overlap", overlap, f"an integer in [0, {size})")
    spans = [m.span() for m in TOKEN_RE.finditer(text)]
    if not spans:
        return []
    step = size - overlap
    out = []
    for first in range(0, len(spans), step):
        last = min(first + size, len(spans)) - 1
        out.append((spans[first][0], spans[last][1], last - first + 1))
        if last == len(spans) - 1:
            break
    return out


def chunk_document(doc: Document, size: int = DEFAULT_CHUNK_TOKENS, overlap: int = DEFAULT_OVERLAP) -> list[Chunk]:
    return [Chunk(f"{doc.framework}/{doc.name}#{i}", doc.framework, doc.name, i, doc.text[a:b], a, b, n)
            for i, (a, b, n) in enumerate(chunk_text(doc.text, size, overlap))]


def chunk_corpus(docs: list[Document], size: int = DEFAULT_CHUNK_TOKENS, overlap: int = DEFAULT_OVERLAP) -> list[Chunk]:
    return [c for d in docs for c in chunk_document(d, size, overlap)]
