"""``study tables`` writes its files as a set: all or none (fairarena.study.fileset)."""

from __future__ import annotations

import os

import pytest

from fairarena.study import fileset
from fairarena.study.fileset import write_file_set


def _names(folder):
    return sorted(p.name for p in folder.iterdir())


def test_writes_every_file_and_leaves_others(tmp_path):
    out = tmp_path / "tables"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    paths = write_file_set(out, {"a.md": "A\n", "b.csv": "x,y\n", "c.json": "{}\n"})
    assert [p.name for p in paths] == ["a.md", "b.csv", "c.json"]
    assert (out / "a.md").read_text() == "A\n" and (out / "b.csv").read_text() == "x,y\n"
    assert (out / "notes.txt").read_text() == "mine"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".fileset-")]


def test_failure_mid_set_leaves_the_old_set(tmp_path, monkeypatch):
    out = tmp_path / "tables"
    write_file_set(out, {"a.md": "old a", "b.csv": "old b", "c.json": "old c"})
    real = os.replace
    calls = []

    def flaky(src, dst):
        calls.append((str(src), str(dst)))
        if len(calls) == 4:   # a.md aside, a.md in, b.csv aside, then the new b.csv fails
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(fileset.os, "replace", flaky)
    with pytest.raises(OSError, match="No space"):
        write_file_set(out, {"a.md": "new a", "b.csv": "new b", "c.json": "new c", "d.tex": "new d"})
    monkeypatch.setattr(fileset.os, "replace", real)
    assert len(calls) > 4   # the rollback ran through the same function
    assert {n: (out / n).read_text() for n in _names(out)} == {"a.md": "old a", "b.csv": "old b", "c.json": "old c"}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".fileset-")]


def test_failure_writing_the_texts_touches_nothing(tmp_path, monkeypatch):
    out = tmp_path / "tables"
    write_file_set(out, {"a.md": "old a"})
    real_open = open
    n = []

    def failing_open(path, *a, **kw):
        if str(path).endswith("b.csv"):
            n.append(path)
            raise OSError(5, "Input/output error")
        return real_open(path, *a, **kw)

    monkeypatch.setattr("builtins.open", failing_open)
    with pytest.raises(OSError):
        write_file_set(out, {"a.md": "new a", "b.csv": "new b"})
    monkeypatch.setattr("builtins.open", real_open)
    assert n and _names(out) == ["a.md"] and (out / "a.md").read_text() == "old a"


def test_refuses_paths(tmp_path):
    with pytest.raises(ValueError):
        write_file_set(tmp_path / "o", {"../x.md": "no"})
    assert not (tmp_path / "o").exists() or _names(tmp_path / "o") == []


def test_study_tables_failure_keeps_previous_tables(tmp_path, monkeypatch):
    """End to end: a finished tiny study's tables, then a failure in the middle of rewriting them."""
    from fairarena.study.analysis import write_study_tables
    from fairarena.study.design import preset, to_toml
    from fairarena.study.store import run_study

    cfg = preset("tiny", cohorts=2, agent_a=["aligned:utilitarian"], opponents=["baseline"])
    run_study(cfg, to_toml(cfg), tmp_path / "s")
    out = tmp_path / "tables"
    first = write_study_tables(tmp_path / "s", out)
    assert len(first) >= 4
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real = os.replace
    count = []

    def flaky(src, dst):
        count.append(1)
        if len(count) == 3:
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(fileset.os, "replace", flaky)
    with pytest.raises(OSError):
        write_study_tables(tmp_path / "s", out)
    monkeypatch.setattr(fileset.os, "replace", real)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    again = write_study_tables(tmp_path / "s", out)
    assert sorted(p.name for p in again) == sorted(before)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before   # same study, same bytes
