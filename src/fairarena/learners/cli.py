"""CLI: ``fairarena learn`` (simulate fair bandit learners, write Parquet + Figure 3)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from fairarena.cli_common import cli_errors, console, emit_json


BATCH_DIR = "batches"  # per-batch results of a run in progress (removed when the run completes)


# typed here so that `--help` loads no numerical code; a test checks it lists exactly the registry's names
LEARNER_HELP = "pf, ef, uf, nashucb, ggi, etc, uniform, a comma list, or all."


MAX_GRID = 100_000
"""At most this many points on ``learn --grid`` (the logarithmic grid the curves are kept on). A grid of
``10**9`` points allocated gigabytes before any check; 100,000 points is 0.8 MB a curve and far past what a
figure shows (the default is 200)."""


def register(app: typer.Typer) -> None:
    @app.command("learn")
    @cli_errors
    def learn_cmd(
        learner: str = typer.Option("pf", "--learner", help=LEARNER_HELP),
        instance: str = typer.Option("dots", "--instance", help="'dots' (PrefLib Dots, 50 voters) or a reward-matrix file (JSON/CSV)."),
        rewards: str = typer.Option("beta:0.1", "--rewards", help="bernoulli, beta:STD or gaussian:STD (clipped to [0,1])."),
        T_text: str = typer.Option("100000", "--T", help="Horizon (rounds; 100000 or 1e5); at least K."),
        seeds: int = typer.Option(20, "--seeds", help="Number of independent runs (seeds SEED..SEED+n-1)."),
        seed: int = typer.Option(0, "--seed", help="First seed."),
        out: Path = typer.Option(Path("out/learn"), "--out", help="Output directory."),
        gamma: Optional[float] = typer.Option(None, "--gamma", help="PF forced-exploration exponent in (0,1) (default 2/3)."),
        delta: Optional[float] = typer.Option(None, "--delta", help="Confidence level in (0,1) for pf and ggi (default 0.05)."),
        alpha: Optional[float] = typer.Option(None, "--alpha", help="PF confidence-radius scale (default 1/sqrt(2))."),
        growth: Optional[float] = typer.Option(None, "--growth", help="ef/nashucb re-solve schedule: re-solve when t grows by this factor (0: every round)."),
        ef_kind: Optional[str] = typer.Option(None, "--ef-kind", help="Inequality the EF regret and score are judged with: squared (default) or absolute."),
        nash_form: Optional[str] = typer.Option(None, "--nash-form", help="nashucb NSW form: geometric (default) or product (the paper's; linear regret with many agents, see docs/learners.md)."),
        jobs: int = typer.Option(1, "--jobs", help="Parallel workers (-1: all cores)."),
        backend: str = typer.Option("processes", "--backend", help="Execution backend: processes, threads, serial or dask (loky, threading, sequential accepted)."),
        address: Optional[str] = typer.Option(None, "--address", help="Dask scheduler address (with --backend dask; default: a local cluster of --jobs workers)."),
        grid: int = typer.Option(200, "--grid", help="Points of the logarithmic grid the curves are kept on (2 to 100,000)."),
        figure: bool = typer.Option(True, "--figure/--no-figure", help="Write figure3.png."),
        json_out: bool = typer.Option(False, "--json", help="Machine-readable output (no progress bar)."),
        force: bool = typer.Option(False, "--force", help="Replace an earlier run's results in --out."),
        resume: bool = typer.Option(False, "--resume", help="Continue an interrupted run in --out (same options): finished batches of seeds are read back, not rerun."),
        progress_every: float = typer.Option(10.0, "--progress-every", help="Seconds between progress lines on stderr when it is not a terminal (0: every block of rounds); none with --json."),
    ) -> None:
        """Simulate fair bandit learners over many seeds: regrets, scores, policies, Figure 3."""
        from fairarena.errors import InputError
        from fairarena.learners.env import MultiAgentBandit, parse_family
        from fairarena.learners.instances import load_instance
        from fairarena.learners.base import check_horizon, parse_rounds
        from fairarena.execution import check_workers, resolve_backend
        from fairarena.learners.simulate import check_memory, save_batch, simulate_many
        from fairarena.fsutil import check_out_dir, output_folder
        from fairarena.learners.store import save_run, summary_document

        from fairarena.progress import Progress, check_every

        every = check_every(progress_every)
        T = parse_rounds(T_text)
        from fairarena.learners.catalog import parse_learners
        from fairarena.learners.simulate import read_batches

        if "," in learner and any(not x.strip() for x in learner.split(",")):
            # 'pf,,ef' or 'pf,' is a typo (a learner left out), not a list of two
            raise InputError("learner", learner, "an empty entry in the comma-separated list of learners")
        specs = parse_learners(learner, gamma=gamma, delta=delta, alpha=alpha, growth=growth, form=nash_form)
        options: dict[str, Any] = {} if ef_kind is None else {"ef_kind": ef_kind}
        if options:
            from fairarena.bandit.notions import make_options

            make_options(options)  # validated before any work
        family = parse_family(rewards)
        if seeds < 1:
            raise InputError("seeds", seeds, "expected a positive number of seeds")
        if seed < 0:
            raise InputError("seed", seed, "expected a non-negative integer")
        if grid < 2:
            raise InputError("grid", grid, "expected at least 2 grid points")
        if grid > MAX_GRID:
            raise InputError("grid", grid, f"at most {MAX_GRID:,} grid points (the curves keep one row per point)")
        if jobs == 0:
            raise InputError("jobs", jobs, "expected a positive number of workers or a negative one (-1: all cores)")
        check_out_dir(out)
        backend = resolve_backend(backend)
        if jobs > 0:
            try:  # the backend's worker limit, before the folder is taken (message names --jobs)
                check_workers(jobs, backend, address)
            except InputError as e:
                raise InputError("jobs", jobs, e.expected) from None
        if address is not None and backend != "dask":
            raise InputError("address", address, "only the dask backend takes a scheduler address")
        name, mu = load_instance(instance)
        env = MultiAgentBandit(mu, family, name=name)
        check_horizon(T, env.n_arms)
        check_memory(len(specs), seeds, T, env.n_agents, env.n_arms, grid_points=grid)  # before any work
        seed_list = list(range(seed, seed + seeds))
        config: dict[str, Any] = {
            "command": "learn", "learners": [s.name for s in specs], "instance": instance, "rewards": family.label,
            "T": T, "seeds": seeds, "seed": seed, "jobs": jobs, "backend": backend, "grid": grid,
            "params": {s.name: s.params() for s in specs}, "notion_options": options,
        }
        with output_folder(out, "learn", force=force, resume=resume, config=config) as folder:
            batches = folder.path / BATCH_DIR
            completed = read_batches(batches) if folder.resuming else {}
            if completed and not json_out:
                console.print(f"resuming: {len(completed)} finished batch(es) read from {batches}")
            batches.mkdir(exist_ok=True)
            keep = dict(completed=completed,
                        on_result=lambda label, j, res: save_batch(batches / f"{label}.{j}.npz", res))
            if not json_out:
                console.print(f"[bold]{env!r}[/]: {len(specs)} learner(s) x {seeds} seed(s), T = {T}")
            # one count over every learner and seed: rounds simulated (simulate_many counts a resumed run's
            # finished batches first)
            with Progress(f"learn {env.name} ({len(specs)} learner(s) x {seeds} seed(s))",
                          total=T * seeds * len(specs), unit="rounds", every=every, enabled=not json_out) as prog:
                results = simulate_many(specs, env, T, seed_list, n_jobs=jobs, backend=backend, address=address,
                                        options=options, grid_points=grid,
                                        progress=None if json_out else (lambda label, n: prog.advance(n)), **keep)
            save_run(out, env, results, config, figure=figure)
            shutil.rmtree(batches, ignore_errors=True)  # the run is complete: its batches are in the tables
        doc = summary_document(env, results)
        if json_out:
            emit_json(doc)
            return
        t = Table(title=f"Learners on {env.name} (mean over {seeds} seeds, T = {T}); written to {out}")
        from fairarena.learners.figures import FIGURE3_NOTIONS

        for col in ("learner", "final policy", *(x.upper() for x in FIGURE3_NOTIONS), "own regret", "slope",
                    "last PF mistake", "seconds"):
            t.add_column(col, overflow="fold", no_wrap=col == "learner")   # learner names whole on 80 columns
        for lname, s in doc["learners"].items():
            reg = s["regret"].get(s["target"])
            t.add_row(lname, " ".join(f"{x:.2f}" for x in s["final_policy"]),
                      *(f"{s['final_scores'][k]:.3f}" for k in FIGURE3_NOTIONS),
                      f"{s['target']}: {reg:.1f}" if reg is not None else "-",
                      f"{s['regret_slope']:.2f}",
                      "-" if s["last_mistake"] is None else f"t = {s['last_mistake']}", f"{s['seconds']:.1f}")
        console.print(t)
