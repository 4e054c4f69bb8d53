"""The audit at scale: every rule and the axioms over many real elections (``fairarena pb audit``).

For each election (a ``.pb`` file): the PB rules (:data:`fairarena.pb.rules.PB_RULES`), the feasible-set rules
over the stakeholder groups (:data:`fairarena.pb.fair.FEASIBLE_SET_RULES`) and the city's actual outcome when
the file records it. Each decision gets the group metrics of the domain (approvals satisfied, the worst-off
group's utility, the Gini of the group utilities) and, on approval elections with at most
:data:`fairarena.pb.axioms.MAX_PROJECTS` projects, our exact EJR and PJR checks, up to one project, with cost
and with cardinality satisfaction, and priceability (:mod:`fairarena.pb.axioms`; one LP per distinct funded set
of an election). Cumulative and ordinal elections are run but not checked (the axioms are defined here for
approval ballots).

The report (:func:`summarise`): which rule violates which axiom on how many elections, with the minimal real
witness over all of them (the fewest projects in ``T``, then the smallest group, then the file name; for
priceability, which has no such certificate, the smallest election: fewest projects, then voters, then name);
and two
trade-offs, over every feasible project set of each election (elections of at most
:data:`fairarena.pb.fair.ENUMERATE_MAX` projects):

* **real** — approvals satisfied (the utilitarian approval count) against the worst-off group's utility: the
  election has a trade-off when no feasible set maximises both; its size is the approval share given up by the
  best set for the worst-off group (the max-min set with the most approvals), and the worst-off group's utility
  gained over the best approval set (the approval optimum kept fairest);
* **manufactured by the utility model** — the same ballots read two ways: approvals satisfied (each approval
  counts 1) against cost satisfaction (each approval counts the project's cost, ``Cost_Sat``): nobody's
  interests differ between the two, only the satisfaction function, yet their optima differ; its size is the
  approval share the cost optimum gives up and the cost satisfaction the approval optimum gives up.

Work is spread over ``jobs`` processes (one election per task, in file order; the report does not depend on
``jobs``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fairarena.errors import InputError

__all__ = ["audit", "audit_election", "summarise", "report_text", "collect_files", "AXIOM_KEYS"]

#: the axioms of the audit: (key, axiom, satisfaction), each up to one project
AXIOM_KEYS = (("EJR1-cost", "EJR", "cost"), ("PJR1-cost", "PJR", "cost"),
              ("EJR1-card", "EJR", "cardinality"), ("PJR1-card", "PJR", "cardinality"))
_TOL = 1e-9


def collect_files(paths: list[str], field: str = "DIR_OR_FILES") -> list[Path]:
    """The ``.pb`` files named (a folder: every ``*.pb`` in it, sorted); refused before any work if none."""
    if not paths:
        raise InputError(field, "", "a folder of .pb files or .pb files")
    out: list[Path] = []
    for s in paths:
        p = Path(s)
        if p.is_dir():
            found = sorted(p.glob("*.pb"))
            if not found:
                raise InputError(field, s, "a folder holding .pb files (none found)")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise InputError(field, s, "an existing .pb file or folder")
    return out


def _tradeoffs(e: Any, coef: np.ndarray) -> dict[str, Any] | None:
    from fairarena.pb.fair import ENUMERATE_MAX, feasible_sets

    if e.n_projects > ENUMERATE_MAX:
        return None
    sets = feasible_sets(e.costs, e.budget).astype(float)
    support = e.scores.sum(axis=0)
    appr = sets @ support / max(support.sum(), 1e-300)
    cmass = support * e.costs
    costsat = sets @ cmass / max(cmass.sum(), 1e-300)
    worst = (sets @ coef.T).min(axis=1)

    def best(first: np.ndarray, second: np.ndarray) -> int:
        top = first.max()
        alive = np.nonzero(first >= top - _TOL)[0]
        return int(alive[np.argmax(second[alive])])

    a_opt, w_opt = best(appr, worst), best(worst, appr)
    c_opt, ac_opt = best(costsat, appr), best(appr, costsat)
    # the Pareto frontier of (approvals, worst-off): sets no other set beats on both
    order = np.lexsort((-worst, -appr))
    frontier, top_w = 0, -np.inf
    for i in order:
        if worst[i] > top_w + _TOL:
            frontier += 1
            top_w = worst[i]
    return {"real": {"tradeoff": bool(appr[w_opt] < appr[a_opt] - _TOL),
                     "approvals_given_up": float(appr[a_opt] - appr[w_opt]),
                     "worst_gained": float(worst[w_opt] - worst[a_opt]), "frontier_points": frontier},
            "manufactured": {"tradeoff": bool(appr[c_opt] < appr[ac_opt] - _TOL),
                             "approvals_given_up": float(appr[ac_opt] - appr[c_opt]),
                             "cost_sat_given_up": float(costsat[c_opt] - costsat[ac_opt])}}


def audit_election(path: str | Path, groups: str = "auto", utility: str = "approval", seed: int = 0,
                   min_group: int | None = None) -> dict[str, Any]:
    """Every rule on one election, its metrics, the axioms and the trade-offs (module doc)."""
    from fairarena.pb import rules as pbr
    from fairarena.pb.axioms import MAX_PROJECTS, check_election, is_priceable_election
    from fairarena.pb.domain import PBDomain, instance_of
    from fairarena.pb.election import read_election
    from fairarena.pb.fair import FEASIBLE_SET_RULES, feasible_set_rule
    from fairarena.pb.groups import MIN_GROUP_SIZE, make_groups

    e = read_election(path)
    g = make_groups(e, groups, utility, seed, min_size=MIN_GROUP_SIZE if min_group is None else min_group)
    inst = instance_of(e, g)
    d = PBDomain(inst)
    decided: list[tuple[str, np.ndarray]] = [(r, pbr.pb_rule(e, r)) for r in pbr.PB_RULES]
    decided += [(r, feasible_set_rule(r, g.coef, e.costs, e.budget)[0]) for r in FEASIBLE_SET_RULES]
    if e.selected is not None:
        decided.append(("actual", e.index(e.selected)))
    checked = e.vote_type == "approval" and e.n_projects <= MAX_PROJECTS
    priced: dict[bytes, bool] = {}                     # one LP per distinct funded set
    rows: dict[str, Any] = {}
    for name, mask in decided:
        m = d.evaluate_set(inst, mask)
        row: dict[str, Any] = {"projects": list(e.ids(mask)), "approvals": m["approvals"], "worst": m["worst"],
                               "gini": m["gini"], "budget_used": m["budget_used"]}
        if checked:
            for sat in ("cost", "cardinality"):
                out = check_election(e, mask, sat, up_to_one=True)
                for key, ax, s in AXIOM_KEYS:
                    if s == sat:
                        row[key] = out[ax]
                        if not out[ax]:
                            row[key + ":witness"] = out["witness"][ax]
            k = np.asarray(mask, dtype=bool).tobytes()
            if k not in priced:
                priced[k] = is_priceable_election(e, mask)
            row["priceable"] = priced[k]
        rows[name] = row
    return {"file": Path(path).name, "vote_type": e.vote_type, "projects": e.n_projects, "voters": e.n_voters,
            "groups": {"scheme": g.scheme, "names": list(g.names), "sizes": g.sizes.tolist(),
                       "left_out": [list(x) for x in g.left_out]},
            "axioms_checked": checked, "rows": rows, "tradeoffs": _tradeoffs(e, g.coef)}


def _one(args: tuple) -> dict[str, Any]:
    return audit_election(*args)


def audit(paths: list[str | Path], groups: str = "auto", utility: str = "approval", seed: int = 0,
          min_group: int | None = None, jobs: int = 1, progress: Any = None) -> dict[str, Any]:
    """:func:`audit_election` on every file, then :func:`summarise`. ``progress``: called with no argument as each
    election is done (in file order: the results do not depend on ``jobs``)."""
    tasks = [(str(p), groups, utility, seed, min_group) for p in paths]
    tick = progress if callable(progress) else (lambda: None)
    per = []
    if jobs > 1 and len(tasks) > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(jobs) as pool:
            for el in pool.imap(_one, tasks, chunksize=4):
                per.append(el)
                tick()
    else:
        for t in tasks:
            per.append(_one(t))
            tick()
    return {"elections": per, "summary": summarise(per)}


def _witness_key(file: str, w: dict[str, Any]) -> tuple:
    return (len(w["T"]), w["size"], file)


def summarise(per: list[dict[str, Any]]) -> dict[str, Any]:
    """Violations per rule and axiom with the minimal witness, rule averages, and the trade-offs (module doc)."""
    rules = list(dict.fromkeys(r for el in per for r in el["rows"]))
    checked = [el for el in per if el["axioms_checked"]]
    axioms: dict[str, Any] = {}
    for r in rules:
        axioms[r] = {}
        for key, _, _ in AXIOM_KEYS:
            have = [el for el in checked if r in el["rows"]]
            bad = [el for el in have if not el["rows"][r][key]]
            wit = None
            if bad:
                el = min(bad, key=lambda el: _witness_key(el["file"], el["rows"][r][key + ":witness"]))
                w = el["rows"][r][key + ":witness"]
                wit = {"file": el["file"], "T": w["T"], "cost": w["cost"], "size": w["size"],
                       "voters": w["voters"], **({"X": w["X"]} if "X" in w else {})}
            axioms[r][key] = {"violations": len(bad), "checked": len(have), "witness": wit}
        have = [el for el in checked if r in el["rows"] and "priceable" in el["rows"][r]]
        bad = [el for el in have if not el["rows"][r]["priceable"]]
        wit = None
        if bad:
            el = min(bad, key=lambda el: (el["projects"], el["voters"], el["file"]))
            wit = {"file": el["file"], "projects": el["projects"], "voters": el["voters"],
                   "funded": el["rows"][r]["projects"]}
        axioms[r]["priceable"] = {"violations": len(bad), "checked": len(have), "witness": wit}
    means: dict[str, Any] = {}
    for r in rules:
        have = [el["rows"][r] for el in per if r in el["rows"]]
        means[r] = {"elections": len(have), **{k: float(np.mean([h[k] for h in have])) for k in ("approvals", "worst", "gini")}}
        act = [el for el in per if r in el["rows"] and "actual" in el["rows"]]
        if act and r != "actual":
            means[r]["same_as_actual"] = sum(set(el["rows"][r]["projects"]) == set(el["rows"]["actual"]["projects"])
                                             for el in act)
            means[r]["with_actual"] = len(act)
    trade: dict[str, Any] = {}
    tr = [el for el in per if el["tradeoffs"] is not None]
    for kind, size_keys in (("real", ("approvals_given_up", "worst_gained")),
                            ("manufactured", ("approvals_given_up", "cost_sat_given_up"))):
        with_t = [el for el in tr if el["tradeoffs"][kind]["tradeoff"]]
        entry: dict[str, Any] = {"elections": len(tr), "with_tradeoff": len(with_t)}
        for k in size_keys:
            vals = [el["tradeoffs"][kind][k] for el in with_t]
            entry[k] = {"median": float(np.median(vals)) if vals else 0.0, "max": float(max(vals)) if vals else 0.0}
            if vals:
                top = max(with_t, key=lambda el: (el["tradeoffs"][kind][k], el["file"]))
                entry[k]["max_file"] = top["file"]
        trade[kind] = entry
    both = sum(el["tradeoffs"]["real"]["tradeoff"] and el["tradeoffs"]["manufactured"]["tradeoff"] for el in tr)
    trade["both"] = both
    types: dict[str, int] = {}
    for el in per:
        types[el["vote_type"]] = types.get(el["vote_type"], 0) + 1
    return {"elections": len(per), "vote_types": types, "axioms_checked": len(checked), "axioms": axioms,
            "rules": means, "tradeoffs": trade}


def report_text(result: dict[str, Any]) -> str:
    """The summary as plain text."""
    s = result["summary"]
    lines = [f"{s['elections']} elections ({', '.join(f'{k} {v}' for k, v in sorted(s['vote_types'].items()))}); "
             f"EJR/PJR up to one project and priceability checked on the {s['axioms_checked']} approval elections "
             f"(exact)."]
    keys = [k for k, _, _ in AXIOM_KEYS] + ["priceable"]
    lines.append("")
    heads = [k if k != "priceable" else "not priced" for k in keys]
    lines.append("violations (elections)  " + "  ".join(f"{k:>10}" for k in heads)
                 + "  approvals  worst-off   gini  = city")
    for r, ax in s["axioms"].items():
        m = s["rules"][r]
        same = f"{m['same_as_actual']}/{m['with_actual']}" if "same_as_actual" in m else "-"
        lines.append(f"{r:<22}  " + "  ".join(f"{ax[k]['violations']:>4}/{ax[k]['checked']:<5}" for k in keys)
                     + f"  {m['approvals']:9.3f}  {m['worst']:9.3f}  {m['gini']:5.3f}  {same:>6}")
    lines.append("")
    lines.append("minimal witnesses (file: T, the group):")
    for r, ax in s["axioms"].items():
        for k in keys:
            w = ax[k]["witness"]
            if w and k == "priceable":
                lines.append(f"  {r} not priceable: {w['file']} ({w['projects']} projects, {w['voters']} voters; "
                             f"funded {{{', '.join(w['funded'])}}})")
            elif w:
                vs = ", ".join(w["voters"][:8]) + (", ..." if len(w["voters"]) > 8 else "")
                extra = f"; funded approvals of the group: {{{', '.join(w['X'])}}}" if "X" in w else ""
                lines.append(f"  {r} {k}: {w['file']}: T = {{{', '.join(w['T'])}}} (cost {w['cost']:,.0f}), "
                             f"{w['size']} voters ({vs}){extra}")
    t = s["tradeoffs"]
    re_, ma = t["real"], t["manufactured"]
    lines.append("")
    lines.append(f"real trade-off (approvals vs the worst-off group): {re_['with_tradeoff']} of {re_['elections']} "
                 f"elections; approvals given up median {re_['approvals_given_up']['median']:.3f} "
                 f"(max {re_['approvals_given_up']['max']:.3f}), worst-off gained median "
                 f"{re_['worst_gained']['median']:.3f} (max {re_['worst_gained']['max']:.3f})")
    lines.append(f"manufactured trade-off (approvals vs cost satisfaction, same ballots): {ma['with_tradeoff']} of "
                 f"{ma['elections']} elections; approvals given up by the cost optimum median "
                 f"{ma['approvals_given_up']['median']:.3f} (max {ma['approvals_given_up']['max']:.3f}), cost "
                 f"satisfaction given up by the approval optimum median {ma['cost_sat_given_up']['median']:.3f} "
                 f"(max {ma['cost_sat_given_up']['max']:.3f}); both trade-offs: {t['both']}")
    return "\n".join(lines)
