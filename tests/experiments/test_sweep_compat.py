"""The sweep moved from fairarena.experiments to fairarena.sweep: the old names and module paths still work,
as the very same objects, and importing them says nothing (the CLI stays quiet)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

MOVED = {"config": "config", "presets": "presets", "sweep": "run", "store": "store",
         "preflib_example": "preflib_example"}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_path_is_the_new_module(old):
    new = importlib.import_module(f"fairarena.sweep.{MOVED[old]}")
    assert importlib.import_module(f"fairarena.experiments.{old}") is new
    assert getattr(importlib.import_module("fairarena.experiments"), old) is new


def test_the_package_names_are_the_sweeps():
    import fairarena.experiments as experiments
    import fairarena.sweep as sweep

    assert experiments.__all__ == sweep.__all__
    for name in sweep.__all__:
        assert getattr(experiments, name) is getattr(sweep, name), name
    from fairarena.experiments.sweep import run_sweep, save_chunk  # as before the move

    assert (run_sweep, save_chunk) == (sweep.run_sweep, sweep.run.save_chunk)


def test_old_paths_import_without_a_warning():
    code = "; ".join(["import fairarena.experiments", *(f"import fairarena.experiments.{m}" for m in MOVED),
                      "from fairarena.experiments import PRESETS, GridConfig, run_sweep"])
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
