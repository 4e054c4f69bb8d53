"""A sweep killed midway keeps its finished batches and resumes from them (issue 12.7): a real
``fairarena sweep`` process is killed with SIGKILL after its first batch is on disk, the next run on
the same folder resumes by default, and its frame equals an uninterrupted run's bit for bit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from typer.testing import CliRunner

from fairarena.cli import app
from fairarena.sweep.config import expand, preset
from fairarena.sweep.run import load_chunk, make_tasks, run_sweep, save_chunk, solve_chunk

runner = CliRunner()
ARGS = ["--preset", "small", "--backend", "serial", "--json"]


def test_a_chunk_round_trips_bit_for_bit(tmp_path):
    cfg = preset("tiny")
    task = make_tasks(expand(cfg), cfg)[0]
    res = solve_chunk(task, cfg)
    back = load_chunk(save_chunk(tmp_path / "t.npz", res))
    assert back["ids"].tolist() == res["ids"].tolist()
    assert back["ef_worst"].tobytes() == res["ef_worst"].tobytes()
    for name, rows in res["policies"].items():
        assert [r.tobytes() for r in back["policies"][name]] == [r.tobytes() for r in rows]
        assert list(back["scores"][name]) == list(res["scores"][name])
        for key, v in res["scores"][name].items():
            assert back["scores"][name][key].tobytes() == v.astype(float).tobytes(), (name, key)


def test_run_sweep_reads_back_a_checkpoint_and_skips_foreign_files(tmp_path):
    cfg = preset("tiny").model_copy(update={"N": [2, 3, 4]})
    whole = run_sweep(cfg, backend="serial")
    ck = tmp_path / "ck"
    first = run_sweep(cfg, backend="serial", checkpoint=ck)
    n_tasks = first.summary["timing"]["tasks"]
    assert sorted(p.name for p in ck.iterdir()) == sorted(f"task{i}.npz" for i in range(n_tasks))
    (ck / "task0.npz").write_bytes(b"truncated")        # a torn file is run again
    (ck / "task1.npz").write_bytes((ck / "task2.npz").read_bytes())  # another task's file too
    again = run_sweep(cfg, backend="serial", checkpoint=ck)
    assert again.summary["timing"]["resumed_tasks"] == n_tasks - 2
    pd.testing.assert_frame_equal(again.frame, whole.frame, check_exact=True)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from fairarena.cli import main; main()", *args]


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_killed_sweep_resumes_to_the_uninterrupted_frame(tmp_path):
    out = tmp_path / "killed"
    proc = subprocess.Popen(_cli("sweep", *ARGS, "--out", str(out)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    batches = out / "batches"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if batches.is_dir() and any(p.name.startswith("task") for p in batches.iterdir()):
            break
        time.sleep(0.005)
    assert proc.poll() is None, proc.stderr.read().decode()
    proc.send_signal(signal.SIGSTOP)  # freeze it to count what is on disk, then kill it
    done = sorted(p.name for p in batches.iterdir() if p.name.startswith("task"))  # not temporaries
    proc.kill()
    proc.wait()
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    n_tasks = len(make_tasks(expand(preset("small")), preset("small")))
    assert 1 <= len(done) < n_tasks
    assert not (out / "settings.parquet").exists()
    assert json.loads((out / ".run.json").read_text())["status"] == "running"

    # the next run on the folder resumes by default (same options) and reruns only the missing batches
    res = subprocess.run(_cli("sweep", *ARGS, "--out", str(out)), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert summary["timing"]["resumed_tasks"] >= len(done)
    assert not batches.exists()  # removed once the results are written

    clean = tmp_path / "clean"
    assert runner.invoke(app, ["sweep", *ARGS, "--out", str(clean)]).exit_code == 0
    pd.testing.assert_frame_equal(pd.read_parquet(out / "settings.parquet"),
                                  pd.read_parquet(clean / "settings.parquet"), check_exact=True)
    assert (out / "table1.md").read_text() == (clean / "table1.md").read_text()


def test_no_resume_refuses_an_unfinished_run_and_other_options_do_not_resume(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / ".run.json").write_text(json.dumps({"command": "sweep", "config_digest": "other", "status": "running"}))
    (out / "batches").mkdir()
    res = runner.invoke(app, ["sweep", "--preset", "tiny", "--limit", "3", "--backend", "serial",
                              "--out", str(out)])
    assert res.exit_code == 2 and "not empty" in res.output  # a different grid is not resumed
    res = runner.invoke(app, ["sweep", "--preset", "tiny", "--limit", "3", "--backend", "serial",
                              "--out", str(out), "--no-resume"])
    assert res.exit_code == 2 and "--force" in res.output


def test_a_run_rejected_before_its_first_batch_leaves_no_folder(tmp_path, monkeypatch):
    """The batches folder is made with the first result: an input error found when the run starts
    (e.g. an unreachable Dask scheduler) still leaves nothing behind."""
    import fairarena.execution as execution
    from fairarena.errors import InputError

    def unreachable(*a, **k):
        raise InputError("address", "nowhere:1", "cannot reach a Dask scheduler")

    monkeypatch.setattr(execution, "map_tasks", unreachable)
    out = tmp_path / "o"
    res = runner.invoke(app, ["sweep", "--preset", "tiny", "--limit", "3", "--backend", "serial", "--out", str(out)])
    assert res.exit_code == 2 and "address = 'nowhere:1'" in res.output
    assert not out.exists()
