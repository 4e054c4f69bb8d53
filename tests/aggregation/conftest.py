import itertools

import numpy as np
import pytest

from fairarena.allocation.problem import AllocationProblem


def tiny_problem(cnss: str = "indicator") -> AllocationProblem:
    """3 patients, 3 indivisible resources: small enough to enumerate every feasible allocation."""
    return AllocationProblem(
        ids=("P1", "P2", "P3"), resources=("ICU", "Ventilator", "Nursing"),
        capacity=np.array([1.0, 1.0, 3.0]),
        need=np.array([[1, 1, 2], [1, 0, 1], [0, 1, 2]], dtype=float),
        indivisible=np.array([True, True, True]),
        survival=np.array([0.9, 0.5, 0.7]), urgency=np.array([3.0, 1.0, 2.0]),
        disadvantage=np.array([0.2, 0.5, 0.3]), vulnerability=np.array([0.1, 0.3, 0.6]),
        gini_resource="Nursing", cnss=cnss)


def all_allocations(p: AllocationProblem) -> np.ndarray:
    """Every feasible integral allocation within need (brute force)."""
    cols = []
    for r in range(p.n_resources):
        opts = [c for c in itertools.product(*(range(int(p.need[i, r]) + 1) for i in range(p.n)))
                if sum(c) <= p.capacity[r]]
        cols.append(opts)
    out = []
    for combo in itertools.product(*cols):
        out.append(np.array(combo, dtype=float).T)
    return np.stack(out)


@pytest.fixture(scope="session")
def tiny():
    return tiny_problem()


@pytest.fixture(scope="session")
def tiny_all(tiny):
    return all_allocations(tiny)
