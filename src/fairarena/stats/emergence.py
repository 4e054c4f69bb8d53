"""The emergence analysis of a debate study: the triage-debate paper's three findings made measurable.

Pure functions on plain per-debate *traces* (built from the transcripts by
:func:`fairarena.study.analysis.load_traces`; hand-made ones in the tests). A trace is a
mapping::

    {"key": str, "cohort": int, "framework": str, "opponent": str,
     "patients": [{"id": "P1", "age": 60, "gender": ..., "race": ..., "ses": ..., "citizenship": ...}, ...],
     "turns": [{"agent": "A" | "B", "stage": "r1" | "r2" | ... | "final", "metrics": {metric: value, "cnss": [...]},
                "feasible": bool, "repairs": int, "violations": [str, ...]}, ...],
     "joint": {"metrics": {...}, "feasible": bool} | None}

``A`` is the framework-aligned agent, ``B`` its opponent; a turn is the last attempt of that agent at
that stage (``repairs`` counts the attempts before it). The measures (formulas in docs/study.md):

1. :func:`joint_beats_both` — per metric, the share of debates whose joint recommendation is strictly
   better (by the metric's direction, by more than :data:`TOL`) than both agents' round-1 proposals, and
   than both finals;
2. :func:`patching` — W = the patients the opponent's round-1 proposal serves worst (CNSS within
   :data:`TOL` of its minimum); per later proposal of A and for the joint, the mean CNSS gain over W,
   broken down by protected attribute; :func:`moderation` — the opponent's mean absolute CNSS change
   from its opening, per stage;
3. :func:`framework_bias` — per metric, the alignment under which A's final scores best, beside the
   framework the metric belongs to.

Plus :func:`feasibility` (per agent and stage: proposals, infeasible, repairs, violations by resource) and
:func:`trajectories` (mean metric per opponent, framework, agent and stage).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fairarena.stats.directions import direction_sign

TOL = 1e-9
ATTRIBUTES = ("age band", "gender", "race", "ses", "citizenship")
AGE_BANDS = ((0, 18, "<18"), (18, 40, "18-39"), (40, 65, "40-64"), (65, 10**6, "65+"))


def age_band(age: Any) -> str:
    try:
        a = float(age)
    except (TypeError, ValueError):
        return "unknown"
    for lo, hi, name in AGE_BANDS:
        if lo <= a < hi:
            return name
    return "unknown"


def attribute_of(patient: Mapping[str, Any], attribute: str) -> str:
    if attribute == "age band":
        return age_band(patient.get("age"))
    v = patient.get(attribute)
    return "unknown" if v is None else str(v)


def stage_order(stage: str) -> tuple[int, int]:
    """r1 < r2 < ... < final < joint."""
    if stage.startswith("r") and stage[1:].isdigit():
        return (0, int(stage[1:]))
    return (1, 0) if stage == "final" else (2, 0)


def _turn(trace: Mapping[str, Any], agent: str, stage: str) -> Mapping[str, Any] | None:
    for t in trace.get("turns", ()):
        if t["agent"] == agent and t["stage"] == stage:
            return t
    return None


def _better(x: float, y: float, sign: float) -> bool:
    return sign * (x - y) > TOL


def _val(turn: Mapping[str, Any] | None, metric: str) -> float:
    if turn is None or not turn.get("feasible", True):
        return math.nan
    v = (turn.get("metrics") or {}).get(metric)
    return math.nan if v is None else float(v)


def _mean(xs: Sequence[float]) -> float:
    return float(sum(xs) / len(xs)) if xs else math.nan


# ------------------------------------------------------------------------------------------------ 1

def joint_beats_both(traces: Iterable[Mapping[str, Any]], directions: Mapping[str, str]) -> list[dict[str, Any]]:
    """Per (opponent, framework, metric) and per metric over all debates (opponent = framework = "all"):
    ``n`` debates with a feasible joint and four feasible comparators, the share whose joint beats both
    round-1 proposals (``vs_round1``) and both finals (``vs_final``), and the counts."""
    acc: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])   # n1, k1, nf, kf
    for tr in traces:
        j = tr.get("joint")
        if not j or not j.get("feasible", True):
            continue
        # the four comparators looked up once per debate, not once per metric
        turns = {stage: (_turn(tr, "A", stage), _turn(tr, "B", stage)) for stage in ("r1", "final")}
        for m, d in directions.items():
            s = direction_sign(d)
            jv = _val(j, m)
            if math.isnan(jv):
                continue
            for stage, off in (("r1", 0), ("final", 2)):
                ta, tb = turns[stage]
                a, b = _val(ta, m), _val(tb, m)
                if math.isnan(a) or math.isnan(b):
                    continue
                win = _better(jv, a, s) and _better(jv, b, s)
                for key in ((tr["opponent"], tr["framework"], m), ("all", "all", m)):
                    acc[key][off] += 1
                    acc[key][off + 1] += int(win)
    out = []
    for (opp, fw, m), (n1, k1, nf, kf) in acc.items():
        out.append({"opponent": opp, "framework": fw, "metric": m, "n_round1": n1, "beats_round1": k1,
                    "vs_round1": k1 / n1 if n1 else math.nan, "n_final": nf, "beats_final": kf,
                    "vs_final": kf / nf if nf else math.nan})
    return out


# ------------------------------------------------------------------------------------------------ 2

def worst_served(cnss: Sequence[float]) -> list[int]:
    """Indices of the patients at the minimum CNSS (within TOL)."""
    if not cnss:
        return []
    lo = min(cnss)
    return [i for i, c in enumerate(cnss) if c <= lo + TOL]


def patching(traces: Iterable[Mapping[str, Any]], attributes: Sequence[str] = ATTRIBUTES) -> dict[str, Any]:
    """How much A's later proposals and the joint restore the patients B's opening serves worst.

    For each debate with a feasible round-1 proposal of B: W = :func:`worst_served` of its CNSS; for each
    later stage s of A (r2.., final; feasible) and for the joint, the gain of patient i in W is
    ``CNSS_s[i] - CNSS_B,r1[i]``. Returns ``per_debate`` (mean gain over W per stage), ``overall`` (mean
    over debates per stage) and ``by_attribute`` (mean gain over the patients in W holding each value of
    each attribute, pooled over debates, with the number of such patients)."""
    per_debate = []
    pooled: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for tr in traces:
        b1 = _turn(tr, "B", "r1")
        if b1 is None or not b1.get("feasible", True):
            continue
        base = list((b1.get("metrics") or {}).get("cnss") or [])
        w = worst_served(base)
        if not w:
            continue
        later = [(t["stage"], t) for t in tr.get("turns", ()) if t["agent"] == "A" and t["stage"] != "r1"]
        j = tr.get("joint")
        if j:
            later.append(("joint", j))
        gains: dict[str, float] = {}
        pats = tr.get("patients") or []
        for stage, t in sorted(later, key=lambda st: stage_order(st[0])):
            c = (t.get("metrics") or {}).get("cnss")
            if not t.get("feasible", True) or not c or len(c) != len(base):
                continue
            g = [float(c[i]) - float(base[i]) for i in w]
            gains[stage] = _mean(g)
            for i, gi in zip(w, g):
                p = pats[i] if i < len(pats) else {}
                for att in attributes:
                    pooled[(att, attribute_of(p, att), stage)].append(gi)
        per_debate.append({"key": tr.get("key"), "opponent": tr["opponent"], "framework": tr["framework"],
                           "worst": [pats[i].get("id", i) if i < len(pats) else i for i in w],
                           "opening_cnss": float(min(base)), "gain": gains})
    stages = sorted({s for d in per_debate for s in d["gain"]}, key=stage_order)
    overall = {s: _mean([d["gain"][s] for d in per_debate if s in d["gain"]]) for s in stages}
    by_attr = [{"attribute": att, "value": val, "stage": st, "n": len(v), "gain": _mean(v)}
               for (att, val, st), v in sorted(pooled.items(), key=lambda kv: (kv[0][0], kv[0][1], stage_order(kv[0][2])))]
    return {"stages": stages, "overall": overall, "by_attribute": by_attr, "per_debate": per_debate}


def moderation(traces: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The opponent's movement away from its opening: per opponent and stage s (r2.., final), the mean
    over debates of ``mean_i |CNSS_B,s[i] - CNSS_B,r1[i]|`` (both proposals feasible)."""
    acc: dict[tuple[str, str], list[float]] = defaultdict(list)
    for tr in traces:
        b1 = _turn(tr, "B", "r1")
        if b1 is None or not b1.get("feasible", True):
            continue
        base = (b1.get("metrics") or {}).get("cnss") or []
        for t in tr.get("turns", ()):
            if t["agent"] != "B" or t["stage"] == "r1" or not t.get("feasible", True):
                continue
            c = (t.get("metrics") or {}).get("cnss") or []
            if base and len(c) == len(base):
                acc[(tr["opponent"], t["stage"])].append(_mean([abs(float(x) - float(y)) for x, y in zip(c, base)]))
    return [{"opponent": o, "stage": s, "n": len(v), "movement": _mean(v)}
            for (o, s), v in sorted(acc.items(), key=lambda kv: (kv[0][0], stage_order(kv[0][1])))]


# ------------------------------------------------------------------------------------------------ 3

def framework_bias(means: Mapping[tuple[str, str, str], float], directions: Mapping[str, str],
                   owners: Mapping[str, str]) -> list[dict[str, Any]]:
    """``means[(opponent, framework, metric)]`` = A's mean final value. Per metric and per opponent (and
    "all": the unweighted mean over opponents), the alignment under which A scores best, its mean, the
    framework the metric belongs to (``owners``: metric -> framework) and its mean; ``owner_best`` says
    whether they coincide (ties within TOL count for the owner)."""
    opps = list(dict.fromkeys(k[0] for k in means))
    fws = list(dict.fromkeys(k[1] for k in means))
    out = []
    for m, d in directions.items():
        s = direction_sign(d)
        for opp in opps + (["all"] if len(opps) > 1 else []):
            vals = {}
            for fw in fws:
                xs = [means.get((o, fw, m), math.nan) for o in (opps if opp == "all" else [opp])]
                xs = [x for x in xs if not math.isnan(x)]
                if xs:
                    vals[fw] = _mean(xs)
            if not vals:
                continue
            best = max(vals, key=lambda f: s * vals[f])
            owner = owners.get(m)
            owner_mean = vals.get(owner, math.nan) if owner else math.nan
            owner_best = owner is not None and not math.isnan(owner_mean) and s * (vals[best] - owner_mean) <= TOL
            out.append({"metric": m, "opponent": opp, "best": owner if owner_best else best,
                        "best_mean": vals[best], "owner": owner, "owner_mean": owner_mean,
                        "owner_best": owner_best, "means": vals})
    return out


# ------------------------------------------------------------------------------------------------ extras

def resource_of(violation: str) -> str:
    """The resource a violation message names (its first word: 'ICU total 3 exceeds capacity 2')."""
    return violation.split(" ", 1)[0] if violation else "?"


def feasibility(traces: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per agent and stage: proposals, infeasible ones, repair turns, and violations by resource (of
    the proposals as finally given)."""
    acc: dict[tuple[str, str], dict[str, Any]] = {}
    for tr in traces:
        for t in tr.get("turns", ()):
            a = acc.setdefault((t["agent"], t["stage"]), {"proposals": 0, "infeasible": 0, "repairs": 0,
                                                          "violations": defaultdict(int)})
            a["proposals"] += 1
            a["infeasible"] += int(not t.get("feasible", True))
            a["repairs"] += int(t.get("repairs", 0))
            for v in t.get("violations") or ():
                a["violations"][resource_of(str(v))] += 1
    return [{"agent": ag, "stage": st, "proposals": a["proposals"], "infeasible": a["infeasible"],
             "repairs": a["repairs"], "violations": dict(sorted(a["violations"].items()))}
            for (ag, st), a in sorted(acc.items(), key=lambda kv: (kv[0][0], stage_order(kv[0][1])))]


def trajectories(traces: Iterable[Mapping[str, Any]], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Mean metric per (opponent, framework, agent, stage) over feasible proposals; the joint as agent
    "joint", stage "joint"."""
    acc: dict[tuple[str, str, str, str, str], list[float]] = defaultdict(list)
    for tr in traces:
        items = [(t["agent"], t["stage"], t) for t in tr.get("turns", ())]
        if tr.get("joint"):
            items.append(("joint", "joint", tr["joint"]))
        for ag, st, t in items:
            for m in metrics:
                v = _val(t, m)
                if not math.isnan(v):
                    acc[(tr["opponent"], tr["framework"], ag, st, m)].append(v)
    return [{"opponent": o, "framework": f, "agent": ag, "stage": st, "metric": m, "n": len(v), "mean": _mean(v)}
            for (o, f, ag, st, m), v in sorted(acc.items(), key=lambda kv: (kv[0][:3], stage_order(kv[0][3]), kv[0][4]))]


def emergence(traces: Sequence[Mapping[str, Any]], directions: Mapping[str, str],
              means: Mapping[tuple[str, str, str], float], owners: Mapping[str, str]) -> dict[str, Any]:
    """All measures at once (JSON-ready)."""
    return {"joint_beats_both": joint_beats_both(traces, directions), "patching": patching(traces),
            "moderation": moderation(traces), "framework_bias": framework_bias(means, directions, owners),
            "feasibility": feasibility(traces), "trajectories": trajectories(traces, list(directions))}


__all__ = ["AGE_BANDS", "ATTRIBUTES", "TOL", "age_band", "attribute_of", "emergence", "feasibility",
           "framework_bias", "joint_beats_both", "moderation", "patching", "resource_of", "stage_order",
           "trajectories", "worst_served"]
