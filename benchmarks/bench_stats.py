"""Statistics of a whole study (issue 13). Prints figures; not a unit test.

    .venv/bin/python benchmarks/bench_stats.py [--cohorts 50] [--metrics 8] [--resamples 2000] [--repeat 3]

A synthetic 600-debate study (6 frameworks x 2 opponents x 50 cohorts, 8 metrics, ~5% infeasible
allocations, some exact ties) goes through ``fairarena.stats.compare_table``: every opponent x framework
x metric cell (96 cells) with its test, effect sizes and three bootstrap intervals (A, opponent, joint)
of 2,000 resamples each. Target: at most 2 s. Baseline in the same run: the naive per-cell loop — the
same tests, with one ``scipy.stats.bootstrap`` call (percentile, vectorised statistic) per interval.
The two must agree on every interval; the ratio is what to compare across machines.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy import stats as sps

from fairarena.stats import DebateRecord, compare_table, paired_comparison

FRAMEWORKS = ["utilitarian", "rawlsian", "libertarian", "prioritarian", "care", "egalitarian"]
OPPONENTS = ["baseline", "adversarial"]


def synthetic_study(n_cohorts: int, n_metrics: int, seed: int = 0) -> tuple[list[DebateRecord], dict[str, str]]:
    rng = np.random.default_rng(seed)
    metrics = {f"m{k}": ("max" if k % 2 == 0 else "min") for k in range(n_metrics)}
    recs = []
    for opp in OPPONENTS:
        for f, fw in enumerate(FRAMEWORKS):
            for c in range(n_cohorts):
                b = {m: float(np.round(rng.normal(50 + f, 8), 1)) for m in metrics}
                a = {m: float(np.round(v + rng.normal(0.4 * (f - 2), 2), 1)) for m, v in b.items()}  # 0.1 grid: ties
                j = {m: (a[m] + b[m]) / 2 for m in metrics}
                recs.append(DebateRecord(c, fw, opp, a, b, a_feasible=bool(rng.random() > 0.05),
                                         opp_feasible=bool(rng.random() > 0.05), joint=j))
    return recs, metrics


def naive(recs: list[DebateRecord], metrics: dict[str, str], n_resamples: int) -> list[tuple]:
    out = []
    for opp in OPPONENTS:
        for fw in FRAMEWORKS:
            rs = [r for r in recs if r.opponent == opp and r.framework == fw]
            fa = np.array([r.a_feasible for r in rs])
            fb = np.array([r.opp_feasible for r in rs])
            for m, direction in metrics.items():
                a = np.array([r.a[m] for r in rs])
                b = np.array([r.opp[m] for r in rs])
                j = np.array([r.joint[m] for r in rs])
                keep = fa & fb
                res = paired_comparison(a[keep], b[keep], direction=direction, n_resamples=1)  # test + effect sizes
                cis = []
                for x in (a[keep], b[keep], j):
                    ci = sps.bootstrap((x,), np.mean, n_resamples=n_resamples, method="percentile",
                                       rng=np.random.default_rng(42), vectorized=True).confidence_interval
                    cis.append((float(ci.low), float(ci.high)))
                out.append((res.p, *cis))
    return out


def best_of(fn, repeat: int) -> tuple[float, object]:
    best, val = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        val = fn()
        best = min(best, time.perf_counter() - t0)
    return best, val


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cohorts", type=int, default=50)
    ap.add_argument("--metrics", type=int, default=8)
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    recs, metrics = synthetic_study(args.cohorts, args.metrics)
    n_cells = len(OPPONENTS) * len(FRAMEWORKS) * len(metrics)
    print(f"{len(recs)} debates, {n_cells} cells, {args.resamples} resamples per interval; "
          f"load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} cpus)")
    compare_table(recs[:50], metrics, n_resamples=10)  # warm-up (imports, scipy paths)
    t_fast, st = best_of(lambda: compare_table(recs, metrics, n_resamples=args.resamples), args.repeat)
    t_naive, ref = best_of(lambda: naive(recs, metrics, args.resamples), 1)
    worst = 0.0
    for c, (p, ca, cb, cj) in zip(st.cells, ref):
        assert c.result.p == p
        for got, want in ((c.result.ci_a, ca), (c.result.ci_b, cb), (c.joint_ci, cj)):
            worst = max(worst, float(np.max(np.abs(np.subtract(got, want)))))
    print(f"compare_table (vectorised bootstrap): {t_fast:.3f} s  (target <= 2 s: "
          f"{'met' if t_fast <= 2 else 'NOT met'})")
    print(f"naive per-cell loop (scipy.stats.bootstrap per interval): {t_naive:.3f} s")
    print(f"ratio naive / vectorised: {t_naive / t_fast:.1f}x; largest interval difference {worst:.1e}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
