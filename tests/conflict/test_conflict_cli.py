"""``fairarena audit conflict``: JSON shape, files, exit 2 before any write."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from fairarena.cli import app


def test_audit_conflict_cli(tmp_path):
    runner = CliRunner()
    dest = tmp_path / "d.json"
    assert runner.invoke(app, ["tourism", "destination", "--seed", "1", "--pois", "12", "--out", str(dest)]).exit_code == 0
    r = runner.invoke(app, ["audit", "conflict", "--problem", str(dest), "--x", "satisfaction", "--y", "exposure_gini",
                            "--points", "8", "--k", "3", "--json", "--out", str(tmp_path / "aud")])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["x"] == "satisfaction" and doc["alternatives"][0]["attention"] == "position"
    assert (tmp_path / "aud" / "frontier.png").stat().st_size > 0
    saved = json.loads((tmp_path / "aud" / "result.json").read_text())
    assert saved["points"] == doc["points"] and saved["provenance"]["config"]["x"] == "satisfaction"
    for args, field in ((["--x", "satisfaction", "--y", "nope"], "--y"), (["--x", "esg", "--y", "rmg"], "--x"),
                        (["--x", "satisfaction", "--y", "exposure_gini", "--points", "1"], "--points")):
        r = runner.invoke(app, ["audit", "conflict", "--problem", str(dest), *args, "--out", str(tmp_path / "bad")])
        assert r.exit_code == 2 and field in r.output
        assert not (tmp_path / "bad").exists()   # refused before any write


def test_audit_conflict_accepts_the_papers_nursing_gini(tmp_path):
    from fairarena.triage import sample_cohort

    runner = CliRunner()
    cohort = tmp_path / "c.json"
    cohort.write_text(sample_cohort(3, "tight").to_json())
    r = runner.invoke(app, ["audit", "conflict", "--problem", str(cohort), "--x", "esg", "--y", "gini",
                            "--points", "4", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["exact"] and doc["method"].startswith("exact (epsilon-constraint on gini") and doc["points"]
    r = runner.invoke(app, ["audit", "conflict", "--problem", str(cohort), "--x", "var", "--y", "rmg", "--points", "3"])
    assert r.exit_code == 0, r.output
    out = " ".join(r.stdout.split())                 # the console wraps long lines
    assert "(sampled (" in out and "var has no linear form" in out
    r = runner.invoke(app, ["audit", "conflict", "--problem", str(cohort), "--x", "esg", "--y", "gini_nursing",
                            "--out", str(tmp_path / "bad")])
    assert r.exit_code == 2 and "--y" in r.output and "gini_cnss" in r.output and not (tmp_path / "bad").exists()
