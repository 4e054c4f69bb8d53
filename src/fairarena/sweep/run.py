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
from pathlib import Path
from typing import Any, Callable

import numpy as np

from fairarena.sweep.config import GridConfig, Setting, expand



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
    from fairarena.sweep.config import TABLE_POLICIES

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


def save_chunk(path: str | Path, res: dict[str, Any]) -> Path:
    """Write one task's result (:func:`solve_chunk`) to an ``.npz`` file atomically (arrays only, no
    pickles). Policies of different arm counts are stored NaN-padded with their lengths."""
    from fairarena.fsutil import atomic_path

    ks = np.array([len(row) for row in next(iter(res["policies"].values()), [])], dtype=np.int64)
    width = int(ks.max()) if len(ks) else 0
    arrays: dict[str, np.ndarray] = {
        "ids": np.asarray(res["ids"]), "ks": ks, "ef_worst": np.asarray(res["ef_worst"], float),
        "timing": np.array([res["t_instances"], res["t_solve"], res["lp_fallbacks"]], float),
        "policy_names": np.array(list(res["policies"]), dtype=str)}
    for j, (pname, rows) in enumerate(res["policies"].items()):
        padded = np.full((len(rows), width), np.nan)
        for r, row in enumerate(rows):
            padded[r, :len(row)] = row
        arrays[f"p{j}"] = padded
        keys = list(res["scores"][pname])
        arrays[f"k{j}"] = np.array(keys, dtype=str)
        for m, key in enumerate(keys):
            arrays[f"s{j}_{m}"] = np.asarray(res["scores"][pname][key], float)
    path = Path(path)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
    return path


def load_chunk(path: str | Path) -> dict[str, Any]:
    """Read a task's result written by :func:`save_chunk` (the same arrays, bit for bit)."""
    with np.load(path, allow_pickle=False) as z:
        ks = z["ks"]
        policies: dict[str, list[np.ndarray]] = {}
        scores: dict[str, dict[str, np.ndarray]] = {}
        for j, pname in enumerate(z["policy_names"].tolist()):
            padded = z[f"p{j}"]
            policies[pname] = [padded[r, :k].copy() for r, k in enumerate(ks)]
            scores[pname] = {key: z[f"s{j}_{m}"] for m, key in enumerate(z[f"k{j}"].tolist())}
        t_inst, t_solve, fallbacks = z["timing"].tolist()
        return {"ids": z["ids"], "policies": policies, "scores": scores, "ef_worst": z["ef_worst"],
                "t_instances": t_inst, "t_solve": t_solve, "lp_fallbacks": int(fallbacks)}


def read_chunks(folder: str | Path, tasks: list[list[Setting]]) -> dict[int, dict[str, Any]]:
    """``{task index: result}`` of the chunk files in ``folder`` that belong to ``tasks`` (same
    setting ids, same policies); unreadable or foreign files are skipped (their task runs again)."""
    folder = Path(folder)
    out: dict[int, dict[str, Any]] = {}
    for i, task in enumerate(tasks):
        path = folder / f"task{i}.npz"
        if not path.is_file():
            continue
        try:
            res = load_chunk(path)
        except Exception:  # noqa: BLE001 - a truncated or foreign file: its task is run again
            continue
        if res["ids"].tolist() == [s.setting_id for s in task]:
            out[i] = res
    return out


def run_sweep(cfg: GridConfig, *, limit: int | None = None, backend: str = "processes",
              workers: int | None = None, address: str | None = None,
              progress: Callable[[int, int], None] | None = None,
              checkpoint: str | Path | None = None) -> SweepResult:
    """Run the sweep; ``progress(done_settings, total_settings)`` is called as tasks finish.

    ``backend`` is one of :data:`fairarena.execution.BACKENDS` (``serial``, ``processes``,
    ``threads``, ``dask``; ``joblib`` is accepted for ``processes``).

    ``checkpoint``: a folder where each task's result is written as it finishes (``taskI.npz``); the
    tasks whose results are already there (from an interrupted run of the same config and limit)
    are read back instead of run. The frame is the same, bit for bit, as an uninterrupted run's."""
    from fairarena.execution import check_backend, map_tasks

    backend = check_backend(backend, workers, address)
    t0 = time.perf_counter()
    settings = expand(cfg, limit)
    tasks = make_tasks(settings, cfg)
    completed: dict[int, dict[str, Any]] = {}
    if checkpoint is not None:
        checkpoint = Path(checkpoint)
        completed = read_chunks(checkpoint, tasks)
    todo = [i for i in range(len(tasks)) if i not in completed]
    done = sum(len(tasks[i]) for i in completed)
    if progress and done:
        progress(done, len(settings))

    def on_done(j: int, res: Any) -> None:
        nonlocal done
        if checkpoint is not None:  # created with the first result: a run that fails first leaves nothing
            checkpoint.mkdir(parents=True, exist_ok=True)
            save_chunk(checkpoint / f"task{todo[j]}.npz", res)
        done += len(tasks[todo[j]])
        if progress:
            progress(done, len(settings))

    fresh = map_tasks(functools.partial(solve_chunk, cfg=cfg), [tasks[i] for i in todo], backend=backend,
                      workers=workers, address=address, on_done=on_done)
    results = [completed[i] if i in completed else None for i in range(len(tasks))]
    for i, res in zip(todo, fresh):
        results[i] = res
    frame = _to_frame(settings, results, cfg)
    seconds = time.perf_counter() - t0
    summary = summarise(frame, cfg)
    summary.update(n_settings=len(settings), seconds=round(seconds, 3),
                   timing={"instances_s": round(sum(r["t_instances"] for r in results), 3),
                           "solve_s": round(sum(r["t_solve"] for r in results), 3),
                           "lp_fallbacks": int(sum(r["lp_fallbacks"] for r in results)),
                           "tasks": len(tasks), "resumed_tasks": len(completed), "backend": backend, "workers": workers, "limit": limit})
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
