"""``fairarena tourism ...`` (destination, stakeholders, run, compare) and ``fairarena audit conflict``.
Each command validates its input before any work or write, calls the library and renders."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from fairarena.cli_common import check_seed, cli_errors, console, emit_json, fail
from fairarena.errors import InputError

tourism_app = typer.Typer(name="tourism", help="Multistakeholder tourism: destinations, stakeholders, "
                          "recommendation lists and visitor flows decided by social choice.", no_args_is_help=True)
MAX_ROUNDS = 50
"""Largest ``--rounds`` of ``tourism run`` and ``tourism compare`` (the arena's own limit; 0: no debate)."""


def _check_rounds(rounds: int) -> int:
    if isinstance(rounds, bool) or not 0 <= rounds <= MAX_ROUNDS:
        raise InputError("--rounds", rounds, f"0..{MAX_ROUNDS}")
    return rounds


audit_app = typer.Typer(name="audit", help="Audits of fairness goals: the conflict between two metrics.",
                        no_args_is_help=True)


@tourism_app.command("destination")
@cli_errors
def destination_cmd(
    out: Path = typer.Option(..., "--out", help="Destination JSON to write."),
    seed: int = typer.Option(0, "--seed", help="Seed of the synthetic destination."),
    pois: int = typer.Option(40, "--pois", help="Number of POIs (synthetic)."),
    from_csv: Optional[Path] = typer.Option(None, "--from-csv", help="Load POIs from a CSV (docs/tourism.md)."),
    force: bool = typer.Option(False, "--force", help="Overwrite --out."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary."),
) -> None:
    """Generate a seeded synthetic destination, or load a user's POIs from a CSV."""
    from fairarena.fsutil import atomic_write_json, check_out_file
    from fairarena.tourism.destination import from_csv as load_csv, generate

    check_seed(seed)
    check_out_file(out, "--out")
    if out.exists() and not force:
        raise InputError("--out", str(out), "a new file (exists; pass --force to overwrite)")
    d = load_csv(from_csv) if from_csv is not None else generate(seed, pois)
    atomic_write_json(out, d.to_dict())
    summary = {"out": str(out), "pois": len(d.pois), "groups": {g.id: g.size for g in d.groups}, "seed": d.seed}
    if as_json:
        emit_json(summary)
    else:
        console.print(f"wrote {out} ({len(d.pois)} POIs, {len(d.groups)} tourist groups)")


@tourism_app.command("stakeholders")
@cli_errors
def stakeholders_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the built-in stakeholders, their values and objectives."""
    from fairarena.tourism.stakeholders import builtin_names, make

    rows = [{"name": s.name, "value": s.value, "objective": s.objective, "documents": list(s.documents),
             "profile": s.profile} for s in (make(n) for n in builtin_names())]
    if as_json:
        emit_json({"stakeholders": rows})
        return
    from rich.table import Table

    t = Table(title="tourism stakeholders")
    for c in ("name", "objective", "value"):
        t.add_column(c)
    for r in rows:
        t.add_row(r["name"], ", ".join(f"{w:+g} {m}" for m, w in r["objective"].items()), r["value"])
    console.print(t)


def _setup(destination: Path, stakeholders: str, decision: str, k: int, attention: str) -> Any:
    from fairarena.tourism.decisions import DECISIONS
    from fairarena.tourism.destination import load_destination
    from fairarena.tourism.metrics import ATTENTION
    from fairarena.tourism.stakeholders import parse_stakeholders

    if decision not in DECISIONS:
        raise InputError("--decision", decision, f"one of {', '.join(DECISIONS)}")
    ATTENTION.check(attention)
    ss = parse_stakeholders(stakeholders)
    d = load_destination(destination, "--destination")
    if decision == "lists" and not 1 <= k <= len(d.pois):
        raise InputError("--k", k, f"1..{len(d.pois)}")
    return d, ss


def _table(result: dict[str, Any]) -> None:
    from rich.table import Table

    t = Table(title=f"rule {result['rule']}: {result['decision']['chosen']}")
    t.add_column("stakeholder")
    t.add_column("utility")
    t.add_column("regret")
    for r in result["evaluation"]["stakeholders"]:
        t.add_row(r["stakeholder"], f"{r['utility']:.3f}", f"{r['regret']:.3f}")
    console.print(t)
    m = result["evaluation"]["metrics"]
    console.print(", ".join(f"{k} {v:.3g}" for k, v in m.items() if isinstance(v, float)))


@tourism_app.command("run")
@cli_errors
def run_cmd(
    destination: Path = typer.Option(..., "--destination", help="Destination JSON."),
    stakeholders: str = typer.Option("tourists:family,residents,local-business,destination", "--stakeholders"),
    decision: str = typer.Option("lists", "--decision", help="lists or flows."),
    rule: Optional[str] = typer.Option(None, "--rule", help="Aggregation rule (see docs/tourism.md; default schulze). "
                                       "With --model: the debate's closing rule (default mean-repair)."),
    k: int = typer.Option(5, "--k", help="List length."),
    rounds: int = typer.Option(0, "--rounds", help="Rounds of the scripted debate through the arena (0: the rule "
                               "alone)."),
    closing: str = typer.Option("joint-draft", "--closing", help="Scripted debate (--rounds > 0): the arena closing "
                                "(joint-draft: the stakeholders' Nash bargaining draft; or a candidate rule)."),
    model: Optional[str] = typer.Option(None, "--model", help="LLM spec: stakeholder agents negotiate the flows "
                                        "through the arena (default: scripted agents)."),
    attention: str = typer.Option("position", "--attention", help="full-list or position."),
    seed: int = typer.Option(0, "--seed"),
    out: Optional[Path] = typer.Option(None, "--out", help="Output folder (result.json)."),
    force: bool = typer.Option(False, "--force"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    progress_every: float = typer.Option(10.0, "--progress-every", help="Seconds between 'still working' lines on "
                                         "stderr when it is not a terminal; none with --json."),
) -> None:
    """Each stakeholder proposes, the rule (or a scripted debate through the arena) decides, all are evaluated."""
    from fairarena.progress import Progress, check_every
    from fairarena.tourism.run import run

    every = check_every(progress_every)
    check_seed(seed)
    _check_rounds(rounds)
    d, ss = _setup(destination, stakeholders, decision, k, attention)
    if model is not None and model != "scripted":
        # LLM agents (any backend) negotiate the flows through the arena; --rule is the arena's closing rule
        # (default mean-repair; social-choice closings score the stakeholders by their own objectives)
        if decision != "flows":
            raise InputError("--model", model, "LLM agents negotiate --decision flows (lists are decided by rules)")
        from fairarena.llm.spec import parse_model_spec
        from fairarena.tourism.arena import check_closing, llm_debate

        parse_model_spec(model)
        closing = check_closing(rule or "mean-repair", "--rule")

        def work() -> Any:
            transcript = (out / "transcript.jsonl") if out is not None else None
            return {**llm_debate(d, ss, model, rounds=max(1, rounds), closing=closing, seed=seed,
                                 transcript=transcript), "seed": seed}

        with Progress("tourism run", every=every, enabled=not as_json) as progress, progress.ticking():
            result = _write(out, force, "tourism run", work, config={"destination": str(destination), "model": model,
                                                                     "stakeholders": stakeholders, "rounds": rounds,
                                                                     "closing": closing})
        if as_json:
            emit_json(result)
        else:
            console.print(f"debate {result['status']}" + (f": {result['error']}" if result["error"] else ""))
            for key, ev in result["evaluation"].items():
                console.print(f"{key}: " + ", ".join(f"{r['stakeholder']} {r['utility']:.3f}" for r in ev["stakeholders"])
                              + (f"  violations: {ev['violations'][:2]}" if ev["violations"] else ""))
        if result["status"] != "ok":  # a run that failed (e.g. an unreachable model) exits non-zero, as debate does
            raise fail(f"debate failed: {result['error']}")
        return
    from fairarena.tourism.decisions import check_rule

    from fairarena.tourism.arena import check_scripted_closing

    rule = rule or "schulze"
    check_rule(decision, rule)
    check_scripted_closing(closing, decision, "--closing")
    cfg = {"destination": str(destination), "stakeholders": stakeholders, "decision": decision, "rule": rule, "k": k,
           "rounds": rounds, "attention": attention, "seed": seed, **({"closing": closing} if rounds > 0 else {})}
    with Progress("tourism run", every=every, enabled=not as_json) as progress, progress.ticking():
        result = _write(out, force, "tourism run", lambda: run(d, ss, decision, rule, k=k, rounds=rounds, seed=seed,
                                                               attention=attention, closing=closing), config=cfg)
    if as_json:
        emit_json(result)
    else:
        _table(result)


def _write(out: Optional[Path], force: bool, command: str, work: Any, plot: Any = None,
           config: dict[str, Any] | None = None) -> Any:
    if out is None:
        return work()
    from fairarena.fsutil import atomic_write_json, output_folder
    from fairarena.provenance import run_record

    config = {"command": command, **(config or {})}
    with output_folder(out, command, force=force, config=config) as folder:
        result = work()
        atomic_write_json(folder.path / "result.json", {**result, "provenance": run_record(config, result.get("seed"))})
        if plot is not None:
            plot(result, folder.path)
    return result


@tourism_app.command("compare")
@cli_errors
def compare_cmd(
    destination: Path = typer.Option(..., "--destination"),
    stakeholders: str = typer.Option("tourists:family,residents,local-business,destination", "--stakeholders"),
    decision: str = typer.Option("lists", "--decision"),
    k: int = typer.Option(5, "--k"),
    rounds: int = typer.Option(3, "--rounds", help="Rounds of the scripted debate shown beside the rules."),
    attention: str = typer.Option("position", "--attention"),
    seed: int = typer.Option(0, "--seed"),
    out: Optional[Path] = typer.Option(None, "--out"),
    force: bool = typer.Option(False, "--force"),
    as_json: bool = typer.Option(False, "--json"),
    progress_every: float = typer.Option(10.0, "--progress-every", help="Seconds between 'still working' lines on "
                                         "stderr when it is not a terminal; none with --json."),
) -> None:
    """Every rule side by side (table and plot), plus the scripted debate."""
    from fairarena.progress import Progress, check_every
    from fairarena.tourism.compare import compare, plot_compare

    every = check_every(progress_every)
    check_seed(seed)
    _check_rounds(rounds)
    d, ss = _setup(destination, stakeholders, decision, k, attention)
    with Progress("tourism compare", every=every, enabled=not as_json) as progress, progress.ticking():
        result = _write(out, force, "tourism compare", lambda: compare(d, ss, decision, k=k, rounds=rounds, seed=seed,
                                                                       attention=attention),
                        plot=lambda r, p: plot_compare(r, p / "compare.png"),
                        config={"destination": str(destination), "stakeholders": stakeholders, "decision": decision,
                                "k": k, "rounds": rounds, "attention": attention, "seed": seed})
    if as_json:
        emit_json(result)
        return
    from rich.table import Table

    names = [s.name for s in ss]
    t = Table(title=f"tourism compare ({decision})")
    t.add_column("rule")
    t.add_column("chosen")
    for n in names:
        t.add_column(n)
    for r in result["rows"]:
        t.add_row(r["rule"], str(r["chosen"]), *[f"{r['utilities'][n]:.3f}" for n in names])
    console.print(t)


@audit_app.command("conflict")
@cli_errors
def conflict_cmd(
    problem: Path = typer.Option(..., "--problem", help="A triage cohort or a tourism destination (JSON), or a "
                                 "problem file (TOML, or JSON with recipients; docs/domains.md)."),
    x: str = typer.Option(..., "--x", help="First metric."),
    y: str = typer.Option(..., "--y", help="Second metric."),
    points: int = typer.Option(50, "--points", help="Grid points of the frontier."),
    attention: str = typer.Option("full-list", "--attention", help="Tourism: attention model of the metrics."),
    k: int = typer.Option(5, "--k", help="Tourism: list length."),
    decision: str = typer.Option("lists", "--decision", help="Tourism: lists (sampled) or flows (weighted sums)."),
    seed: int = typer.Option(0, "--seed"),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for result.json and frontier.png."),
    force: bool = typer.Option(False, "--force"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Pareto frontier between two metrics, whether they conflict, price of fairness, alternative definitions."""
    from fairarena.domains.registry import problem_file_form

    if problem_file_form("is_problem_file")(problem):   # a problem file (TOML, or JSON with recipients)
        return problem_file_form("conflict")(problem, x, y, points, seed, out, force, as_json)
    from fairarena.tourism.conflict import audit, load_problem, plot_frontier

    check_seed(seed)
    if decision not in ("lists", "flows"):
        raise InputError("--decision", decision, "lists or flows")
    loaded = load_problem(str(problem), x, y, points, attention)   # every check before any work or write
    if loaded[0] == "tourism" and not 1 <= k <= len(loaded[1].pois):
        raise InputError("--k", k, f"1..{len(loaded[1].pois)}")
    result = _write(out, force, "audit conflict", lambda: {**audit(str(problem), x, y, points, seed, k, attention,
                                                                   loaded=loaded, decision=decision), "seed": seed},
                    plot=lambda r, p: plot_frontier(r, str(p / "frontier.png")),
                    config={"problem": str(problem), "x": x, "y": y, "points": points, "attention": attention, "k": k,
                            "decision": decision, "seed": seed})
    if as_json:
        emit_json(result)
        return
    console.print(f"{result['problem']}: {result['x']} vs {result['y']} ({result['method']}), "
                  f"{len(result['points'])} frontier points")
    console.print(f"no conflict: {result['no_conflict']}; price of fairness: {result['x']} "
                  f"{result['price_of_fairness_x']:.3f}, {result['y']} {result['price_of_fairness_y']:.3f}")
    for a in result["alternatives"]:
        console.print(f"under {a['attention']} attention: no conflict {a['no_conflict']}, price of fairness "
                      f"{a['price_of_fairness_x']:.3f} / {a['price_of_fairness_y']:.3f} -> conflict {a['verdict']}")


def register(app: typer.Typer) -> None:
    """Add the ``tourism`` and ``audit`` groups."""
    app.add_typer(tourism_app, name="tourism")
    app.add_typer(audit_app, name="audit")
