"""The simulation harness: many seeds of one or several learners on one environment.

``simulate(learner, env, T, seeds)`` runs Algorithm 1 for every seed. Seeds run **vectorised**:
one Python loop over rounds advances every run of a batch with array operations (the learners are
written that way). Batches are spread over processes with joblib (``n_jobs``); because each run
draws only from its own seed's streams (:mod:`fairarena.learners.env`), a seed's trajectory does
not depend on how seeds are batched or on how many processes run them.

Accounting (per run, every round ``t = 1..T``, with ``p_t`` the distribution round ``t`` samples
its arm from and ``mu`` the true means). Every notion of :data:`fairarena.bandit.notions.NOTIONS`
(a notion registered by a user included) is accounted with its **own** value and score functions,
under the notion options of the run (``options``, e.g. ``ef_kind``) merged with those the learner's
own parameters fix (:meth:`LearnerSpec.notion_options`, e.g. a GGI learner's ``weights``):

- regret of notion ``X`` (``X != 'pf'``): ``sum_t V_X(p*_X) - V_X(p_t)`` with ``V_X`` the notion's
  value (higher is better: EF's value is minus the inequality, NSW's the geometric mean of
  utilities) and ``p*_X`` its optimal policy on the true means;
- PF regret: the number of rounds in which some agent's estimated favourite set differs from its
  true one (learners that estimate favourite sets; ``NaN`` for the others); the round of the last
  such mistake is kept per run;
- the score of ``p_t`` on every notion (the notion's score function, 1 = optimal).

"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from fairarena.bandit.notions import NOTIONS, Options, get_notion, make_options
from fairarena.bandit.problem import favourites
from fairarena.errors import InputError
from fairarena.learners.base import LearnerSpec, check_horizon
from fairarena.learners.catalog import make_learner
from fairarena.learners.env import LEARNER_STREAM, SAMPLER_STREAM, MultiAgentBandit, seed_stream, validate_seeds

BLOCK = 1024
FLUSH_ROWS = 16384  # policies (rounds x runs) accounted per call of the notions' value functions


def regret_notions() -> tuple[str, ...]:
    """The notions regret is accounted for: every registered notion (read at call time, so a notion
    registered by a user is included)."""
    return tuple(NOTIONS)


def log_grid(T: int, points: int = 200) -> np.ndarray:
    """Rounds ``1..T`` on a logarithmic grid (unique, sorted, always containing 1 and T)."""
    g = np.unique(np.round(np.logspace(0.0, math.log10(T), max(2, points))).astype(np.int64))
    return np.unique(np.concatenate([[1], g[(g >= 1) & (g <= T)], [T]]))


@dataclass
class Truth:
    """What the accounting needs about the true means: each notion's optimal value under ``options``."""

    means: np.ndarray                     # (N, K)
    options: Options
    notions: tuple[str, ...]
    optimum: dict[str, float]             # notion -> value of its optimal policy (pf: 1)
    fav: np.ndarray                       # (N, K) true favourite sets

    @classmethod
    def of(cls, means: np.ndarray, options: "Options | Mapping[str, Any] | None" = None,
           notions: Sequence[str] | None = None) -> "Truth":
        from fairarena.bandit.notions import optimal_policies

        o = make_options(options)
        names = tuple(notions) if notions is not None else regret_notions()
        for name in names:
            get_notion(name)
        m = np.asarray(means, dtype=float)[None]
        rest = [x for x in names if x != "pf"]
        pol = optimal_policies(m, rest, o) if rest else {}
        optimum = {x: float(get_notion(x).value_batch(m, pol[x], o)[0]) for x in rest}
        if "pf" in names:
            optimum["pf"] = 1.0
        return cls(means=m[0], options=o, notions=names, optimum=optimum, fav=favourites(m[0], o.tol))

    def values(self, name: str, P: np.ndarray) -> np.ndarray:
        """The notion's own value of policies ``P (..., K)``: ``(...)``."""
        P = np.asarray(P, dtype=float)
        flat = P.reshape(-1, P.shape[-1])
        mus = np.broadcast_to(self.means, (flat.shape[0],) + self.means.shape)
        return np.asarray(get_notion(name).value_batch(mus, flat, self.options)).reshape(P.shape[:-1])

    def instant_regrets(self, P: np.ndarray) -> dict[str, np.ndarray]:
        """Per-round regrets ``V(p*) - V(p)`` of policies ``P (..., K)`` for every notion but pf."""
        return {x: self.optimum[x] - self.values(x, P) for x in self.notions if x != "pf"}

    def scores(self, P: np.ndarray) -> dict[str, np.ndarray]:
        """Every notion's score of policies ``P (B, K)`` (its own score function, 1 = optimal)."""
        P = np.asarray(P, dtype=float)
        mus = np.broadcast_to(self.means, (P.shape[0],) + self.means.shape)
        out = {}
        for x in self.notions:
            opt = None if x == "pf" else np.full(P.shape[0], self.optimum[x])
            out[x] = np.asarray(get_notion(x).score_batch(mus, P, self.options, optimum=opt))
        return out


@dataclass
class SimulationResult:
    """All seeds of one learner on one environment."""

    learner: str
    params: dict[str, Any]
    target: str
    seeds: list[int]
    horizon: int
    grid: np.ndarray                      # (G,) rounds
    policies: np.ndarray                  # (S, G, K) p_t at the grid rounds
    regret: dict[str, np.ndarray]         # notion -> (S, G) cumulative regret at the grid rounds
    scores: dict[str, np.ndarray]         # pf/ef/uf -> (S, G) scores of p_t at the grid rounds
    arms: np.ndarray                      # (S, T) arm pulled at each round (0-based)
    seconds: float
    rewards: np.ndarray | None = None     # (S, T, N) when recorded
    extra: dict[str, Any] = field(default_factory=dict)
    last_mistake: np.ndarray | None = None  # (S,) round of the last PF mistake (0: none); None without favourite sets

    # ---- summaries -----------------------------------------------------------------------
    def final_policy(self) -> np.ndarray:
        """Mean over seeds of ``p_T``."""
        return self.policies[:, -1].mean(axis=0)

    def final_scores(self) -> dict[str, float]:
        """Mean over seeds of the PF, EF, UF scores of ``p_T``."""
        return {k: float(v[:, -1].mean()) for k, v in self.scores.items()}

    def final_regret(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for k, v in self.regret.items():
            x = float(v[:, -1].mean())
            out[k] = None if math.isnan(x) else x
        return out

    def regret_slope(self, notion: str | None = None) -> float | None:
        """Log-log slope of the mean cumulative regret over the second half of the run
        (least squares on the grid rounds ``t >= T/2``); 0 when that regret stays at 0."""
        curve = self.regret[notion or self.target].mean(axis=0)
        return regret_slope(self.grid, curve, self.horizon)

    def last_mistake_round(self) -> int | None:
        """The last round, over all seeds, in which some estimated favourite set was wrong (0 if
        none ever was; ``None`` for learners that keep no favourite sets). A PF regret curve is
        flat from there on: read it beside the horizon (a run that ends before the sets resolve
        shows linear PF regret)."""
        return None if self.last_mistake is None else int(self.last_mistake.max())

    def summary(self) -> dict[str, Any]:
        return {
            "final_policy": self.final_policy().tolist(),
            "final_scores": self.final_scores(),
            "regret": self.final_regret(),
            "regret_slope": self.regret_slope(),
            "regret_slopes": {k: self.regret_slope(k) for k in self.regret},
            "last_mistake": self.last_mistake_round(),
            "last_mistake_per_seed": None if self.last_mistake is None else self.last_mistake.tolist(),
            "target": self.target,
            "seconds": self.seconds,
        }

    # ---- tables --------------------------------------------------------------------------
    def curves_frame(self):
        """Long table on the grid: learner, seed, t, regret_*, score_*, p_0..p_{K-1}."""
        import pandas as pd

        S, G, K = self.policies.shape
        cols: dict[str, Any] = {
            "learner": np.repeat(self.learner, S * G),
            "seed": np.repeat(np.asarray(self.seeds, dtype=np.int64), G),
            "t": np.tile(self.grid, S),
        }
        for k, v in self.regret.items():
            cols[f"regret_{k}"] = v.reshape(-1)
        for k, v in self.scores.items():
            cols[f"score_{k}"] = v.reshape(-1)
        for a in range(K):
            cols[f"p_{a}"] = self.policies[:, :, a].reshape(-1)
        return pd.DataFrame(cols)

    def arms_frame(self):
        """Every pull: learner, seed, t (1-based), arm (0-based)."""
        import pandas as pd

        S, T = self.arms.shape
        return pd.DataFrame({
            "learner": pd.Categorical(np.repeat(self.learner, S * T)),
            "seed": np.repeat(np.asarray(self.seeds, dtype=np.int32), T),
            "t": np.tile(np.arange(1, T + 1, dtype=np.int32), S),
            "arm": self.arms.reshape(-1).astype(np.int16),
        })


def regret_slope(grid: np.ndarray, curve: np.ndarray, horizon: int) -> float:
    sel = (grid >= horizon / 2.0) & (curve > 0)
    if sel.sum() < 2:
        return 0.0
    x, y = np.log(grid[sel]), np.log(curve[sel])
    if np.ptp(x) == 0 or np.ptp(y) == 0:  # a flat curve (e.g. PF mistakes that have stopped): exactly 0
        return 0.0
    return float(np.polyfit(x, y, 1)[0])


# ------------------------------------------------------------------------------------------------
# The vectorised run of one batch of seeds
# ------------------------------------------------------------------------------------------------

class Recorder:
    """Accounting for ``S`` runs: per-round regrets summed into cumulative regrets, and the
    policies and cumulative regrets kept at the grid rounds. ``add`` takes consecutive stretches
    of rounds."""

    def __init__(self, S: int, K: int, grid: np.ndarray, truth: Truth, has_fav: bool) -> None:
        self.grid, self.truth, self.has_fav = grid, truth, has_fav
        G = grid.size
        self.policies = np.empty((S, G, K))
        self.regret = {k: np.full((S, G), np.nan) for k in truth.notions}
        self.cum = {k: np.zeros(S) for k in truth.notions}
        self.last_mistake = np.zeros(S, dtype=np.int64) if has_fav else None
        self.gi = 0
        self.next_t = 1
        self._pending: list = []
        self._pending_t0 = 1
        self._rows = 0

    def add(self, t0: int, P: np.ndarray, miss: np.ndarray | None) -> None:
        """Rounds ``t0 .. t0+m-1`` with policies ``P (m, S, K)`` and PF mistakes ``miss (m, S)``.
        Short stretches are buffered and accounted together (call :meth:`flush` at the end)."""
        assert t0 == self.next_t, (t0, self.next_t)
        self.next_t = t0 + P.shape[0]
        if not self._pending:
            self._pending_t0 = t0
        self._pending.append((P, miss))
        self._rows += P.shape[0]
        if self._rows * self.policies.shape[0] >= FLUSH_ROWS:  # bounded memory, few calls per run
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        t0 = self._pending_t0
        P = np.concatenate([x[0] for x in self._pending]) if len(self._pending) > 1 else self._pending[0][0]
        miss = None
        if self.has_fav and self._pending[0][1] is not None:
            miss = np.concatenate([x[1] for x in self._pending])
        self._pending, self._rows = [], 0
        m = P.shape[0]
        inst = self.truth.instant_regrets(P)
        if miss is not None:
            if "pf" in self.cum:
                inst["pf"] = miss.astype(float)
            any_miss = miss.any(axis=0)
            last = m - 1 - np.argmax(miss[::-1], axis=0)
            self.last_mistake = np.where(any_miss, t0 + last, self.last_mistake)
        cums = {k: np.cumsum(v, axis=0) + self.cum[k] for k, v in inst.items()}
        grid, G = self.grid, self.grid.size
        while self.gi < G and grid[self.gi] < t0 + m:
            j = grid[self.gi] - t0
            self.policies[:, self.gi] = P[j]
            for k, v in cums.items():
                self.regret[k][:, self.gi] = v[j]
            self.gi += 1
        for k, v in cums.items():
            self.cum[k] = v[-1]


def _finish(spec: LearnerSpec, seeds: Sequence[int], T: int, grid: np.ndarray, rec: Recorder, truth: Truth,
            arms: np.ndarray, t0: float, rewards: np.ndarray | None, extra: dict[str, Any]) -> SimulationResult:
    S, G, K = rec.policies.shape
    sc = truth.scores(rec.policies.reshape(S * G, K))
    return SimulationResult(
        learner=spec.label(), params=spec.params(), target=spec.target_notion(), seeds=list(seeds), horizon=T,
        grid=grid, policies=rec.policies, regret=rec.regret, scores={k: v.reshape(S, G) for k, v in sc.items()},
        arms=arms, seconds=time.perf_counter() - t0, rewards=rewards, extra=extra, last_mistake=rec.last_mistake,
    )


def run_batch(spec: LearnerSpec, env: MultiAgentBandit, T: int, seeds: Sequence[int], grid: np.ndarray,
              record_rewards: bool = False, progress: Callable[[int], None] | None = None,
              truth: Truth | None = None) -> SimulationResult:
    """Run ``spec`` on ``env`` for every seed of ``seeds`` (one process).

    Learners whose spec has a ``run_seed`` fast path (and ``blocks`` set) run seed by seed
    through it; the others run all seeds together, round by round.
    """
    t0 = time.perf_counter()
    truth = truth or Truth.of(env.means, run_options(spec))
    grid = np.asarray(grid, dtype=np.int64)
    K = env.n_arms
    arms_all = np.empty((len(seeds), T), dtype=np.int16 if K < 2 ** 15 else np.int32)
    if getattr(spec, "blocks", False) and hasattr(spec, "run_seed") and not record_rewards:
        parts, extra, cache = [], {}, {}
        for i, seed in enumerate(seeds):
            rec = Recorder(1, K, grid, truth, True)
            info = spec.run_seed(env, T, seed, lambda t, P, miss: rec.add(t, P[:, None, :], miss[:, None]),
                                 arms_all[i], truth.fav, progress, cache=cache)
            rec.flush()
            for k, v in info.items():
                extra[k] = extra.get(k, 0) + v
            parts.append(rec)
        rec = Recorder(len(seeds), K, grid, truth, True)
        rec.policies = np.concatenate([r.policies for r in parts])
        rec.regret = {k: np.concatenate([r.regret[k] for r in parts]) for k in truth.notions}
        rec.last_mistake = np.concatenate([r.last_mistake for r in parts])
        return _finish(spec, seeds, T, grid, rec, truth, arms_all, t0, None, extra)
    return _run_rounds(spec, env, T, seeds, grid, record_rewards, progress, truth, arms_all, t0)


def _run_rounds(spec, env, T, seeds, grid, record_rewards, progress, truth, arms_all, t0) -> SimulationResult:
    S, N, K = len(seeds), env.n_agents, env.n_arms
    state = spec.build(N, K, T, S, [seed_stream(s, LEARNER_STREAM) for s in seeds])
    streams = env.streams(seeds)
    samplers = [seed_stream(s, SAMPLER_STREAM) for s in seeds]
    rewards_all = np.empty((S, T, N)) if record_rewards else None
    has_fav = state.est_favourites() is not None
    rec = Recorder(S, K, grid, truth, has_fav)
    P = np.empty((BLOCK, S, K))
    miss = np.zeros((BLOCK, S), dtype=bool)
    eye = np.eye(K)
    t = 1
    while t <= T:
        b = min(BLOCK, T - t + 1)
        # (0, 1]: an arm of probability 0 is never drawn
        u = 1.0 - np.stack([g.random(b) for g in samplers], axis=1)
        for j in range(b):
            tt = t + j
            if tt <= K:
                a = np.full(S, tt - 1)
                p = eye[a]
            else:
                p = state.policy(tt)
                a = (np.cumsum(p, axis=1) < u[j][:, None]).sum(axis=1)
                np.minimum(a, K - 1, out=a)
            if has_fav:
                miss[j] = (state.est_favourites() != truth.fav).any(axis=(1, 2))
            P[j] = p
            r = streams.pull(a)
            arms_all[:, tt - 1] = a
            if rewards_all is not None:
                rewards_all[:, tt - 1] = r
            state.update(tt, a, r)
        rec.add(t, P[:b].copy(), miss[:b].copy() if has_fav else None)
        t += b
        if progress is not None:
            progress(b * S)
    rec.flush()
    extra = {k: int(getattr(state, k)) for k in ("recomputes", "solves") if hasattr(state, k)}
    return _finish(spec, seeds, T, grid, rec, truth, arms_all, t0, rewards_all, extra)


def save_batch(path: "str | Path", res: SimulationResult) -> Path:
    """Write one batch result to an ``.npz`` file atomically (arrays, and a JSON header; no pickles)."""
    import json

    from fairarena.fsutil import atomic_path, json_default

    meta = {"learner": res.learner, "params": res.params, "target": res.target, "seeds": list(res.seeds),
            "horizon": res.horizon, "seconds": res.seconds, "extra": res.extra,
            "regret": list(res.regret), "scores": list(res.scores)}
    arrays: dict[str, np.ndarray] = {"meta": np.array(json.dumps(meta, default=json_default)),
                                     "grid": res.grid, "policies": res.policies, "arms": res.arms}
    for k, v in res.regret.items():
        arrays[f"regret__{k}"] = v
    for k, v in res.scores.items():
        arrays[f"scores__{k}"] = v
    if res.last_mistake is not None:
        arrays["last_mistake"] = res.last_mistake
    if res.rewards is not None:
        arrays["rewards"] = res.rewards
    path = Path(path)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
    return path


def load_batch(path: "str | Path") -> SimulationResult:
    """Read a batch written by :func:`save_batch`."""
    import json

    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        return SimulationResult(
            learner=meta["learner"], params=meta["params"], target=meta["target"], seeds=meta["seeds"],
            horizon=int(meta["horizon"]), grid=z["grid"], policies=z["policies"],
            regret={k: z[f"regret__{k}"] for k in meta["regret"]},
            scores={k: z[f"scores__{k}"] for k in meta["scores"]}, arms=z["arms"],
            seconds=float(meta["seconds"]), rewards=z["rewards"] if "rewards" in z else None,
            extra=meta["extra"], last_mistake=z["last_mistake"] if "last_mistake" in z else None)


def read_batches(folder: "str | Path") -> dict:
    """``{(learner, task): result}`` of the batch files in ``folder`` (unreadable ones are skipped: redone)."""
    folder = Path(folder)
    out = {}
    for path in sorted(folder.glob("*.npz")) if folder.is_dir() else []:
        label, _, j = path.stem.rpartition(".")
        try:
            out[(label, int(j))] = load_batch(path)
        except Exception:  # noqa: BLE001 - a truncated or foreign file: its batch is run again
            continue
    return out


def merge_results(parts: Sequence[SimulationResult]) -> SimulationResult:
    """Concatenate the seed batches of one learner (in the given order)."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    cat = lambda xs: np.concatenate(xs, axis=0)  # noqa: E731
    extra: dict[str, Any] = {}
    for p in parts:
        for k, v in p.extra.items():
            extra[k] = extra.get(k, 0) + v
    return SimulationResult(
        learner=first.learner, params=first.params, target=first.target,
        seeds=[s for p in parts for s in p.seeds], horizon=first.horizon, grid=first.grid,
        policies=cat([p.policies for p in parts]),
        regret={k: cat([p.regret[k] for p in parts]) for k in first.regret},
        scores={k: cat([p.scores[k] for p in parts]) for k in first.scores},
        arms=cat([p.arms for p in parts]),
        seconds=max(p.seconds for p in parts),
        rewards=None if first.rewards is None else cat([p.rewards for p in parts]),
        extra=extra,
        last_mistake=None if first.last_mistake is None else cat([p.last_mistake for p in parts]),
    )


# ------------------------------------------------------------------------------------------------
# Public entry points
# ------------------------------------------------------------------------------------------------

def _split(seeds: list[int], parts: int) -> list[list[int]]:
    parts = max(1, min(parts, len(seeds)))
    return [list(c) for c in np.array_split(np.asarray(seeds), parts) if len(c)]


def _run_task(task: tuple) -> SimulationResult:
    """One (learner, batch of seeds) task on an execution backend (a picklable top-level function)."""
    spec, env, T, seeds, grid, record_rewards, truth = task
    return run_batch(spec, env, T, seeds, grid, record_rewards, None, truth)


def _resolve_jobs(n_jobs: int | None) -> int:
    import os

    if n_jobs is None or n_jobs == 0:
        return 1
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return int(n_jobs)


def run_options(spec: LearnerSpec, options: "Options | Mapping[str, Any] | None" = None) -> Options:
    """The notion options a learner is judged with: the run's ``options`` overridden by those its
    own parameters fix (:meth:`LearnerSpec.notion_options`)."""
    return make_options(options, **spec.notion_options())


def estimate_memory(n_learners: int, n_seeds: int, T: int, n_agents: int, n_arms: int,
                    record_rewards: bool = False, grid_points: int = 200) -> int:
    """Bytes a run holds at its peak, roughly: every pull of every seed is kept (2-4 bytes in the
    result, ~11 bytes per row of the arms table, built twice while saving), rewards when recorded,
    the curves on the grid, and the block buffers of a batch."""
    per_pull = (2 if n_arms < 2 ** 15 else 4) + 2 * 11
    if record_rewards:
        per_pull += 8 * n_agents
    pulls = n_learners * n_seeds * T * per_pull
    curves = n_learners * n_seeds * min(grid_points + 2, T) * (n_arms + 20) * 8
    buffers = n_seeds * (BLOCK + 2048) * (n_arms + n_agents + 8) * 8
    return int(pulls + curves + buffers)


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (``MemAvailable``; ``None`` where unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import os

        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(n_learners: int, n_seeds: int, T: int, n_agents: int, n_arms: int,
                 record_rewards: bool = False, grid_points: int = 200, limit: int | None = None) -> int:
    """Refuse (``InputError`` on ``T``) a run whose :func:`estimate_memory` exceeds ``limit``
    (default: the memory available now); returns the estimate."""
    need = estimate_memory(n_learners, n_seeds, T, n_agents, n_arms, record_rewards, grid_points)
    limit = available_memory() if limit is None else limit
    if limit is not None and need > limit:
        raise InputError("T", T, f"{n_learners} learner(s) x {n_seeds} seed(s) x T = {T} rounds needs about "
                         f"{_gib(need)} of memory, {_gib(limit)} available; use a smaller T or fewer seeds")
    return need


def _gib(b: float) -> str:
    return f"{b / 2 ** 30:.3g} GiB" if b >= 2 ** 28 else f"{b / 2 ** 20:.3g} MiB"


def simulate_many(learners: Iterable["str | LearnerSpec"], env: MultiAgentBandit, T: int, seeds: Any = 20, *,
                  n_jobs: int | None = 1, backend: str = "processes", grid_points: int = 200,
                  batch_size: int | None = None, record_rewards: bool = False,
                  options: "Options | Mapping[str, Any] | None" = None,
                  progress: Callable[[str, int], None] | None = None,
                  on_result: Callable[[str, int, SimulationResult], None] | None = None,
                  completed: Mapping[tuple[str, int], SimulationResult] | None = None,
                  address: str | None = None) -> dict[str, SimulationResult]:
    """Run several learners on the same seeds; returns ``{learner label: result}``.

    Work is cut into (learner, batch of seeds) tasks; with ``n_jobs > 1`` they run in parallel on
    an execution backend of :mod:`fairarena.execution` (``backend``: ``processes``, ``threads``,
    ``serial`` or ``dask``; the older ``loky``/``threading``/``sequential`` are aliases; ``address``
    names a running Dask scheduler, else dask starts a local cluster of ``n_jobs`` workers).
    Results do not depend on the backend or on ``n_jobs``. ``batch_size`` caps the seeds
    of one vectorised batch (default: the seeds split evenly over ``n_jobs``). ``options``: the
    notion options regrets and scores are judged with (e.g. ``{"ef_kind": "absolute"}``), merged
    per learner with those its parameters fix (:func:`run_options`). ``progress(label, rounds)``
    is called as work completes (per block of rounds when sequential, per task otherwise).
    A run whose memory estimate exceeds the memory available is refused before any work.

    Resuming: tasks are numbered in a fixed order (learner by learner, batch by batch); each
    finished task's result is passed to ``on_result(label, task, result)`` as it completes, and
    ``completed={(label, task): result}`` (e.g. read back with :func:`load_batch`) skips the
    tasks already done (a result is used only if its seeds and horizon are the task's). Seeds
    draw only from their own streams, so a resumed run gives the same numbers as an uninterrupted one.
    """
    if not isinstance(env, MultiAgentBandit):
        raise InputError("env", type(env).__name__, "expected a MultiAgentBandit")
    specs = [make_learner(x) for x in learners]
    if not specs:
        raise InputError("learners", [], "expected at least one learner")
    labels = [s.label() for s in specs]
    if len(set(labels)) != len(labels):
        raise InputError("learners", labels, "learner labels must be distinct")
    seeds = validate_seeds(seeds)
    T = check_horizon(T, env.n_arms)
    from fairarena.execution import iter_tasks, resolve_backend

    backend = resolve_backend(backend)
    for spec in specs:
        spec.check_instance(env.n_agents, env.n_arms, T)
    opts = [run_options(spec, options) for spec in specs]
    check_memory(len(specs), len(seeds), T, env.n_agents, env.n_arms, record_rewards, grid_points)
    jobs = _resolve_jobs(n_jobs)
    grid = log_grid(T, grid_points)
    truths: dict[Options, Truth] = {}
    for o in opts:
        if o not in truths:
            truths[o] = Truth.of(env.means, o)
    # every learner's seeds are cut into `jobs` batches, so that one slow learner does not leave
    # the other workers idle at the end
    n_batches = jobs if batch_size is None else max(1, math.ceil(len(seeds) / int(batch_size)))
    batches = _split(seeds, n_batches)
    tasks = [(i, spec, b) for i, spec in enumerate(specs) for b in batches]

    # tasks already done (a resumed run) are taken as they are; the others run, and each result is
    # handed to on_result as it completes (e.g. written to disk, so that a killed run can resume)
    done = dict(completed or {})
    parts: dict[int, SimulationResult] = {}
    todo: list[int] = []
    for j, (i, spec, b) in enumerate(tasks):
        prev = done.get((labels[i], j))
        if prev is not None and list(prev.seeds) == list(b) and prev.horizon == T:
            parts[j] = prev
            if progress:
                progress(labels[i], T * len(b))
        else:
            todo.append(j)

    def finished(j: int, res: SimulationResult) -> None:
        parts[j] = res
        if on_result is not None:
            on_result(labels[tasks[j][0]], j, res)

    if (jobs == 1 and address is None) or len(todo) <= 1 or backend == "serial":
        # in this process: progress per block of rounds
        for j in todo:
            i, spec, b = tasks[j]
            cb = (lambda n, _l=labels[i]: progress(_l, n)) if progress else None
            finished(j, run_batch(spec, env, T, b, grid, record_rewards, cb, truths[opts[i]]))
    else:
        work = [(tasks[j][1], env, T, tasks[j][2], grid, record_rewards, truths[opts[tasks[j][0]]]) for j in todo]
        for k, res in iter_tasks(_run_task, work, backend=backend, workers=jobs, address=address):
            j = todo[k]
            finished(j, res)
            if progress:
                progress(labels[tasks[j][0]], T * len(tasks[j][2]))
    results: dict[int, list[SimulationResult]] = {i: [] for i in range(len(specs))}
    for j, (i, _, _) in enumerate(tasks):
        results[i].append(parts[j])
    return {labels[i]: merge_results(results[i]) for i in range(len(specs))}


def simulate(learner: "str | LearnerSpec", env: MultiAgentBandit, T: int, seeds: Any = 20, **kw: Any) -> SimulationResult:
    """Run one learner for every seed (see :func:`simulate_many` for the options)."""
    spec = make_learner(learner)
    return simulate_many([spec], env, T, seeds, **kw)[spec.label()]
