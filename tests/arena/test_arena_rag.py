"""Retrieval inside a debate: a real Chroma store and the real MiniLM embedder (the 'rag' extra)."""

from __future__ import annotations

import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("chromadb")

from fairarena.arena import DebateConfig, build_agent, read_transcript, run_debate  # noqa: E402
from fairarena.triage import sample_cohort  # noqa: E402

pytestmark = pytest.mark.rag


def test_aligned_and_adversarial_rag_retrieve_their_own_documents(tmp_path):
    cohort = sample_cohort(2, "tight")
    kw = dict(rag="on", rag_dir=tmp_path / "rag")
    a = build_agent("A", "aligned:rawlsian", "scripted", cohort, **kw)
    b = build_agent("B", "adversarial-rag", "scripted", cohort, **kw)
    assert a.retriever is not None and b.retriever is not None and a.rag_note is None
    res = run_debate(cohort, a, b, DebateConfig(rounds=2, top_k=5), transcript=tmp_path / "t.jsonl")
    assert res.status == "ok"
    turns = [e for e in read_transcript(tmp_path / "t.jsonl") if e["type"] == "turn"]
    for t in turns:
        ids = [c["id"] for c in t["retrieved"]]
        assert 1 <= len(ids) <= 5
        want = "rawlsian/" if t["agent"] == "A" else "adversarial/"
        assert all(i.startswith(want) for i in ids), ids
        user = t["messages"][1]["content"]
        assert all(f'<reference id="{i}">' in user for i in ids)
        scores = [c["score"] for c in t["retrieved"]]
        assert scores == sorted(scores, reverse=True)
    # the biased research documents are marked as such where they enter a prompt
    b_user = next(t for t in turns if t["agent"] == "B")["messages"][1]["content"]
    assert "RESEARCH/ADVERSARIAL document" in b_user
