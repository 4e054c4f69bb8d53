from __future__ import annotations

import pytest

from fairarena.sweep import preset, run_sweep


@pytest.fixture(scope="session")
def tiny_cfg():
    return preset("tiny")


@pytest.fixture(scope="session")
def tiny_result(tiny_cfg):
    return run_sweep(tiny_cfg, workers=1)
