"""Speed of the PB domain (docs/performance.md, "Participatory budgeting"):

* Equal Shares with the add1 completion on Wieliczka 2023 (6,586 voters, 64 projects): ours and pabutools' own;
* Equal Shares' add1 over the 272 small instances: one run per budget step against the batched steps;
* every rule + the audit (our exact EJR/PJR, the group metrics, the trade-offs: ``fairarena pb audit``) over the
  272 small Pabulib instances, with ``--jobs`` worker processes (default 2);
* the exact feasible-set rules (enumeration) on a 10-project instance, each;
* priceability of greedy's set on Warsaw-Wesola 2023 (1,181 voters, 29 projects): our LP over the distinct
  ballots and pabutools' own LP over every voter.

Run: python benchmarks/bench_pb.py [--small DIR] [--jobs N] [--skip-pabutools]  (DIR: the 272 small .pb files; default ../shared/data/pabulib/small beside the repository)
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from fairarena.pb import rules
from fairarena.pb.audit import audit
from fairarena.pb.axioms import is_priceable_election, priceable
from fairarena.pb.domain import example_path
from fairarena.pb.election import read_election
from fairarena.pb.fair import FEASIBLE_SET_RULES, feasible_set_rule
from fairarena.pb.groups import make_groups


def main() -> None:
    ap = argparse.ArgumentParser()
    # default: the shared data folder beside the repository (../shared/data/pabulib/small)
    ap.add_argument("--small", default=str(Path(__file__).resolve().parents[2] / "shared/data/pabulib/small"))
    ap.add_argument("--skip-pabutools", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    e = read_election(example_path("wieliczka"))
    t = time.perf_counter(); ours = rules.equal_shares(e, "cost", "add1"); t1 = time.perf_counter() - t
    print(f"Equal Shares add1, Wieliczka, ours: {t1:.2f} s (funds the city's set: {set(e.ids(ours)) == set(e.selected)})")
    t = time.perf_counter(); rules.equal_shares(e, "cost", "add1-exhaustive"); t2 = time.perf_counter() - t
    print(f"Equal Shares add1-exhaustive, Wieliczka, ours: {t2:.2f} s")
    if not a.skip_pabutools:
        t = time.perf_counter(); pab = rules.pabutools_equal_shares(e, "cost", "add1"); t3 = time.perf_counter() - t
        same = set(e.ids(pab)) == set(e.ids(rules.equal_shares(e, "cost", "add1-exhaustive")))
        print(f"Equal Shares add1, Wieliczka, pabutools 1.2.3 (voter_budget_increment=1): {t3:.2f} s "
              f"(equal to our add1-exhaustive: {same})")
    files = sorted(Path(a.small).glob("*.pb"))
    small = [read_election(f) for f in files]
    for batch in (False, True):
        t = time.perf_counter()
        for es in small:
            rules.equal_shares(es, "cost", "add1", batch=batch)
        print(f"Equal Shares add1 over the {len(small)} small instances, "
              f"{'batched (default)' if batch else 'one run per step'}: {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    audit(files, jobs=a.jobs)
    print(f"every rule + audit (fairarena pb audit) over {len(files)} small instances, {a.jobs} processes: "
          f"{time.perf_counter() - t:.1f} s")
    f10 = example_path("falenica")
    e10 = read_election(f10)
    g = make_groups(e10, "age")
    for r in FEASIBLE_SET_RULES:
        t = time.perf_counter(); feasible_set_rule(r, g.coef, e10.costs, e10.budget); dt = time.perf_counter() - t
        print(f"{r} on {e10.n_projects} projects ({len(g.names)} groups): {dt * 1000:.1f} ms")
    ew = read_election(example_path("wesola"))
    gw = rules.greedy(ew)
    t = time.perf_counter(); ok = is_priceable_election(ew, gw); dt = time.perf_counter() - t
    print(f"priceability of greedy's set, Wesola 2023, ours: {dt * 1000:.0f} ms ({ok})")
    if not a.skip_pabutools:
        t = time.perf_counter(); theirs = priceable(ew, gw); dt = time.perf_counter() - t
        print(f"the same, pabutools' priceable (exhaustive=False): {dt:.1f} s ({theirs})")


if __name__ == "__main__":
    main()
