"""``fairarena pb``: participatory budgeting on real Pabulib elections. Thin: validate, then one library call."""

from __future__ import annotations

from typing import Optional

import typer

from fairarena.cli_common import check_seed, cli_errors, console, emit_json

pb_app = typer.Typer(name="pb", help="Participatory budgeting on real Pabulib elections: every rule, the groups' "
                                     "debate and the city's actual outcome.",
                     no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


@pb_app.command("compare")
@cli_errors
def compare_cmd(
    file: Optional[str] = typer.Option(None, "--file", help="A Pabulib .pb file (default: Wieliczka 2023, shipped)."),
    groups: str = typer.Option("auto", "--groups", help="age, sex, category, clusters:K or auto."),
    utility: str = typer.Option("approval", "--utility", help="A group's utility: approval, cost or cardinality."),
    seed: int = typer.Option(0, "--seed", help="Seed of the clusters and the debate."),
    no_debate: bool = typer.Option(False, "--no-debate", help="Leave the scripted debate out."),
    axioms: bool = typer.Option(False, "--axioms", help="Check EJR and PJR with pabutools (approval, <= 10 projects; "
                                                        "slow with many voters)."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Every PB rule, the feasible-set rules over the groups, a scripted debate and the city's outcome."""
    from fairarena.pb.compare import compare, table
    from fairarena.pb.domain import example_path
    from fairarena.pb.election import read_election
    from fairarena.pb.groups import GROUP_UTILITIES, parse_scheme
    from fairarena.errors import InputError

    check_seed(seed, "--seed")
    parse_scheme(groups)
    if utility not in GROUP_UTILITIES:
        raise InputError("--utility", utility, f"one of {', '.join(GROUP_UTILITIES)}")
    path = file if file is not None else str(example_path("wieliczka"))
    read_election(path)                      # a bad file: one line, exit 2, before any work
    result = compare(path, groups, utility, seed, debate=not no_debate, axioms=axioms)
    if as_json:
        emit_json(result)
    else:
        console.print(table(result), highlight=False, soft_wrap=True, markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(pb_app, name="pb")


__all__ = ["pb_app", "register"]
