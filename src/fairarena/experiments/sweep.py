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



def score_columns() -> tuple[str, ...]:
    """The score columns of a sweep's results: every registered notion."""
    from fairarena.bandit.notions import score_keys

    return score_keys()


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


def scored_notions(cfg: GridConfig) -> tuple[str, ...]:
    """The notions whose scores a sweep reports: the paper's Table 1 notions and every policy run."""
    from fairarena.experiments.config import TABLE_POLICIES

    return tuple(n for n in score_columns() if n in TABLE_POLICIES or n in cfg.policies)


def solve_chunk(settings: list[Setting], cfg: GridConfig) -> dict[str, Any]:
    """Every policy of ``cfg.policies`` and its scores for settings with one N (one task)."""
    from fairarena.bandit.notions import evaluate_batch, optimal_policies, pad_stack, split_live
    from fairarena.bandit.problem import inequality
    from fairarena.errors import SolverError

    with _blas_controller().limit(limits=1):  # same arithmetic in every process, whatever the backend
        t0 = time.perf_counter()
        mus = pad_stack([make_instance(s, cfg) for s in settings])
        t1 = time.perf_counter()
        o = cfg.options()
        stats: dict[str, int] = {}
        try:
            pols = optimal_policies(mus, cfg.policies, o, stats=stats)
        except SolverError as exc:  # say which settings, then fail: no half-converged numbers
            raise SolverError(f"N={settings[0].N} (setting ids "
                              f"{settings[0].setting_id}..{settings[-1].setting_id}): {exc}") from exc
        # notions outside the paper's table (maximin, user-registered ones): only their raw value is
        # reported unless their policy is part of the run (no optimum solved just for a score)
        optima = {name: np.zeros(len(settings)) for name in score_columns() if name not in scored_notions(cfg)}
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
            "ef_worst": ef_worst, "t_instances": t1 - t0, "t_solve": t2 - t1,
            "lp_fallbacks": stats.get("exact", 0)}


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


def run_sweep(cfg: GridConfig, *, limit: int | None = None, backend: str = "processes",
              workers: int | None = None, address: str | None = None,
              progress: Callable[[int, int], None] | None = None) -> SweepResult:
    """Run the sweep; ``progress(done_settings, total_settings)`` is called as tasks finish.

    ``backend`` is one of :data:`fairarena.execution.BACKENDS` (``serial``, ``processes``,
    ``threads``, ``dask``; ``joblib`` is accepted for ``processes``)."""
    from fairarena.execution import check_backend, map_tasks

    backend = check_backend(backend, workers, address)
    t0 = time.perf_counter()
    settings = expand(cfg, limit)
    tasks = make_tasks(settings, cfg)
    done = 0

    def on_done(i: int, res: Any) -> None:
        nonlocal done
        done += len(tasks[i])
        if progress:
            progress(done, len(settings))

    results = map_tasks(functools.partial(solve_chunk, cfg=cfg), tasks, backend=backend, workers=workers,
                        address=address, on_done=on_done)
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
    columns = score_columns()
    scored = scored_notions(cfg)
    keys = ["setting_id", "policy", *columns, *(k + "_value" for k in columns), "ef_worst_value"]
    cols: dict[str, list[Any]] = {key: [] for key in keys}
    pcol: list[Any] = []
    for res in results:  # columns gathered as arrays, one DataFrame at the end
        ids = res["ids"]
        for pname, ps in res["policies"].items():
            sc = res["scores"][pname]
            cols["setting_id"].append(ids)
            cols["policy"].append(np.full(len(ids), pname, dtype=object))
            for key in columns:
                missing = key not in scored
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
    std is the sample standard deviation over settings (ddof = 1). Means and stds are snapped to 8
    decimals (solver noise such as a mean of 0.9999999999999968 reads 1.0; the per-setting scores in
    ``settings.parquet`` stay raw)."""
    from fairarena.bandit.display import clean_number

    table: dict[str, dict[str, list[float]]] = {}
    for pname in cfg.policies:
        sub = frame[frame["policy"] == pname]
        table[pname] = {k: [clean_number(sub[k].mean()),
                            clean_number(sub[k].std(ddof=1)) if len(sub) > 1 else 0.0]
                        for k in ("pf", "ef", "uf")}
    return {"table": table, "config": cfg.model_dump()}
