"""CLI: ``fairarena policy``, ``score``, ``check`` and ``notions``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from fairarena.cli_common import cli_errors, console, emit_json


def _fmt(x: float) -> str:
    return f"{x:.4f}"


def notion_rows() -> list[dict[str, str]]:
    """The registered notions as listed by ``fairarena notions``. When the notion registry is not
    loaded yet (a fresh process: nothing but the built-ins can be registered), the built-ins are
    read from their descriptions in :mod:`fairarena.bandit.vocabulary`, which is what the registry
    holds, without importing numerical code (0.1-0.2 s of start-up)."""
    import sys

    if "fairarena.bandit.notions" not in sys.modules:
        from fairarena.bandit.vocabulary import BUILTIN_NOTIONS

        return [{"name": name, "title": d["title"], "summary": d["summary"], "source": d["source"],
                 "direction": "max"} for name, d in BUILTIN_NOTIONS.items()]
    from fairarena.bandit.notions import NOTIONS

    return [{"name": e.name, "title": e.title, "summary": e.description, "source": e.citation,
             "direction": e.direction} for e in NOTIONS.entries()]


def register(app: typer.Typer) -> None:
    from fairarena.bandit.vocabulary import EF_KINDS, GGI_KINDS, TIE_BREAKS

    tie_breaks = " or ".join(TIE_BREAKS)
    ef_kinds = " or ".join(EF_KINDS)
    ggi_kinds = " or ".join(GGI_KINDS)

    @app.command("notions")
    @cli_errors
    def notions_cmd(json_out: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
        """List the registered fairness notions."""
        rows = notion_rows()
        if json_out:
            emit_json(rows)
            return
        t = Table(title="Fairness notions")
        for col in ("name", "title", "summary", "source"):
            t.add_column(col, overflow="fold")
        for r in rows:
            t.add_row(r["name"], r["title"], r["summary"], r["source"])
        console.print(t)

    @app.command("policy")
    @cli_errors
    def policy_cmd(
        notion: str = typer.Option(..., "--notion", help="A registered notion (list them: fairarena notions)."),
        rewards: Path = typer.Option(..., "--rewards", help="JSON ({'rewards': [[...]]} or a nested list) or CSV."),
        tie_break: str = typer.Option("utilitarian", "--tie-break", help=f"{tie_breaks} (pf, ef)."),
        ef_kind: str = typer.Option("squared", "--ef-kind", help=f"{ef_kinds} differences (ef)."),
        tol: float = typer.Option(1e-9, "--tol", help="Favourite-set tolerance."),
        ggi_kind: str = typer.Option("owa", "--ggi-kind", help=f"{ggi_kinds}: generalized Gini welfare, or "
                                     "minimise the Gini coefficient of utilities (ggi)."),
        json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ) -> None:
        """The optimal policy of one notion for a reward matrix."""
        from fairarena.bandit.display import clean_numbers
        from fairarena.bandit.io import load_rewards
        from fairarena.bandit.notions import get_notion, make_options
        from fairarena.bandit.problem import decision_shares, utilities

        n = get_notion(notion)
        mu = load_rewards(rewards)
        o = make_options(tol=tol, tie_break=tie_break, ef_kind=ef_kind, ggi_kind=ggi_kind)
        install_compile_notice(json_out)
        p = n.policy(mu, o)
        out = clean_numbers({"notion": n.name, "policy": p.tolist(), "utilities": utilities(mu, p).tolist(),
                             "decision_shares": decision_shares(mu, p, o.tol).tolist()})
        if json_out:
            emit_json(out)
            return
        console.print(f"[bold]{n.title}[/] ({n.name}) policy for {mu.shape[0]} agents x {mu.shape[1]} arms")
        t = Table("arm", "probability")
        for k, pk in enumerate(out["policy"]):
            t.add_row(str(k + 1), _fmt(pk))
        console.print(t)
        t = Table("agent", "utility", "decision share")
        for i, (u, d) in enumerate(zip(out["utilities"], out["decision_shares"])):
            t.add_row(str(i + 1), _fmt(u), _fmt(d))
        console.print(t)

    @app.command("score")
    @cli_errors
    def score_cmd(
        rewards: Path = typer.Option(..., "--rewards", help="Reward matrix file (JSON or CSV)."),
        policy: Path = typer.Option(..., "--policy", help="Policy file: {'policy': [...]}, a list, or CSV."),
        tie_break: str = typer.Option("utilitarian", "--tie-break", help=f"{tie_breaks} (pf, ef)."),
        ef_kind: str = typer.Option("squared", "--ef-kind", help=f"{ef_kinds} differences (ef)."),
        tol: float = typer.Option(1e-9, "--tol", help="Favourite-set tolerance."),
        json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ) -> None:
        """Every fairness score of a policy (1 = optimal for that notion)."""
        from fairarena.bandit.display import clean_numbers
        from fairarena.bandit.io import load_policy_checked, load_rewards
        from fairarena.bandit.notions import NOTIONS, score_all

        mu = load_rewards(rewards)
        p, renormalised = load_policy_checked(policy, mu.shape[1])
        install_compile_notice(json_out)
        out = clean_numbers({**score_all(mu, p, tol=tol, tie_break=tie_break, ef_kind=ef_kind),
                             "renormalised": renormalised})
        if json_out:
            emit_json(out)
            return
        t = Table("notion", "score", "value", title="Scores (1 = optimal)")
        for name, notion in NOTIONS.items():
            t.add_row(f"{name} ({notion.title})", _fmt(out[name]), _fmt(out["values"][name]))
        console.print(t)
        if renormalised:
            console.print("[yellow]the policy's sum was off by more than 1e-9 (at most 1e-6): it was renormalised[/]")
        console.print("utilities:", ", ".join(_fmt(u) for u in out["utilities"]))
        console.print("decision shares:", ", ".join(_fmt(d) for d in out["decision_shares"]))

    @app.command("check")
    @cli_errors
    def check_cmd(
        rewards: Path = typer.Option(..., "--rewards", help="Reward matrix file (JSON or CSV)."),
        policy: Path = typer.Option(..., "--policy", help="Policy file."),
        tol: float = typer.Option(1e-9, "--tol", help="Favourite-set tolerance."),
        json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ) -> None:
        """Procedural core, outcome core and proportionality of a policy, with witnesses."""
        from fairarena.bandit.display import clean_numbers
        from fairarena.bandit.io import load_policy_checked, load_rewards
        from fairarena.bandit.properties import MAX_EXACT_N, check_policy
        from fairarena.bandit.notions import make_options

        make_options(tol=tol)  # the same tolerance check as policy/score (was unchecked here)
        mu = load_rewards(rewards)
        p, renormalised = load_policy_checked(policy, mu.shape[1])
        result = check_policy(mu, p, tol=tol)
        pc, oc, prop = result.procedural, result.outcome, result.proportionality
        out = {**result.to_dict(), "renormalised": renormalised}
        out = clean_numbers(out)
        if json_out:
            emit_json(out)
            return
        t = Table("property", "holds", "witness")
        t.add_row("procedurally fair", _yes(out["procedurally_fair"]), "")
        t.add_row("procedural core", _yes(pc.in_core), _witness(pc.blocking))
        t.add_row("outcome core", _yes(oc.in_core), _witness(oc.blocking))
        t.add_row("proportional", _yes(prop.proportional),
                  ", ".join(f"agent {i + 1}: {v['utility']:.4f} < {v['fair_share']:.4f}" for i, v in prop.shortfall.items()))
        console.print(t)
        if not pc.exact:
            console.print(f"[yellow]N > {MAX_EXACT_N}: core checks sampled coalitions; 'yes' is evidence, not proof.[/]")


def install_compile_notice(quiet: bool) -> bool:
    """Have the solver show a spinner on stderr while its compiled kernels are built for the first
    time (only large problems use them; about a minute after installing, cached afterwards). Nothing
    when ``quiet`` (``--json``) or when stderr is not a terminal. Returns whether it was installed."""
    from fairarena.bandit import solver
    from fairarena.cli_common import err_console

    if quiet or not err_console.is_terminal:
        return False

    def notice() -> Any:
        return err_console.status("compiling the fairness solver (first use after installing, about a minute; "
                                  "cached afterwards)")

    solver.compile_notice = notice
    return True


def _yes(b: bool) -> str:
    return "[green]yes[/]" if b else "[red]no[/]"


def _witness(b: Any) -> str:
    if b is None:
        return ""
    members = "{" + ", ".join(str(i + 1) for i in b.coalition) + "}"
    q = "(" + ", ".join(f"{x:.3f}" for x in b.policy) + ")"
    return f"coalition {members} deviates to {q}"
