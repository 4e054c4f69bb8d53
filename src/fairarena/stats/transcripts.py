"""Analyses only a debate's transcript can give: copying, convergence, contestation, intrinsic bias.

The triage-debate paper (Chaki, Gourru & Velcin, arXiv:2604.13705) reads its language-model debates for
more than final scores: Section 5 and Appendix F describe agents that *converge* over rounds, an aligned
agent that restores access for the patients an adversary targets "through contestation rather than
override", and aligned agents with an *intrinsic bias* toward some frameworks. These functions make
those readings measurable, plus the check a small model needs first: are the agents merely *copying*
each other (issue: a 12-debate Qwen 0.5B study whose justifications were 93-95 % copies of the history)?

Pure functions. Two inputs:

* **turns** — :func:`debate_turns` of one transcript's events: every turn in order (repairs included),
  with its agent (``A`` = the aligned agent, ``B`` = its opponent), stage (``r1``.., ``final``, and the
  closing phases ``draft``, ``decide``, ...), the allocation as given, the justification and critique;
* **traces** — the per-debate traces of :mod:`fairarena.stats.emergence` (the last attempt per agent and
  stage with its metrics and per-patient CNSS, and the joint).

Measures (formulas in docs/study.md, "LLM-only analyses"):

* :func:`copy_rates` — per turn, the share of its cells equal to the other agent's last turn
  (``cells_same``), the share it moved onto the other's values among the cells where its own previous
  turn differed from them (``cells_adopted``), and the share of its justification's word 3-grams found in
  the other agent's last turn (``text_copied``) or anywhere earlier in the debate (``text_history``);
* :func:`convergence` — per stage, the mean absolute CNSS difference between the two agents' proposals;
* :func:`contestation` — for the patients the opponent's opening serves worst (its targets), the access
  restored per stage by A's proposals, by the opponent's own, and by the joint; each debate classed as
  ``override`` (the joint restores, the opponent's final does not), ``contestation`` (the opponent's final
  restores part of it), ``conversion`` (all of it) or ``none``;
* :func:`bias_confusion` — for each proposal, the framework whose optimum is nearest in the paper's six
  metrics (min-max normalised over the six optima of that cohort), tabulated against the proposer.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fairarena.stats.emergence import TOL, _turn, stage_order, worst_served

CELL_TOL = 1e-6          # two amounts within this are the same cell value
NGRAM = 3                # word n-grams of the text-copy measure
BIAS_METRICS = ("esg", "gini", "rmg", "var", "dw_esg", "vwci")   # the paper's six (Table 2)
COPYING_LEVEL = 0.9      # mean copy share from round 2 on above which a study is flagged as copying

_WORD = re.compile(r"\w+", re.UNICODE)


def _mean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return float(sum(xs) / len(xs)) if xs else math.nan


def stage_of(event: Mapping[str, Any]) -> str:
    """``r<k>`` for a round turn, else the phase (``final``, ``draft``, ``decide``, ``revise``..)."""
    if event.get("phase") == "round":
        return f"r{event.get('round')}"
    return str(event.get("phase"))


# ------------------------------------------------------------------------------------------------ turns

def debate_turns(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every turn of a transcript in order: ``agent``, ``stage``, ``attempt``, ``valid``, ``allocation``
    (``{patient: {resource: amount}}`` as realised, ``{}`` when none could be read), ``justification``,
    ``critique``."""
    out = []
    for e in events:
        if e.get("type") != "turn":
            continue
        prop = e.get("proposal") if isinstance(e.get("proposal"), Mapping) else {}
        alloc = prop.get("allocation") if isinstance(prop.get("allocation"), Mapping) else {}
        out.append({"agent": str(e.get("agent")), "stage": stage_of(e), "attempt": int(e.get("attempt") or 0),
                    "valid": bool(e.get("valid")),
                    "allocation": {str(p): dict(v) for p, v in alloc.items() if isinstance(v, Mapping)},
                    "justification": str(prop.get("justification") or ""),
                    "critique": str(prop.get("critique") or "")})
    return out


def _cells(alloc: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str], float]:
    out = {}
    for p, v in alloc.items():
        for r, x in v.items():
            try:
                out[(p, r)] = float(x)
            except (TypeError, ValueError):
                out[(p, r)] = math.nan
    return out


def _same(x: float, y: float) -> bool:
    return abs(x - y) <= CELL_TOL


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _grams(words: Sequence[str], n: int = NGRAM) -> set[tuple[str, ...]]:
    if not words:
        return set()
    if len(words) < n:
        return {tuple(words)}
    return set(zip(*(words[i:] for i in range(n))))      # the tuples words[i:i + n], built by zip


def ngrams(text: str, n: int = NGRAM) -> set[tuple[str, ...]]:
    """The set of word n-grams of ``text`` (lower-cased ``\\w+`` words); a text of fewer than ``n`` words
    gives its whole word tuple (so two short texts match only when equal)."""
    return _grams(_words(text), n)


def _share(g: set[tuple[str, ...]], source: set[tuple[str, ...]]) -> float:
    return len(g & source) / len(g) if g else math.nan


def containment(text: str, source: str, n: int = NGRAM) -> float:
    """Share of the word n-grams of ``text`` that occur in ``source`` (Broder's containment); NaN for
    an empty text."""
    g = ngrams(text, n)
    return _share(g, ngrams(source, n)) if g else math.nan


class _History:
    """The word n-grams of a growing text, ``"\\n".join(texts)``, kept as texts are added: the same set as
    :func:`ngrams` of the whole (a newline separates words, so the words of the joined text are the texts'
    words in order, and an n-gram may span two texts), built in time linear in the words rather than again
    for every turn."""

    def __init__(self, n: int = NGRAM) -> None:
        self.n, self.words, self.grams = n, [], set()

    def add(self, words: Sequence[str]) -> None:
        """Add a text's :func:`_words`."""
        w, n = self.words, self.n
        start = max(0, len(w) - n + 1)         # the first n-gram that the new words complete
        w += words
        self.grams.update(zip(*(w[start + i:] for i in range(n))))   # the n-grams from ``start`` on

    def set(self) -> set[tuple[str, ...]]:
        """:func:`ngrams` of the joined text (a history of fewer than ``n`` words: its whole word tuple)."""
        if len(self.words) < self.n:
            return {tuple(self.words)} if self.words else set()
        return self.grams


def copy_rates(turns: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per turn (after the first turn of the other agent): ``cells_same``, ``cells_adopted``,
    ``text_copied``, ``text_history`` (module docstring). A cell absent from a mapping counts as 0; the
    cells compared are those either turn names. NaN where a measure has nothing to compare. Each turn's
    words, cells and n-grams are found once (a turn is compared as the other's and as its own previous)."""
    out: list[dict[str, Any]] = []
    done: list[tuple[dict[tuple[str, str], float], set[tuple[str, ...]]]] = []   # per turn: cells, n-grams said
    last: dict[str, int] = {}                  # each agent's last turn, by index
    history = _History()
    for t in turns:
        me = t["agent"]
        other = next((last[a] for a in last if a != me), None)
        own = last.get(me)
        said, critique = _words(t.get("justification", "")), _words(t.get("critique", ""))
        x = _cells(t.get("allocation") or {})
        g = _grams(said)
        row = {"agent": me, "stage": t["stage"], "attempt": t.get("attempt", 0), "cells_same": math.nan,
               "cells_adopted": math.nan, "text_copied": math.nan,
               "text_history": _share(g, history.set()) if out else math.nan}
        if other is not None:
            y, other_said = done[other]
            keys = set(x) | set(y)
            if keys and x:
                row["cells_same"] = sum(_same(x.get(k, 0.0), y.get(k, 0.0)) for k in keys) / len(keys)
                if own is not None:
                    o = done[own][0]
                    moved = [k for k in keys if not _same(o.get(k, 0.0), y.get(k, 0.0))]
                    if moved:
                        row["cells_adopted"] = sum(_same(x.get(k, 0.0), y.get(k, 0.0)) for k in moved) / len(moved)
            row["text_copied"] = _share(g, other_said)
        last[me] = len(out)
        done.append((x, _grams(said + critique)))      # ngrams(justification + "\n" + critique)
        out.append(row)
        history.add(said)
        history.add(critique)
    return out


def copy_summary(per_debate: Iterable[Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """:func:`copy_rates` of many debates summarised per agent and stage (means over the turns that have
    the measure), plus ``copying``: True when, from round 2 on, both agents' mean ``text_copied`` and
    (when measured) ``cells_adopted`` reach :data:`COPYING_LEVEL` (the scripted negotiator concedes onto
    its partner's cells but writes its own templated text, so it is not flagged)."""
    acc: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for rows in per_debate:
        for r in rows:
            for k in ("cells_same", "cells_adopted", "text_copied", "text_history"):
                acc[(r["agent"], r["stage"])][k].append(r[k])
    table = [{"agent": ag, "stage": st, "turns": len(v["cells_same"]),
              **{k: _mean(v[k]) for k in ("cells_same", "cells_adopted", "text_copied", "text_history")}}
             for (ag, st), v in sorted(acc.items(), key=lambda kv: (kv[0][0], stage_order(kv[0][1])))]
    later = [r for r in table if r["stage"] != "r1"]
    agents = sorted({r["agent"] for r in later})

    def level(ag: str, k: str) -> float:
        return _mean([r[k] for r in later if r["agent"] == ag])

    def copies(ag: str) -> bool:
        text, cells = level(ag, "text_copied"), level(ag, "cells_adopted")
        return not math.isnan(text) and text >= COPYING_LEVEL and (math.isnan(cells) or cells >= COPYING_LEVEL)

    copying = len(agents) >= 2 and all(copies(a) for a in agents)
    return {"per_stage": table, "copying": copying, "level": COPYING_LEVEL,
            "from_round2": {a: {"text_copied": level(a, "text_copied"), "cells_adopted": level(a, "cells_adopted"),
                                "cells_same": level(a, "cells_same")} for a in agents}}


# ------------------------------------------------------------------------------------------------ convergence

def _cnss(turn: Mapping[str, Any] | None) -> list[float] | None:
    if turn is None or not turn.get("feasible", True):
        return None
    c = (turn.get("metrics") or {}).get("cnss")
    return [float(v) for v in c] if c else None


def _dist(x: Sequence[float], y: Sequence[float]) -> float:
    return _mean([abs(a - b) for a, b in zip(x, y)]) if len(x) == len(y) and x else math.nan


def convergence(traces: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Per stage (``r1``.., ``final``): the distance between A's and its opponent's proposals,
    ``mean_i |CNSS_A,s[i] - CNSS_B,s[i]|`` (both feasible), per debate and as means per opponent (and
    ``all``), with the share of debates whose two proposals give every patient the same CNSS."""
    per_debate = []
    acc: dict[tuple[str, str], list[float]] = defaultdict(list)
    for tr in traces:
        stages = sorted({t["stage"] for t in tr.get("turns", ())}, key=stage_order)
        d = {}
        for s in stages:
            a, b = _cnss(_turn(tr, "A", s)), _cnss(_turn(tr, "B", s))
            if a is not None and b is not None:
                d[s] = _dist(a, b)
                for opp in (tr["opponent"], "all"):
                    acc[(opp, s)].append(d[s])
        per_debate.append({"key": tr.get("key"), "cohort": tr.get("cohort"), "opponent": tr["opponent"],
                           "framework": tr.get("framework"), "distance": d})
    rows = [{"opponent": o, "stage": s, "n": len(v), "distance": _mean(v),
             "agree": sum(x <= TOL for x in v) / len(v) if v else math.nan}
            for (o, s), v in sorted(acc.items(), key=lambda kv: (kv[0][0] == "all", kv[0][0], stage_order(kv[0][1])))]
    return {"by_stage": rows, "per_debate": per_debate}


# ------------------------------------------------------------------------------------------------ contestation

CLASSES = ("override", "contestation", "conversion", "none")


def contestation(traces: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Who restores access for the opponent's targets, round by round.

    Targets ``T`` = :func:`~fairarena.stats.emergence.worst_served` of the opponent's round-1 CNSS (for
    the adversary: the patients it deprives). Per stage s, ``by_A[s] = mean_{i in T} (c_A,s[i] -
    c_B,r1[i])`` and ``by_opponent[s]`` the same with the opponent's own proposal; ``joint`` with the joint
    recommendation. Class of a debate from the opponent's final ``r_B`` and the joint ``r_J``:
    ``none`` when ``r_J <= TOL``; else ``override`` when ``r_B <= TOL``; ``conversion`` when
    ``r_B >= r_J - TOL``; else ``contestation``. Debates whose targets are every patient (an opening that
    serves all alike) are left out: nobody was targeted."""
    per_debate = []
    for tr in traces:
        base = _cnss(_turn(tr, "B", "r1"))
        if base is None:
            continue
        targets = worst_served(base)
        if not targets or len(targets) == len(base):
            continue
        stages = sorted({t["stage"] for t in tr.get("turns", ())}, key=stage_order)

        def restored(c: list[float] | None) -> float:
            if c is None or len(c) != len(base):
                return math.nan
            return _mean([c[i] - base[i] for i in targets])

        by_a = {s: restored(_cnss(_turn(tr, "A", s))) for s in stages}
        by_b = {s: restored(_cnss(_turn(tr, "B", s))) for s in stages if s != "r1"}
        j = tr.get("joint")
        r_j = restored(_cnss(j)) if j else math.nan
        r_b = by_b.get("final", math.nan)
        if math.isnan(r_j) or math.isnan(r_b):
            cls = None
        elif r_j <= TOL:
            cls = "none"
        elif r_b <= TOL:
            cls = "override"
        elif r_b >= r_j - TOL:
            cls = "conversion"
        else:
            cls = "contestation"
        per_debate.append({"key": tr.get("key"), "cohort": tr.get("cohort"), "opponent": tr["opponent"],
                           "framework": tr.get("framework"), "targets": len(targets),
                           "by_A": {s: v for s, v in by_a.items() if not math.isnan(v)},
                           "by_opponent": {s: v for s, v in by_b.items() if not math.isnan(v)},
                           "joint": r_j, "class": cls})
    rows = []
    for opp in list(dict.fromkeys(d["opponent"] for d in per_debate)):
        ds = [d for d in per_debate if d["opponent"] == opp]
        stages = sorted({s for d in ds for s in (*d["by_A"], *d["by_opponent"])}, key=stage_order)
        for s in stages:
            rows.append({"opponent": opp, "stage": s,
                         "by_A": _mean([d["by_A"].get(s, math.nan) for d in ds]),
                         "by_opponent": _mean([d["by_opponent"].get(s, math.nan) for d in ds]), "n": len(ds)})
        rows.append({"opponent": opp, "stage": "joint", "by_A": math.nan, "by_opponent": math.nan,
                     "joint": _mean([d["joint"] for d in ds]), "n": len(ds)})
    classes = []
    for opp in list(dict.fromkeys(d["opponent"] for d in per_debate)):
        ds = [d for d in per_debate if d["opponent"] == opp and d["class"] is not None]
        counts = {c: sum(d["class"] == c for d in ds) for c in CLASSES}
        classes.append({"opponent": opp, "n": len(ds), **counts})
    return {"by_stage": rows, "classes": classes, "per_debate": per_debate}


# ------------------------------------------------------------------------------------------------ bias

SCALES = ("observed", "optima")     # what a metric is min-max normalised over (bias_confusion)


def metric_bounds(points: Iterable[Mapping[str, float]], metrics: Sequence[str] = BIAS_METRICS
                  ) -> dict[str, tuple[float, float]]:
    """``{metric: (min, max - min)}`` over ``points`` (mappings metric -> value); a metric missing from a
    point or with no spread (within ``TOL``) is left out."""
    pts = list(points)
    out = {}
    for m in metrics:
        vals = [p.get(m) for p in pts]
        if not vals or any(v is None for v in vals):
            continue
        lo, hi = min(float(v) for v in vals), max(float(v) for v in vals)
        if hi - lo > TOL:
            out[m] = (lo, hi - lo)
    return out


def nearest_frameworks(values: Mapping[str, float], optima: Mapping[str, Mapping[str, float]],
                       metrics: Sequence[str] = BIAS_METRICS,
                       bounds: Mapping[str, tuple[float, float]] | None = None) -> tuple[list[str], dict[str, float]]:
    """The framework(s) whose optimum is nearest to ``values`` and every distance.

    Each metric is min-max normalised, ``(v - min) / (max - min)``, with ``bounds`` (``{metric: (min,
    max - min)}``; default :func:`metric_bounds` of the optima: a metric on which every optimum agrees
    is left out); the distance is Euclidean over the metrics normalised. Ties within ``TOL`` are all
    returned. No metric left: every framework is nearest (distance 0)."""
    if bounds is None:
        bounds = metric_bounds(optima.values(), metrics)
    keep = [(m, lo, span) for m, (lo, span) in bounds.items() if m in metrics and values.get(m) is not None]
    dist = {}
    for f, o in optima.items():
        dist[f] = math.sqrt(sum(((float(values[m]) - lo) / span - (float(o[m]) - lo) / span) ** 2
                                for m, lo, span in keep))
    best = min(dist.values()) if dist else math.nan
    return [f for f, d in dist.items() if d <= best + TOL], dist


def proposer(trace: Mapping[str, Any], agent: str) -> str:
    """The row label of a proposal: A's framework (``aligned:<f>``) or, for A unaligned, its opponent's
    profile name; for B the opponent profile."""
    if agent == "A":
        return f"aligned:{trace['framework']}" if trace.get("framework") else str(trace.get("agent_a", "baseline"))
    return str(trace["opponent"])


def bias_confusion(traces: Iterable[Mapping[str, Any]], optima: Mapping[Any, Mapping[str, Mapping[str, float]]],
                   *, stages: Sequence[str] = ("r1", "final"), metrics: Sequence[str] = BIAS_METRICS,
                   scale: str = "observed") -> dict[str, Any]:
    """For every feasible proposal of A and of its opponent at ``stages``: the framework whose optimum is
    nearest (:func:`nearest_frameworks`; ``optima[cohort][framework][metric]``).

    ``scale``: each metric is min-max normalised per cohort over the six optima *and every proposal
    classified on that cohort* (``"observed"``, the default: a proposal far outside the optima on a
    metric where the optima barely differ would otherwise dominate the distance), or over the optima
    only (``"optima"``). Returns ``frameworks`` (the columns), ``tables`` (per stage: rows
    ``{"proposer", "n", "counts": {framework: count}}``, a tie shared equally among the tied frameworks)
    and ``hits`` per proposal (for A aligned: the share of its nearest frameworks that are its own; for
    the opponent: its share per framework), the input of the noise tests."""
    from fairarena.errors import InputError

    if scale not in SCALES:
        raise InputError("scale", scale, "one of " + ", ".join(SCALES))
    frameworks: list[str] = []
    for o in optima.values():
        for f in o:
            if f not in frameworks:
                frameworks.append(f)
    items: dict[Any, list[tuple[Mapping[str, Any], str, str, Mapping[str, float]]]] = defaultdict(list)
    opts: dict[Any, Mapping[str, Mapping[str, float]]] = {}
    for tr in traces:
        opt = optima.get(tr["cohort"]) or optima.get(str(tr["cohort"]))
        if not opt:
            continue
        opts[tr["cohort"]] = opt
        for agent in ("A", "B"):
            for s in stages:
                t = _turn(tr, agent, s)
                if t is not None and t.get("feasible", True):
                    items[tr["cohort"]].append((tr, agent, s, t.get("metrics") or {}))
    acc: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    n: dict[tuple[str, str], int] = defaultdict(int)
    hits = []
    for cohort, its in items.items():
        opt = opts[cohort]
        pts = list(opt.values()) + ([m for *_, m in its] if scale == "observed" else [])
        bounds = metric_bounds(pts, metrics)
        for tr, agent, s, m in its:
            near, _ = nearest_frameworks(m, opt, metrics, bounds)
            who = proposer(tr, agent)
            n[(s, who)] += 1
            for f in near:
                acc[(s, who)][f] += 1.0 / len(near)
            if agent == "A" and tr.get("framework"):
                hits.append({"key": tr.get("key"), "cohort": cohort, "framework": tr["framework"],
                             "opponent": tr["opponent"], "stage": s,
                             "own": sum(f == tr["framework"] for f in near) / len(near)})
            elif agent == "B":
                hits.append({"key": tr.get("key"), "cohort": cohort, "framework": None, "opponent": tr["opponent"],
                             "stage": s, "proposer": who, "near": {f: (f in near) / len(near) for f in opt}})
    tables = {}
    for s in stages:
        tables[s] = [{"proposer": who, "n": n[(st, who)],
                      "counts": {f: acc[(st, who)].get(f, 0.0) for f in frameworks}}
                     for (st, who) in sorted(n, key=lambda k: (not k[1].startswith("aligned:"), k[1])) if st == s]
    return {"frameworks": frameworks, "metrics": list(metrics), "scale": scale, "tables": tables, "hits": hits}


__all__ = ["BIAS_METRICS", "CELL_TOL", "CLASSES", "COPYING_LEVEL", "NGRAM", "bias_confusion", "containment",
           "contestation", "convergence", "copy_rates", "copy_summary", "debate_turns", "metric_bounds",
           "nearest_frameworks", "ngrams", "proposer", "SCALES", "stage_of"]
