"""The pb council study's own rows: the PB rules and the city's actual outcome beside fairarena's rules.

The registered ``pb`` domain (:data:`fairarena.pb.domain.PB`, a pool of elections) answers the study package's
optional protocol members (:mod:`fairarena.domains.protocol`, "Studies") with these functions:

* ``study_rules(design)``: the rows a pb council study compares the debate with by default -- every
  candidate-set rule over the clusters' proposals (as before), then :data:`PB_ROWS`: the PB rules
  (``pb:greedy``, ``pb:equal-shares`` with its add1 completion, ``pb:phragmen``, ``pb:max-utilitarian``), the
  feasible-set rules over the clusters (``set:utilitarian``, ``set:nash``, ``set:leximin``, ``set:maxmin``) and
  ``city``, the city's actual outcome (the file's ``selected`` column);
* ``study_check(design)``: a pb council's design (scripted models, two members at least, known closings and
  rows);
* ``study_rule_rows(task, rules)``: the rows of ``rules`` on a task's election, in that order;
* ``study_council(task, rules, models, transcript)``: the participants' debate as the generic council runs it
  (:mod:`fairarena.study.council`), then the rows.

A PB row decides one project set on the task's election (the same functions and the same groups as ``fairarena
pb compare FILE --groups clusters:3``, so its metrics equal that command's), scored by the pool domain's
metrics (``vs_city``: the distance to the city's outcome, NaN when the file records none) and the members'
utilities normalised as the debate's are (0 and 1 at a member's worst and best candidate of the council
profile). The ``city`` row exists only where the file records ``selected``: elsewhere the row has no metrics,
``absent`` true and a note saying so; the analysis leaves it out of the means and of the paired statistics
(it is neither infeasible nor a value).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fairarena.errors import InputError

__all__ = ["PB_ROWS", "CITY", "study_rules", "study_check", "study_rule_rows", "study_council"]

#: the city's actual outcome row
CITY = "city"
#: the pb study's own rows (module doc), in order
PB_ROWS = ("pb:greedy", "pb:equal-shares", "pb:phragmen", "pb:max-utilitarian",
           "set:utilitarian", "set:nash", "set:leximin", "set:maxmin", CITY)

_HOW = {"greedy": "votes, most first, if it fits", "equal-shares": "Cost_Sat, add1 completion",
        "phragmen": "sequential Phragmen", "max-utilitarian": "Cost_Sat knapsack (MILP)"}


def study_rules(design: Any) -> list[str]:
    """Every candidate-set rule, then the PB rows (module doc)."""
    from fairarena.study.design import candidate_rule_names

    return [*candidate_rule_names(), *PB_ROWS]


def study_check(design: Any) -> None:
    """A pb council design: scripted models (the domain's scripted agents play the clusters), at least two
    members, every closing a closing rule, every mechanism a candidate-set rule or a PB row."""
    from fairarena.study.design import candidate_rule_names, closing_names

    if not design.model_a.startswith("scripted"):
        raise InputError("study.model_a", design.model_a, "scripted in a council on domain 'pb' (the domain's "
                         "scripted agents play its participants)")
    if len(design.members) < 2:
        raise InputError("study.stakeholders", design.stakeholders, "at least two members in a council")
    closings = closing_names()
    for j, c in enumerate(design.closing):
        if c not in closings:
            raise InputError(f"study.closing[{j}]", c, f"a closing rule ({', '.join(closings)})")
    ok = [*candidate_rule_names(), *PB_ROWS]
    for j, r in enumerate(design.mechanisms):
        if r not in ok:
            raise InputError(f"study.mechanisms[{j}]", r, f"a candidate-set rule or a PB row with domain 'pb' "
                                                          f"({', '.join(ok)})")


def _normalised(dom: Any, inst: Any, members: list[Any], prof: Any, x: np.ndarray) -> dict[str, float]:
    """Each member's value of ``x`` on the council profile's range (as the debate row's)."""
    out = {}
    for p in members:
        vs = [dom.value(inst, p, c) for c in prof.X]
        lo, hi = min(vs), max(vs)
        out[p.name] = 1.0 if hi - lo <= 1e-12 else float((dom.value(inst, p, x) - lo) / (hi - lo))
    return out


def pb_rows(task: dict[str, Any], rules: list[str]) -> dict[str, dict[str, Any]]:
    """``{row: row}`` of the PB rows among ``rules`` on the task's election (module doc)."""
    from fairarena.aggregation.stakeholders import utility_summary
    from fairarena.domains.protocol import violations_of
    from fairarena.pb import rules as pbr
    from fairarena.pb.fair import feasible_set_rule
    from fairarena.study.council import _participant_setup

    own = [r for r in rules if r in PB_ROWS]
    if not own:
        return {}
    dom, inst, members, prof = _participant_setup(task)
    e = dom.pool_election(int(task["cohort_seed"]))
    if e.title != inst.title:                   # the task's election and the pool's file must be the same one
        raise InputError("task.cohort_seed", task["cohort_seed"], f"the election {inst.title!r} in the pb pool")
    out = {}
    for r in own:
        family, rest = r.partition(":")[0], r.partition(":")[2]
        if r == CITY:
            if e.selected is None:
                out[r] = {"rule": r, "kind": "rule", "family": "outcome", "metrics": None, "utilities": None,
                          "worst_off": None, "min_utility": None, "gini_utilities": None, "feasible": False,
                          "absent": True, "note": "no outcome recorded: the file has no 'selected' column"}
                continue
            mask = e.index(e.selected)
            note = f"the city's actual outcome ({e.rule or 'rule not stated'}; the file's selected column)"
            family = "outcome"
        elif family == "pb":
            mask = pbr.pb_rule(e, rest)
            note = f"PB rule: {_HOW[rest]}"
        else:
            mask, how = feasible_set_rule(rest, inst.coef, inst.costs, inst.budget)
            note = f"feasible-set rule over the clusters ({how})"
            family = "feasible-set"
        x = inst.x(mask)
        util = _normalised(dom, inst, members, prof, x)
        bad = violations_of(dom, inst, x)
        if r == CITY and bad:                   # the real outcome counts as what happened, its overspend said
            note += "; " + "; ".join(bad)
        out[r] = {"rule": r, "kind": "rule", "family": family,
                  "metrics": {k: float(v) for k, v in dom.evaluate(inst, x).items()}, "utilities": util,
                  **utility_summary(util), "feasible": r == CITY or not bad, "note": note,
                  "projects": [str(p) for p in e.ids(mask)]}
    return out


def study_rule_rows(task: dict[str, Any], rules: list[str]) -> list[dict[str, Any]]:
    """The rows of ``rules`` on a council task's election (``task``: the task's dict), in that order: the
    candidate-set rules over the clusters' proposals (the generic council's), the PB rows (module doc)."""
    from fairarena.study.council import participant_rule_rows

    generic = [r for r in rules if r not in PB_ROWS]
    have = {row["rule"]: row for row in participant_rule_rows(task, generic)} if generic else {}
    have.update(pb_rows(task, list(rules)))
    return [have[r] for r in rules]


def study_council(task: Any, rules: list[str], models: dict[str, Any], transcript: str | Path, **_: Any
                  ) -> dict[str, Any]:
    """One council task: the clusters' debate as the generic council runs it (its scripted agents), then the
    rows of ``rules`` (:func:`study_rule_rows`) before the debate's row."""
    from fairarena.study.council import _execute_participant_council

    rec = _execute_participant_council(task, [], transcript)
    rec["rows"] = study_rule_rows(task.to_dict(), list(rules)) + list(rec["rows"])
    return rec
