"""The study package: a folder written before the study left ``fairarena.experiments`` still resumes with nothing
rerun and gives the same statistics; the old module paths are the new modules."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

CLI = [sys.executable, "-m", "fairarena.cli", "study"]
V1 = Path(__file__).resolve().parents[1] / "data" / "study_folder_v1"


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name not in (".lock", ".run.json", "runs.jsonl")}


def test_a_v1_folder_resumes_with_nothing_rerun_and_the_same_stats(tmp_path):
    # tests/data/study_folder_v1: `fairarena study run study.toml --out folder` (2 scripted debates, the tiny
    # preset on one cohort) before the move, and its `study stats --json` without the timing, gzipped
    folder = tmp_path / "folder"
    shutil.copytree(V1 / "folder", folder)
    before = _digests(folder)
    r = subprocess.run([*CLI, "run", str(V1 / "study.toml"), "--out", str(folder), "--json"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert (s["total"], s["skipped"], s["ran"], s["ok"], s["pending"]) == (2, 2, 0, 2, 0), s
    assert _digests(folder) == before   # the records and transcripts are untouched
    st = subprocess.run([*CLI, "stats", str(folder), "--json"], capture_output=True, text=True, timeout=300)
    assert st.returncode == 0, st.stderr
    got = json.loads(st.stdout)
    got.pop("seconds")
    with gzip.open(V1 / "stats.json.gz", "rt") as fh:
        want = json.load(fh)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
