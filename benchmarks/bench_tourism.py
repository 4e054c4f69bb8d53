"""Tourism and conflict-audit speed figures (issue 15). Prints figures; not a unit test.

    .venv/bin/python benchmarks/bench_tourism.py [--repeat 20] [--seed 0]

* generating a 40-POI destination and evaluating one decision (lists) for all stakeholders — every
  metric, each stakeholder's value and utility, fairarena.evaluation's view — target < 50 ms; baseline
  in the same run: the metrics alone (``list_metrics``) so the ratio shows what evaluation adds;
* ``tourism compare`` (every rule, scripted debate) on a 40-POI destination, lists and flows — target < 10 s;
* a 50-point conflict frontier on a standard triage cohort (ESG vs Gini of CNSS, and RMG vs ESG), exact —
  target < 10 s.

Load matters (2 shared cores): ``uptime`` is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def _t(fn, repeat: int) -> float:
    walls = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t)
    return statistics.median(walls)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from fairarena.evaluation.conflict import audit_triage
    from fairarena.tourism import decisions as D
    from fairarena.tourism.compare import compare
    from fairarena.tourism.destination import generate
    from fairarena.tourism.metrics import list_metrics
    from fairarena.tourism.stakeholders import parse_stakeholders
    from fairarena.triage import sample_cohort

    print("load:", os.getloadavg())
    ss = parse_stakeholders("tourists:family,residents,local-business,destination")
    d0 = generate(args.seed, 40)
    cands = D.candidates(d0, ss, "lists", 5)
    L = cands.decisions[-1]

    def gen_eval() -> None:
        d = generate(args.seed, 40)
        D.evaluate_decision(d, ss, "lists", L, cands)

    base = _t(lambda: list_metrics(d0, L), args.repeat)
    full = _t(gen_eval, args.repeat)
    print(f"generate 40 POIs + evaluate one decision for all stakeholders: {full * 1e3:.1f} ms (target < 50 ms); "
          f"metrics alone {base * 1e3:.2f} ms (ratio {full / base:.1f})")
    for dec in ("lists", "flows"):
        t = time.perf_counter()
        res = compare(d0, ss, dec, k=5, rounds=3, seed=args.seed)
        print(f"tourism compare ({dec}, {len(res['rows'])} rows, scripted): {time.perf_counter() - t:.2f} s "
              f"(target < 10 s)")
    cohort = sample_cohort(seed=args.seed)
    problem = cohort.to_problem()
    for x, y in (("esg", "gini_cnss"), ("rmg", "esg")):
        t = time.perf_counter()
        res = audit_triage(problem, x, y, points=50)
        print(f"conflict frontier {x} vs {y}, 50-point grid on a triage cohort: {time.perf_counter() - t:.2f} s "
              f"({res['solved']} MILPs solved, {len(res['points'])} frontier points; target < 10 s)")
        t = time.perf_counter()
        res2 = audit_triage(problem, x, y, points=50, reuse=False)
        same = len(res2["points"]) == len(res["points"]) and np.allclose(sorted(res2["points"]), sorted(res["points"]), atol=1e-9)
        print(f"  the same with every grid point solved: {time.perf_counter() - t:.2f} s ({res2['solved']} MILPs; "
              f"same frontier: {same})")
    print("load:", os.getloadavg())


if __name__ == "__main__":
    main()
