"""The study package: a folder written before the study left ``fairarena.experiments`` still resumes with nothing
rerun and gives the same statistics; the old module paths are the new modules."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
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
        want = _legacy_directions(json.load(fh))
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def _legacy_directions(doc):
    """The stored statistics with their directions read as the package reads a file written before the one
    direction vocabulary: ``higher`` / ``lower`` (each cell's ``direction``, the ``directions`` map and each
    noise figure's ``claim``) through :func:`fairarena.stats.canonical_direction`, the legacy read path; the
    stored file stays as it was written, and nothing else of it is changed."""
    from fairarena.stats import canonical_direction

    if isinstance(doc, list):
        return [_legacy_directions(x) for x in doc]
    if not isinstance(doc, dict):
        return doc
    out = {}
    for k, v in doc.items():
        if k in ("direction", "claim") and v in ("higher", "lower"):
            out[k] = canonical_direction(v)
        elif k == "directions" and isinstance(v, dict):
            out[k] = {m: canonical_direction(d) for m, d in v.items()}
        else:
            out[k] = _legacy_directions(v)
    return out


MOVED = {"study": "design", "study_store": "store", "study_analysis": "analysis", "study_council": "council",
         "study_council_analysis": "council_analysis", "study_mechanisms": "mechanisms", "study_noise": "noise",
         "study_plan": "plan", "study_traces": "traces", "study_cli": "cli", "study_demo": "demo"}


def test_an_old_module_path_is_the_new_module():
    import importlib

    for old, new in MOVED.items():
        assert importlib.import_module(f"fairarena.experiments.{old}") is importlib.import_module(
            f"fairarena.study.{new}"), old
    from fairarena.experiments.study import StudyConfig, preset  # as before the move
    from fairarena.study import StudyConfig as new_config, preset as new_preset

    assert (StudyConfig, preset) == (new_config, new_preset)


def test_old_paths_import_without_a_warning_and_the_package_loads_nothing_heavy():
    code = "; ".join(["import sys", "import fairarena.study", "assert 'pydantic' not in sys.modules",
                      "assert 'numpy' not in sys.modules",
                      *(f"import fairarena.experiments.{m}" for m in MOVED),
                      "from fairarena.experiments.study import preset; preset('tiny')",
                      "from fairarena.experiments.study_store import run_study, load_results"])
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def _records(tmp_path, name, **overrides):
    from fairarena.study import load_results, preset, run_study, to_toml

    cfg = preset(name, **overrides)
    out = tmp_path / name
    run_study(cfg, to_toml(cfg), out)
    return load_results(out)


def test_every_record_matches_the_schema(tmp_path):
    import pytest

    from fairarena.study.records import check_record, record_kind

    duel = _records(tmp_path, "tiny", cohorts=1, mechanisms=["nash", "pf-lottery"])
    council = _records(tmp_path, "council", cohorts=1, rounds=1)
    tourism = _records(tmp_path, "tourism-small", cohorts=1)
    assert [len(duel), len(council), len(tourism)] == [4, 1, 1]
    assert {record_kind(r) for r in duel} == {"duel"} and record_kind(council[0]) == record_kind(tourism[0]) == "council"
    assert all("mechanisms" in r for r in duel)
    for r in duel + council + tourism:
        check_record(r)
    with open(V1 / "folder" / "results.jsonl") as fh:
        for line in fh:
            check_record(json.loads(line))
    bad = dict(duel[0], extra_field=1)
    with pytest.raises(ValueError, match="extra_field"):
        check_record(bad)
    bad = {**council[0], "members": "utilitarian"}
    with pytest.raises(ValueError, match="members"):
        check_record(bad)


def _doc_blocks(heading: str) -> tuple[str, str]:
    text = (Path(__file__).resolve().parents[2] / "docs" / "study.md").read_text()
    section = text.split(heading, 1)[1].split("\n### ", 1)[0]
    # the commands are a console block ('$ fairarena ...' lines, which tests/test_docs_examples.py also runs)
    shell = section.split("```console\n", 1)[1].split("```", 1)[0]
    shell = "\n".join(line[2:] for line in shell.splitlines() if line.startswith("$ "))
    python = section.split("```python\n", 1)[1].split("```", 1)[0]
    return shell, python


def test_the_docs_load_example_runs(tmp_path):
    import pandas as pd

    shell, python = _doc_blocks("### In Python: `fairarena.study.load`")
    for line in shell.strip().splitlines():
        args = line.split("#")[0].split()
        assert args[:2] == ["fairarena", "study"], line
        r = subprocess.run([*CLI, *args[2:]], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
    proc = subprocess.run([sys.executable, "-c", python], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0, proc.stderr
    assert "table2" in proc.stdout and "final_joint_esg" in proc.stdout

    import fairarena.study

    data = fairarena.study.load(tmp_path / "tiny-study")
    assert isinstance(data.results, pd.DataFrame) and len(data.results) == 8      # the tiny preset's debates
    assert set(data.statistics.metric) >= {"esg", "gini"} and len(data.statistics) == 2 * 2 * 7
    assert {"table2", "table3"} <= set(data.tables)
    t2 = data.tables["table2"]
    # a cell of Table 2 is the statistics' mean of A for that cell, unrounded
    cell = data.statistics.query("opponent == 'baseline' and framework == 'utilitarian' and metric == 'esg'")
    assert t2[("ESG (Util)", "A vs B", "A")].iloc[0] == cell.mean_a.iloc[0]


def test_load_refuses_a_missing_folder(tmp_path):
    import pytest

    import fairarena.study
    from fairarena.errors import InputError

    with pytest.raises(InputError):
        fairarena.study.load(tmp_path / "nothing")


def test_fsutil_writes_durably_unless_told_and_its_lock_names_the_holder(tmp_path, monkeypatch):
    import pytest

    from fairarena import fsutil

    synced = []
    monkeypatch.setattr(fsutil.os, "fsync", lambda fd: synced.append(fd))
    fsutil.atomic_write_bytes(tmp_path / "a", b"x")
    fsutil.atomic_write_bytes(tmp_path / "b", b"y", durable=False)
    assert len(synced) == 1 and (tmp_path / "b").read_bytes() == b"y"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []   # no temporary left
    with fsutil.folder_lock(tmp_path / "st", "study run") as holder:
        assert json.loads((tmp_path / "st" / ".lock").read_text()) == holder
        code = ("from pathlib import Path; from fairarena import fsutil\n"
                f"with fsutil.folder_lock(Path({str(tmp_path / 'st')!r}), 'x'): pass")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert r.returncode != 0 and f"pid {holder['pid']}" in r.stderr and "study run" in r.stderr
    with pytest.raises(Exception):   # a file where the folder should be
        (tmp_path / "f").write_text("")
        with fsutil.folder_lock(tmp_path / "f", "x"):
            pass


def test_fsutil_json_default_gives_numpy_scalars_their_python_value():
    import numpy as np

    from fairarena.fsutil import json_default

    assert json.dumps([np.bool_(True), np.int64(3), np.float32(0.5), np.arange(2)], default=json_default) == \
        "[true, 3, 0.5, [0, 1]]"
