"""fairarena.sweep stands apart from the debate study: it imports the bandit notions, the preference
cultures, execution and the core modules, and its tables and figures from fairarena.report.sweep_figures,
never the arena, a domain, the study or fairarena.experiments (function-local imports included)."""

from __future__ import annotations

from import_scan import SRC, imported

# the packages and top-level modules fairarena.sweep may import (anything else is a new dependency: add it
# here only if it is not the debate study's side)
ALLOWED = {"bandit", "preferences", "execution", "report", "errors", "fsutil", "inputs", "lazy", "registry",
           "provenance", "cli_common", "progress"}


def test_the_sweep_imports_no_study_arena_or_domain():
    names = imported(sorted((SRC / "sweep").rglob("*.py")))
    assert "fairarena.sweep.config" in names and "fairarena.bandit.notions" in names  # the scan sees them
    assert {n.split(".")[1] for n in names} - {"sweep"} == ALLOWED
    assert {n for n in names if n.startswith("fairarena.report.")} == {"fairarena.report.sweep_figures"}


def test_the_sweep_figures_import_only_the_notions_and_fsutil():
    assert imported([SRC / "report" / "sweep_figures.py"]) == {"fairarena.bandit.notions", "fairarena.fsutil"}


def test_no_package_but_the_experiments_shims_imports_the_sweep_back():
    # the sweep's dependencies never import it (no cycle); fairarena.experiments' old paths re-export it
    for pkg in ("bandit", "preferences", "report"):
        assert not [n for n in imported(sorted((SRC / pkg).rglob("*.py"))) if n.startswith("fairarena.sweep")], pkg
    for mod in ("execution", "errors", "fsutil", "inputs", "lazy", "registry", "provenance", "cli_common"):
        assert not [n for n in imported([SRC / f"{mod}.py"]) if n.startswith("fairarena.sweep")], mod
