"""``fairarena demo``: the main job of ``make demo``, one section per feature area.

Each section is a function printing a readable result; the list grows as areas land.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import typer
from rich.table import Table

from fairarena.cli_common import cli_errors, console

# The two worked examples of the foundation issue (procedural-fairness paper's setting).
WORKED_EXAMPLES = {
    "three agents, two arms (agents 1-2 favour arm 1, agent 3 arm 2)":
        [[0.9, 0.1], [0.9, 0.1], [0.1, 0.9]],
    "favourites (1, 1, 2) with a graded second agent":
        [[0.9, 0.1], [0.8, 0.2], [0.1, 0.9]],
}


def worked_examples(out: Path, full: bool = False) -> None:
    from fairarena.bandit.notions import NOTIONS, SCORE_KEYS, evaluate_batch, optimal_policies
    from fairarena.bandit.properties import outcome_core, procedural_core, proportionality

    import numpy as np

    for title, mu in WORKED_EXAMPLES.items():
        m = np.asarray(mu)
        pols = optimal_policies(m[None])
        scores = evaluate_batch(m[None], pols)
        t = Table(title=f"Worked example: {title}", title_justify="left")
        t.add_column("policy")
        t.add_column("p", justify="left", no_wrap=True)
        for key in SCORE_KEYS:
            t.add_column({"maximin": "mm"}.get(key, key), justify="right")
        t.add_column("core P/O", no_wrap=True)
        t.add_column("prop")
        for name in NOTIONS:
            p = pols[name][0]
            row = [name, " ".join(f"{x:.2f}" for x in p)]
            row += [f"{scores[name][k][0]:.2f}" for k in SCORE_KEYS]
            row += [_yn(procedural_core(m, p).in_core) + "/" + _yn(outcome_core(m, p).in_core),
                    _yn(proportionality(m, p).proportional)]
            t.add_row(*row)
        console.print(t)
    console.print("scores: 1 = optimal for that notion; core P/O = procedural / outcome core (y/n)")


def _yn(b: bool) -> str:
    return "[green]y[/]" if b else "[red]n[/]"


# (title, "module:function"); a function takes the output directory.
SECTIONS: list[tuple[str, str]] = [
    ("Fairness notions on the worked examples", "fairarena.demo:worked_examples"),
    ("Procedural-fairness sweep (reduced grid; --full: the paper grid)", "fairarena.sweep.demo:sweep_demo"),
    ("PrefLib Mechanical Turk Dots example", "fairarena.sweep.demo:dots_demo"),
    ("Fair bandit learners on the Dots instance", "fairarena.learners.demo:learn_demo"),
    ("Multistakeholder tourism: every rule, and a conflict audit", "fairarena.tourism.demo:tourism_demo"),
    ("Council: six framework agents debate one cohort, beside every aggregation rule", "fairarena.arena.demo:council_demo"),
    ("Participatory budgeting: Warsaw-Wesola 2023 by age group, every rule beside the city's outcome",
     "fairarena.pb.demo:pb_demo"),
    ("Triage-debate study (small preset, 5 cohorts; --full: the paper's 600 debates): run, tables, report",
     "fairarena.study.demo:study_demo"),
    ("Council and tourism studies (3 cohorts, 3 destinations; --full: 50 each): every rule beside the debate",
     "fairarena.study.demo:council_studies_demo"),
]


def register(app: typer.Typer) -> None:
    @app.command("demo")
    @cli_errors
    def demo_cmd(
        out: Path = typer.Option(Path("out/demo"), "--out", help="Where the demo writes its results."),
        full: bool = typer.Option(False, "--full", help="Run the full (paper-size) studies, not reduced ones."),
    ) -> None:
        """Run every feature area once on small inputs and print the results."""
        from fairarena.fsutil import output_folder

        # the demo always refreshes its folder (force), but never races another run in it
        with output_folder(out, "demo", force=True, config={"full": full}):
            for title, target in SECTIONS:
                console.rule(f"[bold]{title}")
                mod, func = target.split(":")
                fn = getattr(importlib.import_module(mod), func)
                fn(out, full=full)
