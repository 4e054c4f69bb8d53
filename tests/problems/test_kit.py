"""Both example files pass the conformance kit: as objects, by the registered name ``file`` and from the command line."""

from __future__ import annotations

import json

from fairarena.domains import DOMAINS, check
from fairarena.problems import FILE, SEATS, VACCINES, load_problem_domain

from .conftest import cli


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


def test_the_eight_by_six_file_of_the_speed_figure_passes():
    from pathlib import Path

    domain = load_problem_domain(Path(__file__).parent / "eight_by_six.toml")
    inst = domain.sample(0)
    assert (len(inst.recipients), len(inst.resources)) == (8, 6)
    assert sum(r.divisible for r in inst.resources) == 3
    assert check(domain, studies=False).ok
