"""Learner speed figures (issue 4). Prints figures; not a unit test.

    .venv/bin/python benchmarks/bench_learners.py [--seeds 20] [--T 100000] [--jobs 2] [--nash-T 150]

* PF learner, N = 10, K = 10, T = 1e5, 20 seeds, ``--jobs`` processes: wall and CPU time
  (target <= 10 s on 2 cores). Instance: impartial-culture rankings (seed 0), rewards by rank
  linspace(0.9, 0.1, 10), Bernoulli rewards; also the same with uniform random means.
* NashUCB update: the learner's batched projected-gradient solver against a per-step
  scipy.optimize.minimize (SLSQP) implementation of the same update (same objective, same restarts:
  the K vertices, the centre and the previous solution), on the problems the learner meets on a
  short horizon (N = 3, K = 3, 4 seeds). Ratio of update times and the largest policy difference
  (target >= 50x, same policies within tolerance).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from fairarena.learners.env import MultiAgentBandit
from fairarena.learners.learners import _NashUCBState, make_learner
from fairarena.learners.nashucb import nashucb_maximise, nsw_objective
from fairarena.learners.simulate import simulate


def pf_benchmark(mu: np.ndarray, T: int, seeds: int, jobs: int, label: str) -> None:
    env = MultiAgentBandit(mu, "bernoulli")
    simulate("pf", env, 2000, 2, n_jobs=jobs)  # warm the worker processes and imports
    t0 = time.perf_counter()
    res = simulate("pf", env, T, seeds, n_jobs=jobs)
    wall = time.perf_counter() - t0
    print(f"PF learner {label}: N={mu.shape[0]} K={mu.shape[1]} T={T} seeds={seeds} jobs={jobs}: "
          f"wall {wall:.2f} s (load average now {os.getloadavg()[0]:.1f}; policy recomputations "
          f"{res.extra.get('recomputes')}; mean PF regret {res.final_regret()['pf']:.0f})")


def scipy_nashucb(mu: np.ndarray, bonus: np.ndarray, form: str, warm: np.ndarray | None) -> np.ndarray:
    """The same update, one problem and one restart at a time, by SLSQP."""
    from scipy.optimize import minimize

    k = mu.shape[1]
    starts = [np.eye(k)[j] for j in range(k)] + [np.full(k, 1.0 / k)] + ([warm] if warm is not None else [])
    fun = lambda p: -nsw_objective(mu[None], bonus[None], p[None], form)[0][0]  # noqa: E731
    jac = lambda p: -nsw_objective(mu[None], bonus[None], p[None], form)[1][0]  # noqa: E731
    best, best_f = None, -np.inf
    for x0 in starts:
        r = minimize(fun, x0, jac=jac, method="SLSQP", bounds=[(0.0, 1.0)] * k,
                     constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0, "jac": lambda p: np.ones(k)}],
                     options={"ftol": 1e-12, "maxiter": 200})
        p = np.clip(r.x, 0, None)
        p /= p.sum()
        f = -fun(p)
        if f > best_f:
            best, best_f = p, f
    return best


def nashucb_benchmark(T: int, seeds: int, form: str = "product") -> None:
    captured: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []
    orig = _NashUCBState._solve

    def capture(self, t):
        mu, bonus = self.nashucb_inputs(t)
        captured.append((mu.copy(), bonus.copy(), self.p.copy() if self.solves else None))
        return orig(self, t)

    _NashUCBState._solve = capture
    try:
        env = MultiAgentBandit([[0.9, 0.5, 0.1], [0.8, 0.1, 0.5], [0.1, 0.5, 0.9]], "bernoulli")
        simulate(make_learner("nashucb", form=form, growth=0.0), env, T, seeds)
    finally:
        _NashUCBState._solve = orig
    t0 = time.perf_counter()
    ours = [nashucb_maximise(mu, b, form, warm=w) for mu, b, w in captured]
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    theirs = [np.stack([scipy_nashucb(mu[s], b[s], form, None if w is None else w[s]) for s in range(mu.shape[0])])
              for mu, b, w in captured]
    t_scipy = time.perf_counter() - t0
    # compare policies where the maximiser is unique: both solvers' values agree, and no other
    # restart of either solver reached the same value at a distant point (ties, e.g. equal bonuses
    # in the first rounds, have several maximisers and either is right)
    gaps, diffs, ties = [], [], 0
    for (mu, b, _), p, q in zip(captured, ours, theirs):
        fp, fq = nsw_objective(mu, b, p, form)[0], nsw_objective(mu, b, q, form)[0]
        gaps.append(float((fq - fp).max()))
        d = np.abs(p - q).max(axis=1)
        tie = (np.abs(fp - fq) <= 1e-12) & (d > 1e-3)
        ties += int(tie.sum())
        if (~tie).any():
            diffs.append(float(d[~tie].max()))
    print(f"NashUCB update ({form}, N=3 K=3, {seeds} seeds, {len(captured)} rounds): batched projected gradient "
          f"{t_ours / len(captured) * 1e3:.2f} ms/round, scipy SLSQP per step {t_scipy / len(captured) * 1e3:.1f} ms/round, "
          f"ratio {t_scipy / t_ours:.1f}x; value: scipy better by at most {max(max(gaps), 0):.1e}; "
          f"max |policy diff| {max(diffs):.1e} ({ties} tied problems with several maximisers left out)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--T", type=int, default=100_000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--nash-T", type=int, default=150)
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"load average {os.getloadavg()[0]:.1f}")
    rng = np.random.default_rng(0)
    rank = np.array([np.linspace(0.9, 0.1, 10)[rng.permutation(10)] for _ in range(10)])
    pf_benchmark(rank, args.T, args.seeds, args.jobs, "(IC rank rewards)")
    pf_benchmark(np.random.default_rng(0).uniform(0.1, 0.9, (10, 10)), args.T, args.seeds, args.jobs,
                 "(uniform random means)")
    nashucb_benchmark(args.nash_T, 4, "product")
    nashucb_benchmark(args.nash_T, 4, "geometric")


if __name__ == "__main__":
    main()
