"""The same tasks on a Dask LocalCluster give the serial run's results."""

from __future__ import annotations

import pytest

from fairarena.study.design import to_toml
from fairarena.study.store import load_results, run_study

from .conftest import outcome

pytestmark = pytest.mark.dask


def test_dask_local_cluster_equals_serial(tiny_run, tmp_path):
    pytest.importorskip("distributed")
    cfg, root = tiny_run
    s = run_study(cfg, to_toml(cfg), tmp_path / "dask", backend="dask", workers=2)
    assert s.ok == s.total and s.failed == 0
    assert [outcome(r) for r in load_results(tmp_path / "dask")] == [outcome(r) for r in load_results(root)]
