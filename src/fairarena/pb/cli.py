"""``fairarena pb``: participatory budgeting on real Pabulib elections. Thin: validate, then one library call."""

from __future__ import annotations

from typing import Optional

import typer

from fairarena.cli_common import check_seed, cli_errors, console, emit_json
from fairarena.inputs import check_int

pb_app = typer.Typer(name="pb", help="Participatory budgeting on real Pabulib elections: every rule, the groups' "
                                     "debate and the city's actual outcome.",
                     no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


def _check_file_path(value: str | None, field: str) -> None:
    """An output (or cache) file option: a file path in a folder that exists; InputError naming ``field``."""
    from pathlib import Path

    from fairarena.errors import InputError

    if value is not None and (not value or Path(value).is_dir() or not Path(value).resolve().parent.is_dir()):
        raise InputError(field, value, "a file path in an existing folder")


def _check_groups(seed: int, groups: str, utility: str, min_group: int) -> None:
    """The options both commands share, checked before any work: ``--seed``, ``--groups``, ``--utility`` and
    ``--min-group`` (an InputError naming the first bad one)."""
    from fairarena.errors import InputError
    from fairarena.pb.groups import GROUP_UTILITIES, parse_scheme

    check_seed(seed, "--seed")
    parse_scheme(groups)
    if utility not in GROUP_UTILITIES:
        raise InputError("--utility", utility, f"one of {', '.join(GROUP_UTILITIES)}")
    check_int(min_group, "--min-group", low=1, high=10**9, unit="voters")


@pb_app.command("compare")
@cli_errors
def compare_cmd(
    file: Optional[str] = typer.Option(None, "--file", help="A Pabulib .pb file (default: Wieliczka 2023, shipped)."),
    groups: str = typer.Option("auto", "--groups", help="age, sex, neighbourhood, category, clusters:K or auto."),
    utility: str = typer.Option("approval", "--utility", help="A group's utility: approval, cost or cardinality."),
    seed: int = typer.Option(0, "--seed", help="Seed of the clusters and the debate."),
    min_group: int = typer.Option(10, "--min-group", help="Groups with fewer voters are left out of the stakeholder "
                                                          "groups (their votes still count)."),
    no_debate: bool = typer.Option(False, "--no-debate", help="Leave the groups' debate out."),
    model: str = typer.Option("scripted", "--model", help="The groups' debate agents: scripted (each proposes its "
                                                          "optimum) or a model spec (openai:MODEL@URL, llamacpp:..., "
                                                          "scripted:NAME), one agent per group."),
    rounds: int = typer.Option(3, "--rounds", help="Debate rounds before the joint draft (1..10)."),
    cache: Optional[str] = typer.Option(None, "--cache", help="SQLite response cache of the model (replay/resume)."),
    offline: bool = typer.Option(False, "--offline", help="Replay from --cache only; never call a model."),
    max_calls: Optional[int] = typer.Option(None, "--max-calls", help="Call budget of the model."),
    axioms: bool = typer.Option(True, "--axioms/--no-axioms", help="Check EJR and PJR up to one project (exact, "
                                "approval, <= 16 projects) and priceability (approval) on every row that is one set."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
    out: Optional[str] = typer.Option(None, "--out", help="Also write the comparison as JSON to this file."),
    plot_path: Optional[str] = typer.Option(None, "--plot", help="Write a PNG: approvals vs the worst-off group, "
                                                                  "one point per row."),
) -> None:
    """Every PB rule, the feasible-set rules over the groups, the groups' debate and the city's outcome."""
    from fairarena.pb.compare import compare, table
    from fairarena.pb.domain import example_path
    from fairarena.pb.election import read_election
    from fairarena.errors import InputError

    _check_groups(seed, groups, utility, min_group)
    from pathlib import Path

    from fairarena.pb.agents import check_model

    check_model(model, "--model")
    check_int(rounds, "--rounds", low=1, high=10, unit="rounds")
    if max_calls is not None:
        check_int(max_calls, "--max-calls", low=1, high=10**9, unit="calls")
    if offline and cache is None:
        raise InputError("--offline", "true", "a --cache file to replay from")
    _check_file_path(cache, "--cache")
    path = file if file is not None else str(example_path("wieliczka"))
    read_election(path)                      # a bad file: one line, exit 2, before any work
    if plot_path is not None:
        if not plot_path.lower().endswith(".png") or not Path(plot_path).resolve().parent.is_dir():
            raise InputError("--plot", plot_path, "a .png path in an existing folder")
    _check_file_path(out, "--out")
    build = {k: v for k, v in (("cache", cache), ("offline", offline or None), ("max_calls", max_calls))
             if v is not None} if model != "scripted" else {}
    result = compare(path, groups, utility, seed, debate=not no_debate, axioms=axioms, min_group=min_group,
                     model=model, rounds=rounds, **build)
    if plot_path is not None:
        from fairarena.pb.compare import plot

        plot(result, plot_path)
    if out is not None:
        from fairarena.fsutil import atomic_write_json

        atomic_write_json(out, result)
    if as_json:
        emit_json(result)
    else:
        console.print(table(result), highlight=False, soft_wrap=True, markup=False)


@pb_app.command("audit")
@cli_errors
def audit_cmd(
    paths: list[str] = typer.Argument(..., metavar="DIR_OR_FILES", help="A folder of .pb files, or .pb files."),
    groups: str = typer.Option("auto", "--groups", help="age, sex, neighbourhood, category, clusters:K or auto."),
    utility: str = typer.Option("approval", "--utility", help="A group's utility: approval, cost or cardinality."),
    seed: int = typer.Option(0, "--seed", help="Seed of the clusters."),
    min_group: int = typer.Option(10, "--min-group", help="Groups with fewer voters are left out of the groups."),
    jobs: int = typer.Option(1, "--jobs", help="Worker processes (1..64)."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole audit as JSON."),
    out: Optional[str] = typer.Option(None, "--out", help="Also write the whole audit as JSON to this file."),
    progress_every: float = typer.Option(10.0, "--progress-every", help="Seconds between progress lines on stderr "
                                         "when it is not a terminal (0: every election); none with --json."),
) -> None:
    """Every rule and the EJR/PJR audit over many elections: violations with minimal witnesses, trade-offs."""
    from fairarena.fsutil import atomic_write_json
    from fairarena.pb.audit import audit, collect_files, report_text
    from fairarena.pb.election import read_election

    _check_groups(seed, groups, utility, min_group)
    check_int(jobs, "--jobs", low=1, high=64, unit="processes")
    _check_file_path(out, "--out")
    from fairarena.progress import Progress, check_every

    every = check_every(progress_every)
    files = collect_files(paths)
    for f in files:                          # every file checked before any work or write
        read_election(f, "DIR_OR_FILES")
    with Progress("pb audit", total=len(files), unit="elections", every=every, enabled=not as_json) as bar:
        result = audit(files, groups, utility, seed, min_group, jobs, progress=bar.advance)
    if out is not None:
        atomic_write_json(out, result)
    if as_json:
        emit_json(result)
    else:
        console.print(report_text(result), highlight=False, soft_wrap=True, markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(pb_app, name="pb")


__all__ = ["pb_app", "register"]
