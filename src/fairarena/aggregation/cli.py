"""``fairarena aggregate ...`` (rules, run, audit) and ``fairarena evaluate``. Each command parses,
calls one library function and renders."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from fairarena.cli_common import (EGALITARIAN_HELP, check_seed, cli_errors, console, emit_json, err_console,
                                  warn_egalitarian)

aggregate_app = typer.Typer(name="aggregate", help="Social-choice aggregation of agents' proposals: rules, run, "
                            "axiom audit.", no_args_is_help=True)


def _problem(path: Optional[Path]) -> Any:
    """The allocation problem of the instance file ``path`` of the default domain (a triage cohort file),
    read through the domain registry and protocol (``load_instance``, ``problem``); None without a path."""
    return _instance(path, None)[2]


def _instance(path: Optional[Path], domain: Optional[str]) -> tuple[Any, Any, Any]:
    """``(domain object or None, instance, problem)`` of the instance file ``path`` of ``domain`` (a
    registered name or MODULE:OBJECT; None: the default domain, and None is returned for it so the
    commands keep the allocation core's metrics); ``(domain, None, None)`` without a path."""
    from fairarena.domains.registry import DEFAULT_DOMAIN, resolve

    dom = resolve(DEFAULT_DOMAIN if domain is None else domain, "--domain")
    other = None if dom is resolve(DEFAULT_DOMAIN) else dom
    if path is None:
        return other, None, None
    from fairarena.domains.protocol import load_instance

    instance = load_instance(dom, path)
    return other, instance, dom.problem(instance)


def allocation_scores(problem: Any, x: Any, domain: Any = None, instance: Any = None) -> dict[str, Any]:
    """The metrics ``aggregate run`` reports for an allocation: without ``domain`` the allocation core's
    (:func:`fairarena.allocation.metrics.compute_metrics`, the default domain's); with one, its own
    ``score(instance, x, problem)`` when it has that hook, else ``domain.evaluate`` of a valid allocation
    with ``feasible`` and ``violations`` (:func:`fairarena.domains.protocol.violations_of`; an invalid
    allocation gets only those two: a domain's metrics are defined on valid allocations)."""
    import numpy as np

    x = np.asarray(x, dtype=float)
    if domain is None:
        from fairarena.allocation.metrics import compute_metrics

        return compute_metrics(problem, x)
    own = getattr(domain, "score", None)
    if callable(own):
        return dict(own(instance, x, problem))
    from fairarena.domains.protocol import violations_of

    bad = violations_of(domain, instance, x, problem)
    out: dict[str, Any] = {} if bad else {k: float(v) for k, v in domain.evaluate(instance, x).items()}
    out.update(feasible=not bad, violations=bad)
    return out


@aggregate_app.command("rules")
@cli_errors
def rules_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the registered aggregation rules."""
    from fairarena.aggregation.rules import RULES

    rows = [{"name": e.name, "kind": e.kind, "family": e.family, "title": e.title, "description": e.description,
             "citation": e.citation} for e in RULES.entries()]
    if as_json:
        emit_json({"rules": rows})
        return
    from rich.table import Table

    table = Table(title="aggregation rules")
    for col in ("name", "kind", "description", "citation"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["name"], r["kind"], r["description"], r["citation"])
    console.print(table)


def run_result(problem: Any, data: Any, rule: str, seed: int, normalise: str, disagreement: str, *,
               domain: Any = None, instance: Any = None) -> dict[str, Any]:
    """The ``aggregate run --json`` document (library call behind the command); ``domain`` and ``instance``
    (another domain than the default) score the decision with that domain's metrics (:func:`allocation_scores`)."""
    import numpy as np

    from fairarena.aggregation.io import parse_proposals
    from fairarena.aggregation.rules import RULES, aggregate
    from fairarena.allocation.problem import allocation_to_mapping

    def compute_metrics(problem: Any, x: Any) -> dict[str, Any]:
        return allocation_scores(problem, x, domain, instance)
    from fairarena.aggregation.stakeholders import evaluate

    RULES.check(rule)
    profile = parse_proposals(data, problem, normalise=normalise)
    d = aggregate(profile, rule, seed=seed, disagreement=disagreement)
    p = None
    if d.lottery is not None:
        p = np.array([d.lottery.get(c, 0.0) for c in profile.candidates])
    elif d.winner is not None:
        p = np.array([1.0 if c == d.winner else 0.0 for c in profile.candidates])
    ev = evaluate(profile, lottery=p) if p is not None else evaluate(profile, allocation=d.allocation)
    decision: dict[str, Any] = {"winner": d.winner, "note": d.note, "kind": d.kind,
                                "utilities": {a.name: float(v) for a, v in zip(profile.agents, d.utilities)}}
    metrics = None
    if problem is not None and d.allocation is not None:
        decision["allocation"] = allocation_to_mapping(problem, d.allocation)
        x = d.drawn_allocation(profile)
        metrics = compute_metrics(problem, d.allocation)
        if d.lottery is not None and x is not None:
            decision["drawn_allocation"] = allocation_to_mapping(problem, x)
            assert profile.X is not None
            per = [(pr, compute_metrics(problem, profile.X[profile.candidates.index(c)])) for c, pr in d.lottery.items()]
            expected = {k: float(sum(pr * m[k] for pr, m in per)) for k, v in metrics.items()
                        if isinstance(v, (int, float)) and not isinstance(v, bool)}
            # "expected": each metric's expectation over the lottery (how a lottery is scored);
            # "of_expected_allocation": the metric of the averaged allocation (not a decision anyone gets)
            metrics = {"expected": expected, "of_expected_allocation": metrics, "drawn": compute_metrics(problem, x)}
    lottery = None if d.lottery is None else {"probabilities": d.lottery, "draw": d.draw, "seed": seed}
    return {"rule": rule, "decision": decision, "lottery": lottery, "evaluation": ev, "metrics": metrics}


@aggregate_app.command("run")
@cli_errors
def run_cmd(
    problem: Optional[Path] = typer.Option(None, "--problem", help="Cohort JSON file (omit for a utility profile)."),
    proposals: Path = typer.Option(..., "--proposals", help='Proposals JSON {"agents": [{"name", "objective", '
                                   '"allocation"}, ...]} or a utility profile.'),
    rule: str = typer.Option(..., "--rule", help="Aggregation rule (fairarena aggregate rules)."),
    seed: int = typer.Option(0, "--seed", help="Seed of a lottery's draw."),
    normalise: str = typer.Option("range", "--normalise", help="Utilities: range (0 worst .. 1 best "
                                  "achievable, default) or raw metric values."),
    disagreement: str = typer.Option("zero", "--disagreement", help="Nash/KS disagreement point: zero or proposals."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    domain: Optional[str] = typer.Option(None, "--domain", help="The domain of the --problem file (a registered "
                                         "domain or MODULE:OBJECT; default the cohort files): its metrics score "
                                         "the decision."),
) -> None:
    """Aggregate the agents' proposals with one rule; prints the decision, its evaluation and metrics."""
    from fairarena.aggregation.io import read_proposals
    from fairarena.aggregation.rules import RULES

    check_seed(seed)
    RULES.check(rule)
    data = read_proposals(proposals)
    dom, instance, prob = _instance(problem, domain)
    out = run_result(prob, data, rule, seed, normalise, disagreement, domain=dom, instance=instance)
    if as_json:
        emit_json(out)
        return
    d = out["decision"]
    console.print(f"[bold]{rule}[/]: {d['note']}")
    for name, u in d["utilities"].items():
        console.print(f"  {name}: utility {u:.4f}")
    ev = out["evaluation"]
    console.print(f"decision share {ev['decision_share']:.4f}; worst off {ev['worst_off']['name']} "
                  f"({ev['worst_off']['utility']:.4f}); Gini of utilities {ev['gini_utilities']:.4f}; "
                  f"proportional: {'yes' if ev['proportionality'] else 'no'}")


AUDIT_LIMITS: dict[str, tuple[int, str]] = {
    "--profiles": (100_000, "(random profiles per rule and axiom: about 0.3 ms each, 290 MB at the limit)"),
    "--instances": (10_000, "(tiny problems: about 0.1 s each)"),
    "--search": (10_000, "(search steps: about 0.2 s each over every rule and axiom)"),
    "--cohorts": (1_000, "(triage cohorts: about 6 s each, one MILP per rule)"),
}
"""The largest size of each ``aggregate audit`` option and why (measured on 2 cores; the defaults are
500 profiles, 10 instances, 30 steps, 0 cohorts: each limit is at least 200 times the documented use)."""


@aggregate_app.command("audit")
@cli_errors
def audit_cmd(
    rule: str = typer.Option("all", "--rule", help="A rule name or all."),
    profiles: int = typer.Option(500, "--profiles", help="Random profiles per rule and axiom."),
    instances: int = typer.Option(10, "--instances", help="Tiny random allocation problems for the feasible-set "
                                  "and repair rules (Pareto by brute force, anonymity); 0 to skip."),
    search: int = typer.Option(30, "--search", help="Steps of the seeded adversarial (local) search per rule "
                               "and axiom, on top of the random profiles; 0 to skip."),
    cohorts: int = typer.Option(0, "--cohorts", help="Also check Pareto efficiency of the feasible-set, repair "
                                "and deterministic rules on this many sampled standard triage cohorts (six "
                                "agents, one MILP per rule and cohort; witnesses as cohort + proposals files)."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
    witness: Optional[Path] = typer.Option(None, "--witness", help="Write one witness profile per violation here."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    progress_every: float = typer.Option(10.0, "--progress-every", help="Seconds between progress lines on stderr "
                                         "when it is not a terminal (0: every rule); none with --json."),
) -> None:
    """Check every rule against the social-choice axioms, with minimal witnesses."""
    from fairarena.aggregation.audit import (
        AXIOMS,
        FEASIBLE_AXIOMS,
        audit,
        audit_feasible,
        audit_feasible_rules,
        audit_rules,
        audit_search,
        write_witnesses,
    )
    from fairarena.errors import InputError

    from fairarena.inputs import check_int

    check_seed(seed)
    # sizes bounded before any work (AUDIT_LIMITS, docs/reliability.md)
    for opt, value, low in (("--profiles", profiles, 1), ("--instances", instances, 0), ("--search", search, 0),
                            ("--cohorts", cohorts, 0)):
        high, unit = AUDIT_LIMITS[opt]
        check_int(value, opt, low=low, high=high, unit=unit)
    names = audit_rules(rule)
    fnames = audit_feasible_rules(rule) if instances > 0 else []
    if witness is not None:
        if witness.exists() and not witness.is_dir():
            raise InputError("--witness", str(witness), "a folder (it is a file)")
    from fairarena.progress import Progress, check_every, per_rule

    every = check_every(progress_every)
    steps = len(names) * (1 + (search > 0)) + bool(fnames) + (cohorts > 0)
    with Progress("aggregate audit", total=steps, unit="steps", every=every, enabled=not as_json) as progress:
        res = per_rule(audit, names, progress, profiles=profiles, seed=seed)
        if fnames:
            res["feasible"] = audit_feasible(fnames, instances=instances, seed=seed)
            progress.advance()
        if names and search > 0:
            res["search"] = per_rule(audit_search, names, progress, steps=search, seed=seed)
        if cohorts > 0:
            from fairarena.aggregation.audit import cohort_pareto_witnesses

            crules = list(dict.fromkeys([*audit_feasible_rules("all"), *names])) if rule == "all" else [rule]
            cres = cohort_pareto_witnesses(crules, cohorts=cohorts, seed=seed)
            progress.advance()
    if witness is not None:
        write_witnesses(res, witness)
        if "search" in res:
            write_witnesses(res["search"], witness)
        if cohorts > 0:
            from fairarena.aggregation.audit import write_cohort_witnesses

            write_cohort_witnesses(cres, witness)
    if cohorts > 0:
        res["cohorts"] = {k: v for k, v in cres.items() if k != "witnesses"}
        res["cohorts"]["witnesses"] = [{"rule": w["rule"], "cohort_seed": w["cohort_seed"],
                                        "utilities": w["utilities"],
                                        "dominating_utilities": w["dominating_utilities"]} for w in cres["witnesses"]]
    if as_json:
        emit_json(res)
        return
    from rich.table import Table

    table = Table(title=f"axiom audit ({profiles} profiles per cell, seed {seed})")
    table.add_column("rule")
    for ax in AXIOMS:
        table.add_column(ax, justify="right")
    for r in names:
        cells = []
        for ax in AXIOMS:
            c = res["table"][r][ax]
            cells.append("n/a" if c is None else ("holds" if c["violations"] == 0 else f"{c['share']:.1%}"))
        table.add_row(r, *cells)
    if names:
        console.print(table)
        console.print("cells: share of profiles with a violation ('holds' = none found)")
    if "cohorts" in res:
        ct = Table(title=f"Pareto efficiency on {cohorts} standard triage cohorts (council of six agents)")
        ct.add_column("rule")
        ct.add_column("dominated", justify="right")
        for r, c in res["cohorts"]["table"].items():
            if c["checked"]:
                ct.add_row(r, f"{c['violations']}/{c['checked']}")
        console.print(ct)
    if "search" in res:
        st = Table(title=f"adversarial search ({search} steps from 8 starts per profile size, seed {seed})")
        st.add_column("rule")
        for ax in res["search"]["axioms"]:
            st.add_column(ax, justify="right")
        for r in names:
            cells = [res["search"]["table"][r][ax] for ax in res["search"]["axioms"]]
            st.add_row(r, *(f"found ({c['checked']})" if c["found"] else "-" for c in cells))
        console.print(st)
        console.print("found (n): a violation found after checking n profiles; witnesses RULE__AXIOM-search.json")
    if fnames:
        ft = Table(title=f"feasible-set and repair rules ({instances} tiny problems, three agents)")
        ft.add_column("rule")
        for ax in FEASIBLE_AXIOMS:
            ft.add_column(ax, justify="right")
        for r in fnames:
            cells = [res["feasible"]["table"][r][ax] for ax in FEASIBLE_AXIOMS]
            ft.add_row(r, *("holds" if c["violations"] == 0 else f"{c['share']:.0%}" for c in cells))
        console.print(ft)


@aggregate_app.command("council")
@cli_errors
def council_cmd(
    seed: int = typer.Option(0, "--seed", help="Cohort seed (and the lotteries' draw seed)."),
    capacity: str = typer.Option("standard", "--capacity", help="Capacity variant of the sampled cohort."),
    rule: list[str] = typer.Option([], "--rule", help="Only these rules (repeatable; default every rule)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for council.json, council.csv, council.png."),
    force: bool = typer.Option(False, "--force", help="Replace an earlier run's --out folder."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    egalitarian: str = typer.Option("pareto", "--egalitarian", help=EGALITARIAN_HELP),
    problem: Optional[Path] = typer.Option(None, "--problem", help="A problem file (TOML or JSON): its stakeholders "
                                           "over their optima, candidate-set rules (docs/domains.md)."),
    domain: Optional[str] = typer.Option(None, "--domain", help="Another registered domain (fairarena domain list) "
                                         "or MODULE:OBJECT: its participants over their optima on the instance it "
                                         "samples for --seed, candidate-set rules, scored by its metrics."),
) -> None:
    """Six agents, one per framework, on one cohort: every rule's decision, every framework's metric and
    every stakeholder's utility side by side. With --problem: the file's stakeholders instead; with
    --domain: that domain's participants."""
    if problem is not None:   # a problem file: its domain's council (fairarena.domains.registry.PROBLEM_FILE_FORMS)
        if domain is not None:
            from fairarena.errors import InputError

            raise InputError("--domain", domain, "no --domain with --problem (the file is its own domain)")
        from fairarena.domains.registry import problem_file_form

        return problem_file_form("council")(problem, rule, seed, out, force, as_json)
    if domain is not None:
        from fairarena.domains.registry import DEFAULT_DOMAIN, resolve

        dom = resolve(domain, "--domain")
        if dom is not resolve(DEFAULT_DOMAIN):
            return _domain_council_cmd(dom, seed, capacity, rule, out, force, as_json)
    from fairarena.aggregation.council import council
    from fairarena.aggregation.rules import RULES
    from fairarena.domains.registry import DEFAULT_DOMAIN, resolve
    from fairarena.errors import InputError

    check_seed(seed)
    variants = tuple(getattr(resolve(DEFAULT_DOMAIN), "variants", None) or ())
    if capacity not in variants:
        raise InputError("--capacity", capacity, f"one of {', '.join(variants)}")
    for r in rule:
        RULES.check(r)
    warn_egalitarian(egalitarian)
    if out is not None:
        from fairarena.fsutil import check_out_dir

        check_out_dir(out, "out")
    res = council(seed, capacity, rules=rule or None, rule_seed=seed, egalitarian=egalitarian)
    if out is not None:
        import csv
        import io

        from fairarena.fsutil import atomic_write_json, atomic_write_text, output_folder

        config = {"seed": seed, "capacity": capacity, "rules": rule, "egalitarian": egalitarian}
        with output_folder(out, "aggregate council", force=force, config=config) as folder:
            atomic_write_json(folder.path / "council.json", res.to_dict())
            rows = res.table()
            buf = io.StringIO()
            w = csv.DictWriter(buf, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
            atomic_write_text(folder.path / "council.csv", buf.getvalue())
            res.plot(folder.path / "council.png")
    if as_json:
        emit_json(res.to_dict())
        return
    print_council(res)


def _domain_council_cmd(dom: Any, seed: int, capacity: str, rule: list[str], out: Optional[Path], force: bool,
                        as_json: bool) -> None:
    """``aggregate council --domain NAME``: every check first (seed, rules, the capacity variant when the
    domain has variants, the out folder), then :func:`fairarena.aggregation.council.domain_council` on the
    instance the domain samples for ``seed``."""
    from fairarena.aggregation.council import candidate_rules, domain_council, print_domain_council, sample_instance
    from fairarena.errors import InputError

    check_seed(seed)
    names = candidate_rules(rule or None)
    variants = tuple(getattr(dom, "variants", None) or ())
    if variants and capacity not in variants:
        raise InputError("--capacity", capacity, f"one of {', '.join(variants)}")
    if out is not None:
        from fairarena.fsutil import check_out_dir

        check_out_dir(out, "out")
    _, instance = sample_instance(dom, seed, capacity if variants else None)
    doc = domain_council(dom, instance, names, seed)
    if out is not None:
        from fairarena.fsutil import atomic_write_json, output_folder

        config = {"domain": doc["domain"], "seed": seed, "rules": rule}
        with output_folder(out, "aggregate council", force=force, config=config) as folder:
            atomic_write_json(folder.path / "council.json", doc)
    if as_json:
        emit_json(doc)
        return
    print_domain_council(doc)


def print_council(res: Any) -> None:
    """The council tables: per rule, every framework's metric, then every stakeholder's utility."""
    from rich.table import Table

    rows = res.table()
    mt = Table(title=f"council, cohort seed {res.seed} ({res.capacity}): each framework's metric per rule")
    mt.add_column("rule")
    for f, mk in res.metric_names.items():
        mt.add_column(f"{mk} ({f[:4]})", justify="right")
    for r in rows:
        mt.add_row(r["rule"], *(f"{r[f'metric:{f}']:.3f}" for f in res.metric_names))
    ut = Table(title="each stakeholder's normalised utility (1 = its own ideal)")
    ut.add_column("rule")
    for a in res.agents:
        ut.add_column(a[:4], justify="right")
    ut.add_column("min", justify="right")
    ut.add_column("share", justify="right")
    ut.add_column("s", justify="right")
    for r in rows:
        ut.add_row(r["rule"], *(f"{r[f'u:{a}']:.2f}" for a in res.agents), f"{r['min_utility']:.2f}",
                   f"{r['decision_share']:.2f}", f"{r['seconds']:.2f}")
    console.print(mt)
    console.print(ut)
    console.print("share: the decision share (procedural fairness over the agents' favourites); s: seconds")


def evaluate_cmd(
    problem: Optional[Path] = typer.Option(None, "--problem", help="Cohort JSON file."),
    decision: Path = typer.Option(..., "--decision", help='Decision JSON: {"allocation": {...}} or the output of '
                                  "aggregate run --json."),
    agents: Path = typer.Option(..., "--agents", help="Agents JSON (the proposals file format)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    domain: Optional[str] = typer.Option(None, "--domain", help="The domain of the --problem file (a registered "
                                         "domain or MODULE:OBJECT; default the cohort files)."),
) -> None:
    """Stakeholder-centric evaluation of a collective decision for the agents that shaped it."""
    from fairarena.aggregation.io import parse_proposals, read_proposals
    from fairarena.allocation.problem import allocation_from_mapping
    from fairarena.errors import InputError
    from fairarena.aggregation.stakeholders import evaluate

    prob = _instance(problem, domain)[2]
    if prob is None:
        raise InputError("--problem", None, "a cohort file (the decision is an allocation)")
    profile = parse_proposals(read_proposals(agents, "agents"), prob)
    data = read_proposals(decision, "decision")
    if isinstance(data, dict) and isinstance(data.get("decision"), dict):
        data = data["decision"]
    if not isinstance(data, dict) or "allocation" not in data:
        raise InputError("decision", type(data).__name__, 'an object {"allocation": {PATIENT: {RESOURCE: amount}}}')
    x = allocation_from_mapping(prob, data["allocation"], "decision.allocation")
    ev = evaluate(profile, allocation=x)
    if as_json:
        emit_json(ev)
        return
    for s in ev["stakeholders"]:
        console.print(f"{s['name']} ({s['objective']}): utility {s['utility']:.4f}, regret {s['regret']:.4f}, "
                      f"proportional {'yes' if s['proportional'] else 'no'}")
    console.print(f"decision share {ev['decision_share']:.4f}; worst off {ev['worst_off']['name']}; "
                  f"Gini of utilities {ev['gini_utilities']:.4f}")
    rc = ev["recipients"]
    console.print(f"recipients: CNSS spread {rc['cnss_spread']:.4f}; envy-free {rc['envy_free']}; EF1 {rc['ef1']}")


evaluate_cmd = cli_errors(evaluate_cmd)


def register(app: typer.Typer) -> None:
    """Add the ``aggregate`` group and the ``evaluate`` command."""
    app.add_typer(aggregate_app, name="aggregate")
    app.command("evaluate")(evaluate_cmd)
