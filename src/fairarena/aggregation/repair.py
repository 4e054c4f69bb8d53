"""Coordinate-wise mean and median of the agents' allocations, repaired to feasibility.

The repair is the arena's ``mean-repair`` fix, kept here as the aggregation layer's own (the arena sits
above this layer and may import it from here)."""

from __future__ import annotations

import numpy as np

from fairarena.allocation.problem import AllocationProblem

__all__ = ["repair_to_feasible", "mean_repair", "median_repair"]

#: an amount this close to a whole number counts as that number: the tolerance of
#: :func:`fairarena.allocation.problem.check_feasibility`, so an allocation it accepts is left alone
_ATOL = 1e-6


def repair_to_feasible(problem: AllocationProblem, x: np.ndarray) -> np.ndarray:
    """Smallest obvious fix of a non-negative allocation (a column that is already valid, within
    :func:`~fairarena.allocation.problem.check_feasibility`'s tolerance, is left alone): indivisible amounts rounded down, whole units
    left over handed out by largest fractional remainder (ties: patient order) within capacity;
    divisible resources scaled down proportionally where they exceed capacity."""
    x = np.maximum(np.asarray(x, dtype=float), 0.0).copy()
    for r in range(problem.n_resources):
        col = x[:, r]
        if problem.indivisible[r]:
            if np.all(np.abs(col - np.round(col)) <= _ATOL) and col.sum() <= problem.capacity[r] + _ATOL:
                continue   # whole within the feasibility tolerance and within capacity: left alone
            base = np.floor(col + _ATOL)
            while base.sum() > problem.capacity[r]:
                base[int(np.argmax(base))] -= 1
            left = int(round(problem.capacity[r] - base.sum()))
            order = sorted(range(problem.n), key=lambda i: (-(col[i] - base[i]), i))
            for i in order:
                if left <= 0 or col[i] - base[i] <= _ATOL:
                    break
                base[i] += 1
                left -= 1
            x[:, r] = base
        elif col.sum() > problem.capacity[r]:
            x[:, r] = col * (problem.capacity[r] / col.sum())
    return x


def mean_repair(problem: AllocationProblem, allocations: list[np.ndarray]) -> np.ndarray:
    """Coordinate-wise mean of ``allocations``, repaired (:func:`repair_to_feasible`)."""
    return repair_to_feasible(problem, np.mean(np.stack(allocations), axis=0))


def median_repair(problem: AllocationProblem, allocations: list[np.ndarray]) -> np.ndarray:
    """Coordinate-wise median of ``allocations`` (mean of the two middle values for an even count),
    repaired (:func:`repair_to_feasible`)."""
    return repair_to_feasible(problem, np.median(np.stack(allocations), axis=0))
