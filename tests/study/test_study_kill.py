"""``kill -9`` of a real study run midway, then resume: every debate present exactly once, none rewritten,
none half-written."""

from __future__ import annotations

import hashlib
import json
import os
import signal

from fairarena.study.design import expand, load_study, to_toml
from fairarena.study.store import (
    finished_keys, load_results, read_records, record_path, run_study, study_status, transcript_path,
)

from .conftest import run_and_kill, tiny_design


def _check_complete(root, keys):
    """Every record on disk parses, names its key, and its transcript is there with the recorded hash."""
    recs = read_records(root, sorted(keys))
    for k, r in recs.items():
        assert r["key"] == k
        assert hashlib.sha256(transcript_path(root, k).read_bytes()).hexdigest() == r["transcript_sha256"]
    return recs


def test_sigkill_midway_then_resume(tmp_path):
    cfg = tiny_design(cohorts=3)
    study = tmp_path / "study.toml"
    study.write_text(to_toml(cfg))
    cfg, _ = load_study(study)
    tasks = expand(cfg)
    root = tmp_path / "st"
    assert run_and_kill(study, root, after=3, timeout=120, poll=0.005) == -signal.SIGKILL
    before = finished_keys(root)
    assert 3 <= len(before) < len(tasks), "the run finished before it was killed: make the study bigger"
    _check_complete(root, before)                        # what was there at the kill is whole
    stamps = {k: (os.stat(record_path(root, k)).st_ino, os.stat(transcript_path(root, k)).st_ino) for k in before}
    run = json.loads((root / ".run.json").read_text())
    assert run["status"] == "running"                    # the killed run never said it finished

    s = run_study(cfg, study.read_text(), root)
    assert s.ran == len(tasks) - len(before) and s.ok == len(tasks) and s.failed == 0
    after = finished_keys(root)
    assert after == {t.key for t in tasks}
    recs = _check_complete(root, after)
    assert all(r["status"] == "ok" for r in recs.values())
    # nothing finished before the kill was rerun or rewritten
    assert stamps == {k: (os.stat(record_path(root, k)).st_ino, os.stat(transcript_path(root, k)).st_ino)
                      for k in before}
    # exactly once: the results table, the folder listing, and no temporaries left
    rows = load_results(root)
    assert [r["key"] for r in rows] == [t.key for t in tasks]
    names = [p.name for p in (root / "debates").rglob("*")]
    assert not [n for n in names if n.startswith(".")]
    assert sorted(n for n in names if n.endswith(".json")) == sorted(f"{t.key}.json" for t in tasks)
    st = study_status(root)
    assert (st.ok, st.failed, st.pending) == (len(tasks), 0, 0)
