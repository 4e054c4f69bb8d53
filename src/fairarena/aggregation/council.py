"""The council: six agents, one aligned to each ethical framework, on one triage cohort; the same cohort
aggregated by every rule; every framework's metric and every stakeholder's evaluation side by side per
rule (Arrow's trade-off as one table and one plot).

Each agent proposes its framework's exact optimum (``FRAMEWORKS[f].solve``) and judges allocations by
its framework's metric, normalised over the feasible set (:mod:`.objectives`). A joint decision reached
some other way (e.g. a debate of the six agents) is passed in as ``joint={"debate": allocation}`` and
becomes one more row, scored by the same functions.

    from fairarena.aggregation.council import council
    res = council(seed=0)                       # every rule
    res.table()                                 # rows: rules; columns: metrics and utilities
    res.plot("council.png")
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from fairarena.errors import InputError

__all__ = ["CouncilResult", "council", "council_profile", "sample_instance", "candidate_profile",
           "candidate_rules", "domain_profile", "finals_profile", "speaks_for", "profile_rules", "domain_council",
           "print_domain_council"]


def sample_instance(domain: Any, seed: int, variant: str | None = None) -> tuple[Any, Any]:
    """``(domain object, instance)``: the instance of ``seed`` that ``domain`` samples (a registered name,
    ``MODULE:OBJECT`` or a domain object; None: the package's default domain,
    :data:`fairarena.domains.registry.DEFAULT_DOMAIN`). ``variant`` is passed on to ``sample`` only by a
    domain with ``variants`` (triage's capacity variants), checked against them first (InputError naming
    ``capacity``)."""
    from fairarena.domains.registry import DEFAULT_DOMAIN, resolve

    dom = resolve(DEFAULT_DOMAIN if domain is None else domain)
    variants = getattr(dom, "variants", None)
    if variants:
        if variant not in tuple(variants):
            raise InputError("capacity", variant, f"one of {', '.join(variants)}")
        return dom, dom.sample(seed, variant)
    return dom, dom.sample(seed)


def council_profile(problem: Any, frameworks: Sequence[str] | None = None, *, egalitarian: str = "pareto") -> Any:
    """The council's profile on ``problem``: one agent per framework (named after it; default every
    registered framework), proposing the framework's exact optimum (the egalitarian one in form
    ``egalitarian``, :data:`~fairarena.allocation.frameworks.EGALITARIAN_FORMS`)."""
    from fairarena.aggregation.rules import Profile, Voter
    from fairarena.allocation.frameworks import FRAMEWORKS, check_egalitarian_form

    check_egalitarian_form(egalitarian)
    agents = [Voter(f, f, FRAMEWORKS.get(f).solve(problem, egalitarian=egalitarian))
              for f in (FRAMEWORKS if frameworks is None else frameworks)]
    return Profile.from_proposals(problem, agents)


@dataclass
class CouncilResult:
    """Per row (a rule, or a joint decision passed in): the allocation, every framework's metric, every
    stakeholder's utility and the evaluation summary."""

    seed: int
    capacity: str
    agents: list[str]
    metric_names: dict[str, str]                  # framework -> metric key
    rows: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "capacity": self.capacity, "agents": self.agents,
                "metrics": self.metric_names,
                "rows": [{k: v for k, v in r.items() if k != "allocation"} for r in self.rows]}

    def table(self) -> list[dict[str, Any]]:
        """One flat row per rule: ``rule``, ``kind``, each framework's metric (``metric:<framework>``),
        each stakeholder's utility (``u:<agent>``), worst-off, Gini of utilities, decision share."""
        out = []
        for r in self.rows:
            row: dict[str, Any] = {"rule": r["rule"], "kind": r["kind"]}
            for f, mk in self.metric_names.items():
                row[f"metric:{f}"] = r["metrics"][mk]
            for a, u in r["utilities"].items():
                row[f"u:{a}"] = u
            ev = r["evaluation"]
            row.update(worst_off=ev["worst_off"]["name"], min_utility=ev["worst_off"]["utility"],
                       gini_utilities=ev["gini_utilities"], decision_share=ev["decision_share"],
                       seconds=r["seconds"])
            out.append(row)
        return out

    def plot(self, path: str | Path) -> Path:
        """A heat map of every stakeholder's normalised utility per rule (rows) with the minimum
        utility beside it (:func:`fairarena.report.utility_heatmap`); written to ``path`` (PNG/SVG/PDF by
        suffix)."""
        from fairarena.report import utility_heatmap

        fig = utility_heatmap([[r["utilities"][a] for a in self.agents] for r in self.rows],
                              [r["rule"] for r in self.rows], self.agents,
                              title=f"council, cohort seed {self.seed} ({self.capacity}): each stakeholder's "
                                    "utility per rule")
        path = Path(path)
        fig.savefig(path, dpi=120, bbox_inches="tight")
        return path


def council(seed: int = 0, capacity: str = "standard", *, rules: Sequence[str] | None = None,
            joint: Mapping[str, np.ndarray] | None = None, rule_seed: int = 0,
            problem: Any = None, frameworks: Sequence[str] | None = None,
            egalitarian: str = "pareto", domain: Any = None) -> CouncilResult:
    """Aggregate the council's six proposals on cohort ``seed`` (``capacity`` variant) by every rule in
    ``rules`` (default: every registered rule) and score each decision (module doc).

    The cohort is the instance ``domain`` samples (:func:`sample_instance`; default the package's default
    domain, triage) and its problem ``domain.problem(instance)``: this module names no domain.

    ``joint`` maps a label to an allocation decided otherwise (e.g. ``{"debate": x}``); each becomes
    one more row of kind ``joint``. ``problem`` overrides the sampled cohort. A lottery is scored on the
    expected metric (each metric's expectation over its support, ``metric_basis`` says so) and expected
    utilities; its ``allocation`` is still the expected allocation. ``frameworks``: the council's members
    (default every registered framework; each metric column is still reported). ``egalitarian``: the
    egalitarian agent's form (``pareto``, no levelling down, or ``strict``)."""
    from fairarena.aggregation.rules import RULES, aggregate
    from fairarena.allocation.frameworks import FRAMEWORKS
    from fairarena.allocation.metrics import compute_metrics
    from fairarena.allocation.problem import check_feasibility
    from fairarena.aggregation.stakeholders import evaluate

    if problem is None:
        dom, instance = sample_instance(domain, seed, capacity)
        problem = dom.problem(instance)
    names = list(RULES) if rules is None else list(rules)
    for nm in names:
        RULES.check(nm)
    profile = council_profile(problem, frameworks, egalitarian=egalitarian)
    res = CouncilResult(seed, capacity, profile.names, {f: FRAMEWORKS.get(f).metric for f in FRAMEWORKS})

    def scalars(x: np.ndarray) -> dict[str, float]:
        return {k: float(v) for k, v in compute_metrics(problem, x).items() if isinstance(v, (int, float, np.floating))}

    def row(label: str, kind: str, x: np.ndarray, ev: dict[str, Any], note: str, dt: float,
            lottery: dict[str, float] | None = None) -> None:
        if lottery is None:
            metrics, basis = scalars(x), "the decision's allocation"
        else:  # the expected metric: each metric's expectation over the lottery's support
            per = [(pr, scalars(profile.X[profile.candidates.index(c)])) for c, pr in lottery.items()]
            metrics = {k: float(sum(pr * m[k] for pr, m in per)) for k in per[0][1]}  # NaN if undefined anywhere
            basis = "expected metric over the lottery (not the metric of its expected allocation)"
        res.rows.append({"rule": label, "kind": kind, "note": note, "seconds": dt, "lottery": lottery,
                         "allocation": x, "metric_basis": basis, "metrics": metrics,
                         "utilities": {s["name"]: s["utility"] for s in ev["stakeholders"]},
                         "evaluation": ev})

    for nm in names:
        t = time.perf_counter()
        d = aggregate(profile, nm, seed=rule_seed)
        dt = time.perf_counter() - t
        if d.lottery is not None:
            p = np.array([d.lottery.get(c, 0.0) for c in profile.candidates])
            ev = evaluate(profile, lottery=p)
        else:
            ev = evaluate(profile, allocation=d.allocation)
        row(nm, RULES.entry(nm).kind, np.asarray(d.allocation, dtype=float), ev, d.note, dt, d.lottery)
    for label, x in (joint or {}).items():
        x = np.asarray(x, dtype=float)
        if x.shape != (problem.n, problem.n_resources) or check_feasibility(problem, x):
            raise InputError(f"joint.{label}", x.shape, "a feasible allocation for the council's cohort")
        row(str(label), "joint", x, evaluate(profile, allocation=x), "a joint decision passed in", 0.0)
    return res


# -- the council of any domain, through the protocol ---------------------------------------------------

def candidate_profile(domain: Any, instance: Any, participants: Sequence[Any] | None = None,
                      optima: Sequence[np.ndarray] | None = None) -> Any:
    """The participants' council over their optima, for any domain: one voter per participant
    (``domain.participants``, or ``participants``), one candidate per participant's optimum (named after it;
    ``optima`` in participant order, default ``domain.optimum``), utilities = each participant's
    ``domain.value`` normalised over the candidates (1 at its best, 0 at its worst; an indifferent one all
    1: :func:`fairarena.aggregation.candidates.per_agent_range`), ``X`` = the optima. Only the
    candidate-set rules apply (:func:`candidate_rules`)."""
    from fairarena.aggregation.candidates import per_agent_range
    from fairarena.aggregation.rules import Profile, Voter

    ps = list(domain.participants(instance) if participants is None else participants)
    xs = [np.asarray(x, dtype=float) for x in (optima if optima is not None else
                                               [domain.optimum(instance, p) for p in ps])]
    V = np.array([[domain.value(instance, p, x) for x in xs] for p in ps], dtype=float)
    prof = Profile.from_utilities([Voter(p.name, group=p.group) for p in ps], [p.name for p in ps],
                                  per_agent_range(V))
    prof.X = np.stack(xs)
    return prof


def speaks_for(profile: Any, names: Any) -> str | None:
    """The participant (one of ``names``) a debater's arena profile speaks for: a participant profile's
    ``participant`` (``aligned:<participant>`` on a domain other than the default one, or the kit's optimum
    agents), or the framework of ``aligned:<name>``; None for any other profile (``baseline``, ...)."""
    if profile is None:
        return None
    who = getattr(profile, "framework", None) if getattr(profile, "kind", None) == "aligned" \
        else getattr(profile, "participant", None)
    return who if who in names else None


def finals_profile(domain: Any, instance: Any, debaters: Mapping[str, Any], finals: Mapping[str, np.ndarray],
                   word: str = "participant") -> tuple[Any, list[str]]:
    """The aggregation closings' profile of a debate on any domain, from the domain's own ``value``: the
    debaters that speak for one of ``domain.participants`` (:func:`speaks_for`; ``debaters`` maps a debater
    to its arena profile, in speaking order) vote with that participant's value over the valid ``finals``
    (normalised per voter over them, 1 at its best final, 0 at its worst:
    :func:`fairarena.aggregation.candidates.per_agent_range`); every valid final is a candidate (named after
    its debater), ``X`` the finals. ``(None, notes)`` with fewer than two voters. Only the candidate-set rules
    apply. The arena's default for a domain without ``closing_profile`` whose debaters speak for its
    participants; the file domain's ``closing_profile`` (``word="stakeholder"`` in the notes)."""
    from fairarena.aggregation.candidates import per_agent_range
    from fairarena.aggregation.rules import Profile, Voter

    ps = {p.name: p for p in domain.participants(instance)}
    voters = [(n, who) for n, prof in debaters.items() if n in finals and (who := speaks_for(prof, ps))]
    notes = []
    if others := [n for n in debaters if n in finals and n not in dict(voters)]:
        notes.append(f"{', '.join(others)} (no {word}) do not vote; their final(s) stay candidates")
    if len(voters) < 2 or not finals:
        return None, notes + [f"{len(voters)} participant(s) aligned to a {word} with a valid final; a rule needs two"]
    cands = [n for n in debaters if n in finals]
    xs = [np.asarray(finals[c], dtype=float) for c in cands]
    V = np.array([[domain.value(instance, ps[who], x) for x in xs] for _, who in voters], dtype=float)
    prof = Profile.from_utilities([Voter(n, who, group=ps[who].group) for n, who in voters], cands, per_agent_range(V))
    prof.X = np.stack(xs)
    return prof, notes


def candidate_rules(names: Sequence[str] | None = None, field: str = "--rule") -> list[str]:
    """The candidate-set aggregation rules (default every one); a feasible-set or repair rule asked for by
    name: InputError naming ``field`` (those need allocation objectives over the whole feasible set)."""
    from fairarena.aggregation.rules import RULES

    ok = [n for n in RULES if RULES.entry(n).kind == "candidates"]
    if names is None:
        return ok
    for n in names:
        RULES.check(n)
        if n not in ok:
            raise InputError(field, n, f"a candidate-set rule ({', '.join(ok)}): {n} is a {RULES.entry(n).kind} "
                                       "rule, which needs allocation objectives over the feasible set")
    return list(names)


def domain_profile(domain: Any, instance: Any, participants: Sequence[Any] | None = None) -> Any:
    """The council profile of ``domain``'s participants: ``domain.council_profile(instance, participants)``
    when the domain has one (an optional protocol member), else :func:`candidate_profile`."""
    own = getattr(domain, "council_profile", None)
    if callable(own):
        return own(instance, participants)
    return candidate_profile(domain, instance, participants)


def profile_rules(profile: Any) -> list[str]:
    """The registered aggregation rules ``profile`` accepts: every rule with an allocation problem, the
    candidate-set rules without one."""
    from fairarena.aggregation.rules import RULES

    return [n for n in RULES if profile.problem is not None or RULES.entry(n).kind == "candidates"]


def domain_council(domain: Any, instance: Any, rules: Sequence[str] | None = None, seed: int = 0,
                   participants: Sequence[Any] | None = None) -> dict[str, Any]:
    """Every candidate-set rule (default; or ``rules``) on the council of ``domain``'s participants over
    their optima (:func:`candidate_profile`, or the domain's own ``council_profile`` hook when it has one),
    each decision scored by the domain's metrics (``domain.evaluate``). A rule that returns a lottery is
    reported as a lottery over whole allocations (its support, each candidate's weight, the seeded draw;
    metrics and utilities are expectations over it), never as its expected allocation; the decision carried
    out is the winner or the draw. Returns the JSON document (``domain``, ``agents``, ``candidates``,
    ``metrics`` with label and direction, ``optima``, ``rows``)."""
    from fairarena.aggregation.rules import RULES, aggregate
    from fairarena.allocation.problem import allocation_to_mapping
    from fairarena.domains.protocol import metric_specs, violations_of

    names = candidate_rules(rules)
    prof = domain_profile(domain, instance, participants)
    if prof.X is None:
        raise InputError("domain", getattr(domain, "name", domain), "a council profile with the candidates' allocations")
    specs = metric_specs(domain)
    problem = domain.problem(instance)
    cand_metrics = {c: {k: float(v) for k, v in domain.evaluate(instance, prof.X[k]).items() if k in specs}
                    for k, c in enumerate(prof.candidates)}
    rows = []
    for rule in names:
        d = aggregate(prof, rule, seed=seed)
        chosen = d.winner or d.draw
        assert chosen is not None
        x = prof.X[prof.candidates.index(chosen)]
        bad = violations_of(domain, instance, x, problem)
        row: dict[str, Any] = {
            "rule": rule, "family": RULES.entry(rule).family, "note": d.note,
            "decision": "lottery" if d.lottery is not None else "winner", "winner": d.winner, "lottery": None,
            "draw": d.draw, "chosen": chosen, "allocation": allocation_to_mapping(problem, x), "valid": not bad,
            "violations": bad, "utilities": {a.name: float(u) for a, u in zip(prof.agents, d.utilities)}}
        if d.lottery is not None:
            row["lottery"] = [{"candidate": c, "probability": float(p),
                               "allocation": allocation_to_mapping(problem, prof.X[prof.candidates.index(c)])}
                              for c, p in d.lottery.items()]
            row["metrics"] = {k: float(sum(p * cand_metrics[c][k] for c, p in d.lottery.items()))
                              for k in cand_metrics[chosen]}
            row["metric_basis"] = "expected metric over the lottery's support (each support allocation is whole)"
        else:
            row["metrics"] = dict(cand_metrics[chosen])
            row["metric_basis"] = "the chosen allocation"
        rows.append(row)
    return {"domain": getattr(domain, "name", str(domain)), "seed": seed,
            "agents": [a.name for a in prof.agents], "candidates": list(prof.candidates),
            "metrics": {k: {"label": m.label, "direction": m.direction} for k, m in specs.items()},
            "optima": {c: {"allocation": allocation_to_mapping(problem, prof.X[k]), "metrics": cand_metrics[c]}
                       for k, c in enumerate(prof.candidates)},
            "utilities": {a.name: {c: float(prof.U[i, k]) for k, c in enumerate(prof.candidates)}
                          for i, a in enumerate(prof.agents)},
            "rows": rows}


def print_domain_council(doc: dict[str, Any]) -> None:
    """The :func:`domain_council` document as two tables: each rule's choice and metrics, then each
    participant's utility."""
    from rich.table import Table

    from fairarena.cli_common import console

    keys = list(doc["metrics"])
    t = Table(title=f"council on a {doc['domain']} instance (seed {doc['seed']}): each rule's decision over the "
                    "participants' optima")
    t.add_column("rule")
    t.add_column("chosen")
    for k in keys:
        t.add_column(k, justify="right")
    for r in doc["rows"]:
        t.add_row(r["rule"], r["winner"] or f"lottery* ({r['draw']})",
                  *(f"{r['metrics'][k]:.3f}" if k in r["metrics"] else "-" for k in keys))
    u = Table(title="each participant's utility (1: its best optimum, 0: its worst)")
    u.add_column("rule")
    for a in doc["agents"]:
        u.add_column(a, justify="right")
    for r in doc["rows"]:
        u.add_row(r["rule"], *(f"{r['utilities'][a]:.2f}" for a in doc["agents"]))
    console.print(t)
    console.print("metrics: " + "; ".join(f"{k} ({m['direction']})" for k, m in doc["metrics"].items()),
                  highlight=False, markup=False)
    console.print("* a lottery over whole allocations; the seeded draw is carried out (metrics and utilities: "
                  "expectations over the lottery)", highlight=False, markup=False)
    console.print(u)
