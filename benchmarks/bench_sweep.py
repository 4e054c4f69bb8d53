"""Sweep speed (issue 3): the batched sweep on a spread-out subsample of the ``paper`` grid against a
per-instance cvxpy loop (``fairarena.bandit.reference``) on the same settings, in the same run.
Prints figures and a JSON line; not a unit test.

    .venv/bin/python benchmarks/bench_sweep.py [--settings 300] [--baseline 300] [--workers 1]

The batched side is warmed first on a 20-setting sweep (imports, loading the compiled solver);
the cvxpy side's imports are warm by then too. Both sides build the same instances (``make_instance``) and compute the PF, EF, UF, NSW and GGI
policies and their PF / EF / UF scores. Agreement is checked on scores and values, not on policy
vectors (optimal policies can be non-unique): every notion's optimal value (ours vs cvxpy) and
the PF / EF / UF scores of every policy.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np

from fairarena.bandit import reference
from fairarena.bandit.problem import inequality
from fairarena.sweep.config import expand, preset, subsample
from fairarena.sweep.run import make_instance, run_sweep

POLICIES = ("pf", "ef", "uf", "nsw", "ggi")


def cvxpy_setting(mu: np.ndarray) -> dict[str, dict[str, float]]:
    """Every policy and its scores for one instance, the slow obvious way."""
    n = mu.shape[0]
    pols = {name: np.clip(reference.POLICIES[name](mu), 0, None) for name in POLICIES}
    pols = {k: p / p.sum() for k, p in pols.items()}
    i_star = reference.ef_optimum(mu)
    uf_star = mu.sum(axis=0).max()
    ggi_w = 2.0 ** -np.arange(n)
    out = {}
    for name, p in pols.items():
        u = mu @ p
        out[name] = {"pf": reference.pf_score(mu, p), "ef": 1.0 - (float(inequality(u)) - i_star),
                     "uf": u.sum() / uf_star, "nsw_value": float(np.exp(np.log(u).mean())),
                     "ggi_value": float(np.sort(u) @ ggi_w)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--settings", type=int, default=300, help="subsample of the paper grid")
    ap.add_argument("--baseline", type=int, default=300, help="settings run through the cvxpy loop")
    ap.add_argument("--workers", type=int, default=1, help="workers for the batched sweep")
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"load {os.getloadavg()[0]:.1f}")
    cfg = preset("paper")
    settings = expand(cfg, args.settings)

    # one-time costs outside the timing: imports and loading the compiled solver (numba caches
    # it on disk; the very first run after installing also compiles it, ~30 s)
    from fairarena.bandit.solver import warm_up

    warm_up()  # the compiled kernels (a 20-setting warm-up alone may take the uncompiled small-problem path)
    run_sweep(cfg, limit=20, workers=args.workers)
    t0 = time.perf_counter()
    res = run_sweep(cfg, limit=args.settings, workers=args.workers)
    t_fast = time.perf_counter() - t0
    df = res.frame.set_index(["setting_id", "policy"])

    base = subsample(settings, args.baseline)
    t0 = time.perf_counter()
    ref = {s.setting_id: cvxpy_setting(make_instance(s, cfg)) for s in base}
    t_slow = time.perf_counter() - t0

    own = {"pf": "pf", "ef": "ef", "uf": "uf", "nsw": "nsw_value", "ggi": "ggi_value"}
    d_own, d_scores = 0.0, 0.0
    worst = None
    for sid, r in ref.items():
        for name in POLICIES:
            d = abs(df.loc[(sid, name), own[name]] - r[name][own[name]])
            d_own = max(d_own, d)
            for key in ("pf", "ef", "uf"):
                d2 = abs(df.loc[(sid, name), key] - r[name][key])
                if d2 > d_scores:
                    d_scores, worst = d2, (sid, name, key)
    fast_per, slow_per = t_fast / len(settings), t_slow / len(base)
    out = {"settings": len(settings), "baseline_settings": len(base), "workers": args.workers,
           "sweep_s": round(t_fast, 3), "cvxpy_s": round(t_slow, 3),
           "sweep_ms_per_setting": round(1e3 * fast_per, 3), "cvxpy_ms_per_setting": round(1e3 * slow_per, 3),
           "ratio": round(slow_per / fast_per, 1), "max_diff_optimal_values": d_own,
           "max_diff_pf_ef_uf_scores": d_scores, "worst": worst}
    print(f"batched sweep: {len(settings)} settings in {t_fast:.2f} s ({1e3 * fast_per:.1f} ms/setting, "
          f"{args.workers} worker(s))")
    print(f"cvxpy loop   : {len(base)} settings in {t_slow:.2f} s ({1e3 * slow_per:.1f} ms/setting)")
    print(f"ratio (per setting): {slow_per / fast_per:.1f}x")
    print(f"max |diff| of each notion's optimal value: {d_own:.2e}; of all PF/EF/UF scores: {d_scores:.2e} at {worst}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
