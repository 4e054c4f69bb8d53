"""The one provenance record."""

from __future__ import annotations

import json
import sys

from fairarena.provenance import git_revision, package_versions, run_record


def test_run_record_fields_and_json():
    r = run_record({"a": 1}, 7, command="x")
    assert r["config"] == {"a": 1} and r["seed"] == 7 and r["command"] == "x"
    assert r["versions"]["python"] == sys.version.split()[0] and "numpy" in r["versions"]
    assert r["created"].endswith("+00:00")
    json.dumps(r)


def test_cached_versions_are_copies():
    v = package_versions()
    v["numpy"] = "tampered"
    assert package_versions()["numpy"] != "tampered"
    r = run_record()
    r["versions"]["numpy"] = "tampered"
    assert run_record()["versions"]["numpy"] != "tampered"


def test_revision_outside_a_repository(tmp_path):
    assert git_revision(tmp_path / "file.py") is None
