"""Work in a forked child (``fairarena.report.background``): the child's value is the value this process
would compute; a child that fails, answers garbage or takes too long costs time, never a wrong result; a
child is never left behind (closed, or its parent killed with SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fairarena.report import background as bg

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not sys.platform.startswith("linux"),
                                reason="the second process is forked (Linux)")


def _alive(pid: int) -> bool:
    """Is ``pid`` a live process (a zombie waiting to be reaped is not)?"""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_the_childs_value_is_used_and_is_what_this_process_computes():
    here = os.getpid()
    job = bg.Background(lambda: {"pid": os.getpid(), "x": [1.5, "é", None]}, jobs=2)
    assert job.forked and job.pid not in (None, here)
    out = job.result()
    assert job.used_child and out["pid"] != here and out["x"] == [1.5, "é", None]
    assert job.pid is None                                   # reaped


def test_one_job_computes_here_when_asked_and_starts_nothing():
    calls = []
    job = bg.Background(lambda: calls.append(1) or os.getpid(), jobs=1)
    assert not job.forked and calls == []
    assert job.result() == os.getpid() and calls == [1] and not job.used_child


@pytest.mark.parametrize("fn", [lambda: 1 / 0, lambda: os._exit(0), lambda: os.kill(os.getpid(), signal.SIGKILL)])
def test_a_child_that_fails_or_dies_leaves_the_work_here(fn, monkeypatch):
    job = bg.Background(fn, jobs=2)
    monkeypatch.setattr(job, "fn", lambda: "computed here")
    assert job.result() == "computed here" and not job.used_child and job.pid is None


def test_a_malformed_answer_is_not_used():
    job = bg.Background(lambda: ["not", "svg", 1], jobs=2, check=lambda v: all(isinstance(s, str) for s in v))
    job.fn = lambda: ["a"]
    assert job.result() == ["a"] and not job.used_child


def test_a_slow_child_is_killed_and_the_work_done_here():
    job = bg.Background(lambda: time.sleep(60) or "late", jobs=2)
    pid = job.pid
    job.fn = lambda: "here"
    t = time.monotonic()
    assert job.result(timeout=0.5) == "here" and time.monotonic() - t < 10
    assert not _alive(pid)


def test_close_kills_and_reaps_a_child_whose_answer_is_not_wanted():
    with bg.Background(lambda: time.sleep(60), jobs=2) as job:
        pid = job.pid
        assert _alive(pid)
    assert job.pid is None and not _alive(pid)
    job.close()                                              # idempotent


def test_render_figures_gives_the_svg_this_process_draws():
    from matplotlib.figure import Figure

    from fairarena.report.figures import svg_of

    def fig(k):
        def build():
            f = Figure(figsize=(2, 2))
            f.subplots().plot([0, 1, 2], [0, k, 1])
            return f
        return build
    builders = [fig(k) for k in range(3)]
    job = bg.render_figures(builders, jobs=2)
    away = job.result()
    assert job.used_child and away == [svg_of(b()) for b in builders]
    assert not bg.render_figures([], jobs=2).forked and bg.render_figures([], jobs=2).result() == []


def test_the_child_exits_soon_after_its_parent_is_killed(tmp_path):
    """A parent killed with SIGKILL (no clean-up): its child, busy for a minute, is gone within seconds."""
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent("""
        import sys, time
        from fairarena.report.background import Background
        job = Background(lambda: time.sleep(60), jobs=2)
        print(job.pid, flush=True)
        time.sleep(60)
    """))
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        child = int(p.stdout.readline())
        assert _alive(child)
        os.kill(p.pid, signal.SIGKILL)
        p.wait(10)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child), "the child outlived its parent by 10 s"
    finally:
        p.kill()


def test_no_child_to_be_had_means_the_work_is_done_here(monkeypatch):
    """fork refused (EAGAIN: the process limit) or no pipe (EMFILE): no error, the value computed here."""
    import errno

    def refuse(*a):
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
    for name in ("fork", "pipe"):
        with monkeypatch.context() as m:
            m.setattr(os, name, refuse)
            job = bg.Background(lambda: "here", jobs=2)
            assert not job.forked and job.result() == "here"
