"""The ``fairarena`` command. Thin: every command is one call into the library.

Each feature area registers its commands from its own module (``register(app)``), so the areas
stay independent and this file only lists them. Start-up is kept fast: a module is imported only
when one of its commands runs (or its own ``--help`` is asked for), and the top-level ``--help``
lists the commands from :data:`COMMANDS` without importing any of them. A test checks that
:data:`COMMANDS` matches what the modules register (names and first lines of help).
"""

from __future__ import annotations

import importlib
import signal
import sys
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

# command -> (module that registers it, first line of its help), in --help order
COMMANDS: dict[str, tuple[str, str]] = {
    "notions": ("fairarena.bandit.cli", "List the registered fairness notions."),
    "policy": ("fairarena.bandit.cli", "The optimal policy of one notion for a reward matrix."),
    "score": ("fairarena.bandit.cli", "Every fairness score of a policy (1 = optimal for that notion)."),
    "check": ("fairarena.bandit.cli", "Procedural core, outcome core and proportionality of a policy, with witnesses."),
    "demo": ("fairarena.demo", "Run every feature area once on small inputs and print the results."),
    "learn": ("fairarena.learners.cli",
              "Simulate fair bandit learners over many seeds: regrets, scores, policies, Figure 3."),
    "triage": ("fairarena.triage.cli", "Hospital-triage allocation: cohorts, metrics, optima."),
    "sweep": ("fairarena.sweep.cli", "The full-factorial procedural-fairness sweep (Table 1, Figure 1)."),
    "preflib": ("fairarena.sweep.cli",
                "Every notion's optimal policy on voters sampled from PrefLib data (Figure 2)."),
    "study": ("fairarena.study.cli", "Studies of many debates (duel or council; triage or tourism): design "
              "(TOML), run/resume, status, statistics, tables, report."),
    "debate": ("fairarena.arena.cli", "Two or more agents negotiate an allocation of a cohort over rounds; prints each "
               "round's metrics and the joint final."),
    "aggregate": ("fairarena.aggregation.cli",
                  "Social-choice aggregation of agents' proposals: rules, run, axiom audit."),
    "evaluate": ("fairarena.aggregation.cli",
                 "Stakeholder-centric evaluation of a collective decision for the agents that shaped it."),
    "tourism": ("fairarena.tourism.cli", "Multistakeholder tourism: destinations, stakeholders, recommendation "
                "lists and visitor flows decided by social choice."),
    "audit": ("fairarena.tourism.cli", "Audits of fairness goals: the conflict between two metrics."),
    "pb": ("fairarena.pb.cli", "Participatory budgeting on real Pabulib elections: every rule, the groups' "
           "debate and the city's actual outcome."),
    "domain": ("fairarena.conformance.cli", "Domain plug-ins: list the registered domains, check one against the domain "
               "protocol (the conformance kit)."),
}

# Modules that contribute commands (derived from COMMANDS, in order).
COMMAND_MODULES = tuple(dict.fromkeys(module for module, _ in COMMANDS.values()))


def _bool_help_default(opt: Any) -> Any:
    # typer 0.29 converts every parameter whose value is not already a bool through a pydantic
    # TypeAdapter; the --help flag's value is None unless given, so every command imported pydantic
    # (0.1-0.2 s of start-up) for it. A False default makes it a bool like any other flag.
    if opt is not None and getattr(opt, "default", False) is None:
        opt.default = False
    return opt


def _with_bool_help(cmd: Any) -> Any:
    get = cmd.get_help_option
    cmd.get_help_option = lambda ctx: _bool_help_default(get(ctx))
    return cmd


class LazyGroup(TyperGroup):
    """A command group that imports a command's module on first use."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loaded: set[str] = set()
        self._listing = False

    def _load(self, module: str) -> None:
        if module in self._loaded:
            return
        self._loaded.add(module)
        sub = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
        importlib.import_module(module).register(sub)
        for name, cmd in typer.main.get_group(sub).commands.items():
            self.commands.setdefault(name, _with_bool_help(cmd))

    def load_all(self) -> None:
        for module in COMMAND_MODULES:
            self._load(module)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(dict.fromkeys([*COMMANDS, *self.commands]))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = self.commands.get(cmd_name)
        if cmd is not None:
            return cmd
        if cmd_name in COMMANDS:
            if self._listing:  # the top-level --help: name and summary only, nothing imported
                return TyperCommand(name=cmd_name, help=COMMANDS[cmd_name][1], short_help=COMMANDS[cmd_name][1])
            self._load(COMMANDS[cmd_name][0])
        else:  # a command a module registers but COMMANDS does not list yet
            self.load_all()
        return self.commands.get(cmd_name)

    def get_help_option(self, ctx: Any) -> Any:
        return _bool_help_default(super().get_help_option(ctx))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="fairarena",
    help="Fairness as a property of multi-agent decision-making.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help for the command list: loading typer's rich help costs 0.2 s
    cls=LazyGroup,
)


@app.callback()
def _root() -> None:
    """Fairness as a property of multi-agent decision-making."""


def _terminate(signum: int, frame: Any) -> None:
    # SIGTERM unwinds like Ctrl-C: output guards and transcripts record "interrupted", locks are released
    raise SystemExit(128 + signum)


def main() -> None:  # console-script entry point
    signal.signal(signal.SIGTERM, _terminate)
    app(prog_name="fairarena")


if __name__ == "__main__":
    sys.exit(main())
