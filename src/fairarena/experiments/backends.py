"""Where the sweep's tasks run: in-process, joblib (loky processes) or a Dask distributed cluster.

Dask rather than Ray: it is pure Python (``pip install 'fairarena[dask]'``, no separate runtime or
binary wheels), a ``LocalCluster`` starts in a second for tests, and an existing cluster is one
address (``tcp://host:8786``). Every backend runs the same tasks (fixed by the config, never by the
number of workers) through the same function, so results are identical whichever ran them.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterator, Sequence

from fairarena.errors import InputError

BACKENDS = ("joblib", "dask")


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def _indexed(fn: Callable[..., Any], i: int, *args: Any) -> tuple[int, Any]:
    return i, fn(*args)


def run_tasks(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], *, backend: str = "joblib",
              workers: int | None = None, address: str | None = None) -> Iterator[tuple[int, Any]]:
    """Run ``fn(*task)`` for every task; yield ``(task index, result)`` as they complete."""
    if backend not in BACKENDS:
        raise InputError("backend", backend, f"expected one of {', '.join(BACKENDS)}")
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise InputError("workers", workers, "expected a positive integer")
    if backend == "joblib":
        if address is not None:
            raise InputError("address", address, "only the dask backend takes a cluster address")
        yield from _joblib(fn, tasks, workers or default_workers())
    else:
        yield from _dask(fn, tasks, workers, address)


def _joblib(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], workers: int) -> Iterator[tuple[int, Any]]:
    if workers == 1 or len(tasks) <= 1:
        for i, t in enumerate(tasks):
            yield i, fn(*t)
        return
    from joblib import Parallel, delayed

    par = Parallel(n_jobs=min(workers, len(tasks)), backend="loky", return_as="generator_unordered",
                   batch_size=1, pre_dispatch="all")
    yield from par(delayed(_indexed)(fn, i, *t) for i, t in enumerate(tasks))


def _dask(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], workers: int | None,
          address: str | None) -> Iterator[tuple[int, Any]]:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:  # pragma: no cover - optional extra
        raise InputError("backend", "dask", "dask.distributed is not installed: pip install 'fairarena[dask]'") from None
    cluster = None
    try:
        if address:
            try:
                client = Client(address, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise InputError("address", address, f"cannot reach a Dask scheduler ({exc})") from None
        else:
            cluster = LocalCluster(n_workers=workers or default_workers(), threads_per_worker=1,
                                   processes=True, dashboard_address=None)
            client = Client(cluster)
        with client:
            futs = [client.submit(_indexed, fn, i, *t, pure=False) for i, t in enumerate(tasks)]
            for fut in as_completed(futs):
                yield fut.result()
    finally:
        if cluster is not None:
            cluster.close()
