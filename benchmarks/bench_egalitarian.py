"""The egalitarian optimum without levelling down (issue 19): the default form ``pareto`` (least Gini of
CNSS among the CNSS-undominated allocations) against the ``strict`` form (least Gini over every
allocation) on cohorts ``0..--seeds-1`` of each capacity variant, measured in the same run, with the
number of dominance checks per cohort. Target: ``pareto`` within ``--max-ratio`` (default 6) of
``strict`` on the standard variant. Note ``uptime`` beside the figures.

    .venv/bin/python benchmarks/bench_egalitarian.py
    .venv/bin/python benchmarks/bench_egalitarian.py --seeds 20 --variants standard

Exit code 1 when the target is missed (``--no-check`` to only report).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter

from fairarena.allocation.frameworks import egalitarian_allocation
from fairarena.triage.archetypes import sample_cohort


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--variants", nargs="+", default=["standard", "tight", "high"])
    ap.add_argument("--max-ratio", type=float, default=6.0)
    ap.add_argument("--no-check", action="store_true")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    ok = True
    for variant in args.variants:
        problems = [sample_cohort(s, variant).to_problem() for s in range(args.seeds)]
        seconds = {}
        for form in ("strict", "pareto"):
            rounds: Counter[int] = Counter()
            t = time.perf_counter()
            for p in problems:
                info: dict = {}
                egalitarian_allocation(p, form, info=info)
                rounds[info["rounds"]] += 1
            seconds[form] = time.perf_counter() - t
            print(f"{variant:9s} {form:7s} {seconds[form]:6.2f} s for {args.seeds} cohorts; "
                  f"dominance checks per cohort: {dict(sorted(rounds.items()))}")
        ratio = seconds["pareto"] / max(seconds["strict"], 1e-9)
        print(f"{variant:9s} pareto / strict = {ratio:.1f}x")
        if variant == "standard" and ratio > args.max_ratio:
            ok = False
    return 0 if ok or args.no_check else 1


if __name__ == "__main__":
    sys.exit(main())
