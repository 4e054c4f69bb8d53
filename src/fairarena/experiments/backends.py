"""Kept for older imports: the execution backends now live in :mod:`fairarena.execution`."""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from fairarena.execution import BACKENDS, default_workers, iter_tasks

__all__ = ["BACKENDS", "default_workers", "run_tasks"]


def run_tasks(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], *, backend: str = "processes",
              workers: int | None = None, address: str | None = None) -> Iterator[tuple[int, Any]]:
    """Run ``fn(*task)`` for every task; yield ``(task index, result)`` as they complete."""
    return iter_tasks(_Star(fn), tasks, backend=backend, workers=workers, address=address)


class _Star:
    """``fn(*task)`` as a picklable one-argument callable."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __call__(self, task: tuple[Any, ...]) -> Any:
        return self.fn(*task)
