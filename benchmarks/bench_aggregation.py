"""Aggregation speed (issue 14): candidate-set rules per profile (batched), feasible-set rules on a
standard triage cohort, the full axiom audit.

Targets (a 2-core machine): every candidate-set rule on 6 agents x 6 candidates under 1 ms per profile
(batched over ``--batch`` profiles); every feasible-set rule on a standard cohort (8 patients) with six
agents under 1 s; the full audit (all candidate-set rules, 500 profiles) under 60 s. Baselines measured
in the same run: pref_voting's per-profile call for the ranking rules, one exact framework optimum
(the utilitarian MILP) for the feasible-set rules; over standard cohorts ``0..--seeds-1`` (the council,
six agents) every feasible-set rule is also timed in the previous MILP form (CNSS repeated in every row,
variance tangents on CNSS differences, HiGHS's default heuristics, every leximin stage solved) with the
answers compared. Note
``uptime`` beside the figures.

    .venv/bin/python benchmarks/bench_aggregation.py
    .venv/bin/python benchmarks/bench_aggregation.py --skip-audit --runs 3
    .venv/bin/python benchmarks/bench_aggregation.py --search 30   # also time the adversarial search
    .venv/bin/python benchmarks/bench_aggregation.py --skip-audit --seeds 20 --feasible-runs 2

Exit code 1 when a target is missed (``--no-check`` to only report).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def _median(f, runs: int) -> float:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def _feasible_over_cohorts(seeds: int, runs: int) -> bool:
    """Every feasible-set rule on the council of standard cohorts ``0..seeds-1``: now and in the previous
    MILP form, interleaved per cohort and rule (the same load), best of ``runs``; the answers compared."""
    from fairarena.aggregation import feasible as F
    from fairarena.aggregation.council import council_profile
    from fairarena.aggregation.rules import RULES, aggregate
    from fairarena.triage.archetypes import sample_cohort

    now_opts = dict(F.HIGHS_OPTIONS)

    def form(previous: bool) -> None:
        F.CNSS_VARS = F.VAR_ON_GAPS = F.LEX_SKIP = not previous
        F.HIGHS_OPTIONS = {} if previous else now_opts

    def best(prof, name):
        out, dec = [], None
        for _ in range(runs):
            t = time.perf_counter()
            dec = aggregate(prof, name)
            out.append(time.perf_counter() - t)
        return min(out), np.asarray(dec.utilities, dtype=float)

    names = RULES.names(kind="feasible")
    times: dict[str, dict[str, list[float]]] = {nm: {"previous": [], "now": []} for nm in names}
    differ = []
    print(f"\nfeasible-set rules on standard cohorts 0-{seeds - 1} (council, six agents; best of {runs}); "
          "target < 1 s; load %.2f" % os.getloadavg()[0])
    for seed in range(seeds):
        prof = council_profile(sample_cohort(seed, "standard").to_problem())
        aggregate(prof, "utilitarian-feasible")  # the normalisation ranges (cached per problem)
        row = []
        for nm in names:
            form(True)
            t_old, u_old = best(prof, nm)
            form(False)
            t_new, u_new = best(prof, nm)
            times[nm]["previous"].append(t_old)
            times[nm]["now"].append(t_new)
            if np.abs(u_old - u_new).max() > 1e-9:
                differ.append((seed, nm, float(np.abs(u_old - u_new).max())))
            row.append(f"{nm.split('-')[0][:5]} {t_old:.2f}->{t_new:.2f}")
        print(f"  seed {seed:2d}: " + ", ".join(row), flush=True)
    ok = True
    for nm in names:
        old, new = times[nm]["previous"], times[nm]["now"]
        ok &= max(new) < 1.0
        print(f"  {nm:22s} max {max(old):6.3f} -> {max(new):6.3f} s   mean {statistics.mean(old):6.3f} -> "
              f"{statistics.mean(new):6.3f} s  ({statistics.mean(old) / statistics.mean(new):4.1f}x)")
    print(f"  answers: {'the same six utilities (to 1e-9) on every cohort and rule' if not differ else differ}")
    return ok and not differ


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-audit", action="store_true")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--search", type=int, default=30, help="adversarial search steps timed with the audit (0: skip)")
    ap.add_argument("--seeds", type=int, default=20, help="standard cohorts 0..N-1 for the feasible-set rules (0: skip)")
    ap.add_argument("--feasible-runs", type=int, default=1, help="best of this many runs per cohort and rule")
    args = ap.parse_args()
    from fairarena.aggregation.rules import RULES, Agent, Profile, aggregate
    from fairarena.allocation.frameworks import FRAMEWORKS
    from fairarena.triage.archetypes import sample_cohort

    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    ok = True
    U = np.random.default_rng(0).random((args.batch, 6, 6))
    print(f"\ncandidate-set rules, 6 agents x 6 candidates, batch {args.batch} (target < 1 ms per profile)")
    for name in RULES.names(kind="candidates"):
        fn = RULES.entry(name).batched
        fn(U[:10])  # warm-up (imports, compiled kernels)
        per = _median(lambda: fn(U), args.runs) / args.batch * 1e3
        ok &= per < 1.0
        print(f"  {name:18s} {per:8.4f} ms/profile")
    try:
        from pref_voting.profiles import Profile as PV
        from pref_voting.voting_methods import beat_path, borda

        k = min(200, args.batch)
        profs = [PV([list(map(int, np.argsort(-r))) for r in U[b]]) for b in range(k)]
        for nm, vm in (("borda", borda), ("schulze", beat_path)):
            per = _median(lambda: [vm(p) for p in profs], args.runs) / k * 1e3
            print(f"  baseline pref_voting {nm:8s} {per:8.4f} ms/profile (one call per profile)")
    except ImportError:
        print("  (pref_voting not installed: no baseline)")

    cohort = sample_cohort(0, "standard")
    p = cohort.to_problem()
    fws = list(FRAMEWORKS)
    agents = [Agent(f"A{i}", f, FRAMEWORKS.get(f).solve(p)) for i, f in enumerate(fws)]
    base = _median(lambda: FRAMEWORKS.get("utilitarian").solve(p), args.runs)
    print(f"\nfeasible-set rules, standard cohort (seed 0, {p.n} patients); baseline one utilitarian optimum "
          f"{base:.3f} s (target < 1 s)")
    from fairarena.aggregation import feasible as F

    def old_formulation(flag: bool) -> None:  # the Gini on its 10-bit grid, max-min stages as one MILP
        F.GINI_EXACT = not flag
        F.MAXMIN_RATIO = not flag

    prof6 = Profile.from_proposals(p, agents)
    print("  six frameworks, the previous formulation (Gini grid, max-min as one MILP) in the same run:")
    for name in RULES.names(kind="feasible"):
        old_formulation(True)
        t_old = _median(lambda: aggregate(prof6, name), 1)
        old_formulation(False)
        t_new = _median(lambda: aggregate(prof6, name), 1)
        print(f"    {name:22s} previous {t_old:8.3f} s  now {t_new:8.3f} s  ({t_old / t_new:5.1f}x faster)")
    for label, ags in (("six frameworks", agents),
                       ("four linear (util., rawls., prio., care)",
                        [a for a in agents if a.objective in ("utilitarian", "rawlsian", "prioritarian", "care")])):
        prof = Profile.from_proposals(p, ags)
        print(f"  {label}:")
        for name in RULES.names(kind="feasible"):
            t = _median(lambda: aggregate(prof, name), 1 if label == "six frameworks" else args.runs)
            ok &= t < 1.0 or label != "six frameworks"
            print(f"    {name:22s} {t:8.3f} s  ({t / base:6.1f}x one optimum)")
    if args.seeds:
        ok &= _feasible_over_cohorts(args.seeds, args.feasible_runs)
    if not args.skip_audit:
        from fairarena.aggregation.audit import audit

        t = time.perf_counter()
        audit(profiles=500, seed=0)
        dt = time.perf_counter() - t
        ok &= dt < 60
        print(f"\nfull audit (all candidate-set rules, 500 profiles): {dt:.1f} s (target < 60 s)")
        from fairarena.aggregation.audit import audit_feasible

        t = time.perf_counter()
        audit_feasible(instances=10, seed=0)
        df = time.perf_counter() - t
        ok &= dt + df < 60
        print(f"feasible-set and repair rules on 10 tiny problems: {df:.1f} s (audit total {dt + df:.1f} s)")
        if args.search:
            from fairarena.aggregation.audit import audit_search

            t = time.perf_counter()
            audit_search(steps=args.search, seed=0)
            ds = time.perf_counter() - t
            ok &= dt + df + ds < 60
            print(f"adversarial search, {args.search} steps, every rule x axiom: {ds:.1f} s "
                  f"(audit total {dt + df + ds:.1f} s, target < 60 s)")
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0 if ok or args.no_check else 1


if __name__ == "__main__":
    sys.exit(main())
