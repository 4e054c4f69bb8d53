"""Hostile input through the real commands: always one line on stderr, exit 2, no traceback, nothing written."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from fairarena.cli import app

runner = CliRunner()


def fa(*args: str):
    r = runner.invoke(app, [str(a) for a in args])
    return r


def assert_one_line_error(r, *needles: str) -> None:
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr, r.exception)
    assert "Traceback" not in r.stderr and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    for n in needles:
        assert n in r.stderr, (n, r.stderr)


@pytest.fixture
def files(tmp_path):
    f = {}
    f["binary"] = tmp_path / "binary.json"
    f["binary"].write_bytes(bytes(range(256)) * 4)
    f["latin1"] = tmp_path / "latin1.json"
    f["latin1"].write_bytes('{"note": "caf\xe9"}'.encode("latin-1"))
    f["deep"] = tmp_path / "deep.json"
    f["deep"].write_text("[" * 50_000 + "]" * 50_000)
    f["strings"] = tmp_path / "strings.json"
    f["strings"].write_text(json.dumps({"rewards": [[0.9, 0.1], ["0.5", 0.5]]}))
    f["file"] = tmp_path / "a-file"
    f["file"].write_text("x")
    return f


@pytest.mark.parametrize("kind, needle", [("binary", "binary file"), ("latin1", "not UTF-8"),
                                          ("deep", "nested 50000 levels"), ("strings", "rewards[1][0]")])
def test_policy_rewards_file(files, kind, needle):
    assert_one_line_error(fa("policy", "--notion", "pf", "--rewards", files[kind]), needle)


@pytest.mark.parametrize("kind, needle", [("binary", "binary file"), ("latin1", "not UTF-8"), ("deep", "nested")])
def test_triage_cohort_file(files, kind, needle, tmp_path):
    alloc = tmp_path / "alloc.json"
    alloc.write_text('{"allocation": {}}')
    assert_one_line_error(fa("triage", "metrics", "--cohort", files[kind], "--allocation", alloc), "cohort", needle)


def test_bom_json_is_read_as_json(tmp_path):
    cohort = tmp_path / "cohort.json"
    assert fa("triage", "cohort", "--seed", "3", "--out", cohort).exit_code == 0
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + cohort.read_bytes())
    plain = fa("triage", "optimal", "--cohort", cohort, "--framework", "utilitarian", "--json")
    with_bom = fa("triage", "optimal", "--cohort", bom, "--framework", "utilitarian", "--json")
    assert plain.exit_code == with_bom.exit_code == 0
    assert json.loads(plain.stdout) == json.loads(with_bom.stdout)
    rewards = tmp_path / "rewards"  # no suffix: the content decides; a BOM must not make it CSV
    rewards.write_bytes(b"\xef\xbb\xbf" + b'{"rewards": [[0.9, 0.1], ["x", 0.5]]}')
    assert_one_line_error(fa("policy", "--notion", "pf", "--rewards", rewards), "rewards[1][0]")


@pytest.mark.parametrize("argv", [
    ("sweep", "--preset", "tiny", "--out", "{file}"),
    ("preflib", "--file", "{file}", "--out", "{file}"),
    ("learn", "--learner", "uniform", "--T", "100", "--seeds", "1", "--out", "{file}"),
    ("debate", "--model", "scripted", "--rag", "off", "--out", "{file}"),
])
def test_out_names_an_existing_file(files, argv):
    r = fa(*(a.format(file=files["file"]) for a in argv))
    assert_one_line_error(r, "out", "is a file")
    assert files["file"].read_text() == "x"


@pytest.mark.parametrize("argv", [
    ("triage", "cohort", "--seed", "1", "--out", "{dir}"),
])
def test_out_file_names_a_folder(tmp_path, argv):
    assert_one_line_error(fa(*(a.format(dir=tmp_path) for a in argv)), "out", "is a folder")


def _unwritable(tmp_path):
    if os.geteuid() == 0:
        if not os.path.isdir("/sys/kernel"):
            pytest.skip("needs /sys when run as root")
        return "/sys/fairarena-test-out"
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    return str(ro / "out")


@pytest.mark.parametrize("argv", [
    ("sweep", "--preset", "tiny", "--out", "{out}"),
    ("learn", "--learner", "uniform", "--T", "100", "--seeds", "1", "--out", "{out}"),
    ("debate", "--model", "scripted", "--rag", "off", "--out", "{out}"),
    ("triage", "cohort", "--seed", "1", "--out", "{out}.json"),
])
def test_unwritable_out_is_named(tmp_path, argv):
    out = _unwritable(tmp_path)
    r = fa(*(a.format(out=out) for a in argv))
    assert_one_line_error(r, out)
    assert ".tmp" not in r.stderr  # the user's path, never an internal temporary name


@pytest.mark.parametrize("argv", [
    ("triage", "cohort", "--seed", "-1"),
    ("debate", "--seed", "-1", "--model", "scripted", "--rag", "off"),
    ("learn", "--seed", "-1", "--learner", "uniform", "--T", "100", "--seeds", "1", "--out", "{tmp}/l"),
    ("sweep", "--preset", "tiny", "--seed", "-1", "--out", "{tmp}/s"),
    ("preflib", "--file", "{tmp}/x.soc", "--seed", "-1", "--out", "{tmp}/p"),
])
def test_negative_seed_rejected_everywhere(tmp_path, argv):
    r = fa(*(a.format(tmp=tmp_path) for a in argv))
    assert_one_line_error(r, "seed", "-1")
    assert sorted(os.listdir(tmp_path)) == []  # rejected before any write


@pytest.mark.parametrize("argv", [
    ("preflib", "--file", "src/fairarena/data/preflib/00024-00000003.soc", "--voters", "0", "--out", "{tmp}/p"),
    ("debate", "--model", "scripted", "--rag", "off", "--temperature", "-1", "--out", "{tmp}/d"),
    ("debate", "--model", "scripted", "--rag", "off", "--max-tokens", "0", "--out", "{tmp}/d"),
    ("debate", "--model", "scripted", "--rag", "off", "--closing", "nosuch", "--out", "{tmp}/d"),
    ("sweep", "--preset", "tiny", "--workers", "0", "--out", "{tmp}/s"),
    ("learn", "--learner", "pf", "--gamma", "2", "--out", "{tmp}/l"),
])
def test_bad_option_leaves_no_output_folder(tmp_path, argv):
    r = fa(*(a.format(tmp=tmp_path) for a in argv))
    assert_one_line_error(r)
    assert os.listdir(tmp_path) == []


def test_check_tolerance_validated(tmp_path):
    rw = tmp_path / "rw.json"
    rw.write_text('{"rewards": [[0.9, 0.1], [0.1, 0.9]]}')
    p = tmp_path / "p.json"
    p.write_text('{"policy": [0.5, 0.5]}')
    assert_one_line_error(fa("check", "--rewards", rw, "--policy", p, "--tol", "-1"), "tol")


def test_debate_store_corpus_and_cache_paths_checked_before_the_out_folder(tmp_path):
    """--rag-dir naming a file failed deep in the retrieval store ('File exists') and left --out behind."""
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    cases = [(["--rag", "on", "--rag-dir", a_file], "rag-dir = "),
             (["--corpus-dir", tmp_path / "missing"], "corpus-dir = "),
             (["--cache", tmp_path], "cache = ")]
    for k, (args, fragment) in enumerate(cases):
        out = tmp_path / f"o{k}"
        r = runner.invoke(app, ["debate", *[str(a) for a in args], "--rounds", "1", "--out", str(out)])
        assert r.exit_code == 2, (args, r.output)
        assert fragment in r.output and "Traceback" not in r.output, (args, r.output)
        assert not out.exists(), args
