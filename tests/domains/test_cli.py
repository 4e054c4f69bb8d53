"""``fairarena domain``: list and check, exit codes 0 / 1 / 2, JSON, and a domain found by its entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from typer.testing import CliRunner

from fairarena.cli import app
from .conftest import write_seats

RUNNER = CliRunner()
ENTRY = "import sys; sys.argv[0] = 'fairarena'; from fairarena.cli import main; main()"

BROKEN = '''
from seats import Seats


class Lossy(Seats):
    name = "seats-lossy"

    def from_dict(self, data):
        out = super().from_dict(data)
        out["seats"] = {k: v for k, v in out["seats"].items() if k != "South"}   # loses a school
        return out


LOSSY = Lossy()
'''


def _invoke(*args: str):
    return RUNNER.invoke(app, list(args), catch_exceptions=False)


def test_check_a_module_object_passes_with_exit_0(tmp_path, monkeypatch):
    write_seats(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    res = _invoke("domain", "check", "seats:SEATS", "--no-studies")
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == "domain seats (seats:SEATS), seed 0" and lines[-1] == "10 of 10 checks passed or skipped"
    assert [ln.split()[:2] for ln in lines[3:] if ln.split() and ln.split()[0] in ("protocol", "debate", "duel-study")] \
        == [["protocol", "pass"], ["debate", "pass"], ["duel-study", "skip"]]
    sys.modules.pop("seats", None)


def test_a_failed_check_exits_1_with_the_table_and_json_names_it(tmp_path, monkeypatch):
    write_seats(tmp_path)
    (tmp_path / "broken_seats.py").write_text(textwrap.dedent(BROKEN))
    monkeypatch.syspath_prepend(str(tmp_path))
    res = _invoke("domain", "check", "broken_seats:LOSSY", "--no-studies")
    assert res.exit_code == 1
    # the lost school changes the problem: the transcript no longer re-scores from its header either
    assert "round-trip        fail" in res.output and "debate            fail" in res.output
    assert res.output.splitlines()[-1] == "8 of 10 checks passed or skipped; failed: round-trip, debate"
    res = _invoke("domain", "check", "broken_seats:Lossy", "--json", "--only", "round-trip,metrics")  # a class
    assert res.exit_code == 1
    out = json.loads(res.output)
    assert out["ok"] is False and out["failed"] == ["round-trip"] and out["domain"] == "seats-lossy"
    assert [c["check"] for c in out["checks"]] == ["round-trip", "metrics"]
    assert out["checks"][0]["detail"].startswith("from_dict changes its data (keys seats), its digest, its problem")
    for m in ("seats", "broken_seats"):
        sys.modules.pop(m, None)


def test_bad_input_exits_2_with_one_line_before_any_check():
    for args, message in [
        (("nosuch",), "error: target = 'nosuch': a registered domain (triage, tourism, tourism-lists"),
        (("no_such_module_xyz:DOMAIN",), "error: target = 'no_such_module_xyz:DOMAIN': an importable module "
                                          "(ModuleNotFoundError: No module named 'no_such_module_xyz')"),
        (("os.path:NO_SUCH",), "error: target = 'os.path:NO_SUCH': an object 'NO_SUCH' in module 'os.path'"),
        (("triage", "--only", "rounds"), "error: --only = 'rounds': one of protocol, round-trip"),
        (("triage", "--seed", "-1"), "error: --seed = -1"),
    ]:
        proc = subprocess.run([sys.executable, "-c", ENTRY, "domain", "check", *args], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1
        assert proc.stderr.startswith(message), proc.stderr


def test_list_shows_the_registered_domains_without_importing_them():
    res = _invoke("domain", "list", "--json")
    rows = {r["name"]: r for r in json.loads(res.output)}
    assert list(rows)[:3] == ["triage", "tourism", "tourism-lists"]
    assert rows["tourism"]["path"] == "fairarena.tourism.domain:TOURISM" and rows["tourism"]["source"] == "fairarena"


def test_an_installed_distribution_is_checked_by_its_entry_point_name(tmp_path):
    """The seats file of docs/domains.md, installed with one entry point: `fairarena domain check seats`."""
    write_seats(tmp_path)
    info = tmp_path / "school_seats-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: school-seats\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text('[fairarena.domains]\nseats = seats:SEATS\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.run([sys.executable, "-c", ENTRY, "domain", "list"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0 and "seats          seats:SEATS  [school-seats]" in proc.stdout, proc.stdout
    proc = subprocess.run([sys.executable, "-c", ENTRY, "domain", "check", "seats", "--json"], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(proc.stdout)
    assert out["ok"] and out["target"] == "seats" and out["domain"] == "seats"
    # an installed domain's studies run by its registered name: its participants in duels and a council
    assert {c["check"]: c["status"] for c in out["checks"]}["council-study"] == "pass"
