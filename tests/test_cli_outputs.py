"""One run per output folder, through the real commands and real concurrent processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

ENTRY = "import sys; sys.argv[0] = 'fairarena'; from fairarena.cli import main; main()"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def _sigint_default() -> None:
    """A job started in the background by a non-interactive shell (as CI may run this suite) inherits SIGINT
    ignored; the CLI is run as from a terminal, where Ctrl-C is delivered."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def fairarena(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", ENTRY, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=ENV, preexec_fn=_sigint_default, **kw)


def run(*args: str) -> subprocess.CompletedProcess:
    p = fairarena(*args)
    out, err = p.communicate(timeout=600)
    return subprocess.CompletedProcess(args, p.returncode, out, err)


_HOLD = textwrap.dedent("""
    import sys, time
    from fairarena.fsutil import output_folder
    with output_folder(sys.argv[1], sys.argv[2]):
        print("locked", flush=True)
        time.sleep(60)
""")


@pytest.fixture
def holder(tmp_path):
    """A live process holding tmp_path/out's lock (as a running command would)."""
    procs = []

    def start(out, command):
        p = subprocess.Popen([sys.executable, "-c", _HOLD, str(out), command], stdout=subprocess.PIPE, text=True,
                             env=ENV)
        assert p.stdout.readline().strip() == "locked"
        procs.append(p)
        return p

    yield start
    for p in procs:
        p.kill()
        p.wait()


DEBATE = ("debate", "--seed", "1", "--agent-a", "aligned:rawlsian", "--agent-b", "baseline", "--model", "scripted",
          "--rounds", "2", "--rag", "off")


def test_debate_refuses_a_folder_in_use(tmp_path, holder):
    out = tmp_path / "out"
    h = holder(out, "debate")
    r = run(*DEBATE, "--out", str(out))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"pid {h.pid}" in r.stderr and "in use" in r.stderr
    assert not (out / "transcript.jsonl").exists()


def test_two_debates_at_once_one_wins_and_the_transcript_is_whole(tmp_path):
    out = tmp_path / "out"
    a, b = fairarena(*DEBATE, "--out", str(out)), fairarena(*DEBATE, "--out", str(out))
    ra, rb = a.wait(600), b.wait(600)
    errs = a.stderr.read() + b.stderr.read()
    assert sorted((ra, rb)) == [0, 2], errs
    # the loser either found the folder locked (naming the holder) or, if it started late, finished
    assert "in use by pid" in errs or "is not empty" in errs
    for line in (out / "transcript.jsonl").read_text().splitlines():
        json.loads(line)  # every line parses: nobody interleaved writes
    assert json.loads((out / ".run.json").read_text())["status"] == "ok"


def test_debate_rerun_needs_force(tmp_path):
    from fairarena.fsutil import output_folder

    out = tmp_path / "out"
    with output_folder(out, "debate"):  # an earlier, finished debate
        (out / "transcript.jsonl").write_text("{}\n")
        (out / "old-notes.txt").write_text("from the earlier run")
    r = run(*DEBATE, "--out", str(out))
    assert r.returncode == 2 and "--force" in r.stderr and "Traceback" not in r.stderr
    assert (out / "old-notes.txt").exists()  # refused before touching anything
    stale = tmp_path / ".out.x1y2z3ab.tmp"  # what a run killed inside atomic_dir(out) leaves beside it
    stale.mkdir()
    (stale / "result.json").write_text("{")
    assert run(*DEBATE, "--out", str(out), "--force").returncode == 0
    assert not stale.exists()  # cleaned by the next run
    assert not (out / "old-notes.txt").exists()  # no stale file of the earlier run mixed in
    assert (out / "result.json").exists()


def test_sweep_refuses_a_folder_in_use(tmp_path, holder):
    out = tmp_path / "out"
    h = holder(out, "sweep")
    r = run("sweep", "--preset", "tiny", "--out", str(out), "--json")
    assert r.returncode == 2 and f"pid {h.pid}" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == "" and sorted(p.name for p in out.iterdir()) == [".lock", ".run.json"]


@pytest.mark.parametrize("sig, code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_interrupted_run_records_it_and_releases_the_lock(tmp_path, sig, code):
    import signal
    import time

    out = tmp_path / "out"
    p = fairarena("learn", "--learner", "pf", "--T", "20000000", "--seeds", "1", "--out", str(out), "--json")
    deadline = time.time() + 120
    while not (out / ".run.json").exists() and time.time() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    p.send_signal(getattr(signal, sig))
    _, err = p.communicate(timeout=120)
    assert p.returncode == code, err
    assert "Traceback" not in err
    m = json.loads((out / ".run.json").read_text())
    assert m["status"] == "interrupted"
    from fairarena.fsutil import output_folder

    with output_folder(out, "learn", force=True):  # the lock was released
        pass
