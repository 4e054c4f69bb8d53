"""``fairarena domain``: list the registered domains, check one against the domain protocol.

Thin: each command validates its input, then makes one call into :mod:`fairarena.domains`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from fairarena.cli_common import check_seed, cli_errors, console, emit_json

domain_app = typer.Typer(name="domain", help="Domain plug-ins: list the registered domains, check one against the "
                                             "domain protocol (the conformance kit).",
                         no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


@domain_app.command("list")
@cli_errors
def list_cmd(as_json: bool = typer.Option(False, "--json", help="Print the domains as JSON.")) -> None:
    """Every registered domain (the package's, installed entry points', ...), without importing them."""
    from fairarena.domains.registry import DOMAINS

    rows = [{"name": e.name, "title": e.title, "description": e.description,
             "source": e.meta.get("source") or "fairarena", "path": e.meta.get("path"),
             "loaded": DOMAINS.is_loaded(e.name)} for e in DOMAINS.entries()]
    if as_json:
        emit_json(rows)
        return
    w = max(len(r["name"]) for r in rows)
    for r in rows:
        console.print(f"{r['name']:<{w}}  {r['title'] or r['description'] or r['path']}"
                      + ("" if r["source"] == "fairarena" else f"  [{r['source']}]"),
                      highlight=False, soft_wrap=True, markup=False)


@domain_app.command("check")
@cli_errors
def check_cmd(
    target: Optional[str] = typer.Argument(None, help="A registered domain (fairarena domain list) or MODULE:OBJECT."),
    problem: Optional[Path] = typer.Option(None, "--problem", help="A problem file (TOML or JSON) instead of TARGET: "
                                                                   "the file domain bound to it."),
    seed: int = typer.Option(0, "--seed", help="The instance's seed (domain.sample(seed))."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    no_studies: bool = typer.Option(False, "--no-studies", help="Skip the two study checks."),
    only: Optional[str] = typer.Option(None, "--only", help="Comma-separated checks to run (the others are "
                                                            "left out), e.g. round-trip,seed-determinism."),
) -> None:
    """Run the conformance checks on a domain (exit 0: none failed; 1: one failed; 2: bad input).

    TARGET is a registered name or MODULE:OBJECT; --problem FILE checks a problem file instead (validated
    completely first). Prints a table of the checks (pass, fail with the reason, or skip with why); see
    docs/domains.md."""
    from fairarena.conformance.kit import check, check_names
    from fairarena.domains.registry import problem_file_form, resolve
    from fairarena.errors import InputError

    check_seed(seed, "--seed")
    checks = check_names(only, "--only") if only is not None else None
    if (target is None) == (problem is None):
        raise InputError("target", target, "a registered domain or MODULE:OBJECT, or --problem FILE (one of the two)")
    if problem is not None:   # the file domain bound to the file: every error one line naming file and field
        domain = problem_file_form("load")(problem, "--problem")
        report = check(domain, seed=seed, studies=not no_studies, checks=checks)
        report.target = f"--problem {problem}"
    else:
        resolve(target, "target")   # an unknown name or an unimportable MODULE:OBJECT: exit 2 before any check
        report = check(target, seed=seed, studies=not no_studies, checks=checks)
    if as_json:
        emit_json(report.to_dict())
    else:
        console.print(report.table(), highlight=False, soft_wrap=True, markup=False)
    if not report.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(domain_app, name="domain")


__all__ = ["domain_app", "register"]
