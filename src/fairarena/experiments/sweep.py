"""The full-factorial sweep: settings -> instances -> optimal policies -> scores.

Settings with the same number of agents N are solved as one batch (split only above
``max_batch``), arm counts padded with NaN columns that the solvers fix at probability 0 (tested to
change nothing): the batched solvers' cost is dominated by per-call overhead, not by batch size. The tasks are
fixed by the config alone, so any backend and any number of workers give identical numbers.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from fairarena.experiments.config import GridConfig, Setting, expand

SCORE_COLUMNS = ("pf", "ef", "uf", "nsw", "ggi", "maximin")


def make_instance(s: Setting, cfg: GridConfig) -> np.ndarray:
    """The reward matrix of one setting, from its derived seed alone."""
    from fairarena.preferences.cultures import sample_profile
    from fairarena.preferences.rewards import reward_matrix

    rng = np.random.default_rng(s.seed)
    profile_seed = int(rng.integers(2**31 - 1))
    phi = None if np.isnan(s.phi) else s.phi
    profile = sample_profile(s.culture, s.N, s.K, profile_seed, phi)
    return reward_matrix(profile, rng, s.fav_mode, s.f or None, cfg.reward_low, cfg.reward_high)


@functools.cache
def _blas_controller() -> Any:
    """The process's threadpoolctl controller, found once (discovering the BLAS libraries costs
    a few ms, paid per task otherwise)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def solve_chunk(settings: list[Setting], cfg: GridConfig) -> dict[str, Any]:
    """Every policy of ``cfg.policies`` and its scores for settings with one N (one task)."""
    from fairarena.bandit.notions import evaluate_batch, pad_stack, split_live
    from fairarena.bandit.problem import inequality
    from fairarena.errors import SolverError

    with _blas_controller().limit(limits=1):  # same arithmetic in every process, whatever the backend
        t0 = time.perf_counter()
        mus = pad_stack([make_instance(s, cfg) for s in settings])
        t1 = time.perf_counter()
        o = cfg.options()
        try:
            pols, n_fallback = _policies(mus, cfg, o)
        except SolverError as exc:  # say which settings, then fail: no half-converged numbers
            raise SolverError(f"N={settings[0].N} (setting ids "
                              f"{settings[0].setting_id}..{settings[-1].setting_id}): {exc}") from exc
        # maximin: only its raw value is reported unless its policy is part of the run
        optima = {} if "maximin" in pols else {"maximin": np.zeros(len(settings))}
        ev = evaluate_batch(mus, pols, o, optima=optima)
        # the worst inequality over the simplex (a convex function peaks at a vertex): lets reports
        # normalise EF scores by the instance's range as well
        mus0, live = split_live(mus)
        per_arm = inequality(mus0.transpose(0, 2, 1), o.ef_kind)
        if live is not None:
            per_arm = np.where(live, per_arm, -np.inf)
        ef_worst = -per_arm.max(axis=1)
        ks = np.array([s.K for s in settings])
        pols = {name: [row[:k] for row, k in zip(ps, ks)] for name, ps in pols.items()}
        t2 = time.perf_counter()
    return {"ids": np.array([s.setting_id for s in settings]), "policies": pols, "scores": ev,
            "ef_worst": ef_worst, "t_instances": t1 - t0, "t_solve": t2 - t1, "lp_fallbacks": n_fallback}


def _policies(mus: np.ndarray, cfg: GridConfig, o: Any) -> tuple[dict[str, np.ndarray], int]:
    """All policies of the batch; if the batched solver reports failure, solve the failing notion
    instance by instance, and for an OWA notion (ggi, maximin) an instance the barrier solver still
    cannot centre is solved exactly as an LP with HiGHS (counted in ``timing.lp_fallbacks``)."""
    from fairarena.bandit.notions import optimal_policies
    from fairarena.errors import SolverError

    try:
        return optimal_policies(mus, cfg.policies, o), 0
    except SolverError:
        pass
    out: dict[str, np.ndarray] = {}
    n_fallback = 0
    for name in cfg.policies:
        try:
            out[name] = optimal_policies(mus, [name], o)[name]
            continue
        except SolverError:
            if name not in ("ggi", "maximin"):
                raise
        rows = []
        for mu in mus:
            mu = mu[:, ~np.isnan(mu).all(axis=0)]
            try:
                rows.append(optimal_policies(mu[None], [name], o)[name][0])
            except SolverError:
                n = mu.shape[0]
                w = o.ggi_w(n) if name == "ggi" else np.eye(1, n)[0]
                rows.append(owa_lp(mu, w))
                n_fallback += 1
        kmax = mus.shape[2]
        out[name] = np.stack([np.pad(r, (0, kmax - len(r))) for r in rows])
    return out, n_fallback


def owa_lp(mu: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Exact OWA-optimal policy by one LP (HiGHS): maximise ``sum_m w_m U_(m)`` (ascending, ``w``
    non-increasing) written as ``sum_m (w_m - w_{m+1}) L_m(U)`` with ``L_m`` the sum of the ``m``
    smallest utilities, ``L_m(U) = max_t m t - sum_i max(0, t - U_i)``."""
    from scipy.optimize import linprog

    from fairarena.errors import SolverError

    n, k = mu.shape
    c_m = w - np.append(w[1:], 0.0)
    # variables: p (k), t (n), d (n * n) with d[m, i] >= t_m - mu_i p, d >= 0
    nv = k + n + n * n
    c = np.zeros(nv)
    c[k:k + n] = -c_m * np.arange(1, n + 1)
    c[k + n:] = np.repeat(c_m, n)
    a_ub = np.zeros((n * n, nv))
    for m in range(n):
        rows = slice(m * n, (m + 1) * n)
        a_ub[rows, :k] = -mu
        a_ub[rows, k + m] = 1.0
        a_ub[rows, k + n + m * n:k + n + (m + 1) * n] = -np.eye(n)
    a_eq = np.zeros((1, nv))
    a_eq[0, :k] = 1.0
    bounds = [(0, None)] * k + [(None, None)] * n + [(0, None)] * (n * n)
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(n * n), A_eq=a_eq, b_eq=[1.0], bounds=bounds, method="highs")
    if res.status != 0:
        raise SolverError(f"OWA LP failed: {res.message}")
    p = np.clip(res.x[:k], 0.0, None)
    return p / p.sum()


@dataclass
class SweepResult:
    frame: Any                 # pandas DataFrame, one row per (setting, policy)
    summary: dict[str, Any]
    settings: list[Setting]


def make_tasks(settings: list[Setting], cfg: GridConfig) -> list[list[Setting]]:
    """One task per agent count N (split above ``cfg.max_batch``), largest first for balance."""
    by_shape: dict[int, list[Setting]] = {}
    for s in sorted(settings, key=lambda s: (s.N, s.K, s.setting_id)):
        by_shape.setdefault(s.N, []).append(s)
    tasks = []
    for group in by_shape.values():
        for j in range(0, len(group), cfg.max_batch):
            tasks.append(group[j:j + cfg.max_batch])
    tasks.sort(key=lambda g: (-len(g) * g[0].N ** 2, g[0].setting_id))
    return tasks


def run_sweep(cfg: GridConfig, *, limit: int | None = None, backend: str = "joblib",
              workers: int | None = None, address: str | None = None,
              progress: Callable[[int, int], None] | None = None) -> SweepResult:
    """Run the sweep; ``progress(done_settings, total_settings)`` is called as tasks finish."""
    import pandas as pd

    from fairarena.experiments.backends import run_tasks

    t0 = time.perf_counter()
    settings = expand(cfg, limit)
    tasks = make_tasks(settings, cfg)
    results: list[Any] = [None] * len(tasks)
    done = 0
    for i, res in run_tasks(solve_chunk, [(t, cfg) for t in tasks], backend=backend, workers=workers,
                            address=address):
        results[i] = res
        done += len(tasks[i])
        if progress:
            progress(done, len(settings))
    frame = _to_frame(settings, results, cfg)
    seconds = time.perf_counter() - t0
    summary = summarise(frame, cfg)
    summary.update(n_settings=len(settings), seconds=round(seconds, 3),
                   timing={"instances_s": round(sum(r["t_instances"] for r in results), 3),
                           "solve_s": round(sum(r["t_solve"] for r in results), 3),
                           "lp_fallbacks": int(sum(r["lp_fallbacks"] for r in results)),
                           "tasks": len(tasks), "backend": backend, "workers": workers, "limit": limit})
    return SweepResult(frame, summary, settings)


def _to_frame(settings: list[Setting], results: list[dict[str, Any]], cfg: GridConfig) -> Any:
    import pandas as pd

    by_id = {s.setting_id: s for s in settings}
    keys = ["setting_id", "policy", *SCORE_COLUMNS, *(k + "_value" for k in SCORE_COLUMNS), "ef_worst_value"]
    cols: dict[str, list[Any]] = {key: [] for key in keys}
    pcol: list[Any] = []
    for res in results:  # columns gathered as arrays, one DataFrame at the end
        ids = res["ids"]
        for pname, ps in res["policies"].items():
            sc = res["scores"][pname]
            cols["setting_id"].append(ids)
            cols["policy"].append(np.full(len(ids), pname, dtype=object))
            for key in SCORE_COLUMNS:
                missing = key == "maximin" and "maximin" not in res["policies"]
                cols[key].append(np.full(len(ids), np.nan) if missing else np.asarray(sc[key], float))
                cols[key + "_value"].append(np.asarray(sc[key + "_value"], float))
            cols["ef_worst_value"].append(np.asarray(res["ef_worst"], float))
            pcol.extend(ps)
    df = pd.DataFrame({key: np.concatenate(v) for key, v in cols.items()})
    df["p"] = pcol
    meta = pd.DataFrame([{"setting_id": s.setting_id, "N": s.N, "K": s.K, "culture": s.culture,
                          "phi": s.phi, "fav_mode": s.fav_mode, "f": s.f, "seed": s.seed}
                         for s in by_id.values()])
    df = meta.merge(df, on="setting_id", how="right")
    order = {p: j for j, p in enumerate(cfg.policies)}
    df["_o"] = df["policy"].map(order)
    df = df.sort_values(["setting_id", "_o"], kind="stable").drop(columns="_o").reset_index(drop=True)
    df["seed"] = df["seed"].astype("uint64")
    return df


def summarise(frame: Any, cfg: GridConfig) -> dict[str, Any]:
    """``{"table": {policy: {"pf": [mean, std], "ef": [...], "uf": [...]}}, "config": ...}``;
    std is the sample standard deviation over settings (ddof = 1)."""
    table: dict[str, dict[str, list[float]]] = {}
    for pname in cfg.policies:
        sub = frame[frame["policy"] == pname]
        table[pname] = {k: [float(sub[k].mean()), float(sub[k].std(ddof=1)) if len(sub) > 1 else 0.0]
                        for k in ("pf", "ef", "uf")}
    return {"table": table, "config": cfg.model_dump()}
