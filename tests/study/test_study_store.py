"""The study store: one record per debate, resume by key, refusal of another design, the lock, failures
recorded and retried, the results table, and backends agreeing with the serial run."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from fairarena.errors import InputError
from fairarena.study.design import expand, to_toml
from fairarena.study.store import (
    finished_keys, folder_lock, load_results, read_records, record_path, results_frame, run_study, study_status,
    transcript_path,
)

from .conftest import outcome, tiny_design


def _run(cfg, out, **kw):
    return run_study(cfg, to_toml(cfg), out, **kw)


def test_run_writes_one_complete_record_per_debate_and_resume_skips(tmp_path):
    cfg = tiny_design()
    tasks = expand(cfg)
    s = _run(cfg, tmp_path / "st")
    assert (s.ran, s.ok, s.failed, s.pending) == (len(tasks), len(tasks), 0, 0)
    root = tmp_path / "st"
    recs = read_records(root)
    assert set(recs) == {t.key for t in tasks}
    for t in tasks:
        r = recs[t.key]
        assert r["status"] == "ok" and r["task"] == t.to_dict()
        data = transcript_path(root, t.key).read_bytes()
        assert hashlib.sha256(data).hexdigest() == r["transcript_sha256"]
        lines = [json.loads(x) for x in data.splitlines()]
        assert lines[0]["type"] == "header" and lines[-1]["type"] == "footer" and lines[-1]["status"] == "ok"
        assert lines[0]["task"]["key"] == t.key
    # results.jsonl: task order, one line per debate
    rows = load_results(root)
    assert [r["key"] for r in rows] == [t.key for t in tasks]
    meta = json.loads((root / "study.json").read_text())
    assert meta["study_digest"] == cfg.digest() and meta["tasks"] == len(tasks)
    assert "versions" in meta["provenance"] and (root / "study.toml").read_text() == to_toml(cfg)
    stamp = {k: os.stat(record_path(root, k)).st_mtime_ns for k in recs}
    again = _run(cfg, root)
    assert (again.ran, again.skipped, again.ok) == (0, len(tasks), len(tasks))
    assert stamp == {k: os.stat(record_path(root, k)).st_mtime_ns for k in recs}   # nothing rewritten
    st = study_status(root)
    assert (st.total, st.ok, st.failed, st.pending, st.stale) == (len(tasks), len(tasks), 0, 0, 0)
    assert len((root / "runs.jsonl").read_text().splitlines()) == 2


def test_metrics_in_records_match_a_direct_debate(tiny_run):
    from fairarena.arena import build_agent, run_debate
    from fairarena.triage import sample_cohort

    cfg, root = tiny_run
    t = expand(cfg)[3]
    rec = read_records(root, [t.key])[t.key]
    c = sample_cohort(t.cohort_seed, t.capacity)
    direct = run_debate(c, build_agent("A", t.agent_a, "scripted", c), build_agent("B", t.agent_b, "scripted", c),
                        t.debate_config())
    assert json.loads(json.dumps(direct.metrics)) == rec["metrics"]
    assert json.loads(json.dumps(direct.rounds)) == rec["rounds"]


def test_another_design_is_refused_unless_force(tmp_path):
    cfg = tiny_design()
    root = tmp_path / "st"
    _run(cfg, root, limit=2)
    other = tiny_design(rounds=2)
    with pytest.raises(InputError) as exc:
        _run(other, root)
    assert exc.value.field == "out" and "--force" in str(exc.value)
    s = _run(other, root, force=True)
    assert s.ran == len(expand(other)) and study_status(root).stale == 2   # old debates kept, out of the results
    assert len(load_results(root)) == len(expand(other))
    # a folder with unrelated files is refused too
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("mine")
    with pytest.raises(InputError):
        _run(cfg, junk)


def test_one_writer_per_folder(tmp_path):
    from fairarena.fsutil import OutputBusyError

    cfg = tiny_design()
    root = tmp_path / "st"
    with folder_lock(root):
        with pytest.raises(OutputBusyError) as exc:
            _run(cfg, root)
    assert f"pid {os.getpid()}" in str(exc.value)
    assert not (root / "study.json").exists()


def test_failed_debates_are_recorded_then_retried(tmp_path, monkeypatch):
    import fairarena.arena as arena

    cfg = tiny_design()
    tasks = expand(cfg)
    bad = {tasks[1].key, tasks[5].key}
    real = arena.run_debate

    def flaky(cohort, a, b, config, *, transcript=None, header=None):
        if header["task"]["key"] in bad:
            raise RuntimeError("server melted")
        return real(cohort, a, b, config, transcript=transcript, header=header)

    monkeypatch.setattr(arena, "run_debate", flaky)
    root = tmp_path / "st"
    s = _run(cfg, root)
    assert (s.ok, s.failed, s.ran) == (len(tasks) - 2, 2, len(tasks))
    assert {f["key"] for f in s.failed_now} == bad and all("server melted" in f["error"] for f in s.failed_now)
    assert study_status(root).failed_keys == [t.key for t in tasks if t.key in bad]
    assert _run(cfg, root).ran == 0                      # a plain rerun leaves failures alone
    monkeypatch.setattr(arena, "run_debate", real)
    r = _run(cfg, root, retry_failed=True)
    assert (r.ran, r.ok, r.failed) == (2, len(tasks), 0)
    assert [x["status"] for x in load_results(root)] == ["ok"] * len(tasks)


def test_results_frame_is_flat(tiny_run):
    cfg, root = tiny_run
    df = results_frame(root)
    assert len(df) == len(expand(cfg))
    for col in ("key", "framework", "opponent_role", "cohort", "final_a_esg", "final_b_gini", "final_joint_rmg",
                "feasible_joint", "round1_a_esg"):
        assert col in df.columns, col


def test_stale_results_file_is_rebuilt(tmp_path):
    cfg = tiny_design()
    root = tmp_path / "st"
    _run(cfg, root, limit=3)
    (root / "results.jsonl").write_text("")   # e.g. a run killed before it rebuilt the table
    assert len(load_results(root)) == 3 == len(finished_keys(root))


def test_processes_and_threads_match_serial(tiny_run, tmp_path):
    cfg, root = tiny_run
    base = [outcome(r) for r in load_results(root)]
    for backend in ("threads", "processes"):
        s = _run(cfg, tmp_path / backend, backend=backend, workers=2)
        assert s.ok == len(base)
        assert [outcome(r) for r in load_results(tmp_path / backend)] == base, backend


def test_bad_backend_and_workers_before_any_write(tmp_path):
    cfg = tiny_design()
    for kw, field in ((dict(backend="gpu"), "backend"), (dict(workers=0), "workers"),
                      (dict(address="tcp://x:1"), "address")):
        with pytest.raises(InputError) as exc:
            _run(cfg, tmp_path / "st", **kw)
        assert exc.value.field == field
    assert not (tmp_path / "st").exists()


def test_unreadable_record_counts_as_not_finished_and_is_redone(tmp_path):
    cfg = tiny_design()
    root = tmp_path / "st"
    _run(cfg, root)
    k = expand(cfg)[2].key
    record_path(root, k).write_bytes(b"")           # what a power loss can leave of an un-synced file
    st = study_status(root)
    assert (st.ok, st.pending) == (len(expand(cfg)) - 1, 1)
    s = _run(cfg, root)
    assert s.ran == 1 and s.ok == len(expand(cfg))
    assert json.loads(record_path(root, k).read_text())["key"] == k


def test_comparison_records_pair_by_cohort(tmp_path):
    from fairarena.study.store import comparison_records

    cfg = tiny_design(cohorts=1, closing=["joint-draft", "mean-repair"])
    root = tmp_path / "st"
    _run(cfg, root)
    recs = comparison_records(root)
    # one per (cohort, framework, opponent) for the first closing rule
    assert len(recs) == cfg.cohorts * len(cfg.agent_a) * len(cfg.opponents)
    assert len({(r["cohort"], r["framework"], r["opponent"]) for r in recs}) == len(recs)
    rows = {r["key"]: r for r in load_results(root)}
    t = next(t for t in expand(cfg) if t.closing == "mean-repair" and t.cohort == 0 and t.agent_b == "adversarial")
    alt = comparison_records(root, closing="mean-repair")
    r = next(x for x in alt if x["cohort"] == 0 and x["framework"] == t.framework and x["opponent"] == "adversarial")
    assert r["joint"]["esg"] == rows[t.key]["metrics"]["joint"]["esg"]
    assert r["a"]["esg"] == rows[t.key]["metrics"]["a"]["esg"] and set(r["a"]) >= {"esg", "rmg", "gini"}


def test_resume_with_nothing_to_do_repairs_a_stale_table(tmp_path):
    cfg = tiny_design()
    root = tmp_path / "st"
    _run(cfg, root)
    good = (root / "results.jsonl").read_text()
    lines = good.splitlines(keepends=True)
    (root / "results.jsonl").write_text("".join(lines[:3]))               # killed before the rebuild
    assert _run(cfg, root).ran == 0
    assert (root / "results.jsonl").read_text() == good
    stale = json.loads(lines[0])
    stale["status"] = "failed"
    (root / "results.jsonl").write_text(json.dumps(stale) + "\n" + "".join(lines[1:]))  # a retried debate
    assert _run(cfg, root).ran == 0
    assert (root / "results.jsonl").read_text() == good
    stamp = os.stat(root / "results.jsonl").st_mtime_ns
    _run(cfg, root)
    assert os.stat(root / "results.jsonl").st_mtime_ns == stamp           # current: not rewritten


def test_a_dying_backend_keeps_what_finished_and_says_so(tmp_path, monkeypatch):
    import fairarena.study.store as ss

    cfg = tiny_design()
    tasks = expand(cfg)
    real = ss.execute

    def dies(todo, opts, **kw):
        gen = real(todo, opts, **kw)
        yield next(gen)
        yield next(gen)
        raise RuntimeError("worker process died")

    monkeypatch.setattr(ss, "execute", dies)
    root = tmp_path / "st"
    with pytest.raises(ss.StudyRunError) as exc:
        _run(cfg, root)
    assert "after 2 of 8" in str(exc.value) and "worker process died" in str(exc.value)
    assert len(finished_keys(root)) == 2
    assert json.loads((root / ".run.json").read_text())["status"] == "failed"
    monkeypatch.setattr(ss, "execute", real)
    s = _run(cfg, root)
    assert (s.ran, s.skipped, s.ok) == (len(tasks) - 2, 2, len(tasks))


def test_cohort_chunks_partition_tasks_by_cohort_in_task_order():
    from fairarena.study.store import cohort_chunks

    tasks = expand(tiny_design(capacity=["standard", "tight"]))
    chunks = cohort_chunks(tasks)
    assert sorted(t.index for c in chunks for t in c) == [t.index for t in tasks]   # each task exactly once
    assert len(chunks) == len({(t.cohort_seed, t.capacity) for t in tasks})
    for c in chunks:
        assert len({(t.cohort_seed, t.capacity) for t in c}) == 1
        assert [t.index for t in c] == sorted(t.index for t in c)


def test_processes_backend_sends_one_unit_per_cohort(tiny_run, tmp_path):
    """The scripted study on worker processes runs each cohort's debates in one process (their records
    name one worker pid per cohort), with records equal to the serial run's."""
    cfg, root = tiny_run
    s = _run(cfg, tmp_path / "p", backend="processes", workers=2)
    rows = load_results(tmp_path / "p")
    assert s.ok == len(rows) == len(load_results(root))
    pids: dict[int, set[int]] = {}
    for r in rows:
        pids.setdefault(r["task"]["cohort_seed"], set()).add(r["worker"]["pid"])
    assert all(len(p) == 1 for p in pids.values()), pids
    assert [outcome(r) for r in rows] == [outcome(r) for r in load_results(root)]
