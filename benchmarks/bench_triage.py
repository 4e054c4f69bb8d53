"""Triage speed figures (issue 5). Prints figures; not a unit test.

    .venv/bin/python benchmarks/bench_triage.py [--cohorts 20] [--batch 100000]

* all six framework optima for one cohort (target <= 1 s), per capacity variant, with the default
  Rawlsian (max RMG, then ESG) and, for comparison, with the optional exact leximin refinement;
* metrics for a stack of ``--batch`` random allocations (target <= 1 s), against the per-allocation
  Python loop (baseline, measured on 2,000 allocations and scaled) in the same run.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from fairarena.allocation import compute_metrics, compute_metrics_batch
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cohorts", type=int, default=20)
    ap.add_argument("--batch", type=int, default=100_000)
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"affinity {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'}")

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
