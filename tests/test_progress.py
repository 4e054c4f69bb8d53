"""Progress of long commands (fairarena.progress): plain ``progress`` lines on stderr when it is not a terminal,
at the interval asked and at the end; nothing with ``--json``; a bad interval refused before any work."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from rich.console import Console

from fairarena.progress import Progress, check_every
from fairarena.study.progress import RunProgress

ENTRY = "import sys; sys.argv[0] = 'fairarena'; from fairarena.cli import main; main()"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
for _k in ("FORCE_COLOR", "FORCE_TERMINAL", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
    ENV.pop(_k, None)


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    # stdout and stderr are pipes: not a terminal, as in a log or CI
    return subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, env=ENV,
                          timeout=300, cwd=cwd)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _plain(**kw):
    buf = io.StringIO()
    con = Console(file=buf, width=200, force_terminal=False)
    clock = Clock()
    return Progress("sweep paper", unit="settings", terminal=False, clock=clock, console=con, **kw), clock, buf


def test_lines_come_at_the_interval_and_at_the_end():
    p, clock, buf = _plain(total=100, every=10.0)
    with p:
        for done in range(0, 101, 5):          # an update every 1 s of the fake clock
            clock.t = done / 5
            p.update(done)
    # t = 0 (first update), 10 s, 20 s (done = 100, also the end)
    assert [line.split(":")[1].split()[0] for line in p.lines] == ["0/100", "50/100", "100/100"]
    assert all(line.startswith("progress sweep paper: ") for line in p.lines)
    assert buf.getvalue().splitlines() == p.lines
    assert "5 settings/s" in p.lines[1] and "50%" in p.lines[1] and "about 10.0 s left" in p.lines[1]  # 50 in 10 s
    assert "100%" in p.lines[2] and "left" not in p.lines[2]


def test_every_zero_prints_each_update_and_advance_counts():
    p, clock, _ = _plain(total=None, every=0.0)
    with p:
        for _ in range(3):
            clock.t += 1
            p.advance(7)
    assert [line.split(": ", 1)[1].split("  ")[0] for line in p.lines] == ["7 settings", "14 settings", "21 settings"]


def test_disabled_prints_nothing():
    p, clock, buf = _plain(total=10, every=0.0, enabled=False)
    with p:
        for i in range(11):
            p.update(i)
    assert p.lines == [] and buf.getvalue() == ""


def test_check_every():
    assert check_every(0) == 0.0 and check_every(2.5) == 2.5
    from fairarena.errors import InputError

    for bad in (-1, float("inf"), float("nan"), True, "5"):
        with pytest.raises(InputError) as exc:
            check_every(bad)
        assert exc.value.field == "progress-every"


def test_run_progress_keeps_its_old_import_path():
    from fairarena.study.cli import RunProgress as Old

    assert Old is RunProgress


def test_sweep_prints_progress_lines_off_a_terminal_and_none_with_json(tmp_path):
    r = cli("sweep", "--preset", "paper", "--limit", "60", "--workers", "1", "--backend", "serial",
            "--out", str(tmp_path / "a"), "--progress-every", "0")
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.startswith("progress sweep paper (serial): ")]
    assert len(lines) >= 2, r.stderr                    # the paper grid's 60 settings come in several batches
    assert lines[-1].split(": ", 1)[1].startswith("60/60 settings  100%")
    assert not [x for x in r.stdout.splitlines() if x.startswith("progress")]
    j = cli("sweep", "--preset", "paper", "--limit", "60", "--workers", "1", "--backend", "serial",
            "--out", str(tmp_path / "b"), "--progress-every", "0", "--json")
    assert j.returncode == 0, j.stderr
    assert not [x for x in j.stderr.splitlines() if x.startswith("progress")]
    assert json.loads(j.stdout)["n_settings"] == 60     # stdout is one JSON document


def test_learn_prints_progress_lines_off_a_terminal(tmp_path):
    r = cli("learn", "--learner", "pf,uniform", "--T", "3000", "--seeds", "2", "--jobs", "1", "--no-figure",
            "--out", str(tmp_path / "l"), "--progress-every", "0")
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.startswith("progress learn ")]
    assert len(lines) >= 3, r.stderr                     # per block of rounds, in this process
    assert lines[-1].split(": ", 1)[1].startswith("12,000/12,000 rounds  100%")   # 2 learners x 2 seeds x 3,000
    assert not [x for x in r.stdout.splitlines() if x.startswith("progress")]
    j = cli("learn", "--learner", "pf", "--T", "3000", "--seeds", "2", "--jobs", "1", "--no-figure",
            "--out", str(tmp_path / "m"), "--progress-every", "0", "--json")
    assert j.returncode == 0 and not [x for x in j.stderr.splitlines() if x.startswith("progress")]
    json.loads(j.stdout)


@pytest.mark.parametrize("command", [["sweep", "--preset", "paper", "--limit", "5"],
                                     ["learn", "--T", "100", "--seeds", "1"]])
def test_a_bad_interval_is_refused_before_any_work(tmp_path, command):
    out = tmp_path / "o"
    r = cli(*command, "--out", str(out), "--progress-every", "-1")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "progress-every" in r.stderr and "-1" in r.stderr
    assert not out.exists()


def test_the_audit_per_rule_is_the_single_call():
    from fairarena.aggregation.audit import audit, audit_rules, audit_search
    from fairarena.progress import per_rule

    names = audit_rules("all")[:4]
    quiet = Progress("audit", enabled=False)
    assert per_rule(audit, names, quiet, profiles=60, seed=3) == audit(names, profiles=60, seed=3)
    assert per_rule(audit_search, names, quiet, steps=3, seed=3) == audit_search(names, steps=3, seed=3)
    assert quiet.done == 8


def test_aggregate_audit_counts_rules_off_a_terminal():
    r = cli("aggregate", "audit", "--rule", "borda", "--profiles", "30", "--search", "2", "--instances", "0",
            "--progress-every", "0")
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.startswith("progress aggregate audit: ")]
    assert [x.split(": ", 1)[1].split("  ")[0] for x in lines] == ["1/2 steps", "2/2 steps"]
    j = cli("aggregate", "audit", "--rule", "borda", "--profiles", "30", "--search", "2", "--instances", "0",
            "--progress-every", "0", "--json")
    assert j.returncode == 0 and not [x for x in j.stderr.splitlines() if x.startswith("progress")]
    assert list(json.loads(j.stdout)["table"]) == ["borda"]


def test_ticking_says_it_is_still_working():
    import time

    buf = io.StringIO()
    con = Console(file=buf, width=200, force_terminal=False)
    with Progress("tourism compare", terminal=False, every=0.05, console=con) as p, p.ticking():
        time.sleep(0.6)
    assert len(p.lines) >= 2 and all(x.startswith("progress tourism compare: working, ") for x in p.lines)
    with Progress("tourism compare", terminal=False, every=0.05, console=con, enabled=False) as q, q.ticking():
        time.sleep(0.3)
    assert q.lines == []


def test_tourism_compare_says_it_is_working_off_a_terminal(tmp_path):
    assert cli("tourism", "destination", "--seed", "0", "--pois", "12", "--out", "d.json", cwd=tmp_path).returncode == 0
    r = cli("tourism", "compare", "--destination", "d.json", "--rounds", "1", "--progress-every", "0.2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert [x for x in r.stderr.splitlines() if x.startswith("progress tourism compare: working, ")], r.stderr
    j = cli("tourism", "compare", "--destination", "d.json", "--rounds", "1", "--progress-every", "0.2", "--json",
            cwd=tmp_path)
    assert j.returncode == 0 and not [x for x in j.stderr.splitlines() if x.startswith("progress")]
    json.loads(j.stdout)


def test_study_report_says_it_is_working_off_a_terminal(tmp_path):
    # a report of a big study takes seconds: 'still working' lines on stderr, the HTML and 'wrote' as before
    assert cli("study", "init", "--preset", "pb-small", "--out", str(tmp_path / "s.toml")).returncode == 0
    r = cli("study", "run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "st"), "--json")
    assert r.returncode == 0, r.stderr
    r = cli("study", "report", str(tmp_path / "st"), "--out", str(tmp_path / "r.html"), "--progress-every", "0")
    assert r.returncode == 0, r.stderr
    assert any(x.startswith("progress study report: working, ") for x in r.stderr.splitlines()), r.stderr
    assert r.stdout.startswith("wrote ") and (tmp_path / "r.html").is_file()
    r = cli("study", "report", str(tmp_path / "st"), "--out", str(tmp_path / "r2.html"), "--progress-every", "-1")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "r2.html").exists()


@pytest.fixture(scope="module")
def small_study(tmp_path_factory):
    """The small preset (60 scripted debates) run by the real command with stderr a pipe, as in a log: the
    run's output and its folder."""
    tmp = tmp_path_factory.mktemp("progress-study")
    assert cli("study", "init", "--preset", "small", "--out", str(tmp / "s.toml")).returncode == 0
    r = cli("study", "run", str(tmp / "s.toml"), "--out", str(tmp / "st"), "--backend", "processes", "--workers",
            "2", "--progress-every", "0")
    return tmp, r


def test_study_run_prints_progress_lines_when_its_output_is_redirected(small_study):
    _, r = small_study
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.startswith("progress study small (processes): ")]
    assert lines and all(" debates  failed 0  in flight " in x and "debates/s" in x for x in lines), r.stderr
    assert "60/60 debates" in lines[-1]                             # the last line when the work is complete
    assert len({x.split(": ", 1)[1].split(" debates", 1)[0] for x in lines}) >= 2     # counts that move
    assert r.stdout.startswith("study ") and "60 ok" in r.stdout     # the summary on stdout, as before


@pytest.mark.parametrize("command", [["stats"], ["tables", "--out", "{tmp}/tables"]])
def test_study_stats_and_tables_say_they_are_working_off_a_terminal(small_study, command):
    # the analysis of a 2,000-debate study takes seconds: 'still working' lines on stderr, stdout as before
    tmp, _ = small_study
    args = [a.replace("{tmp}", str(tmp)) for a in command]
    r = cli("study", args[0], str(tmp / "st"), *args[1:], "--progress-every", "0")
    assert r.returncode == 0, r.stderr
    assert any(x.startswith(f"progress study {args[0]}: working, ") for x in r.stderr.splitlines()), r.stderr
    assert "Table 2" in r.stdout if args[0] == "stats" else r.stdout.startswith("wrote ")
    bad = cli("study", args[0], str(tmp / "st"), *[a.replace("tables", "tables-bad") for a in args[1:]],
              "--progress-every", "-1")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "progress-every" in bad.stderr
    assert not (tmp / "tables-bad").exists()


def test_study_stats_json_prints_no_progress(small_study):
    tmp, _ = small_study
    r = cli("study", "stats", str(tmp / "st"), "--json", "--progress-every", "0")
    assert r.returncode == 0 and not [x for x in r.stderr.splitlines() if x.startswith("progress")], r.stderr
    json.loads(r.stdout)
