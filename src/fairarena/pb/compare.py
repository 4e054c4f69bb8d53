"""Every rule on one election, side by side: ``fairarena pb compare``.

Rows: the PB rules (greedy, Equal Shares with the add1 completion, sequential Phragmén, max-utilitarian), the
feasible-set rules over the stakeholder groups (utilitarian, Nash, leximin, group max-min), a debate of the group
agents (:mod:`fairarena.pb.agents`; scripted by default: each proposes its own optimum, the joint draft is the
leximin-best final, 3 rounds; ``model``: language-model groups) and the city's actual outcome. Each row: the funded
projects, the domain's metrics (approvals satisfied, budget used, Gini of the group utilities, the worst-off
group, each group's utility and budget share), its distance from the city's outcome (projects in one set and not
the other; the budget on them, as a share of the budget), and on approval elections (``axioms=True``, the default;
``--no-axioms`` leaves them out) EJR and PJR up to one project with cost satisfaction, exact (:mod:`fairarena.pb.axioms`:
no voter enumeration; at most 16 projects) and priceability (an LP over the distinct ballots, any size). These are
pabutools' ``is_EJR_approval``/``is_PJR_approval`` (``up_to_func=max``) and ``priceable`` (``exhaustive=False``),
computed our way: pabutools enumerates every group of voters (over 5 minutes on Warsaw-Falenica 2019's 652 voters)
and solves priceability over every voter (15-40 s a set on Warsaw-Wesola 2023); tests/pb/test_pb_axioms.py
compares them. A lottery row (the aggregation rules) is not checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["compare", "table", "plot", "plot_points"]


def _axioms(e: Any, mask: np.ndarray) -> dict[str, Any]:
    """EJR and PJR up to one project with cost satisfaction (:func:`fairarena.pb.axioms.check_election`, exact,
    approval elections of at most :data:`fairarena.pb.axioms.MAX_PROJECTS` projects; a violation's minimal
    witness under ``witness``) and priceability (:func:`fairarena.pb.axioms.is_priceable_election`, any
    approval election)."""
    from fairarena.pb.axioms import MAX_PROJECTS, check_election, is_priceable_election

    if e.vote_type != "approval":
        return {"EJR": None, "PJR": None, "priceable": None, "axioms_note": "not checked (not approval ballots)"}
    out: dict[str, Any] = {"priceable": is_priceable_election(e, mask)}
    if e.n_projects > MAX_PROJECTS:
        out.update(EJR=None, PJR=None, axioms_note=f"EJR/PJR not checked (more than {MAX_PROJECTS} projects)")
        return out
    res = check_election(e, mask, "cost", up_to_one=True)
    out.update(EJR=bool(res["EJR"]), PJR=bool(res["PJR"]), axioms_note="EJR/PJR up to one project, Cost_Sat")
    wit = {k: v for k, v in res["witness"].items() if v}
    if wit:
        out["witness"] = wit
    return out


def _debate(d: Any, inst: Any, seed: int, model: str = "scripted", rounds: int = 3,
            **build: Any) -> tuple[np.ndarray, dict[str, Any]]:
    """The groups' debate (:mod:`fairarena.pb.agents`): the joint draft's projects (none when the debate ends
    without a valid joint draft) and what happened (status, error, model, rounds, model usage)."""
    from fairarena.allocation.problem import allocation_from_mapping
    from fairarena.arena.protocol import DebateConfig
    from fairarena.arena.result import run_debate
    from fairarena.errors import InputError
    from fairarena.pb.agents import group_agents

    res = run_debate(inst, group_agents(d, inst, model, **build),
                     config=DebateConfig(rounds=rounds, closing="joint-draft", seed=seed), domain=d)
    info = {"model": model, "status": res.status, "error": res.error, "rounds": len(res.rounds),
            "usage": res.usage}
    joint = (res.final or {}).get("joint") or {}
    empty = np.zeros(len(inst.costs), dtype=bool)
    if res.status != "ok" or not joint.get("allocation"):
        info["note"] = (f"no valid joint draft (debate {res.status}{': ' + str(res.error) if res.error else ''}): "
                        "nothing funded")
        return empty, info
    try:
        x = allocation_from_mapping(d.problem(inst), joint["allocation"], "joint")
    except InputError as exc:
        info["note"] = f"the joint draft is not an allocation ({exc}): nothing funded"
        return empty, info
    if d.violations(inst, x):
        info["note"] = f"the joint draft is not feasible ({'; '.join(d.violations(inst, x))}): nothing funded"
        return empty, info
    return inst.mask(x), info


def _aggregation_rows(d: Any, inst: Any, seed: int) -> list[dict[str, Any]]:
    """fairarena's candidate-set aggregation rules over the groups' proposals (each group proposes its own
    optimum feasible set; utilities normalised per group over the proposals): one row per rule, its decision a
    lottery over the proposals (a single proposal with probability 1 when the rule is deterministic and
    untied); the row's metrics are the lottery's expected metrics, its ``projects`` the likeliest proposal's."""
    from fairarena.aggregation.rules import aggregate
    from fairarena.aggregation.council import candidate_profile, profile_rules

    profile = candidate_profile(d, inst)
    sets = {c: inst.mask(x) for c, x in zip(profile.candidates, profile.X)}
    ids = {c: [p for p, s in zip(inst.project_ids, m) if s] for c, m in sets.items()}
    rows = []
    for rule in profile_rules(profile):
        dec = aggregate(profile, rule, seed=seed)
        lot = dec.lottery if dec.lottery is not None else {dec.winner or dec.draw: 1.0}
        lot = {c: float(p) for c, p in lot.items() if p > 1e-12}
        ms = {c: d.evaluate_set(inst, sets[c]) for c in lot}
        metrics = {k: float(sum(p * ms[c][k] for c, p in lot.items())) for k in next(iter(ms.values()))}
        top = max(lot, key=lambda c: (lot[c], -profile.candidates.index(c)))
        how = ("lottery: " + ", ".join(f"{c} {p:.2f}" for c, p in sorted(lot.items(), key=lambda t: -t[1]))
               if len(lot) > 1 else f"the proposal of {top}")
        rows.append({"rule": f"agg:{rule}", "kind": "aggregation over the groups' proposals", "how": how,
                     "projects": ids[top], "cost": float(inst.costs[sets[top]].sum()), "metrics": metrics,
                     "lottery": lot, "sets": {c: ids[c] for c in lot}})
    return rows


def compare(path: str | Path, groups: str = "auto", utility: str = "approval", seed: int = 0,
            debate: bool = True, axioms: bool = True, min_group: int | None = None,
            aggregation: bool = True, model: str = "scripted", rounds: int = 3, **build: Any) -> dict[str, Any]:
    """Every row on the election at ``path`` (module doc), as JSON data. ``model``: the groups' debate agents
    (:mod:`fairarena.pb.agents`: ``scripted`` or a model spec; ``build``: the model's ``cache``, ``offline``,
    ``max_calls``); the debate row holds what happened under ``debate``."""
    from fairarena.pb import rules as pbr
    from fairarena.pb.domain import PBDomain, instance_of
    from fairarena.pb.election import read_election
    from fairarena.pb.fair import FEASIBLE_SET_RULES, feasible_set_rule
    from fairarena.pb.groups import MIN_GROUP_SIZE, make_groups

    e = read_election(path)
    g = make_groups(e, groups, utility, seed, min_size=MIN_GROUP_SIZE if min_group is None else min_group)
    inst = instance_of(e, g)
    d = PBDomain(inst)
    decided: list[tuple[str, str, np.ndarray, str]] = []
    for r in pbr.PB_RULES:
        how = {"greedy": "votes, most first, if it fits", "equal-shares": "Cost_Sat, add1 completion",
               "phragmen": "pabutools", "max-utilitarian": "Cost_Sat knapsack (MILP)"}[r]
        decided.append((r, "PB rule", pbr.pb_rule(e, r), how))
    for r in FEASIBLE_SET_RULES:
        mask, how = feasible_set_rule(r, g.coef, e.costs, e.budget)
        decided.append((r, "over groups", mask, how))
    debate_info: dict[str, Any] | None = None
    if debate:
        dmask, debate_info = _debate(d, inst, seed, model, rounds, **build)
        scripted = model == "scripted"
        how = (f"optimum agents, leximin joint draft, {rounds} rounds" if scripted
               else f"{model}, joint draft, {rounds} rounds")
        decided.append(("debate", "scripted group agents" if scripted else "language-model group agents", dmask,
                        how + (f"; {debate_info['note']}" if "note" in debate_info else "")))
    agg = _aggregation_rows(d, inst, seed) if aggregation else []
    actual = e.index(e.selected) if e.selected is not None else None
    if actual is not None:
        decided.append(("actual", f"the city ({e.rule or 'rule not stated'})", actual, "the file's selected column"))
    rows = []
    for name, kind, mask, how in decided:
        row: dict[str, Any] = {"rule": name, "kind": kind, "how": how, "projects": list(e.ids(mask)),
                               "cost": e.cost(mask), "metrics": d.evaluate_set(inst, mask)}
        if actual is not None:
            diff = mask ^ actual
            row["distance"] = {"projects": int(diff.sum()), "budget": float(e.costs[diff].sum() / e.budget)}
        row.update(_axioms(e, mask) if axioms else {"EJR": None, "PJR": None, "priceable": None,
                                                    "axioms_note": "not checked (--no-axioms)"})
        if name == "debate":
            row["debate"] = debate_info
        rows.append(row)
        if name == FEASIBLE_SET_RULES[-1]:
            for arow in agg:                       # the aggregation rows after the feasible-set rules
                if actual is not None:
                    arow["distance"] = {
                        "projects": float(sum(p * (e.index(arow["sets"][c]) ^ actual).sum() for c, p in arow["lottery"].items())),
                        "budget": float(sum(p * e.costs[e.index(arow["sets"][c]) ^ actual].sum() for c, p in arow["lottery"].items())
                                        / e.budget)}
                arow.update({"EJR": None, "PJR": None, "priceable": None,
                             "axioms_note": "not checked (a lottery over the proposals)"})
                rows.append(arow)
    return {"file": str(path), "title": e.title, "vote_type": e.vote_type, "budget": e.budget,
            "projects": e.n_projects, "voters": e.n_voters, "rule": e.rule, "groups": {
                "scheme": g.scheme, "utility": g.utility, "names": list(g.names), "keys": list(inst.keys),
                "sizes": g.sizes.tolist(), "entitlement": inst.entitlement.tolist(),
                "left_out": [list(x) for x in g.left_out]}, "rows": rows}


def table(result: dict[str, Any]) -> str:
    """The comparison as plain text (one line per row; per group: utility / budget share)."""
    gr = result["groups"]
    head = (f"{result['title']} ({result['vote_type']}, {result['projects']} projects, {result['voters']} voters, "
            f"budget {result['budget']:,.0f}; city rule: {result['rule'] or '-'})\n"
            f"groups ({gr['scheme']}, {gr['utility']} utility; voters, entitlement): "
            + ", ".join(f"{n} {int(s)} ({x:.0%})" for n, s, x in zip(gr["names"], gr["sizes"], gr["entitlement"])))
    if gr.get("left_out"):
        head += "\nleft out of the groups (fewer voters than --min-group; their votes still count): " + ", ".join(
            f"{n} {int(k)}" for n, k in gr["left_out"])
    cols = (["rule", "approvals", "budget", "gini", "worst"] + [f"{k} u/share" for k in gr["keys"]]
            + ["vs city", "EJR1", "PJR1", "priced"])
    lines = []
    yes = lambda v: "-" if v is None else ("yes" if v else "NO")  # noqa: E731
    for r in result["rows"]:
        m = r["metrics"]
        cells = [r["rule"], f"{m['approvals']:.3f}", f"{m['budget_used']:.3f}", f"{m['gini']:.3f}", f"{m['worst']:.3f}"]
        cells += [f"{m['u:' + k]:.2f}/{m['share:' + k]:.2f}" for k in gr["keys"]]
        dist = r.get("distance")
        cells.append("-" if dist is None else f"{float(dist['projects']):.3g} ({dist['budget']:.0%})")
        cells += [yes(r.get("EJR")), yes(r.get("PJR")), yes(r.get("priceable"))]
        lines.append(cells)
    widths = [max(len(c), *(len(row[i]) for row in lines)) for i, c in enumerate(cols)]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))  # noqa: E731
    legend = ["u/share: the group's utility / the share of the budget spent on projects it approves (against its "
              "entitlement, the share of the voters, above); vs city: projects in one set and not the other (their "
              "cost, as a share of the budget)",
              "EJR1/PJR1: EJR/PJR up to one project with cost satisfaction (exact); priced: priceable"]
    notes = sorted({r["axioms_note"] for r in result["rows"]
                    if (r.get("EJR") is None or r.get("priceable") is None) and r.get("axioms_note")})
    if notes:
        legend.append("-: " + "; ".join(notes))
    return "\n".join([head, fmt(cols), "-" * (sum(widths) + 2 * (len(widths) - 1))] + [fmt(c) for c in lines]
                     + legend)


def _kind(r: dict[str, Any]) -> str:
    if r["rule"] == "actual":
        return "the city"
    if r["rule"] == "debate":
        return "debate"
    if r["rule"].startswith("agg:"):
        return "aggregation (lottery)"
    return {"PB rule": "PB rule", "over groups": "feasible-set rule"}.get(r["kind"], r["kind"])


def plot_points(result: dict[str, Any]) -> list[tuple[float, float, list[dict[str, Any]]]]:
    """The plot's points: ``(approvals, worst, rows)``; a row within 1.5% of the spread of each axis from a point
    drawn before joins it (in row order); a point's rows listed the city first, then the debate, the PB rules,
    the feasible-set rules and the aggregation rows."""
    xs = [r["metrics"]["approvals"] for r in result["rows"]]
    ys = [r["metrics"]["worst"] for r in result["rows"]]
    gx, gy = (max(max(v) - min(v), 1e-3) * 0.015 for v in (xs, ys))
    points: dict[tuple[float, float], list[dict[str, Any]]] = {}
    for r, x, y in zip(result["rows"], xs, ys):
        near = next((p for p in points if abs(p[0] - x) <= gx and abs(p[1] - y) <= gy), (x, y))
        points.setdefault(near, []).append(r)
    first = {"the city": 0, "debate": 1, "PB rule": 2, "feasible-set rule": 3}
    return [(x, y, sorted(rows, key=lambda r: first.get(_kind(r), 4))) for (x, y), rows in points.items()]


def plot(result: dict[str, Any], path: str | Path) -> Path:
    """Every row as a point: approvals satisfied (x) against the worst-off group's utility (y), coloured by kind
    (legend). Rows within 1.5% of the spread of each axis share one point and one label listing them
    (:func:`plot_points`; the first three, then how many more), so that coinciding rules stay readable; the
    table has the exact values."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"PB rule": "tab:blue", "feasible-set rule": "tab:green", "aggregation (lottery)": "tab:orange",
               "debate": "tab:purple", "the city": "tab:red"}
    fig, ax = plt.subplots(figsize=(8, 5.5))
    seen: set[str] = set()
    for x, y, rows in plot_points(result):
        for i, r in enumerate(rows):             # one marker per row at the point, the first drawn largest
            k = _kind(r)
            ax.scatter(x, y, color=colours.get(k, "tab:gray"), s=60 if i == 0 else 24, zorder=3 - 0.01 * i,
                       label=None if k in seen else k)
            seen.add(k)
        names = [r["rule"] for r in rows]
        text = ", ".join(names[:3]) + (f" +{len(names) - 3} more" if len(names) > 3 else "")
        ax.annotate("\n".join(textwrap.wrap(text, 40)), (x, y), fontsize=7, xytext=(4, 4), textcoords="offset points")
    ax.set_xlabel("approvals satisfied (share of all support)")
    ax.set_ylabel("worst-off group's utility")
    ax.set_title(f"{result['title']} ({result['groups']['scheme']} groups)", fontsize=9)
    ax.legend(fontsize=7, loc="best")
    ax.margins(x=0.15, y=0.1)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
