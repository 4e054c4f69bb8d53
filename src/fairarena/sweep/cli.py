"""CLI: ``fairarena sweep`` (the procedural-fairness study) and ``fairarena preflib`` (real data)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Optional

import typer

from fairarena.cli_common import cli_errors, console, emit_json


def _grid(preset: str, config: Optional[Path], seed: Optional[int]):
    from fairarena.sweep.config import load_config
    from fairarena.sweep.config import preset as get_preset

    cfg = load_config(config) if config is not None else get_preset(preset)
    if seed is not None:
        if seed < 0:
            from fairarena.errors import InputError

            raise InputError("seed", seed, "expected a non-negative integer")
        cfg = cfg.model_copy(update={"seed": seed})
    return cfg


BATCH_DIR = "batches"  # per-task results of a sweep in progress (removed when the run completes)


def register(app: typer.Typer) -> None:
    from fairarena.execution import backend_names
    from fairarena.sweep.presets import PRESETS

    backends_help = ", ".join(backend_names())
    presets_help = ", ".join(PRESETS)

    @app.command("sweep")
    @cli_errors
    def sweep_cmd(
        out: Path = typer.Option(..., "--out", help="Output folder (settings.parquet, summary.json, table1, figure1)."),
        preset: str = typer.Option("paper", "--preset", help=f"Grid preset: {presets_help}."),
        config: Optional[Path] = typer.Option(None, "--config", help="Grid config TOML (overrides --preset)."),
        workers: Optional[int] = typer.Option(None, "--workers", help="Parallel workers (default: all cores)."),
        limit: Optional[int] = typer.Option(None, "--limit", help="Run a spread-out subsample of M settings."),
        backend: str = typer.Option("processes", "--backend",
                                    help=f"Execution backend: {backends_help} (joblib = processes)."),
        address: Optional[str] = typer.Option(None, "--address", help="Dask scheduler address (default: a LocalCluster)."),
        seed: Optional[int] = typer.Option(None, "--seed", help="Override the grid's master seed."),
        json_out: bool = typer.Option(False, "--json", help="Print summary.json on stdout; no progress bar."),
        force: bool = typer.Option(False, "--force", help="Replace an earlier run's results in --out."),
        resume: bool = typer.Option(True, "--resume/--no-resume", help="Continue an interrupted run in --out with the same grid and limit (its finished batches are read back, not rerun); --no-resume refuses such a folder unless --force."),
        progress_every: float = typer.Option(10.0, "--progress-every", help="Seconds between progress lines on "
                                             "stderr when it is not a terminal (0: every batch); none with --json."),
    ) -> None:
        """The full-factorial procedural-fairness sweep (Table 1, Figure 1)."""
        from fairarena.errors import InputError
        from fairarena.execution import check_backend
        from fairarena.fsutil import output_folder
        from fairarena.provenance import run_record
        from fairarena.report.sweep_figures import table_markdown
        from fairarena.sweep.config import expand
        from fairarena.sweep.run import run_sweep
        from fairarena.sweep.store import write_sweep

        from fairarena.progress import Progress, check_every

        every = check_every(progress_every)
        cfg = _grid(preset, config, seed)
        backend = check_backend(backend, workers, address)
        if limit is not None and limit < 1:
            raise InputError("limit", limit, "expected a positive integer")
        total = len(expand(cfg, limit))  # validates the grid before anything runs
        from fairarena.bandit.cli import install_compile_notice

        if install_compile_notice(json_out):  # build (or load) the compiled solver here, under a spinner,
            from fairarena.bandit import solver  # so that worker processes find it in the on-disk cache

            solver.compiled_kernels()
        with output_folder(out, "sweep", force=force, resume=resume,
                           config={"grid": cfg.model_dump(), "limit": limit}) as folder:
            checkpoint = folder.path / BATCH_DIR
            if not folder.resuming:
                shutil.rmtree(checkpoint, ignore_errors=True)
            elif not json_out:
                console.print(f"resuming the unfinished run in {out}")
            with Progress(f"sweep {cfg.name} ({backend})", total=total, unit="settings", every=every,
                          enabled=not json_out) as progress:
                res = run_sweep(cfg, limit=limit, backend=backend, workers=workers, address=address,
                                progress=None if json_out else progress, checkpoint=checkpoint)
            record = run_record(cfg.model_dump(), cfg.seed, command="sweep", limit=limit, backend=backend,
                                workers=workers, address=address)
            summary = {**res.summary, "versions": record["versions"], "revision": record["revision"]}
            files = write_sweep(out, res.frame, summary, record)
            shutil.rmtree(checkpoint, ignore_errors=True)  # the run is complete: its batches are in the files
            if json_out:
                emit_json(summary)
                return
            console.print(f"[bold]Table 1[/] ({summary['n_settings']:,} settings, {summary['seconds']:.1f} s, "
                          f"preset/config {cfg.name}, seed {cfg.seed})")
            console.print(table_markdown(summary["table"]), highlight=False, markup=False)
            console.print("wrote " + ", ".join(str(f) for f in files))

    @app.command("preflib")
    @cli_errors
    def preflib_cmd(
        file: Path = typer.Option(..., "--file", help="PrefLib .soc or .soi file."),
        out: Path = typer.Option(..., "--out", help="Output folder (preflib.json, table2.md, figure2)."),
        voters: int = typer.Option(50, "--voters", help="Voters sampled uniformly without replacement."),
        seed: int = typer.Option(42, "--seed", help="Sampling seed."),
        json_out: bool = typer.Option(False, "--json", help="Print the rewards and policies as JSON."),
        force: bool = typer.Option(False, "--force", help="Replace an earlier run's results in --out."),
    ) -> None:
        """Every notion's optimal policy on voters sampled from PrefLib data (Figure 2)."""
        from fairarena.cli_common import check_seed
        from fairarena.fsutil import check_out_dir, output_folder
        from fairarena.provenance import run_record
        from fairarena.report.sweep_figures import POLICY_TITLES
        from fairarena.sweep.preflib_example import preflib_example, write_preflib

        check_seed(seed)
        check_out_dir(out)
        result = preflib_example(file, voters=voters, seed=seed)  # input errors before the folder is touched
        with output_folder(out, "preflib", force=force):
            record = run_record({"file": str(file), "voters": voters}, seed, command="preflib")
            write_preflib(out, result, record)
        if json_out:
            from fairarena.bandit.display import clean_numbers

            emit_json({"rewards": result["rewards"],  # as given (the rank rewards), policies and scores snapped
                       "policies": clean_numbers({k: {kk: v[kk] for kk in ("policy", "pf", "ef", "uf")}
                                                  for k, v in result["policies"].items()})})
            return
        from rich.table import Table

        t = Table(title=f"{result['title']}: {voters} of {result['file_voters']} voters (seed {seed})",
                  title_justify="left")
        for col in ("policy", "p", "PF", "EF", "UF"):
            t.add_column(col, justify="left" if col in ("policy", "p") else "right")
        for name, r in result["policies"].items():
            t.add_row(POLICY_TITLES.get(name, name), " ".join(f"{x:.2f}" for x in r["policy"]),
                      f"{r['pf']:.3f}", f"{r['ef']:.3f}", f"{r['uf']:.3f}")
        console.print(t)
        console.print(f"wrote {out}/preflib.json, table2.md, figure2.png/.svg")
