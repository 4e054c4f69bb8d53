"""Where independent tasks run: one vocabulary of execution backends for sweeps, learners and studies.

Four backends, in :data:`BACKENDS` (a :class:`~fairarena.registry.Registry`):

- ``serial``: in this process, one task after another (debugging, tiny jobs, already-parallel callers);
- ``processes``: local worker processes (joblib's loky executor: robust to crashed workers, reused
  between calls);
- ``threads``: a thread pool in this process (for tasks that release the GIL, e.g. compiled kernels,
  or that wait on I/O such as model calls);
- ``dask``: a Dask distributed cluster, either an existing scheduler (``address="tcp://host:8786"``)
  or a ``LocalCluster`` of ``workers`` processes started for the call (``pip install 'fairarena[dask]'``).

Older spellings are accepted as aliases (``joblib``/``loky`` -> ``processes``, ``threading`` ->
``threads``, ``sequential`` -> ``serial``). :func:`map_tasks` maps a picklable function over tasks and
returns the results in task order, whichever backend ran them and in whatever order they finished;
``on_done(index, result)`` is called in the caller's process as each task completes (progress bars,
incremental writing). :func:`iter_tasks` yields ``(index, result)`` in completion order instead.

Tasks are the caller's unit of work, fixed by the caller and never by the number of workers, so the
results are identical on every backend (the tests check this for all four).

No orphans: a worker process outlives its parent by at most about a second. Every ``processes`` worker
runs :func:`watch_parent` as its initializer, a daemon thread that polls ``os.getppid()`` every
:data:`PARENT_POLL` seconds and ends the worker with ``os._exit`` once it has been reparented (the
parent died, even by SIGKILL, which runs no clean-up). The worker's helpers (loky's and
multiprocessing's resource trackers) then see their pipes close and exit too. Linux's
``PR_SET_PDEATHSIG`` is not used: it fires when the *thread* that started the worker ends, and loky
starts and reuses workers from different threads, so it would kill healthy workers of a live parent.
Dask's ``LocalCluster`` workers watch their parent themselves (distributed's nanny); both are tested
with a real ``kill -9`` (``tests/reliability/test_no_orphans.py``).

This module imports nothing heavy; joblib, concurrent.futures and distributed are imported only when
their backend runs.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from typing import Any, Callable, Iterable, Iterator, Sequence

from fairarena.errors import InputError
from fairarena.registry import Registry

Runner = Callable[[Callable[[Any], Any], Sequence[Any], int, "str | None"], Iterator[tuple[int, Any]]]

BACKENDS: Registry[Runner] = Registry("execution backend", field="backend")
"""The execution backends by name (``serial``, ``processes``, ``threads``, ``dask``, plus aliases)."""


PARENT_POLL = 0.5
"""Seconds between a worker's checks that its parent is alive (see :func:`watch_parent`)."""

CANCELLED_WARNING = r"\d+ tasks (which were still being processed by the workers have been cancelled|have been successfully executed  ?but not used)"
"""joblib's warning when the caller stops before every result is used (results computed but not used, tasks in
flight cancelled); the ``processes`` backend silences it."""


def _watch_loop(parent: int, interval: float) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(70)  # the parent died: nothing left to deliver results to
        time.sleep(interval)


def watch_parent(parent: int, interval: float = PARENT_POLL) -> None:
    """Worker initializer: exit this process (``os._exit``) within ``interval`` seconds of the death of
    process ``parent``, its parent, noticed as a change of ``os.getppid()`` (the kernel reparents an
    orphan). A worker whose parent is already gone exits at once. Runs as a daemon thread, so the
    worker's tasks are not held up; idempotent (one watchdog per process: a process forked from a watched
    one, whose copy of the flag says watched but which has no thread, starts its own)."""
    global _WATCHING
    if os.getppid() != parent:
        os._exit(70)
    if _WATCHING == os.getpid():
        return
    _WATCHING = os.getpid()
    threading.Thread(target=_watch_loop, args=(parent, interval), name="fairarena-parent-watch",
                     daemon=True).start()


_WATCHING: int | None = None
"""The process (pid) whose watchdog thread runs; a forked child has the flag but not the thread."""


def default_workers() -> int:
    """The number of CPUs this process may use (the affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def backend_names(*, aliases: bool = False) -> tuple[str, ...]:
    """The canonical backend names (``aliases=True`` adds the accepted older spellings)."""
    if aliases:
        return BACKENDS.names()
    return BACKENDS.names(where=lambda e: "alias_of" not in e.meta)


def resolve_backend(name: str) -> str:
    """The canonical name of a backend or alias; unknown names raise :class:`InputError`."""
    if not isinstance(name, str) or name not in BACKENDS:
        raise InputError("backend", name, f"expected one of {', '.join(backend_names())}")
    return BACKENDS.entry(name).meta.get("alias_of", name)


MAX_THREADS = 4096
"""At most this many workers on the ``threads`` backend (debates in flight against model servers: the
documented uses go to a few hundred; the default is at most 1,024)."""
PROCESSES_PER_CORE = 4
MIN_PROCESS_LIMIT = 32
"""At most ``max(32, 4 x cores)`` worker processes on the ``processes`` backend and in a dask
``LocalCluster``: each is a Python process of 100 MB or more, and more processes than cores make CPU-bound
tasks no faster. ``--workers 1000000000`` used to be taken as given (a ``LocalCluster`` started that many
processes)."""


def max_workers(backend: str | None, address: str | None = None) -> int | None:
    """The largest worker count ``backend`` accepts (None: no limit -- ``serial`` ignores it, and the workers
    of a dask scheduler given by ``address`` are not started by this process)."""
    name = BACKENDS.entry(backend).meta.get("alias_of", backend) if backend in BACKENDS else backend
    if name == "threads":
        return MAX_THREADS
    if name == "processes" or (name == "dask" and not address):
        return max(MIN_PROCESS_LIMIT, PROCESSES_PER_CORE * default_workers())
    return None


def check_workers(workers: int | None, backend: str | None = None, address: str | None = None) -> int | None:
    """A worker count: a positive integer, and at most :func:`max_workers` for ``backend`` (when given)."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InputError("workers", workers, "expected a positive integer")
    limit = max_workers(backend, address)
    if workers is not None and limit is not None and workers > limit:
        what = ("threads" if limit == MAX_THREADS else
                f"worker processes (max({MIN_PROCESS_LIMIT}, {PROCESSES_PER_CORE} x {default_workers()} cores))")
        raise InputError("workers", workers, f"at most {limit:,} {what} on the {backend} backend")
    return workers


def check_backend(backend: str, workers: int | None = None, address: str | None = None) -> str:
    """Validate a backend choice as a whole (name, worker count, address only with dask) before any
    work starts; returns the canonical backend name."""
    name = resolve_backend(backend)
    check_workers(workers, name, address)
    if address is not None and name != "dask":
        raise InputError("address", address, "only the dask backend takes a scheduler address")
    return name


def iter_tasks(fn: Callable[[Any], Any], tasks: Iterable[Any], *, backend: str = "processes",
               workers: int | None = None, address: str | None = None) -> Iterator[tuple[int, Any]]:
    """Run ``fn(task)`` for every task; yield ``(task index, result)`` in completion order.

    Validation (backend name, worker count, address only with dask) happens before any task runs.
    """
    name = check_backend(backend, workers, address)
    tasks = list(tasks)
    if not tasks:
        return iter(())
    return BACKENDS[name](fn, tasks, workers or 0, address)


def map_tasks(fn: Callable[[Any], Any], tasks: Iterable[Any], *, backend: str = "processes",
              workers: int | None = None, address: str | None = None,
              on_done: Callable[[int, Any], None] | None = None) -> list[Any]:
    """``[fn(task) for task in tasks]`` on ``backend``, results in task order.

    ``on_done(index, result)`` runs in the calling process as each task completes (in completion
    order). ``workers`` defaults to :func:`default_workers` (``processes``, ``threads``, a dask
    ``LocalCluster``); it is ignored by ``serial`` and by a dask cluster given by ``address``.
    """
    tasks = list(tasks)
    out: list[Any] = [None] * len(tasks)
    for i, res in iter_tasks(fn, tasks, backend=backend, workers=workers, address=address):
        out[i] = res
        if on_done is not None:
            on_done(i, res)
    return out


def _indexed(fn: Callable[[Any], Any], i: int, task: Any) -> tuple[int, Any]:
    return i, fn(task)


@BACKENDS.register("serial", title="In this process, one task at a time")
def _serial(fn: Callable[[Any], Any], tasks: Sequence[Any], workers: int, address: str | None
            ) -> Iterator[tuple[int, Any]]:
    for i, t in enumerate(tasks):
        yield i, fn(t)


@BACKENDS.register("processes", title="Local worker processes (joblib loky)")
def _processes(fn: Callable[[Any], Any], tasks: Sequence[Any], workers: int, address: str | None
               ) -> Iterator[tuple[int, Any]]:
    n = min(workers or default_workers(), len(tasks))
    if n == 1:
        yield from _serial(fn, tasks, 1, None)
        return
    from joblib import Parallel, delayed
    from joblib.parallel import LokyBackend

    # when a task raises (a full disk, a dead worker) or the caller stops early, joblib cancels the tasks
    # still queued and says so in a two-line UserWarning on stderr, before the caller's own one-line error
    # (the cancelling is this module's intent: the caller reruns to resume)
    warnings.filterwarnings("ignore", message=CANCELLED_WARNING, category=UserWarning)
    _quiet_loky_cancel_race()
    _quiet_resource_tracker()
    # the same initializer and arguments on every call, so joblib keeps reusing its executor
    loky = LokyBackend(initializer=watch_parent, initargs=(os.getpid(),))
    par = Parallel(n_jobs=n, backend=loky, return_as="generator_unordered", batch_size=1,
                   pre_dispatch="all")
    yield from par(delayed(_indexed)(fn, i, t) for i, t in enumerate(tasks))


def _quiet_loky_cancel_race() -> None:
    """Install (once) a ``threading.excepthook`` that drops one known traceback of loky 4 (joblib 1.6):
    when tasks are cancelled while loky's manager thread queues the next ones, that thread can die with
    ``KeyError`` in ``add_call_item_to_queue`` (the cancel emptied ``pending_work_items`` first) and print
    an 11-line traceback after the caller's one-line error. The executor is being shut down then anyway;
    every other thread exception is passed on unchanged."""
    global _loky_hook_installed
    if _loky_hook_installed:
        return
    _loky_hook_installed = True
    previous = threading.excepthook

    def hook(args: Any) -> None:
        tb = args.exc_traceback
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if (args.exc_type is KeyError and args.thread is not None and args.thread.name == "ExecutorManagerThread"
                and tb is not None and tb.tb_frame.f_code.co_name == "add_call_item_to_queue"
                and "loky" in tb.tb_frame.f_code.co_filename):
            return
        previous(args)

    threading.excepthook = hook


_loky_hook_installed = False

TRACKER_WARNINGS = "ignore:resource_tracker:UserWarning"
"""The ``-W`` option loky's resource tracker is started with (see :func:`_quiet_resource_tracker`)."""


def _quiet_resource_tracker() -> None:
    """Start loky's resource tracker (if this process has none yet) with its own ``resource_tracker: ...``
    warnings ignored. When the caller stops early, joblib kills the workers; a killed worker cannot take
    back its registration of a semaphore the parent has meanwhile unlinked, and the tracker, at its exit,
    warns of "1 leaked semlock objects" and then of ``FileNotFoundError`` for the same name (about 1 early
    stop in 10-150 here, after the caller's one-line error). Nothing leaked, and a resource that did leak is
    still unlinked by the tracker; only its message is gone. ``sys.warnoptions`` is what loky passes to the
    tracker's command line; it is restored at once, so no other process or warning is affected."""
    import sys

    from joblib.externals.loky.backend import resource_tracker

    if getattr(resource_tracker._resource_tracker, "_pid", None) is not None:
        return  # already running (started by us, or by other joblib use in this process): left as it is
    added = TRACKER_WARNINGS not in sys.warnoptions
    if added:
        sys.warnoptions.append(TRACKER_WARNINGS)
    try:
        resource_tracker.ensure_running()
    finally:
        if added:
            sys.warnoptions.remove(TRACKER_WARNINGS)


@BACKENDS.register("threads", title="A thread pool in this process")
def _threads(fn: Callable[[Any], Any], tasks: Sequence[Any], workers: int, address: str | None
             ) -> Iterator[tuple[int, Any]]:
    n = min(workers or default_workers(), len(tasks))
    if n == 1:
        yield from _serial(fn, tasks, 1, None)
        return
    from concurrent.futures import ThreadPoolExecutor, as_completed

    with ThreadPoolExecutor(max_workers=n) as pool:
        futs = [pool.submit(_indexed, fn, i, t) for i, t in enumerate(tasks)]
        try:
            for fut in as_completed(futs):
                yield fut.result()
        finally:
            for fut in futs:
                fut.cancel()


@BACKENDS.register("dask", title="A Dask distributed cluster (scheduler address or LocalCluster)")
def _dask(fn: Callable[[Any], Any], tasks: Sequence[Any], workers: int, address: str | None
          ) -> Iterator[tuple[int, Any]]:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:  # pragma: no cover - optional extra
        raise InputError("backend", "dask",
                         "dask.distributed is not installed: pip install 'fairarena[dask]'") from None
    cluster = None
    try:
        if address:
            try:
                client = Client(address, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise InputError("address", address, f"cannot reach a Dask scheduler ({exc})") from None
        else:
            cluster = LocalCluster(n_workers=min(workers or default_workers(), len(tasks)), threads_per_worker=1,
                                   processes=True, dashboard_address=None)
            client = Client(cluster)
        with client:
            futs = [client.submit(_indexed, fn, i, t, pure=False) for i, t in enumerate(tasks)]
            for fut in as_completed(futs):
                yield fut.result()
    finally:
        if cluster is not None:
            cluster.close()


for _alias, _target in (("joblib", "processes"), ("loky", "processes"), ("threading", "threads"),
                        ("sequential", "serial")):
    BACKENDS.add(_alias, BACKENDS[_target], title=f"alias of {_target}", alias_of=_target)
del _alias, _target
