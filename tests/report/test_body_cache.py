"""The report's cache of compressed debate bodies (``DIR/report_bodies.json``): a report written with it, cold
or warm, is the same bytes as one written without it; a warm report reads no transcript; a damaged, stale
or tampered cache is never trusted (the bodies are rendered again, the file rewritten)."""

from __future__ import annotations

import base64
import gzip
import json
import os

import pytest

from fairarena.report.bodycache import FILE, FORMAT, BodyCache, Packed, _check, code_digest
from fairarena.report.html import BodyPacker, render_html


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A scripted 16-debate study (4 cohorts x 2 frameworks x 2 opponents), its traces cached."""
    from fairarena.study.analysis import load_traces
    from fairarena.study.design import preset, to_toml
    from fairarena.study.store import run_study

    root = tmp_path_factory.mktemp("bodies") / "study"
    cfg = preset("tiny")
    cfg = type(cfg)(**{**cfg.model_dump(), "cohorts": 4, "name": "bodies"})
    run_study(cfg, to_toml(cfg), root)
    load_traces(root)
    return root


def _page(root, monkeypatch, **kw):
    """The report's HTML and how many transcripts the report's debate bodies read (in this process: one
    process unless ``jobs`` says otherwise, as a child's reads are not counted here)."""
    import fairarena.study.analysis as an

    kw.setdefault("jobs", 1)
    reads = []
    real = an.read_transcript
    monkeypatch.setattr(an, "read_transcript", lambda r, rec: reads.append(rec["key"]) or real(r, rec))
    page = render_html(an.build_duel_report(root, **kw))
    monkeypatch.setattr(an, "read_transcript", real)
    return page, len(reads)


def test_cached_and_uncached_reports_are_the_same_bytes_and_a_warm_one_reads_no_transcript(study, monkeypatch):
    (study / FILE).unlink(missing_ok=True)
    plain, n_plain = _page(study, monkeypatch, body_cache=False)
    assert not (study / FILE).exists()
    cold, n_cold = _page(study, monkeypatch)
    data = json.loads((study / FILE).read_text())
    assert data["format"] == FORMAT and data["code"] == code_digest() and len(data["bodies"]) == 16
    warm, n_warm = _page(study, monkeypatch)
    assert n_plain == n_cold == 16 and n_warm == 0
    assert plain.count('data-z="') == 16
    assert cold == plain and warm == plain
    # the cached body is the page's body: it inflates to the debate's instance and transcript
    key, (fp, raw, z, _) = next(iter(data["bodies"].items()))
    html = gzip.decompress(base64.b64decode(z)).decode("utf-8")
    assert len(html.encode()) == raw and "Problem: capacity" in html and f'data-z="{z}"' in plain


def test_a_damaged_cache_file_is_ignored_and_rewritten(study, monkeypatch):
    plain, _ = _page(study, monkeypatch, body_cache=False)
    for damage in (lambda t: t[: len(t) // 2], lambda t: "[]", lambda t: "\x00garbage",
                   lambda t: t.replace(f'"format":{FORMAT}', '"format":99')):
        (study / FILE).unlink(missing_ok=True)
        _page(study, monkeypatch)                                     # a sound cache
        path = study / FILE
        path.write_text(damage(path.read_text()))
        page, reads = _page(study, monkeypatch)
        assert page == plain and reads == 16                          # not trusted: every body rendered again
        assert len(BodyCache(path).entries) == 16 and BodyCache(path).rejected == 0   # rewritten, sound


def test_damaged_tampered_or_stale_entries_are_rendered_again(study, monkeypatch):
    plain, _ = _page(study, monkeypatch, body_cache=False)
    (study / FILE).unlink(missing_ok=True)
    _page(study, monkeypatch)
    path = study / FILE
    data = json.loads(path.read_text())
    keys = sorted(data["bodies"])
    evil = base64.b64encode(gzip.compress(b"<b>not this debate</b>", mtime=0)).decode()
    b = data["bodies"]
    b[keys[0]][2] = evil                                              # another body, old checksum
    b[keys[1]][2] = '"><script>alert(1)</script>'                      # markup, with a matching checksum
    b[keys[1]][3] = _check(keys[1], b[keys[1]][0], b[keys[1]][1], b[keys[1]][2])
    b[keys[2]] = [b[keys[2]][0], -1, b[keys[2]][2], b[keys[2]][3]]    # not a size
    b[keys[3]] = {"z": "x"}                                           # not an entry
    path.write_text(json.dumps(data))
    tr = study / "debates" / keys[4][:2] / f"{keys[4]}.jsonl"         # a transcript touched after caching
    st = os.stat(tr)
    os.utime(tr, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    cache = BodyCache(path)
    assert cache.rejected == 4 and len(cache.entries) == 12
    page, reads = _page(study, monkeypatch)
    assert page == plain and reads == 5 and "not this debate" not in page and "alert(1)" not in page
    assert BodyCache(path).rejected == 0 and len(BodyCache(path).entries) == 16


def test_a_cache_of_other_code_is_not_used(tmp_path):
    path = tmp_path / FILE
    c = BodyCache(path, code="a" * 64)
    p = BodyPacker().pack([])
    c.put("k", "sha:1:2", p)
    assert c.save() and BodyCache(path, code="a" * 64).get("k", "sha:1:2") == p
    other = BodyCache(path, code="b" * 64)
    assert other.entries == {} and other.rejected == 1 and other.get("k", "sha:1:2") is None
    assert BodyCache(path, code="a" * 64).get("k", "sha:1:3") is None          # another transcript
    assert Packed(p.raw, p.z) == p and gzip.decompress(base64.b64decode(p.z)) == b""


def _fresh(study, tmp_path, name="fresh"):
    """A copy of the study as a run leaves it: neither ``traces.json`` nor the body cache."""
    import shutil

    from fairarena.study.analysis import TRACES

    root = tmp_path / name
    shutil.copytree(study, root)
    (root / TRACES).unlink(missing_ok=True)
    (root / FILE).unlink(missing_ok=True)
    return root


@pytest.mark.parametrize("kw", [{}, {"body_cache": False}, {"details": 5}])
def test_a_fresh_studys_report_reads_each_transcript_once_and_is_the_same_bytes(study, tmp_path, monkeypatch, kw):
    from fairarena.study.analysis import TRACES, load_traces

    (study / FILE).unlink(missing_ok=True)
    plain, _ = _page(study, monkeypatch, **{**kw, "body_cache": False})    # traces cached: no single pass
    root = _fresh(study, tmp_path)
    page, reads = _page(root, monkeypatch, **kw)
    assert page.replace(str(root), "DIR") == plain.replace(str(study), "DIR")
    assert reads == 16                       # before: 32 (once for the traces, once for the bodies)
    assert (root / FILE).exists() == kw.get("body_cache", True)
    # traces.json written by the single pass is the file load_traces itself writes, and its traces
    written = (root / TRACES).read_bytes()
    assert json.loads(written)["traces"] == load_traces(root, cache=False) and len(json.loads(written)["traces"]) == 16
    (root / TRACES).unlink()
    load_traces(root)
    assert (root / TRACES).read_bytes() == written
    # a second report: warm, reads nothing, same bytes
    if kw.get("body_cache", True) and "details" not in kw:
        again, n = _page(root, monkeypatch, **kw)
        assert again == page and n == 0


def test_a_stale_traces_file_is_recomputed_by_the_single_pass(study, tmp_path, monkeypatch):
    from fairarena.study.analysis import TRACES, load_traces

    root = _fresh(study, tmp_path, "stale")
    (root / TRACES).write_text(json.dumps({"digest": "0" * 64, "traces": []}))
    page, reads = _page(root, monkeypatch)
    assert reads == 16 and json.loads((root / TRACES).read_text())["traces"] == load_traces(root, cache=False)
    (study / FILE).unlink(missing_ok=True)
    plain, _ = _page(study, monkeypatch, body_cache=False)
    assert page.replace(str(root), "DIR") == plain.replace(str(study), "DIR")


def test_the_report_restores_the_garbage_collectors_state(study, tmp_path):
    """The collector is paused while a report is built, and left as it was found, also on an error."""
    import gc

    from fairarena.errors import InputError
    from fairarena.study.analysis import build_duel_report

    assert gc.isenabled()
    build_duel_report(study, details=0)
    assert gc.isenabled()
    with pytest.raises((InputError, OSError)):
        build_duel_report(tmp_path / "missing")
    assert gc.isenabled()
    gc.disable()
    try:
        build_duel_report(study, details=0)
        assert not gc.isenabled()
    finally:
        gc.enable()


needs_fork = pytest.mark.skipif(not hasattr(os, "fork") or not os.sys.platform.startswith("linux"),
                                reason="the report's second process is forked (Linux)")


@needs_fork
@pytest.mark.parametrize("kw", [{}, {"body_cache": False}, {"details": 5}])
def test_a_second_process_builds_the_same_bytes_cold_warm_and_fresh(study, tmp_path, monkeypatch, kw):
    """jobs=2: the bodies are built by a forked child while this process analyses, and the two densest
    figures drawn by another; the page, the body cache and traces.json are the bytes one process writes."""
    from fairarena.study.analysis import TRACES

    one = _fresh(study, tmp_path, "one")
    two = _fresh(study, tmp_path, "two")
    for _ in ("fresh", "warm"):
        a, _n = _page(one, monkeypatch, **kw)
        b, reads = _page(two, monkeypatch, **{**kw, "jobs": 2})
        assert b.replace(str(two), "DIR") == a.replace(str(one), "DIR")
        assert (two / TRACES).read_bytes() == (one / TRACES).read_bytes()
        assert (two / FILE).exists() == (one / FILE).exists() == kw.get("body_cache", True)
        if (one / FILE).exists():
            assert BodyCache(two / FILE).entries == BodyCache(one / FILE).entries
    (two / FILE).unlink(missing_ok=True)                  # cold: traces cached, no bodies
    b, reads = _page(two, monkeypatch, **{**kw, "jobs": 2})
    assert b.replace(str(two), "DIR") == a.replace(str(one), "DIR") and reads == 0   # all read by the child


@needs_fork
def test_a_failing_child_costs_time_not_results(study, tmp_path, monkeypatch):
    """A child that dies (here: every fork's child exits at once) leaves the work to this process: the
    same page."""
    import fairarena.report.background as bg

    root = _fresh(study, tmp_path)
    plain, _ = _page(root, monkeypatch)
    (root / FILE).unlink()
    monkeypatch.setattr(bg, "_child", lambda fn, parent, w: os._exit(3))
    page, reads = _page(root, monkeypatch, jobs=2)
    assert page == plain and reads == 16


@needs_fork
def test_a_fresh_analysis_reads_half_its_transcripts_in_a_second_process_to_the_same_numbers(study, tmp_path,
                                                                                              monkeypatch):
    """jobs=2 on a fresh folder: this process reads the first half of the transcripts, a forked child the
    second; the statistics, traces.json and copies.json are those of one process."""
    import fairarena.study.analysis as an
    from fairarena.study.noise import TRANSCRIPT_ROWS

    monkeypatch.setattr(an, "SPLIT_AT", 2)        # the 16-debate study is split (real studies: 200 or more)
    roots = {jobs: _fresh(study, tmp_path, f"jobs{jobs}") for jobs in (1, 2)}
    docs, reads = {}, {}
    real = an.read_transcript
    for jobs, root in roots.items():
        (root / TRANSCRIPT_ROWS).unlink(missing_ok=True)
        n = []
        monkeypatch.setattr(an, "read_transcript", lambda r, rec: n.append(1) or real(r, rec))
        doc = an.analyse_study(root, jobs=jobs).to_dict()
        monkeypatch.setattr(an, "read_transcript", real)
        doc.pop("seconds", None)
        docs[jobs], reads[jobs] = json.dumps(doc, sort_keys=True, default=str).replace(str(root), "DIR"), len(n)
    assert docs[1] == docs[2] and reads == {1: 16, 2: 8}
    for name in (an.TRACES, TRANSCRIPT_ROWS):
        assert (roots[1] / name).read_bytes() == (roots[2] / name).read_bytes()
