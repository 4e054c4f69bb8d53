"""Issue 2 benchmark: batched optimal policies + scores vs a per-instance cvxpy loop, same run.

    .venv/bin/python benchmarks/bench_notions.py [--instances 10000] [--baseline 200] [--seed 0]
    .venv/bin/python benchmarks/bench_notions.py --first-call [--repeats 3]

``--first-call`` (issue 11.5) measures the first ``fairarena policy --notion ggi`` on a 3 x 3 file after
installing, as whole processes with an empty numba cache (``NUMBA_CACHE_DIR`` set to a new temporary
folder for every run): the default path (a small instance runs the solver uncompiled) beside the same
command forced through the compiled kernels (what every first call paid before), and
``python -c pass`` as the machine's baseline in the same run. Reports wall and CPU seconds.

Draws instances with N, K uniform in 2..10 (half of them with tied favourite arms), computes every
notion's optimal policy and every score of every policy (batched, grouped by shape), then runs the
slow, obvious cvxpy formulation (``fairarena.bandit.reference``) on a subsample of the same
instances. Both sides are warmed first (loading the compiled solver, importing cvxpy): one-time
costs, not per-instance ones. Reports the per-instance time ratio and the largest disagreement of optimal values
(unique, unlike optimal policies) and of the scores of the reference policies.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

from fairarena.bandit import reference as R
from fairarena.bandit.notions import NOTIONS, SCORE_KEYS, evaluate_batch, evaluate_many, optimal_policies_many


def make_instances(n_inst: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for j in range(n_inst):
        n, k = int(rng.integers(2, 11)), int(rng.integers(2, 11))
        mu = rng.uniform(0.02, 0.98, (n, k))
        if j % 2:
            f = int(rng.integers(1, k))
            order = np.argsort(-mu, axis=1)
            for i in range(n):
                mu[i, order[i, :f]] = mu[i, order[i, 0]]
        out.append(mu)
    return out


def batched(instances: list[np.ndarray]):
    """All optimal policies and all their scores, batched by agent count (arms NaN-padded)."""
    pols = optimal_policies_many(instances)
    scores = evaluate_many(instances, pols)
    return pols, scores


def reference_one(mu: np.ndarray):
    """Every notion's policy by cvxpy, and every score of every policy from cvxpy optima."""
    pols = {name: fn(mu) for name, fn in R.POLICIES.items()}
    pols = {k: np.clip(v, 0, None) / np.clip(v, 0, None).sum() for k, v in pols.items()}
    opt = {name: NOTIONS[name].value_batch(mu[None], pols[name][None])[0] for name in SCORE_KEYS}
    scores = {}
    for pn, p in pols.items():
        row = {"pf": R.pf_score(mu, p)}
        for s in SCORE_KEYS[1:]:
            v = NOTIONS[s].value_batch(mu[None], p[None])[0]
            row[s] = float(NOTIONS[s].score_fn(np.array([v]), np.array([max(opt[s], v)]))[0])
        scores[pn] = row
    return pols, scores


def first_call(repeats: int) -> dict:
    import os
    import resource
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    bindir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as d:
        rewards = Path(d) / "r.json"
        rewards.write_text(json.dumps({"rewards": [[0.9, 0.5, 0.1], [0.2, 0.8, 0.4], [0.3, 0.3, 0.9]]}))
        cli = [str(bindir / "fairarena"), "policy", "--notion", "ggi", "--rewards", str(rewards), "--json"]
        forced = [sys.executable, "-c", "import sys; from fairarena.bandit import solver; solver.SMALL_WORK = -1; "
                  "sys.argv = ['fairarena'] + sys.argv[1:]; from fairarena.cli import main; main()", *cli[1:]]
        cases = {"python -c pass": ([sys.executable, "-c", "pass"], repeats),
                 "fairarena policy --notion ggi (3x3), empty numba cache": (cli, repeats),
                 "same, forced through the compiled kernels (the old first call)": (forced, 1)}
        out = {}
        for name, (cmd, reps) in cases.items():
            walls, cpus = [], []
            for _ in range(reps):
                with tempfile.TemporaryDirectory() as cache:
                    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    t0 = time.perf_counter()
                    subprocess.run(cmd, env=env, check=True, capture_output=True)
                    walls.append(time.perf_counter() - t0)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            out[name] = {"wall_s": [round(w, 2) for w in walls], "cpu_s": [round(c, 2) for c in cpus]}
    out["load_1min"] = round(os.getloadavg()[0], 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--first-call", action="store_true", help="time the first CLI call after installing")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--instances", type=int, default=10_000)
    ap.add_argument("--baseline", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.first_call:
        print(json.dumps(first_call(args.repeats), indent=2))
        return
    warnings.filterwarnings("ignore", message="Solution may be inaccurate")

    instances = make_instances(args.instances, args.seed)
    from fairarena.bandit.solver import warm_up

    warm_up()  # one-time: load (first run: compile) the numba solver
    batched(make_instances(20, args.seed + 1))
    R.POLICIES["nsw"](instances[0])  # and import cvxpy
    t0 = time.perf_counter()
    pols, _ = batched(instances)
    t_fast = time.perf_counter() - t0

    sub = list(range(0, args.instances, max(1, args.instances // args.baseline)))[: args.baseline]
    t0 = time.perf_counter()
    ref = [reference_one(instances[i]) for i in sub]
    t_ref = time.perf_counter() - t0

    # agreement: optimal values (unique) and the scores of the reference's own policies
    worst_value = 0.0
    worst_score = 0.0
    for i, (rp, rs) in zip(sub, ref):
        mu = instances[i]
        for name in NOTIONS:
            v_ours = NOTIONS[name].value_batch(mu[None], pols[i][name][None])[0]
            v_ref = NOTIONS[name].value_batch(mu[None], rp[name][None])[0]
            worst_value = max(worst_value, v_ref - v_ours)  # positive = reference better
        mine = evaluate_batch(mu[None], {k: v[None] for k, v in rp.items()})
        for pn in rp:
            for s in SCORE_KEYS:
                worst_score = max(worst_score, abs(mine[pn][s][0] - rs[pn][s]))
    per_fast = t_fast / len(instances)
    per_ref = t_ref / len(sub)
    out = {
        "instances": len(instances), "baseline_instances": len(sub),
        "batched_seconds": round(t_fast, 3), "batched_ms_per_instance": round(1e3 * per_fast, 4),
        "cvxpy_ms_per_instance": round(1e3 * per_ref, 2), "speedup": round(per_ref / per_fast, 1),
        "max_value_shortfall_vs_cvxpy": worst_value, "max_score_difference": worst_score,
    }
    print(json.dumps(out, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
