"""The execution backends: same results in task order on every backend, completion callbacks,
validation before any task runs."""

from __future__ import annotations

import functools

import pytest

from fairarena.errors import InputError
from fairarena.execution import BACKENDS, backend_names, iter_tasks, map_tasks, resolve_backend


def _square_plus(x: int, c: int = 0) -> int:
    return x * x + c


def _fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three")
    return x


def test_canonical_names_and_aliases():
    assert backend_names() == ("serial", "processes", "threads", "dask")
    assert resolve_backend("joblib") == "processes"
    assert resolve_backend("loky") == "processes"
    assert resolve_backend("threading") == "threads"
    assert resolve_backend("sequential") == "serial"
    assert set(backend_names()) < set(backend_names(aliases=True))
    with pytest.raises(InputError) as e:
        resolve_backend("ray")
    assert e.value.field == "backend" and "serial, processes, threads, dask" in str(e.value)


@pytest.mark.parametrize("backend", ["serial", "processes", "threads"])
def test_results_in_task_order_and_callback_per_task(backend):
    fn = functools.partial(_square_plus, c=1)
    seen: list[tuple[int, int]] = []
    out = map_tasks(fn, range(7), backend=backend, workers=2, on_done=lambda i, r: seen.append((i, r)))
    assert out == [x * x + 1 for x in range(7)]
    assert sorted(seen) == [(i, i * i + 1) for i in range(7)]


def test_iter_tasks_yields_every_index_once():
    got = dict(iter_tasks(_square_plus, [5, 6, 7], backend="threads", workers=3))
    assert got == {0: 25, 1: 36, 2: 49}


def test_empty_task_list():
    assert map_tasks(_square_plus, [], backend="processes") == []


@pytest.mark.parametrize("kw, field", [
    ({"backend": "nope"}, "backend"),
    ({"workers": 0}, "workers"),
    ({"workers": True}, "workers"),
    ({"backend": "processes", "address": "tcp://x:1"}, "address"),
])
def test_bad_arguments_rejected_before_any_task(kw, field):
    ran: list[int] = []
    with pytest.raises(InputError) as e:
        map_tasks(_square_plus, [1], on_done=lambda i, r: ran.append(i), **kw)
    assert e.value.field == field and ran == []


@pytest.mark.parametrize("backend", ["serial", "threads", "processes"])
def test_task_errors_propagate(backend):
    with pytest.raises(ValueError, match="three"):
        map_tasks(_fail_on_three, range(5), backend=backend, workers=2)


def test_dask_local_cluster_matches_serial():
    pytest.importorskip("distributed")
    out = map_tasks(_square_plus, range(4), backend="dask", workers=1)
    assert out == map_tasks(_square_plus, range(4), backend="serial")
    assert "dask" in BACKENDS


def test_a_sweep_gives_identical_frames_on_every_local_backend():
    import pandas as pd

    from fairarena.sweep.config import preset
    from fairarena.sweep.run import run_sweep

    cfg = preset("tiny")
    frames = {b: run_sweep(cfg, limit=10, backend=b, workers=2).frame for b in ("serial", "threads", "processes")}
    pd.testing.assert_frame_equal(frames["serial"], frames["threads"], check_exact=True)
    pd.testing.assert_frame_equal(frames["serial"], frames["processes"], check_exact=True)
    assert run_sweep(cfg, limit=10, backend="joblib").summary["timing"]["backend"] == "processes"
