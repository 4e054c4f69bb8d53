"""Corpus and chunking (no extra needed)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from fairarena.errors import InputError
from fairarena.rag.chunking import chunk_document, chunk_text, count_tokens, tokenize
from fairarena.rag.corpus import FRAMEWORKS, Document, builtin_documents, load_corpus, load_user_documents

CANON = {"utilitarian": "Mill", "egalitarian": "Dworkin", "rawlsian": "Rawls", "prioritarian": "Parfit",
         "libertarian": "Nozick", "care": "Gilligan"}


def test_builtin_corpus_has_one_document_per_framework_citing_its_source():
    docs = builtin_documents()
    assert [d.framework for d in docs] == list(FRAMEWORKS)
    for d in docs:
        assert CANON[d.framework] in d.text
        assert "scarce medical resources" in d.text
        assert 400 <= len(d.text.split()) <= 1500


def test_tokeniser_is_documented_regex():
    assert tokenize("Rawls's veil, 2x.") == ["Rawls", "'", "s", "veil", ",", "2x", "."]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 400), size=st.integers(2, 60), data=st.data())
def test_chunks_cover_text_with_exact_overlap(n, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    words = [f"w{i}" for i in range(n)]
    text = " ".join(words)
    chunks = chunk_text(text, size, overlap)
    if n == 0:
        assert chunks == []
        return
    toks = [tokenize(text[a:b]) for a, b, _ in chunks]
    assert toks[0][0] == "w0" and toks[-1][-1] == f"w{n - 1}"
    assert all(len(t) <= size for t in toks) and all(len(t) == k for t, (_, _, k) in zip(toks, chunks))
    for prev, nxt in zip(toks, toks[1:]):
        assert len(prev) == size
        assert prev[size - overlap:] == nxt[:overlap]  # exactly `overlap` tokens shared
    # nothing skipped: every word appears in some chunk
    assert set().union(*map(set, toks)) == set(words)


def test_default_chunking_of_the_corpus():
    doc = builtin_documents()[2]
    chunks = chunk_document(doc)
    assert chunks[0].n_tokens == 512 and all(c.n_tokens <= 512 for c in chunks)
    assert [c.id for c in chunks] == [f"rawlsian/rawlsian#{i}" for i in range(len(chunks))]
    assert all(doc.text[c.start:c.end] == c.text for c in chunks)
    assert count_tokens(doc.text) == 512 + sum(c.n_tokens - 64 for c in chunks[1:])


@pytest.mark.parametrize("size, overlap, field", [(0, 0, "chunk_size"), (10, 10, "chunk_overlap"), (10, -1, "chunk_overlap")])
def test_bad_chunk_params(size, overlap, field):
    with pytest.raises(InputError) as exc:
        chunk_text("a b c", size, overlap)
    assert exc.value.field == field


def test_user_documents_per_framework(tmp_path):
    (tmp_path / "rawlsian").mkdir()
    (tmp_path / "rawlsian" / "notes.md").write_text("Justice as fairness for the ward.", encoding="utf-8")
    (tmp_path / "care" / "sub").mkdir(parents=True)
    (tmp_path / "care" / "sub" / "a.txt").write_text("Listen to the family.", encoding="utf-8")
    (tmp_path / "care" / "empty.txt").write_text("   ", encoding="utf-8")
    docs = load_user_documents(tmp_path)
    assert [(d.framework, d.name) for d in docs] == [("care", "user:sub/a.txt"), ("rawlsian", "user:notes.md")]
    assert len(load_corpus([tmp_path])) == 8


@pytest.mark.parametrize("layout, fragment", [
    ({"stoic/x.md": "x"}, "one of utilitarian"),
    ({"care/x.pdf": "x"}, "plain text or markdown"),
])
def test_bad_user_corpus(tmp_path, layout, fragment):
    for rel, text in layout.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    with pytest.raises(InputError, match=fragment):
        load_user_documents(tmp_path)
    with pytest.raises(InputError, match="existing directory"):
        load_user_documents(tmp_path / "nope")


def test_document_digest_changes_with_text():
    assert Document("care", "a", "x", "builtin").digest != Document("care", "a", "y", "builtin").digest


@pytest.mark.parametrize("data, fragment", [
    (b"Listen\x00to the family", "NUL bytes"),
    (b"caf\xe9 latte", "invalid byte at offset 3"),
])
def test_binary_or_non_utf8_user_documents_are_one_line_errors(tmp_path, data, fragment):
    (tmp_path / "care").mkdir()
    (tmp_path / "care" / "x.txt").write_bytes(data)
    with pytest.raises(InputError, match=fragment) as exc:
        load_user_documents(tmp_path)
    assert exc.value.field == "corpus_dir"


def test_a_byte_order_mark_is_not_part_of_the_text(tmp_path):
    (tmp_path / "care").mkdir()
    (tmp_path / "care" / "x.md").write_bytes("\ufeffListen to the family.".encode("utf-8"))
    assert load_user_documents(tmp_path)[0].text == "Listen to the family."


def test_an_oversized_user_document_is_refused_before_reading(tmp_path, monkeypatch):
    import fairarena.rag.corpus as corpus
    monkeypatch.setattr(corpus, "MAX_DOCUMENT_BYTES", 1 << 20)
    (tmp_path / "care").mkdir()
    with open(tmp_path / "care" / "big.txt", "wb") as f:
        f.truncate((1 << 20) + 1)  # sparse: nothing is written
    with pytest.raises(InputError, match="at most 1 MB"):
        load_user_documents(tmp_path)
