"""Measure the fraction of sampled cohorts that are non-degenerate, per capacity variant (issue 5).

    .venv/bin/python benchmarks/triage_nondegeneracy.py [--seeds 100] [--tol 1e-4] [--cnss indicator fractional]

For each variant and seeds 0..N-1: ``sample_cohort(seed, variant)`` then ``check_nondegenerate``
(all six frameworks, pairwise conflicts). Prints the non-degenerate fraction and, per pair of
frameworks, how often they conflict.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from itertools import combinations

from fairarena.triage import CAPACITY_VARIANTS, FRAMEWORKS, check_nondegenerate, sample_cohort


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--cnss", nargs="+", default=["indicator", "fractional"], help="CNSS forms to measure")
    args = ap.parse_args()
    pairs = list(combinations(FRAMEWORKS, 2))
    for form in args.cnss:
        for variant in CAPACITY_VARIANTS:
            t0 = time.perf_counter()
            nd = 0
            conflicts: Counter[tuple[str, str]] = Counter()
            for seed in range(args.seeds):
                r = check_nondegenerate(sample_cohort(seed, variant).to_problem(cnss=form), tol=args.tol)
                nd += r.nondegenerate
                conflicts.update((a, b) for a, b, _ in r.conflicts)
            dt = time.perf_counter() - t0
            print(f"{form:10s} {variant:9s} non-degenerate {nd}/{args.seeds} = {nd / args.seeds:.2%}  ({dt:.1f} s)")
            print("          pair conflict rates: " + ", ".join(
                f"{a[:4]}-{b[:4]} {conflicts[(a, b)] / args.seeds:.0%}" for a, b in pairs), flush=True)


if __name__ == "__main__":
    main()
