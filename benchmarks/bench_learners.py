"""Learner speed figures (issue 4). Prints figures; not a unit test.

    .venv/bin/python benchmarks/bench_learners.py [--seeds 20] [--T 100000] [--jobs 2] [--nash-T 150]
                                                  [--nash-seeds 4,20] [--skip-pf]

* PF learner, N = 10, K = 10, T = 1e5, 20 seeds, ``--jobs`` processes: wall and CPU time
  (target <= 10 s on 2 cores). Instance: impartial-culture rankings (seed 0), rewards by rank
  linspace(0.9, 0.1, 10), Bernoulli rewards; also the same with uniform random means.
* NashUCB update: the learner's compiled solver (``nashucb_maximise``: a numba kernel, spectral
  projected gradient + Newton on the face, per problem and restart) against a per-step
  scipy.optimize.minimize (SLSQP) implementation of the same update (same objective, same restarts:
  the K vertices, the centre and the previous solution), on the same problems in the same run: those
  the learner meets on a short horizon (N = 3, K = 3, ``--nash-T`` rounds re-solved every round,
  ``growth=0``), for each batch size in ``--nash-seeds``. The learner solves all seeds of a
  simulation as one batch (``nashucb_maximise`` gets a (seeds, N, K) stack per round), so the batch
  size is the number of seeds: 4 (a small batch, the figure first recorded) and 20 (the CLI default
  ``--seeds 20``); scipy solves the same problems one at a time either way. The numba kernel is
  compiled (or loaded from its on-disk cache, ``cache=True``) before any timing: compilation is a
  one-time cost per machine, not part of an update. Printed: the ratio of update times, ms/round
  on both sides, the largest value gap either way, the largest policy difference on problems with a
  single maximiser (problems where the two solvers found equally good maximisers at distant points,
  i.e. ties, are counted and left out), and the largest stationarity residual
  ``||P(p + grad) - p||_inf`` of each side (for the geometric form only where every U_i > 1e-9:
  NSW^(1/N) has no gradient where some U_i = 0) (target >= 50x, same policies within tolerance).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from fairarena.learners.env import MultiAgentBandit
from fairarena.learners.catalog import make_learner
from fairarena.learners.nash import NashUCBState
from fairarena.learners.nashucb import nashucb_maximise, nsw_objective, project_simplex
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


def _residual(mu: np.ndarray, b: np.ndarray, p: np.ndarray, form: str) -> np.ndarray:
    """Stationarity residual ``||P(p + grad) - p||_inf`` per problem (0 at a KKT point); NaN where
    the objective has no gradient (geometric form with some ``U_i(p) <= 1e-9``)."""
    g = nsw_objective(mu, b, p, form)[1]
    res = np.abs(project_simplex(p + g) - p).max(axis=1)
    if form == "geometric":
        res[np.einsum("bik,bk->bi", mu, p).min(axis=1) <= 1e-9] = np.nan
    return res


def nashucb_benchmark(T: int, seeds: int, form: str = "product") -> None:
    captured: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]] = []
    orig = NashUCBState.solve

    def capture(self, t):
        mu, bonus = self.nashucb_inputs(t)
        captured.append((mu.copy(), bonus.copy(), self.p.copy() if self.solves else None))
        return orig(self, t)

    NashUCBState.solve = capture
    try:
        env = MultiAgentBandit([[0.9, 0.5, 0.1], [0.8, 0.1, 0.5], [0.1, 0.5, 0.9]], "bernoulli")
        simulate(make_learner("nashucb", form=form, growth=0.0), env, T, seeds)
    finally:
        NashUCBState.solve = orig
    # the simulation above has compiled (or loaded) the kernel already; once more, to be explicit
    mu0, b0, _ = captured[-1]
    nashucb_maximise(mu0, b0, form, warm=np.full_like(b0, 1.0 / b0.shape[1]))
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
    gaps, better, diffs, ties, res_ours, res_scipy = [], [], [], 0, [], []
    for (mu, b, _), p, q in zip(captured, ours, theirs):
        fp, fq = nsw_objective(mu, b, p, form)[0], nsw_objective(mu, b, q, form)[0]
        gaps.append(float((fq - fp).max()))
        better.append(float((fp - fq).max()))
        d = np.abs(p - q).max(axis=1)
        tie = (np.abs(fp - fq) <= 1e-12) & (d > 1e-3)
        ties += int(tie.sum())
        if (~tie).any():
            diffs.append(float(d[~tie].max()))
            res_ours.append(float(np.nanmax(_residual(mu, b, p, form)[~tie], initial=0.0)))
            res_scipy.append(float(np.nanmax(_residual(mu, b, q, form)[~tie], initial=0.0)))
    n = len(captured)
    print(f"NashUCB update ({form}, N=3 K=3, batch of {seeds} seeds, {n} rounds, {n * seeds} problems): "
          f"compiled kernel {t_ours / n * 1e3:.3f} ms/round, scipy SLSQP per step {t_scipy / n * 1e3:.1f} ms/round, "
          f"ratio {t_scipy / t_ours:.0f}x (load average now {os.getloadavg()[0]:.1f}); "
          f"value: scipy better by at most {max(max(gaps), 0):.1e}, ours better by at most {max(max(better), 0):.1e}; "
          f"max |policy diff| {max(diffs):.1e} ({ties} tied problems with several maximisers left out); "
          f"max stationarity residual ||P(p + grad) - p||: ours {max(res_ours):.1e}, scipy {max(res_scipy):.1e}"
          + (" (where U_i > 1e-9 for all i)" if form == "geometric" else ""))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--T", type=int, default=100_000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--nash-T", type=int, default=150)
    ap.add_argument("--nash-seeds", default="4,20", help="comma list of NashUCB batch sizes (seeds)")
    ap.add_argument("--skip-pf", action="store_true", help="only the NashUCB figures")
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"load average {os.getloadavg()[0]:.1f}")
    if not args.skip_pf:
        rng = np.random.default_rng(0)
        rank = np.array([np.linspace(0.9, 0.1, 10)[rng.permutation(10)] for _ in range(10)])
        pf_benchmark(rank, args.T, args.seeds, args.jobs, "(IC rank rewards)")
        pf_benchmark(np.random.default_rng(0).uniform(0.1, 0.9, (10, 10)), args.T, args.seeds, args.jobs,
                     "(uniform random means)")
    for seeds in (int(x) for x in args.nash_seeds.split(",")):
        nashucb_benchmark(args.nash_T, seeds, "product")
        nashucb_benchmark(args.nash_T, seeds, "geometric")


if __name__ == "__main__":
    main()
