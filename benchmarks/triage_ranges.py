"""Metric ranges of the six framework optima over sampled cohorts, per capacity variant and CNSS form,
beside the paper's Table 2 ranges (issue 10.5). Regenerates the table in docs/triage.md.

    .venv/bin/python benchmarks/triage_ranges.py [--cohorts 50] [--cnss indicator fractional]

For each variant and seeds 0..N-1: ``sample_cohort(seed, variant)``, every framework's optimum
(``optimal_allocation``), and the metrics of each optimum. Prints, per variant and form, the min-max
of each metric over all optima of all cohorts (and over the five non-egalitarian optima: under the
indicator form the egalitarian optimum is usually the empty allocation, which puts every lower end at
0), then the min-max per framework of its own metric.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fairarena.triage import CAPACITY_VARIANTS, FRAMEWORKS, compute_metrics, optimal_allocation, sample_cohort

# Chaki, Gourru & Velcin, arXiv 2604.13705, Table 2 (as quoted in issue 10): ranges over its debates' finals
PAPER = {"esg": (4.3, 5.5), "gini": (0.13, 0.47), "rmg": (0.06, 0.74), "var": (0.008, 0.086),
         "dw_esg": (0.41, 0.67), "vwci": (0.17, 0.95)}
KEYS = ("esg", "gini", "rmg", "var", "dw_esg", "vwci", "gini_cnss")


def fmt(lo: float, hi: float) -> str:
    lo, hi = (0.0 if abs(v) < 5e-7 else v for v in (lo, hi))  # solver noise, not a negative Gini
    digits = 3 if max(abs(lo), abs(hi)) < 0.1 else 2
    return f"{lo:.{digits}f}-{hi:.{digits}f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cohorts", type=int, default=50)
    ap.add_argument("--cnss", nargs="+", default=["indicator", "fractional"])
    args = ap.parse_args()
    print("| form | variant | " + " | ".join(KEYS) + " |")
    print("|---|---|" + "---|" * len(KEYS))
    print("| paper Table 2 | (finals of debates) | " + " | ".join(
        fmt(*PAPER[k]) if k in PAPER else "-" for k in KEYS) + " |")
    own: dict[tuple[str, str], dict[str, list[float]]] = {}
    for form in args.cnss:
        for variant in CAPACITY_VARIANTS:
            t0 = time.perf_counter()
            vals: dict[str, list[float]] = {k: [] for k in KEYS}
            five: dict[str, list[float]] = {k: [] for k in KEYS}
            per: dict[str, list[float]] = {f: [] for f in FRAMEWORKS}
            empty = 0
            for seed in range(args.cohorts):
                p = sample_cohort(seed, variant).to_problem(cnss=form)
                for f in FRAMEWORKS:
                    x = optimal_allocation(p, f)
                    m = compute_metrics(p, x)
                    for k in KEYS:
                        vals[k].append(m[k])
                        if f != "egalitarian":
                            five[k].append(m[k])
                    per[f].append(m[FRAMEWORKS.get(f).metric])
                    empty += f == "egalitarian" and not x.any()
            own[(form, variant)] = per
            print(f"| {form} | {variant} | " + " | ".join(fmt(min(vals[k]), max(vals[k])) for k in KEYS)
                  + f" |  <!-- {time.perf_counter() - t0:.0f} s -->", flush=True)
            print(f"| {form}, without egalitarian | {variant} | "
                  + " | ".join(fmt(min(five[k]), max(five[k])) for k in KEYS)
                  + f" |  <!-- egalitarian optimum empty on {empty}/{args.cohorts} cohorts -->", flush=True)
    print("\nOwn metric of each framework's optimum (min-max over cohorts):\n")
    print("| form | variant | " + " | ".join(f"{f} ({FRAMEWORKS.get(f).metric})" for f in FRAMEWORKS) + " |")
    print("|---|---|" + "---|" * len(FRAMEWORKS))
    for (form, variant), per in own.items():
        print(f"| {form} | {variant} | " + " | ".join(fmt(min(v), max(v)) for v in per.values()) + " |")
    rmg = np.array(own.get(("indicator", "standard"), {}).get("rawlsian", [np.nan]))
    print(f"\nstandard, indicator: Rawlsian optimum RMG >= 0.74 on {np.mean(rmg >= 0.74):.0%} of cohorts")


if __name__ == "__main__":
    main()
