"""The ``fairarena`` command. Thin: every command is one call into the library.

Each feature area registers its commands from its own module (``register(app)``), so the
areas stay independent and this file only lists them.
"""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="fairarena",
    help="Fairness as a property of multi-agent decision-making.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Modules that contribute commands, in the order they appear in --help.
COMMAND_MODULES = (
    "fairarena.bandit.cli",
    "fairarena.demo",
    "fairarena.learners.cli",
    "fairarena.triage.cli",
    "fairarena.experiments.cli",
    "fairarena.arena.cli",
)

for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def main() -> None:  # console-script entry point
    app()


if __name__ == "__main__":
    main()
