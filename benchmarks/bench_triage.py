"""Triage speed figures (issue 5). Prints figures; not a unit test.

    .venv/bin/python benchmarks/bench_triage.py [--cohorts 20] [--batch 100000]
    .venv/bin/python benchmarks/bench_triage.py --scale [--sizes 8 32 128 512] [--time-limit 60]

* all six framework optima for one cohort (target <= 1 s), per capacity variant, with the default
  Rawlsian (max RMG, then ESG) and, for comparison, with the optional exact leximin refinement;
* metrics for a stack of ``--batch`` random allocations (target <= 1 s), against the per-allocation
  Python loop (baseline, measured on 2,000 allocations and scaled) in the same run.
* ``--scale`` (issue 10.11): every framework's optimum on random problems of 8 / 32 / 128 / 512
  individuals x 6 resources (3 indivisible with need 1, 3 divisible with needs 5-15; each individual
  needs 2-4 resources; capacities 40-80% of demand), under both CNSS forms, with the growth ratio
  against the 8-individual time of the same run. Target: <= 2 s per optimum at 128.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from fairarena.allocation import AllocationProblem, compute_metrics, compute_metrics_batch
from fairarena.errors import SolverError
from fairarena.triage import CAPACITY_VARIANTS, FRAMEWORKS, optimal_allocation, sample_cohort


def six_optima_times(variant: str, n: int, leximin: bool = False) -> np.ndarray:
    times = []
    for seed in range(n):
        p = sample_cohort(seed, variant).to_problem()
        t0 = time.perf_counter()
        for f in FRAMEWORKS:
            optimal_allocation(p, f, leximin=leximin) if f == "rawlsian" else optimal_allocation(p, f)
        times.append(time.perf_counter() - t0)
    return np.array(times)


def random_problem(n: int, seed: int = 0, cnss: str = "indicator") -> AllocationProblem:
    """n individuals x 6 resources (see the module docstring)."""
    rng = np.random.default_rng(seed)
    ind = np.array([True, True, True, False, False, False])
    need = np.zeros((n, 6))
    for i in range(n):
        for r in rng.choice(6, size=int(rng.integers(2, 5)), replace=False):
            need[i, r] = 1.0 if ind[r] else float(rng.integers(5, 16))
    cap = np.maximum(1, np.floor(need.sum(0) * rng.uniform(0.4, 0.8, 6)))
    w, v = rng.uniform(0.1, 1, n), rng.uniform(0.1, 1, n)
    return AllocationProblem(ids=[f"p{i}" for i in range(n)], resources=[f"R{r}" for r in range(6)], capacity=cap,
                             need=need, indivisible=ind, survival=np.round(rng.uniform(0.05, 0.98, n), 3),
                             urgency=rng.integers(0, 4, n), disadvantage=w / w.sum(), vulnerability=v / v.sum(),
                             gini_resource="R5", cnss=cnss)


def scale(sizes: list[int], time_limit: float) -> None:
    print(f"\n== every framework's optimum on random problems (time limit {time_limit:g} s per solve) ==")
    for form in ("indicator", "fractional"):
        base: dict[str, float] = {}
        for n in sizes:
            p = random_problem(n, cnss=form)
            row = []
            for f in FRAMEWORKS:
                t0 = time.perf_counter()
                try:
                    optimal_allocation(p, f, time_limit=time_limit)
                    t = time.perf_counter() - t0
                    base.setdefault(f, t)
                    row.append(f"{f} {t:.2f}s (x{t / max(base[f], 1e-3):.0f})")
                except SolverError:
                    row.append(f"{f} >{time_limit:g}s")
            print(f"{form:10s} n={n:4d}: " + ", ".join(row), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cohorts", type=int, default=20)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--scale", action="store_true", help="only the scaling benchmark (issue 10.11)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[8, 32, 128, 512])
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"affinity {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'}, "
          f"load {os.getloadavg()[0]:.1f}")
    if args.scale:
        scale(args.sizes, args.time_limit)
        return

    print(f"\n== all six framework optima per cohort ({args.cohorts} cohorts, seeds 0..{args.cohorts - 1}) ==")
    for leximin in (False, True):
        for variant in CAPACITY_VARIANTS:
            t = six_optima_times(variant, args.cohorts, leximin=leximin)
            tag = "leximin" if leximin else "default"
            print(f"{variant:9s} {tag:8s} mean {t.mean():.3f} s  median {np.median(t):.3f} s  max {t.max():.3f} s")
    print(f"\n== metrics for {args.batch:,} allocations ==")
    p = sample_cohort(0, "tight").to_problem()
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1.2, size=(args.batch, p.n, p.n_resources)) * p.need
    X[..., p.indivisible] = np.round(X[..., p.indivisible])
    compute_metrics_batch(p, X[:100])  # warm-up
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        compute_metrics_batch(p, X)
        best = min(best, time.perf_counter() - t0)
    m = 2000
    t0 = time.perf_counter()
    for b in range(m):
        compute_metrics(p, X[b])
    loop = (time.perf_counter() - t0) * args.batch / m
    print(f"vectorised (best of 3): {best:.3f} s")
    print(f"python loop over compute_metrics (scaled from {m}): {loop:.1f} s  -> speed-up x{loop / best:.0f}")


if __name__ == "__main__":
    main()
