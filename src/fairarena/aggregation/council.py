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

__all__ = ["CouncilResult", "council", "council_profile", "sample_instance"]


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
