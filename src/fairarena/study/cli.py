"""``fairarena study``: write a study design, run or resume it into a folder, show its status.

Thin: each command validates its input, then makes one call into :mod:`fairarena.study.design`
or :mod:`fairarena.study.store`. Other areas attach their own study commands (statistics,
tables, report) to :data:`study_app`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from fairarena.cli_common import cli_errors, console, emit_json, err_console, fail

study_app = typer.Typer(name="study", help="Studies of many debates (duel or council; triage or tourism): design "
                                         "(TOML), run/resume, status, statistics, tables, report.",
                        no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


@study_app.command("init")
@cli_errors
def init_cmd(
    out: Path = typer.Option(..., "--out", help="Where to write the study TOML file."),
    preset: str = typer.Option("paper", "--preset", help="Design preset: paper (the triage-debate paper's), "
                                                         "council, tourism, ... (an unknown name lists them all)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
) -> None:
    """Write a study design (the paper's by default) as a commented TOML file to edit."""
    from fairarena.errors import InputError
    from fairarena.study.design import expand, to_toml
    from fairarena.study.design import preset as get_preset
    from fairarena.fsutil import atomic_write_text

    cfg = get_preset(preset)
    if out.is_dir():
        raise InputError("out", str(out), "a file path for the study TOML (it is a folder)")
    if out.exists() and not force:
        raise InputError("out", str(out), "a new file (it exists; --force overwrites it)")
    atomic_write_text(out, to_toml(cfg))
    err_console.print(f"wrote {out}: study '{cfg.name}', {len(expand(cfg))} debates "
                      f"(run: fairarena study run {out} --out DIR)", highlight=False, soft_wrap=True)


@study_app.command("run")
@cli_errors
def run_cmd(
    study: Path = typer.Argument(..., help="The study TOML file."),
    out: Path = typer.Option(..., "--out", help="The study folder (created; a rerun resumes it)."),
    backend: str = typer.Option("serial", "--backend", help="serial | processes | threads | dask "
                                                            "(fairarena.execution's backends)"),
    workers: Optional[int] = typer.Option(None, "--workers", help="Debates in flight (default: cores; threads: "
                                                                 "the servers' ceilings added up, plus a quarter)."),
    address: Optional[str] = typer.Option(None, "--address", help="Dask scheduler address (default: a LocalCluster)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Also rerun the debates recorded as failed."),
    force: bool = typer.Option(False, "--force", help="Use a folder made from a different study file."),
    cache: Optional[Path] = typer.Option(None, "--cache", help="SQLite response cache (default: DIR/responses.sqlite "
                                                               "when a language model is used)."),
    offline: bool = typer.Option(False, "--offline", help="Replay model answers from the cache only."),
    limit: Optional[int] = typer.Option(None, "--limit", help="Run at most N of the remaining debates."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON; no progress bar."),
    progress_every: float = typer.Option(10.0, "--progress-every", help="Seconds between progress lines when "
                                                                         "stderr is not a terminal."),
) -> None:
    """Run every debate of a study not finished yet; exit 1 when some debate failed."""
    from fairarena.study.design import load_study
    from fairarena.study.store import StudyRunError

    from fairarena.errors import InputError

    if not progress_every >= 0 or progress_every == float("inf"):
        raise InputError("progress-every", progress_every, "a non-negative number of seconds")
    cfg, text = load_study(study)
    kw: dict[str, Any] = dict(backend=backend, workers=workers, address=address, retry_failed=retry_failed,
                              force=force, cache=cache, offline=offline, limit=limit)
    try:
        summary = _run(cfg, text, out, kw, as_json, backend, progress_every)
    except StudyRunError as exc:
        raise fail(str(exc), code=1) from None
    if as_json:
        emit_json(summary.to_dict())
    else:
        _print_summary(summary.to_dict())
    if summary.failed:
        raise typer.Exit(1)


from fairarena.study.progress import RunProgress  # noqa: E402  (its home; this import path still works)


def _run(cfg: Any, text: str, out: Path, kw: dict[str, Any], as_json: bool, backend: str,
         every: float = 10.0) -> Any:
    from fairarena.study.store import run_study

    if as_json:
        return run_study(cfg, text, out, **kw)
    with RunProgress(cfg.name, backend, terminal=err_console.is_terminal, every=every) as progress:
        return run_study(cfg, text, out, progress=progress, **kw)


def _print_summary(s: dict[str, Any]) -> None:
    console.print(f"study {s['out']}: {s['ok']} ok, {s['failed']} failed, {s['pending']} pending of {s['total']} "
                  f"(this run: {s['ran']} debates, {s['skipped']} already done; {s['seconds']:.1f} s, "
                  f"{s['backend']} x{s['workers']})", highlight=False, soft_wrap=True)
    for f in s["failed_now"][:10]:
        console.print(f"  [red]failed[/] {f['key']}: {f['error']}", highlight=False, soft_wrap=True)
    if len(s["failed_now"]) > 10:
        console.print(f"  ... and {len(s['failed_now']) - 10} more (see results.jsonl)")
    if s["failed"]:
        console.print("rerun the failed debates with --retry-failed", highlight=False)


@study_app.command("plan")
@cli_errors
def plan_cmd(
    study: Path = typer.Argument(..., help="The study TOML file."),
    tokens_per_s: Optional[float] = typer.Option(None, "--tokens-per-s", help="The servers' aggregate rate "
                                                                              "(prompt + completion tokens/s)."),
    probe: bool = typer.Option(False, "--probe", help="Measure the rate with one real call per server instead."),
    price_prompt: Optional[float] = typer.Option(None, "--price-prompt", help="Price per million prompt tokens."),
    price_completion: Optional[float] = typer.Option(None, "--price-completion",
                                                     help="Price per million completion tokens."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
) -> None:
    """Debates, model calls, tokens per call and in total, time and cost of a study, without any model call
    (except one per server with --probe)."""
    from fairarena.errors import InputError
    from fairarena.study.design import load_study
    from fairarena.study.plan import format_plan, plan_study

    if probe and tokens_per_s is not None:
        raise InputError("probe", True, "either --probe or --tokens-per-s, not both")
    cfg, _ = load_study(study)
    plan = plan_study(cfg, tokens_per_s=tokens_per_s, price_prompt=price_prompt, price_completion=price_completion,
                      probe=probe)
    if as_json:
        emit_json(plan)
        return
    for line in format_plan(plan):
        console.print(line, highlight=False, soft_wrap=True, markup=False)


@study_app.command("status")
@cli_errors
def status_cmd(
    out: Path = typer.Argument(..., help="The study folder."),
    as_json: bool = typer.Option(False, "--json", help="Print the counts as JSON."),
    verify: bool = typer.Option(False, "--verify", help="Also hash every transcript against its record."),
    repair: bool = typer.Option(False, "--repair", help="Move damaged records (and their transcripts) to "
                                                        "DIR/quarantine/ so the next `study run` redoes them "
                                                        "(transcripts verified too)."),
) -> None:
    """Counts of a study folder: total, ok, failed, pending (and records of other designs), the damaged
    records (never counted) and the last run's state (killed when its process died)."""
    from fairarena.study.store import repair as repair_folder
    from fairarena.study.store import study_status

    if repair:
        status, moved = repair_folder(out)
        st = status.to_dict()
        st["quarantined"] = moved
    else:
        st = study_status(out, verify=verify).to_dict()
    if as_json:
        emit_json(st)
        return
    console.print(f"{out}: {st['total']} debates: {st['ok']} ok, {st['failed']} failed, {st['pending']} pending"
                  + (f" ({st['stale']} records of another design)" if st["stale"] else ""), highlight=False,
                  soft_wrap=True)
    for d in st.get("quarantined") or []:
        console.print(f"  quarantined {d['file']}: {d['problem']}", highlight=False, soft_wrap=True, markup=False)
    if st.get("quarantined"):
        console.print(f"moved to {out / 'quarantine'} (notes.jsonl says why); `fairarena study run` redoes them",
                      highlight=False, soft_wrap=True, markup=False)
    for d in st.get("damaged") or []:
        console.print(f"  damaged {d['file']}: {d['problem']}", highlight=False, soft_wrap=True, markup=False)
    if st.get("damaged"):
        console.print(f"not counted; `fairarena study status {out} --repair` moves them to quarantine/ and the "
                      "next `fairarena study run` redoes them", highlight=False, soft_wrap=True, markup=False)
    run = st.get("run")
    if run:
        console.print(f"last run: {run['status']} (pid {run.get('pid')} on {run.get('host')}, {run.get('command')}, "
                      f"started {run.get('started')})" + (f": {run['reason']}" if run.get("reason") else ""),
                      highlight=False, soft_wrap=True, markup=False)


_TEST_HELP = "auto (Shapiro-Wilk then t or Wilcoxon per cell) | wilcoxon | ttest"


_ANALYSIS_JOBS_HELP = ("Processes: 2 reads the second half of the transcripts in a second process when the folder's "
                       "trace cache must be built (a study's first analysis), 1 reads them all in this one (default: "
                       "2 on Linux with two or more CPUs, else 1). The same numbers either way.")


def _check_jobs(jobs: Optional[int]) -> None:
    """``--jobs``: 1 or 2 processes (None: the machine's choice), checked before any work."""
    if jobs is not None:
        from fairarena.inputs import check_int

        check_int(jobs, "--jobs", low=1, high=2, unit="processes")


@study_app.command("stats")
@cli_errors
def stats_cmd(
    out: Path = typer.Argument(..., help="The study folder (finished)."),
    as_json: bool = typer.Option(False, "--json", help="Print the statistics and emergence measures as JSON."),
    test: str = typer.Option("auto", "--test", help=_TEST_HELP),
    holm: bool = typer.Option(False, "--holm", help="Holm correction over all cells (raw and corrected p kept)."),
    allow_partial: bool = typer.Option(False, "--allow-partial", help="Analyse the debates that finished ok."),
    progress_every: float = typer.Option(10.0, "--progress-every", help="Seconds between 'still working' lines on "
                                         "stderr when it is not a terminal (0: every 0.2 s); none with --json."),
    jobs: Optional[int] = typer.Option(None, "--jobs", help=_ANALYSIS_JOBS_HELP),
) -> None:
    """Tables 2 and 3 (means; paired tests and effect sizes) and the emergence analysis of a finished study."""
    from fairarena.progress import Progress, check_every
    from fairarena.study.analysis import analyse_study, study_tables

    every = check_every(progress_every)
    _check_jobs(jobs)
    with Progress("study stats", every=every, enabled=not as_json) as bar, bar.ticking():
        an = analyse_study(out, test=test, holm=holm, allow_partial=allow_partial, jobs=jobs)
    if as_json:
        emit_json(an.to_dict())
        return
    from fairarena.report import to_markdown        # matplotlib comes with the report package: not for --json
    tables = study_tables(an)
    if "council" in tables:
        for t in tables.values():
            console.print(to_markdown(t), highlight=False, soft_wrap=True, markup=False)
        return
    for name in ("table2", "table3"):
        console.print(to_markdown(tables[name]), highlight=False, soft_wrap=True, markup=False)
    for r in an.emergence["joint_beats_both"]:
        if r["opponent"] == "all":
            console.print(f"joint beats both on {r['metric']}: {r['vs_round1']:.2f} of debates vs round-1, "
                          f"{r['vs_final']:.2f} vs finals", highlight=False, soft_wrap=True)
    if "deliberation_vs_mechanisms" in tables:
        console.print(to_markdown(tables["deliberation_vs_mechanisms"]), highlight=False, soft_wrap=True, markup=False)
    from fairarena.study.noise import noise_summary

    if an.extras is not None:
        console.print(noise_summary(an.extras), highlight=False, soft_wrap=True, markup=False)
    for name in ("nulls", "samples", "copies", "convergence", "contestation", "contestation_classes", "bias_r1",
                 "bias_final"):
        if name in tables:
            console.print(to_markdown(tables[name]), highlight=False, soft_wrap=True, markup=False)


@study_app.command("tables")
@cli_errors
def tables_cmd(
    out: Path = typer.Argument(..., help="The study folder (finished)."),
    dest: Path = typer.Option(..., "--out", help="Folder for the tables (.md, .tex, .csv), emergence.json and noise.json."),
    test: str = typer.Option("auto", "--test", help=_TEST_HELP),
    holm: bool = typer.Option(False, "--holm", help="Holm correction over all cells."),
    allow_partial: bool = typer.Option(False, "--allow-partial", help="Analyse the debates that finished ok."),
    progress_every: float = typer.Option(10.0, "--progress-every", help="Seconds between 'still working' lines on "
                                         "stderr when it is not a terminal (0: every 0.2 s)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", help=_ANALYSIS_JOBS_HELP),
) -> None:
    """Tables 2 and 3 of a finished study as Markdown, LaTeX and CSV."""
    from fairarena.progress import Progress, check_every
    from fairarena.study.analysis import write_study_tables

    every = check_every(progress_every)
    _check_jobs(jobs)
    if dest.exists() and not dest.is_dir():
        from fairarena.errors import InputError
        raise InputError("out", str(dest), "a folder (it is a file)")
    with Progress("study tables", every=every) as bar, bar.ticking():
        written = write_study_tables(out, dest, test=test, holm=holm, allow_partial=allow_partial, jobs=jobs)
    for p in written:
        console.print(f"wrote {p}", highlight=False, soft_wrap=True)


@study_app.command("report")
@cli_errors
def report_cmd(
    out: Path = typer.Argument(..., help="The study folder (finished)."),
    dest: Path = typer.Option(..., "--out", help="The HTML file to write (one self-contained file)."),
    test: str = typer.Option("auto", "--test", help=_TEST_HELP),
    holm: bool = typer.Option(False, "--holm", help="Holm correction over all cells."),
    details: Optional[int] = typer.Option(None, "--details", min=0, help="Debates shown with their instance and full "
                                          "transcript (default: every debate, embedded compressed)."),
    allow_partial: bool = typer.Option(False, "--allow-partial", help="Analyse the debates that finished ok."),
    progress_every: float = typer.Option(10.0, "--progress-every", help="Seconds between 'still working' lines on "
                                         "stderr when it is not a terminal (0: every 0.2 s)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", help="Processes: 2 renders the figures in a second process "
                                       "while the debates are built, 1 builds everything in this one (default: 2 "
                                       "on Linux with two or more CPUs, else 1). The same file either way."),
) -> None:
    """One offline HTML report: study file, provenance, Tables 2-3, emergence figures, per-debate drill-down."""
    from fairarena.study.analysis import write_study_report

    from fairarena.errors import InputError
    from fairarena.progress import Progress, check_every

    every = check_every(progress_every)
    _check_jobs(jobs)
    if dest.is_dir():
        raise InputError("out", str(dest), "an HTML file path (it is a folder)")
    if not dest.parent.is_dir():
        raise InputError("out", str(dest), "a file in an existing folder (checked before any work)")
    with Progress("study report", every=every) as bar, bar.ticking():
        p = write_study_report(out, dest, test=test, holm=holm, allow_partial=allow_partial, details=details,
                               jobs=jobs)
    console.print(f"wrote {p}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.add_typer(study_app, name="study")


__all__ = ["study_app", "register", "fail"]
