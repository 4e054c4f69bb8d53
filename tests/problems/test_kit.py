"""Both example files pass the conformance kit: as objects, by the registered name ``file`` and from the command line."""

from __future__ import annotations

import json

from fairarena.domains import DOMAINS, check
from fairarena.problems import FILE, SEATS, VACCINES, load_problem_domain

from .conftest import SEATS as SEATS_FILE, VACCINES as VACCINES_FILE, cli


def test_both_examples_pass_the_kit():
    for domain in (SEATS, VACCINES):
        report = check(domain)
        assert report.ok, report.table()
        assert [r.status for r in report.results] == ["pass"] * 10, report.table()
        # the studies run on the registered file domain bound to the example (its design's problem): the
        # stakeholders two by two, and all of them in one council, on the file's one problem
        assert " debates on 1 instance ok" in report.result("duel-study").detail
        assert report.result("council-study").detail.startswith("1 debates on 1 instance ok")
        assert "own scripted agents" in report.result("debate").detail
        # the kit re-scores a transcript only through the registered object itself, here FILE: not this one
        # (test_recompute.py re-scores these transcripts through FILE, in a fresh process)
        assert "not re-scored (another domain is registered as 'file')" in report.result("debate").detail


def test_the_registered_file_domain_is_the_seats_example_and_rescores_its_transcript():
    assert DOMAINS.get("file") is FILE and FILE.sample(3) == SEATS.sample(0)
    report = check("file", studies=False)
    assert report.ok, report.table()
    assert "transcript re-scored" in report.result("debate").detail


def test_a_file_domain_is_any_file(tiny):
    report = check(load_problem_domain(tiny()), studies=False)
    assert report.ok, report.table()


def test_the_command_checks_the_examples():
    proc = cli("domain", "check", "file", "--json", "--no-studies")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] is True
    proc = cli("domain", "check", "fairarena.problems:VACCINES", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["ok"] and doc["domain"] == "file" and len(doc["checks"]) == 10


def test_the_command_checks_any_problem_file_by_its_path(tmp_path):
    """``fairarena domain check --problem FILE``: the kit on the file domain bound to the file, as a user runs
    it from the file's folder (a relative path: the studies read the file through the design's ``problem``)."""
    for example in (SEATS_FILE, VACCINES_FILE):
        (tmp_path / example.name).write_bytes(example.read_bytes())
        proc = cli("domain", "check", "--problem", example.name, "--json", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["ok"] and doc["domain"] == "file" and doc["target"] == f"--problem {example.name}"
        assert [c["status"] for c in doc["checks"]] == ["pass"] * 10, doc
    text = (tmp_path / SEATS_FILE.name).read_text(encoding="utf-8")
    (tmp_path / "bad.toml").write_text(text.replace("capacity = 4", "capacity = -4", 1), encoding="utf-8")
    assert "capacity = -4" in (tmp_path / "bad.toml").read_text(encoding="utf-8")
    for args, message in ((("--problem", "bad.toml"), "error: bad.toml: resources.STEM.capacity = -4: "),
                          (("file", "--problem", "bad.toml"), "error: target = 'file': a registered domain or "
                                                              "MODULE:OBJECT, or --problem FILE (one of the two)"),
                          ((), "error: target = None: ")):
        proc = cli("domain", "check", *args, cwd=tmp_path)
        assert proc.returncode == 2 and proc.stdout == "", (args, proc.stdout)
        assert proc.stderr.startswith(message) and proc.stderr.count("\n") == 1, (args, proc.stderr)


def test_the_eight_by_six_file_of_the_speed_figure_passes():
    from pathlib import Path

    domain = load_problem_domain(Path(__file__).parent / "eight_by_six.toml")
    inst = domain.sample(0)
    assert (len(inst.recipients), len(inst.resources)) == (8, 6)
    assert sum(r.divisible for r in inst.resources) == 3
    assert check(domain, studies=False).ok
