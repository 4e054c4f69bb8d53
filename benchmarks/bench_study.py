"""Study runner speed figures (issue 13). Prints figures; not a unit test.

    .venv/bin/python benchmarks/bench_study.py [--debates 24] [--workers 2] [--skip-full] [--profile]
        [--skip-overhead] [--previous REV] [--keep DIR]

* runner overhead: ``--debates`` debates of the scripted paper preset run three ways in this process —
  bare (``run_debate`` in a loop, transcript to disk: the baseline), through the study store (serial:
  keys, records, atomic writes, results table) — the ratio is the store's cost;
* with ``--profile``: where a scripted debate's time goes (cProfile over the same debates, grouped:
  HiGHS solving, MILP set-up, metrics, transcript, the store);
* the full scripted paper preset (600 debates): ``fairarena study run paper.toml --out DIR --backend
  processes --workers N --json`` as a subprocess, wall time (target 30 s on 2 cores) and CPU time of the
  run's processes; then a second run of the same command on the finished folder (the resume: target 2 s),
  and ``fairarena study status``;
* with ``--previous REV`` (e.g. the commit before a negotiator change): the same full preset run first by
  the code of ``REV`` (a temporary ``git worktree``, its ``src`` first on ``PYTHONPATH``), in the same
  benchmark run, and the ratio of the two wall and CPU times;
* with ``--keep DIR``: the study folders are kept as ``DIR/st`` (this tree) and ``DIR/st-previous``, for
  ``benchmarks/negotiation_figures.py DIR/st-previous DIR/st`` (what the debates did, side by side).

The machine's load average is printed beside every figure (timings on a shared machine are noisy;
compare the ratio).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def bare(tasks, out: Path) -> tuple[float, int]:
    from fairarena.arena import build_agent, run_debate
    from fairarena.study.design import cohort_of

    t0 = time.perf_counter()
    errors = 0
    for t in tasks:
        c = cohort_of(t.cohort_seed, t.capacity)
        try:  # the study records a debate that raises as failed; so does this baseline
            r = run_debate(c, build_agent("A", t.agent_a, t.model_a, c), build_agent("B", t.agent_b, t.model_b, c),
                           t.debate_config(), transcript=out / f"{t.key}.jsonl")
            errors += r.status != "ok"
        except Exception:
            errors += 1
    return time.perf_counter() - t0, errors


def overhead(n: int, profile: bool) -> None:
    from fairarena.study.design import expand, preset, to_toml
    from fairarena.study.store import run_study

    cfg = preset("paper")
    tasks = expand(cfg)[: n]
    bares, stores, fixeds = [], [], []
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        (d / "bare").mkdir()
        bare(tasks[:2], d / "bare")          # warm imports and caches
        for rep in range(2):                 # alternate, keep the best of each: the machine's load drifts
            t_bare, errors = bare(tasks, d / "bare")
            bares.append(t_bare)
            t0 = time.perf_counter()
            run_study(cfg, to_toml(cfg), d / f"study{rep}", limit=0)   # fixed cost: design, keys, folder, status
            fixeds.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            s = run_study(cfg, to_toml(cfg), d / f"study{rep}", limit=n)
            stores.append(time.perf_counter() - t0)
            assert s.ran == n and s.failed == errors, (s.failed, errors)
    t_bare, t_store, t_fixed = min(bares), min(stores), min(fixeds)
    print(f"\n== runner overhead: {n} debates of the paper preset, serial, in process, best of 2 alternating "
          f"({load()}) ==")
    print(f"bare run_debate loop      {t_bare:7.2f} s   {1000 * t_bare / n:6.1f} ms/debate")
    print(f"study run (store)         {t_store:7.2f} s   {1000 * t_store / n:6.1f} ms/debate")
    print(f"fixed cost of a run       {t_fixed:7.2f} s   (600 keys, folder, status; no debate)")
    print(f"ratio (study - fixed) / bare {(t_store - t_fixed) / t_bare:7.3f}   (failed debates: {errors} in both)")
    # the per-debate path alone (no per-run costs: status, results table, provenance), interleaved
    from fairarena.arena import build_agent, run_debate
    from fairarena.study.design import cohort_of
    from fairarena.study.store import RunOptions, commit_debate, execute_task

    few = tasks[:6]
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)

        def one_bare(t) -> None:
            c = cohort_of(t.cohort_seed, t.capacity)
            run_debate(c, build_agent("A", t.agent_a, t.model_a, c), build_agent("B", t.agent_b, t.model_b, c),
                       t.debate_config(), transcript=d / f"{t.key}.jsonl")

        def one_store(t) -> None:
            rec, data = execute_task(t, RunOptions())
            commit_debate(d, rec, data)

        times: dict[str, list[float]] = {"bare": [], "store": []}
        for _ in range(3):
            for name, f in (("bare", one_bare), ("store", one_store)):
                t0 = time.perf_counter()
                for t in few:
                    f(t)
                times[name].append(time.perf_counter() - t0)
    b, st_ = min(times["bare"]), min(times["store"])
    print(f"per-debate path, 6 debates x 3 interleaved, best: bare {1000 * b / 6:6.1f} ms, execute_task + "
          f"commit {1000 * st_ / 6:6.1f} ms, ratio {st_ / b:5.3f}")
    if profile:
        from fairarena.study.store import RunOptions, commit_debate, execute_task

        with tempfile.TemporaryDirectory() as d:
            pr = cProfile.Profile()
            pr.enable()
            for t in tasks:
                rec, data = execute_task(t, RunOptions())
                commit_debate(Path(d), rec, data)
            pr.disable()
        st = pstats.Stats(pr)
        total = sum(v[3] for k, v in st.stats.items() if k[2] == "execute_task") + \
            sum(v[3] for k, v in st.stats.items() if k[2] == "commit_debate")

        def cum(pred) -> float:
            return sum(v[3] for k, v in st.stats.items() if pred(k))

        groups = {
            "HiGHS solve (scipy _highspy run)": cum(lambda k: k[2] == "run" and "_highspy" in str(k[0]) or
                                                    (k[0] == "~" and "_highspy._core.run" in k[2])),
            "scipy.optimize.milp total (set-up + solve)": cum(lambda k: k[2] == "milp"),
            "negotiator total": cum(lambda k: k[2] == "__call__" and k[0].endswith("negotiator.py")),
            "metrics (compute_metrics_batch)": cum(lambda k: k[2] == "compute_metrics_batch"),
            "transcript writes": cum(lambda k: k[2] == "write" and k[0].endswith("transcript.py")),
            "store (commit_debate)": cum(lambda k: k[2] == "commit_debate"),
        }
        print(f"\n== profile of {n} debates (cProfile; {load()}) == total {total:.2f} s")
        for name, v in groups.items():
            print(f"{name:44s} {v:7.2f} s  {100 * v / total:5.1f} %")


def timed_run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, dict]:
    """(wall s, CPU s of the child processes, the run's JSON summary)."""
    import resource

    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        print(r.stderr)
        raise SystemExit(1)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    return wall, cpu, json.loads(r.stdout)


def previous_tree(rev: str, where: Path) -> Path:
    """A git worktree of ``rev`` (the previous code) under ``where``."""
    root = Path(__file__).resolve().parents[1]
    tree = where / "previous"
    subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", "-f", str(tree), rev], check=True,
                   capture_output=True)
    return tree


def full(workers: int, previous: str | None = None, keep: Path | None = None) -> None:
    exe = [sys.executable, "-m", "fairarena.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) if keep is None else keep
        d.mkdir(parents=True, exist_ok=True)
        for old in ("st", "st-previous"):
            if (d / old).exists():
                raise SystemExit(f"--keep {d}: {d / old} exists already (give an empty folder)")
        subprocess.run([*exe, "study", "init", "--preset", "paper", "--out", str(d / "paper.toml")], check=True,
                       capture_output=True)
        cmd = [*exe, "study", "run", str(d / "paper.toml"), "--out", str(d / "st"), "--backend", "processes",
               "--workers", str(workers), "--json"]
        print(f"\n== full scripted paper preset: 600 debates, processes x{workers} ==")
        print(f"command: fairarena study run paper.toml --out DIR --backend processes --workers {workers} --json")
        prev = None
        if previous:
            tree = previous_tree(previous, Path(tmp))
            try:
                env = {**os.environ, "PYTHONPATH": str(tree / "src")}
                before = load()
                pcmd = [*cmd[:7], str(d / "st-previous"), *cmd[8:]]
                prev = timed_run(pcmd, env)
                print(f"previous ({previous}): wall {prev[0]:7.2f} s  CPU {prev[1]:7.2f} s   ok {prev[2]['ok']} "
                      f"failed {prev[2]['failed']}   {before} -> {load()}")
            finally:
                subprocess.run(["git", "-C", str(Path(__file__).resolve().parents[1]), "worktree", "remove", "--force",
                                str(tree)], capture_output=True)
        before = load()
        wall, cpu, s = timed_run(cmd)
        print(f"this tree: wall {wall:7.2f} s  CPU {cpu:7.2f} s  (target 30 s wall on a quiet 2-core machine)   "
              f"ok {s['ok']} failed {s['failed']}   {before} -> {load()}")
        if prev is not None:
            print(f"ratio this / previous: wall {wall / prev[0]:.2f}, CPU {cpu / prev[1]:.2f}")
        t0 = time.perf_counter()
        r2 = subprocess.run(cmd, capture_output=True, text=True)
        rwall = time.perf_counter() - t0
        s2 = json.loads(r2.stdout)
        print(f"resume of the finished study (same command): wall {rwall:5.2f} s (target 2 s), ran {s2['ran']}, "
              f"{load()}")
        t0 = time.perf_counter()
        subprocess.run([*exe, "study", "status", str(d / "st"), "--json"], check=True, capture_output=True)
        print(f"status: wall {time.perf_counter() - t0:5.2f} s")
        size = sum(p.stat().st_size for p in (d / "st").rglob("*") if p.is_file())
        print(f"store size {size / 1e6:.1f} MB; results.jsonl {(d / 'st' / 'results.jsonl').stat().st_size / 1e6:.2f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--debates", type=int, default=24)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--skip-full", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--skip-overhead", action="store_true", help="only the full preset")
    ap.add_argument("--previous", metavar="REV", help="also run the full preset with the code of this git revision")
    ap.add_argument("--keep", metavar="DIR", type=Path, help="keep the study folders in DIR (st, st-previous)")
    a = ap.parse_args()
    if not a.skip_overhead:
        overhead(a.debates, a.profile)
    if not a.skip_full:
        full(a.workers, a.previous, a.keep)


if __name__ == "__main__":
    main()
