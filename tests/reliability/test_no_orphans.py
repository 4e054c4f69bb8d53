"""No orphans: when the parent of a run is killed with SIGKILL (no clean-up runs), every process it
started (workers, their resource trackers, Dask nannies) exits within seconds.

Each test starts a real ``fairarena`` command, waits until its workers are up, lists every descendant
from ``/proc``, kills the parent with ``kill -9`` and waits for each descendant to be gone (a zombie
waiting for its new parent to reap it counts as gone: it holds no memory)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists() or not hasattr(signal, "SIGKILL"),
                                reason="needs POSIX signals and /proc")

GONE_WITHIN = 10.0   # seconds
LOKY = "LokyProcess"
DASK = "multiprocessing.spawn"


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, ppid) of a process, or None when there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def descendants(root: int) -> dict[int, str]:
    """Every live descendant of ``root``: {pid: command line}."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _stat(int(name))
            if st is not None:
                children.setdefault(st[1], []).append(int(name))
    out: dict[int, str] = {}
    stack = [root]
    while stack:
        for c in children.get(stack.pop(), []):
            out[c] = _cmdline(c)
            stack.append(c)
    return out


def _alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def kill_parent_and_wait(args: list[str], *, marker: str, workers: int, cwd: Path,
                         start_timeout: float = 120.0) -> tuple[dict[int, str], list[int]]:
    """Run ``args``; once ``workers`` descendants whose command line holds ``marker`` are up (and one more
    second has passed, so they are at work), SIGKILL the parent. Returns (the descendants seen at the kill,
    those still alive ``GONE_WITHIN`` seconds later). Leftovers are killed afterwards by PID."""
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen: dict[int, str] = {}
    try:
        deadline = time.monotonic() + start_timeout
        while sum(marker in c for c in descendants(proc.pid).values()) < workers:
            assert proc.poll() is None, f"the run ended before its workers started: {proc.stderr.read().decode()}"
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.05)
        time.sleep(1.0)
        assert proc.poll() is None, "the run finished before it was killed: make it bigger"
        seen = descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + GONE_WITHIN
        while any(_alive(p) for p in seen) and time.monotonic() < deadline:
            time.sleep(0.1)
        return seen, [p for p in seen if _alive(p)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in seen:            # never leave a stray process behind, whatever the test found
            if _alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        proc.stderr.close()


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "fairarena.cli", *args]


def _study(tmp_path: Path, cohorts: int) -> Path:
    from fairarena.study.design import preset, to_toml

    path = tmp_path / "study.toml"
    path.write_text(to_toml(preset("tiny", cohorts=cohorts)))
    return path


def test_study_run_processes_leaves_no_orphans(tmp_path):
    study = _study(tmp_path, 400)   # about 2,000 scripted debates: minutes of work for two workers
    seen, left = kill_parent_and_wait(
        _cli("study", "run", str(study), "--out", str(tmp_path / "st"), "--backend", "processes", "--workers", "2"),
        marker=LOKY, workers=2, cwd=tmp_path)
    assert sum(LOKY in c for c in seen.values()) == 2
    assert left == [], {p: seen[p] for p in left}


def test_sweep_processes_leaves_no_orphans(tmp_path):
    seen, left = kill_parent_and_wait(
        _cli("sweep", "--preset", "paper", "--backend", "processes", "--workers", "2", "--out", str(tmp_path / "sw")),
        marker=LOKY, workers=2, cwd=tmp_path)
    assert sum(LOKY in c for c in seen.values()) == 2
    assert left == [], {p: seen[p] for p in left}


@pytest.mark.dask
def test_study_run_dask_leaves_no_orphans(tmp_path):
    pytest.importorskip("distributed")
    study = _study(tmp_path, 400)
    seen, left = kill_parent_and_wait(
        _cli("study", "run", str(study), "--out", str(tmp_path / "st"), "--backend", "dask", "--workers", "2"),
        marker=DASK, workers=2, cwd=tmp_path)
    assert sum(DASK in c for c in seen.values()) >= 2
    assert left == [], {p: seen[p] for p in left}


def test_a_worker_whose_parent_is_gone_exits(tmp_path):
    """The watchdog itself: a process running watch_parent for a parent that then dies exits (the
    grandchild below outlives its killed parent by at most a few polls)."""
    script = tmp_path / "grandchild.py"
    pidfile = tmp_path / "pid"
    script.write_text(
        "import os, subprocess, sys, time\n"
        "if sys.argv[1] == 'parent':\n"
        "    subprocess.Popen([sys.executable, __file__, 'child', str(os.getpid())])\n"
        "    time.sleep(600)\n"
        "else:\n"
        "    from fairarena.execution import watch_parent\n"
        "    watch_parent(int(sys.argv[2]), 0.1)\n"
        f"    open({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, str(script), "parent"])
    child = 0
    try:
        deadline = time.monotonic() + 60
        while not pidfile.exists() or not pidfile.read_text():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        child = int(pidfile.read_text())
        assert _alive(child)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + GONE_WITHIN
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child)
    finally:
        parent.kill()
        parent.wait()
        if child and _alive(child):
            os.kill(child, signal.SIGKILL)


def test_a_killed_worker_is_one_line_and_the_run_ends(tmp_path):
    """A worker killed with ``kill -9`` in the middle of a ``--backend processes`` study: the run ends within
    a minute (no hang), exits 1 with one line naming the backend and how to go on (no traceback, not the
    executor's 4-line message), records ``failed`` in ``.run.json``, leaves no process behind, and every
    debate it saved is a sound record."""
    import json

    from fairarena.study.store import study_status

    study = _study(tmp_path, 400)
    out = tmp_path / "st"
    proc = subprocess.Popen(_cli("study", "run", str(study), "--out", str(out), "--backend", "processes",
                                 "--workers", "2"), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    seen: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 120
        while sum(LOKY in c for c in descendants(proc.pid).values()) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.05)
        time.sleep(1.0)
        seen = descendants(proc.pid)
        worker = min(p for p, c in seen.items() if LOKY in c)
        os.kill(worker, signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 1, err
        lines = [x for x in err.strip().splitlines() if not x.startswith(("progress ", "study "))]
        assert len(lines) == 1 and "Traceback" not in err, err
        assert lines[0].startswith("error: the processes backend failed after ") and "rerun to resume" in lines[0]
        manifest = json.loads((out / ".run.json").read_text())
        assert manifest["status"] == "failed", manifest
        st = study_status(out)
        assert st.damaged == [] and st.ok + st.pending == st.total
        deadline = time.monotonic() + GONE_WITHIN
        while any(_alive(p) for p in seen) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [p for p in seen if _alive(p)] == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in seen:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
