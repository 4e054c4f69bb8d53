"""``fairarena triage ...``: cohorts, metrics, framework optima, non-degeneracy. Each command is one
call into :mod:`fairarena.triage`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from fairarena.cli_common import EGALITARIAN_HELP
from fairarena.cli_common import check_seed, cli_errors, console, emit_json

CNSS_HELP = ("Need satisfaction: indicator (the paper's: a need counts when at least the clinical minimum, one "
             "unit, is given) or fractional (min(1, x/need)).")
WEIGHTS_HELP = ("DW-ESG weights: ses-scale (the paper's, 1/rank on its eight-level SES scale), ses-rank (1/SES rank "
                "within the cohort) or points (1 + SES + citizenship points).")
DEFAULT_CNSS = "indicator"  # checked against fairarena.allocation.problem.DEFAULT_CNSS by a test
DEFAULT_DISADVANTAGE = "ses-scale"  # likewise against fairarena.triage.cohort.DEFAULT_DISADVANTAGE


def check_capacity(capacity: str) -> str:
    """A capacity variant name from the cohort module's table (unknown: InputError listing them)."""
    from fairarena.errors import InputError
    from fairarena.triage.cohort import CAPACITY_VARIANTS

    if capacity not in CAPACITY_VARIANTS:
        raise InputError("capacity", capacity, f"expected one of {', '.join(CAPACITY_VARIANTS)}")
    return capacity


def check_framework(framework: str) -> str:
    """A framework name from the FRAMEWORKS registry (unknown: InputError listing them)."""
    from fairarena.allocation.frameworks import FRAMEWORKS

    FRAMEWORKS.get(framework)
    return framework


def _problem(cohort: Any, cnss: str, weights: str) -> Any:
    from fairarena.allocation.problem import CNSS_FORMS
    from fairarena.triage.cohort import DISADVANTAGE_RULES

    if cnss not in CNSS_FORMS:
        from fairarena.errors import InputError

        raise InputError("--cnss", cnss, f"one of {', '.join(CNSS_FORMS)}")
    DISADVANTAGE_RULES.check(weights)
    return cohort.to_problem(cnss=cnss, disadvantage=weights)


triage_app = typer.Typer(name="triage", help="Hospital-triage allocation: cohorts, metrics, optima.",
                         no_args_is_help=True)


def _metrics_json(m: dict[str, Any]) -> dict[str, Any]:
    from fairarena.allocation.metrics import METRIC_KEYS

    import math

    out = {k: m[k] for k in (*METRIC_KEYS, "cnss", "feasible", "violations", "waste", "unused")}
    # an undefined metric (the nursing Gini when nobody gets nursing) is null in JSON, not NaN
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in out.items()}


def _metrics_table(m: dict[str, Any], ids: list[str], title: str) -> None:
    from rich.table import Table

    from fairarena.allocation.frameworks import FRAMEWORKS
    from fairarena.allocation.metrics import METRIC_KEYS, METRICS

    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("framework")
    table.add_column("direction")
    owners: dict[str, list[str]] = {}
    for f in FRAMEWORKS.values():
        owners.setdefault(f.metric, []).append(f.name)
        if f.paper_metric and f.paper_metric != f.metric:
            owners.setdefault(f.paper_metric, []).append(f"{f.name} (paper's Table 2)")
    for k in METRIC_KEYS:
        mt = METRICS.get(k)
        value = "undefined" if m[k] is None or m[k] != m[k] else f"{m[k]:.4f}"  # None/NaN: nobody received it
        table.add_row(mt.label, value, ", ".join(owners.get(k, [])),
                      "higher" if mt.direction == "max" else "lower")
    console.print(table)
    console.print("CNSS: " + ", ".join(f"{pid} {c:.3f}" for pid, c in zip(ids, m["cnss"])))
    console.print("unused capacity: " + ", ".join(f"{r} {v:g}" for r, v in m["unused"].items()))
    if m["feasible"]:
        console.print("feasible: yes")
    else:
        console.print("[bold red]feasible: no[/]")
        for v in m["violations"]:
            console.print(f"  - {v}")


@triage_app.command("cohort")
@cli_errors
def cohort_cmd(
    seed: int = typer.Option(..., "--seed", help="Random seed (numpy default_rng)."),
    capacity: str = typer.Option("tight", "--capacity", help="Capacity variant (triage.cohort CAPACITY_VARIANTS: tight, standard, high)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Cohort JSON file (default: stdout)."),
    no_shuffle: bool = typer.Option(False, "--no-shuffle", help="Keep slot order (P1 = first archetype)."),
    archetypes: str = typer.Option("paper", "--archetypes",
                                   help="Archetype slots: paper (the paper's Table 1 / Appendix D) or "
                                        "reconstructed (the former set)."),
    survival_labels: str = typer.Option("main", "--survival-labels",
                                        help="How agents see survival (written to meta.survival_labels): main "
                                             "(Acute/Low/Mid/High, the paper's Section 4.2) or appendix "
                                             "(acute/moderate/mild, its Appendix D.2)."),
) -> None:
    """Sample a cohort of eight patients (one per archetype) with a capacity variant."""
    from fairarena.errors import InputError
    from fairarena.fsutil import atomic_write_json, check_out_file
    from fairarena.provenance import run_record
    from fairarena.triage.archetypes import ARCHETYPE_SETS, sample_cohort

    check_seed(seed)
    check_capacity(capacity)
    if archetypes not in ARCHETYPE_SETS:
        raise InputError("archetypes", archetypes, f"one of {', '.join(ARCHETYPE_SETS)}")
    from fairarena.triage.cohort import SURVIVAL_LABEL_SCHEMES
    if survival_labels not in SURVIVAL_LABEL_SCHEMES:
        raise InputError("survival-labels", survival_labels, f"one of {SURVIVAL_LABEL_SCHEMES.choices()}")
    if out is not None:
        check_out_file(out)
    cohort = sample_cohort(seed, capacity, shuffle_slots=not no_shuffle, archetypes=archetypes)
    data = cohort.to_dict()
    if survival_labels != "main":  # the default is left out, so existing cohort files stay byte-identical
        data["meta"]["survival_labels"] = survival_labels
    data["meta"]["provenance"] = run_record({"command": "triage cohort", "capacity": capacity,
                                             "shuffle_slots": not no_shuffle, "archetypes": archetypes}, seed)
    if out is None:
        emit_json(data)
    else:
        atomic_write_json(out, data)
        console.print(f"wrote {out} ({len(cohort.patients)} patients, capacity {capacity})")


@triage_app.command("metrics")
@cli_errors
def metrics_cmd(
    cohort: Path = typer.Option(..., "--cohort", help="Cohort JSON file."),
    allocation: Path = typer.Option(..., "--allocation", help='Allocation JSON {"allocation": {...}}.'),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    cnss: str = typer.Option(DEFAULT_CNSS, "--cnss", help=CNSS_HELP),
    weights: str = typer.Option(DEFAULT_DISADVANTAGE, "--weights", help=WEIGHTS_HELP),
) -> None:
    """Score an allocation under the metrics; infeasible allocations are scored and flagged."""
    from fairarena.triage.cohort import load_cohort
    from fairarena.triage.metrics import compute_metrics, load_allocation

    c = load_cohort(cohort)
    problem = _problem(c, cnss, weights)
    m = compute_metrics(problem, load_allocation(allocation, problem))
    if as_json:
        emit_json(_metrics_json(m))
    else:
        _metrics_table(m, c.ids, f"metrics of {allocation.name}")


@triage_app.command("optimal")
@cli_errors
def optimal_cmd(
    cohort: Path = typer.Option(..., "--cohort", help="Cohort JSON file."),
    framework: str = typer.Option(..., "--framework", help="Ethical framework (the FRAMEWORKS registry: utilitarian, egalitarian, rawlsian, prioritarian, care, libertarian)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the allocation file here."),
    leximin: bool = typer.Option(False, "--leximin", help="Rawlsian: refine max-min to full leximin."),
    gini_tolerance: float = typer.Option(0.0, "--gini-tolerance", min=0.0, max=1.0,
                                         help="Egalitarian, --egalitarian strict only: allow Gini(CNSS) up "
                                              "to this value (default 0: exactly equal CNSS)."),
    cnss: str = typer.Option(DEFAULT_CNSS, "--cnss", help=CNSS_HELP),
    weights: str = typer.Option(DEFAULT_DISADVANTAGE, "--weights", help=WEIGHTS_HELP),
    egalitarian: str = typer.Option("pareto", "--egalitarian", help=EGALITARIAN_HELP),
) -> None:
    """The allocation one framework would choose alone (exact MILP / entitlement rule)."""
    from fairarena.fsutil import atomic_write_json, check_out_file
    from fairarena.provenance import run_record
    from fairarena.triage.cohort import load_cohort
    from fairarena.triage.metrics import allocation_to_mapping, compute_metrics, optimal_allocation

    from fairarena.cli_common import warn_egalitarian
    from fairarena.errors import InputError

    check_framework(framework)
    if gini_tolerance and egalitarian != "strict":
        raise InputError("--gini-tolerance", gini_tolerance, "0 unless --egalitarian strict")
    if framework == "egalitarian":
        warn_egalitarian(egalitarian)
    if out is not None:
        check_out_file(out)
    c = load_cohort(cohort)
    problem = _problem(c, cnss, weights)
    x = optimal_allocation(problem, framework, leximin=leximin, gini_tolerance=gini_tolerance,
                           egalitarian=egalitarian)
    alloc = allocation_to_mapping(problem, x)
    m = _metrics_json(compute_metrics(problem, x))
    if out is not None:
        atomic_write_json(out, {"allocation": alloc, "meta": {
            "framework": framework, "cohort": str(cohort), "cnss": cnss, "weights": weights,
            "egalitarian": egalitarian,
            "provenance": run_record({"command": "triage optimal", "framework": framework}, None)}})
    if as_json:
        emit_json({"framework": framework, "cnss": cnss, "weights": weights, "egalitarian": egalitarian,
                   "allocation": alloc, "metrics": m})
        return
    from rich.table import Table

    table = Table(title=f"{framework} allocation")
    table.add_column("patient")
    for r in problem.resources:
        table.add_column(r, justify="right")
    table.add_column("CNSS", justify="right")
    for i, pid in enumerate(problem.ids):
        table.add_row(pid, *(f"{x[i, r]:g}" if problem.needed[i, r] or x[i, r] else "-"
                             for r in range(problem.n_resources)), f"{m['cnss'][i]:.3f}")
    console.print(table)
    _metrics_table(m, c.ids, "metrics")


@triage_app.command("nondegenerate")
@cli_errors
def nondegenerate_cmd(
    cohort: Path = typer.Option(..., "--cohort", help="Cohort JSON file."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    tolerance: float = typer.Option(1e-4, "--tolerance", min=0.0, help="Loss tolerance per framework."),
    cnss: str = typer.Option(DEFAULT_CNSS, "--cnss", help=CNSS_HELP),
    weights: str = typer.Option(DEFAULT_DISADVANTAGE, "--weights", help=WEIGHTS_HELP),
) -> None:
    """Do the six frameworks' optima disagree? Exact MILP check, loss matrix, conflicting pairs."""
    from rich.table import Table

    from fairarena.triage.cohort import load_cohort
    from fairarena.triage.metrics import check_nondegenerate

    report = check_nondegenerate(_problem(load_cohort(cohort), cnss, weights), tol=tolerance)
    if as_json:
        emit_json(report.to_dict())
        return
    console.print(f"non-degenerate: [bold]{'yes' if report.nondegenerate else 'no'}[/] (tolerance {tolerance:g})")
    table = Table(title="loss of framework (row) at the optimum of framework (column)")
    table.add_column("")
    for g in report.frameworks:
        table.add_column(g[:6], justify="right")
    for f in report.frameworks:
        table.add_row(f, *(f"{report.loss[f][g]:.3f}" for g in report.frameworks))
    console.print(table)
    for a, b, v in report.conflicts:
        console.print(f"conflict: {a} vs {b} (loss {v:.3f})")


def register(app: typer.Typer) -> None:
    """Add the ``triage`` command group to the top-level app."""
    app.add_typer(triage_app, name="triage")
