"""Damaged study folders: every reader says what is wrong in one line (exit 2), nothing damaged or misplaced is
counted, ``study status --repair`` quarantines and the next run redoes; honest run status in ``.run.json``."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys

import pytest

from fairarena.errors import InputError as StudyDamageError   # fairarena.study.store.StudyDamageError is one
from fairarena.study.design import expand, to_toml
from fairarena.study.store import (
    RESULTS, StudyRunError, finished_keys, load_results, read_records, record_path, run_study, study_status,
    transcript_path,
)

from .conftest import outcome, tiny_design

CLI = [sys.executable, "-m", "fairarena.cli", "study"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    cfg = tiny_design()
    root = tmp_path_factory.mktemp("damage") / "st"
    run_study(cfg, to_toml(cfg), root)
    return cfg, root


@pytest.fixture
def folder(pristine, tmp_path):
    cfg, root = pristine
    dst = tmp_path / "st"
    shutil.copytree(root, dst)
    return cfg, dst, expand(cfg)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300)


def _one_line_error(r: subprocess.CompletedProcess, *names: str) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    for n in names:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("text,what", [('{"format": 1, "design": {"na', "not valid JSON"),
                                       ("[]", "a JSON list"), ("{}", "no 'design'")])
def test_damaged_study_json_is_one_line_naming_it(folder, text, what):
    cfg, root, _ = folder
    (root / "study.json").write_text(text)
    with pytest.raises(StudyDamageError, match=what):
        study_status(root)
    line = _one_line_error(_cli("stats", str(root)), "study.json", what, "--force")
    assert str(root / "study.toml") in line
    # the same command refuses it without --force (naming the damage), and --force rewrites it, keeping debates
    r = _cli("run", str(root / "study.toml"), "--out", str(root), "--json")
    _one_line_error(r, "study.json", "--force")
    s = run_study(cfg, to_toml(cfg), root, force=True)
    assert (s.ran, s.ok) == (0, len(expand(cfg)))


def test_a_garbage_line_in_results_jsonl_is_rebuilt_not_a_crash(folder):
    cfg, root, tasks = folder
    want = [outcome(r) for r in load_results(root)]
    with open(root / RESULTS, "a") as fh:
        fh.write("{not json\n")
    assert [outcome(r) for r in load_results(root)] == want          # results.jsonl is derived: rebuilt
    assert len((root / RESULTS).read_text().splitlines()) == len(tasks)
    with open(root / RESULTS, "a") as fh:
        fh.write("garbage\n")
    s = run_study(cfg, to_toml(cfg), root)                            # resume
    assert (s.ran, s.ok) == (0, len(tasks))
    assert [outcome(r) for r in load_results(root)] == want


def _damage(root, key, rec):
    record_path(root, key).write_text(json.dumps(rec))
    (root / RESULTS).unlink(missing_ok=True)


@pytest.mark.parametrize("how", ["status_only", "string_metric", "string_round_metric", "not_an_object"])
def test_a_damaged_record_is_listed_never_counted_and_stats_name_it(folder, how):
    cfg, root, tasks = folder
    key = tasks[3].key
    rec = json.loads(record_path(root, key).read_text())
    if how == "status_only":
        rec = {"status": "ok"}
    elif how == "string_metric":
        rec["metrics"]["a"]["esg"] = "4.6"
    elif how == "string_round_metric":
        rec["rounds"][0]["b"]["metrics"]["gini"] = "x"
    else:
        rec = ["ok"]
    _damage(root, key, rec)
    st = study_status(root)
    assert (st.ok, st.pending) == (len(tasks) - 1, 1)
    assert [d["key"] for d in st.damaged] == [key]
    with pytest.raises(StudyDamageError, match=key):
        load_results(root)
    _one_line_error(_cli("stats", str(root)), f"{key}.json", "--repair")
    _one_line_error(_cli("stats", str(root), "--allow-partial"), f"{key}.json")
    r = _cli("status", str(root))
    assert r.returncode == 0 and f"damaged debates/{key[:2]}/{key}.json" in r.stdout and "--repair" in r.stdout


def test_a_misplaced_record_and_transcript_are_not_counted(folder, pristine):
    cfg, root, tasks = folder
    src, dst = tasks[0].key, tasks[2].key     # debate 0's files stored under debate 2's key
    shutil.copyfile(record_path(root, src), record_path(root, dst))
    shutil.copyfile(transcript_path(root, src), transcript_path(root, dst))
    (root / RESULTS).unlink()
    st = study_status(root)
    assert st.ok == len(tasks) - 1 and [d["key"] for d in st.damaged] == [dst]
    assert "misplaced" in st.damaged[0]["problem"]
    with pytest.raises(StudyDamageError, match="misplaced"):
        load_results(root)
    # the record's own key rewritten to match its file: its task still names the other debate
    rec = json.loads(record_path(root, dst).read_text())
    rec["key"] = rec["task"]["key"] = dst
    _damage(root, dst, rec)
    assert "misplaced" in study_status(root).damaged[0]["problem"]
    # the resume quarantines it and redoes the debate: the results are the uninterrupted run's
    s = run_study(cfg, to_toml(cfg), root)
    assert (s.ran, s.ok, s.quarantined) == (1, len(tasks), [f"debates/{dst[:2]}/{dst}.json"])
    assert [outcome(r) for r in load_results(root)] == [outcome(r) for r in load_results(pristine[1])]


def test_a_swapped_transcript_is_found_by_verify_and_at_resume(folder):
    cfg, root, tasks = folder
    key = tasks[1].key
    shutil.copyfile(transcript_path(root, tasks[0].key), transcript_path(root, key))
    assert study_status(root).ok == len(tasks)                        # plain status: the record alone
    st = study_status(root, verify=True)
    assert st.ok == len(tasks) - 1 and "transcript_sha256" in st.damaged[0]["problem"]
    s = run_study(cfg, to_toml(cfg), root)
    assert (s.ran, s.ok) == (1, len(tasks))
    assert study_status(root, verify=True).damaged == []


def test_status_repair_quarantines_and_the_next_run_redoes(folder, pristine):
    cfg, root, tasks = folder
    bad = [tasks[1].key, tasks[6].key]
    _damage(root, bad[0], {"status": "ok"})
    record_path(root, bad[1]).write_text('{"key": ')
    r = _cli("status", str(root), "--repair", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert sorted(d["key"] for d in out["quarantined"]) == sorted(bad) and "damaged" not in out
    assert out["pending"] == 2
    q = root / "quarantine"
    notes = [json.loads(x) for x in (q / "notes.jsonl").read_text().splitlines()]
    assert sorted(n["key"] for n in notes) == sorted(bad) and all(n["problem"] for n in notes)
    assert sorted(p.suffix for p in q.iterdir() if p.name != "notes.jsonl") == [".json", ".json", ".jsonl", ".jsonl"]
    assert not (finished_keys(root) & set(bad))
    s = run_study(cfg, to_toml(cfg), root)
    assert (s.ran, s.ok) == (2, len(tasks))
    assert [outcome(r) for r in load_results(root)] == [outcome(r) for r in load_results(pristine[1])]


def test_killed_run_reads_as_killed_and_is_kept_by_the_next_run(folder):
    from fairarena.fsutil import run_state

    cfg, root, tasks = folder
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    manifest = {"pid": dead.pid, "host": socket.gethostname(), "command": "study run",
                "started": "2026-01-01T00:00:00+00:00", "status": "running"}
    (root / ".run.json").write_text(json.dumps(manifest))
    assert run_state(root)["status"] == "killed"
    st = _cli("status", str(root), "--json")
    assert json.loads(st.stdout)["run"]["status"] == "killed"
    assert "last run: killed" in _cli("status", str(root)).stdout
    # alive but not the lock's holder (a reused pid): stale
    (root / ".run.json").write_text(json.dumps({**manifest, "pid": os.getpid()}))
    assert run_state(root)["status"] == "stale"
    (root / ".run.json").write_text(json.dumps(manifest))
    n = len((root / "runs.jsonl").read_text().splitlines())
    run_study(cfg, to_toml(cfg), root)
    lines = [json.loads(x) for x in (root / "runs.jsonl").read_text().splitlines()]
    assert len(lines) == n + 2 and lines[n]["status"] == "killed" and lines[n]["pid"] == dead.pid
    assert json.loads((root / ".run.json").read_text())["status"] == "ok"


def test_output_folder_keeps_a_killed_previous_run(tmp_path):
    from fairarena.fsutil import output_folder

    out = tmp_path / "o"
    out.mkdir()
    (out / ".run.json").write_text(json.dumps({"command": "x", "pid": 1, "status": "running", "config_digest": None}))
    with output_folder(out, "x", resume=True) as f:
        assert f.manifest["previous"]["status"] == "killed"


def test_run_status_is_failed_when_every_debate_failed(tmp_path, monkeypatch):
    import fairarena.arena as arena

    def broken(*a, **kw):
        raise RuntimeError("server melted")

    monkeypatch.setattr(arena, "run_debate", broken)
    cfg = tiny_design(cohorts=1)
    s = run_study(cfg, to_toml(cfg), tmp_path / "st")
    assert s.ok == 0 and s.failed == len(expand(cfg))
    m = json.loads((tmp_path / "st" / ".run.json").read_text())
    assert m["status"] == "failed" and m["reason"] == f"{s.failed} of {s.total} debates failed"


def test_a_first_run_killed_between_its_two_writes_is_resumed_without_force(tmp_path):
    cfg = tiny_design(cohorts=1)
    root = tmp_path / "st"
    root.mkdir()
    (root / "study.toml").write_text(to_toml(cfg))                     # study.json never written
    (root / ".lock").write_text("")
    s = run_study(cfg, to_toml(cfg), root)
    assert s.ok == len(expand(cfg))
    # and the other order: study.json there, study.toml gone
    (root / "study.toml").unlink()
    run_study(cfg, to_toml(cfg), root)
    assert (root / "study.toml").read_text() == to_toml(cfg)


def test_init_on_a_folder_names_it_not_a_temporary(tmp_path):
    (tmp_path / "d").mkdir()
    line = _one_line_error(_cli("init", "--out", str(tmp_path / "d"), "--force"), str(tmp_path / "d"))
    assert ".tmp" not in line


def test_atomic_write_onto_a_folder_names_the_destination(tmp_path):
    from fairarena.fsutil import atomic_write_text

    (tmp_path / "d").mkdir()
    with pytest.raises(OSError) as exc:
        atomic_write_text(tmp_path / "d", "x")
    assert exc.value.filename == str(tmp_path / "d")
    assert [p.name for p in tmp_path.iterdir()] == ["d"]


def test_a_failed_worker_is_one_line(tmp_path, monkeypatch):
    import fairarena.study.store as ss

    def dies(todo, opts, **kw):
        raise RuntimeError("A worker process managed by the executor was unexpectedly terminated.\n\n"
                           "The exit codes of the workers are {SIGKILL(-9)}\n  detail")
        yield

    monkeypatch.setattr(ss, "execute", dies)
    cfg = tiny_design(cohorts=1)
    with pytest.raises(StudyRunError) as exc:
        run_study(cfg, to_toml(cfg), tmp_path / "st")
    msg = str(exc.value)
    assert "\n" not in msg and "unexpectedly terminated" in msg and "rerun to resume" in msg


def test_reading_checks_cost_no_extra_read(folder, monkeypatch):
    # the default readers never open a transcript (only --verify, --repair and a run's resume do)
    import builtins

    cfg, root, tasks = folder
    (root / RESULTS).unlink()
    opened = []
    real = builtins.open

    def spy(path, *a, **kw):
        opened.append(str(path))
        return real(path, *a, **kw)

    monkeypatch.setattr(builtins, "open", spy)
    study_status(root)
    load_results(root)
    assert not [p for p in opened if p.endswith(".jsonl") and "debates" in p]
    assert len(read_records(root)) == len(tasks)


def test_a_model_whose_proposals_are_not_valid_gives_readable_records(zero_server, tmp_path):
    """A language model's invalid proposal has no metrics (None in its round summary and final): such a
    record is a healthy record, not damage (real small models produce it; the read-time check refused it)."""
    from fairarena.study.design import preset, to_toml
    from fairarena.study.records import check_record
    from fairarena.study.store import load_results, run_study

    zero_server.reply = "no allocation here"
    url = zero_server.base_url
    cfg = preset("tiny", cohorts=1, agent_a=["aligned:care"], opponents=["baseline"], model_a=f"openai:m@{url}",
                 model_b=f"openai:m@{url}", rag="off", rounds=1, max_repairs=0, baseline_control=False)
    root = tmp_path / "st"
    run_study(cfg, to_toml(cfg), root, backend="threads")
    rows = load_results(root)
    assert rows and all(r["rounds"][0]["a"]["metrics"] is None for r in rows if r["rounds"])
    for r in rows:
        check_record(r)
