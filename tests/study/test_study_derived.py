"""What the analysis wants of each transcript (its trace, its copy measures) is derived by the worker that
ran the debate and kept by the run (``traces.json``, ``copies.json``): a study's first analysis reads no
transcript, and the caches are the bytes the analysis itself writes from the transcripts -- after a whole
run, a resumed one, or a run whose derivation failed."""

from __future__ import annotations

import json
import shutil

import pytest

from fairarena.study.analysis import TRACES, analyse_study
from fairarena.study.noise import TRANSCRIPT_ROWS

from .conftest import tiny_design


def _recomputed(root, tmp_path):
    """The two caches as the analysis writes them from the transcripts (on a copy without them)."""
    copy = shutil.copytree(root, tmp_path / "recomputed")
    for name in (TRACES, TRANSCRIPT_ROWS):
        (copy / name).unlink()
    analyse_study(copy)
    return {name: (copy / name).read_bytes() for name in (TRACES, TRANSCRIPT_ROWS)}


def _reads(monkeypatch):
    """Count every transcript the analysis opens."""
    import fairarena.study.analysis as an
    import fairarena.study.store as store

    n = []
    real = store.read_transcript
    counting = lambda root, rec: n.append(rec["key"]) or real(root, rec)   # noqa: E731
    monkeypatch.setattr(store, "read_transcript", counting)
    monkeypatch.setattr(an, "read_transcript", counting)
    return n


def test_a_run_leaves_the_analysis_caches_and_the_first_analysis_reads_no_transcript(tiny_run, tmp_path,
                                                                                      monkeypatch):
    cfg, root = tiny_run
    root = shutil.copytree(root, tmp_path / "study")
    have = {name: (root / name).read_bytes() for name in (TRACES, TRANSCRIPT_ROWS)}
    assert have == _recomputed(root, tmp_path)
    assert len(json.loads(have[TRACES])["traces"]) == 8
    reads = _reads(monkeypatch)
    an = analyse_study(root)
    assert reads == [] and an.status["ok"] == 8
    # the records carry nothing new: the derived values are not part of a debate's record
    rec = json.loads(next((root / "debates").glob("*/*.json")).read_text())
    assert "trace" not in rec and "copies" not in rec and not any(k.startswith("_") for k in rec)


def test_a_resumed_run_keeps_the_caches_right(tmp_path):
    from fairarena.study.design import to_toml
    from fairarena.study.store import run_study

    cfg = tiny_design()
    root = tmp_path / "study"
    run_study(cfg, to_toml(cfg), root, limit=3)
    first = json.loads((root / TRACES).read_text())
    assert len(first["traces"]) <= 3
    run_study(cfg, to_toml(cfg), root)                # 5 more: 3 transcripts read, 5 derived by the workers
    assert {name: (root / name).read_bytes() for name in (TRACES, TRANSCRIPT_ROWS)} == _recomputed(root, tmp_path)


def test_a_failing_derivation_costs_a_read_not_the_run(tmp_path, monkeypatch):
    from fairarena.study import kinds
    from fairarena.study.design import to_toml
    from fairarena.study.store import run_study

    def broken(record, transcript):
        raise RuntimeError("derivation bug")
    monkeypatch.setattr(kinds, "_resolve", lambda ref, real=kinds._resolve: broken if ref.endswith(":derive_duel")
                        else real(ref))
    cfg = tiny_design()
    root = tmp_path / "study"
    s = run_study(cfg, to_toml(cfg), root)
    assert s.ok == 8 and s.failed == 0
    assert {name: (root / name).read_bytes() for name in (TRACES, TRANSCRIPT_ROWS)} == _recomputed(root, tmp_path)


def test_a_failing_after_run_step_does_not_fail_the_run(tmp_path, monkeypatch):
    import fairarena.study.analysis as an
    from fairarena.study.design import to_toml
    from fairarena.study.store import run_study

    monkeypatch.setattr(an, "keep_derived", lambda *a: 1 / 0)
    cfg = tiny_design()
    s = run_study(cfg, to_toml(cfg), tmp_path / "study")
    assert s.ok == 8 and not (tmp_path / "study" / TRACES).exists()
    assert analyse_study(tmp_path / "study").status["ok"] == 8        # the analysis builds the caches itself


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_every_backend_derives_the_same(tiny_run, tmp_path, backend):
    from fairarena.study.design import to_toml
    from fairarena.study.store import run_study

    cfg, _ = tiny_run
    root = tmp_path / backend
    run_study(cfg, to_toml(cfg), root, backend=backend, workers=2)
    assert {name: (root / name).read_bytes() for name in (TRACES, TRANSCRIPT_ROWS)} == _recomputed(root, tmp_path)
