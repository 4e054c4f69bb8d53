"""Stakeholder proposals, aggregation rules and per-stakeholder evaluation (the scripted debate and a whole run:
:mod:`fairarena.tourism.run`).

Pillar (i): each stakeholder proposes the optimum of (a surrogate of) its objective:

* **lists**: for every group, the ``k`` POIs with the highest per-POI score of the stakeholder
  (:func:`poi_scores`; tourists: the group's relevance, exact for nDCG; local businesses rotate the small
  providers across groups to spread exposure);
* **flows**: an integer program (HiGHS through ``scipy.optimize.milp``) maximising the linear part of its
  objective under the flow constraints (every visitor of a group makes one visit per slot; a POI takes at
  most ``floor(capacity - baseline)`` tourists per slot). Exact for tourists, residents and the small-share
  part of local businesses; the exposure Gini is replaced by a linear long-tail bonus and over-capacity is
  modelled exactly with overflow variables.

Pillar (ii): a rule decides. *Ranking rules* (lists only) aggregate, per group, the stakeholders' POI
rankings into a list of k: ``borda``, ``schulze`` (Schulze's ranking from strongest paths), ``pav`` and
``mes`` (committees of k from each stakeholder approving its top ``2k`` POIs, via ``abcvoting``; the
committee is ordered by Borda score). *Candidate rules* (every rule of :data:`fairarena.aggregation.RULES`
of kind "candidates": utilitarian, maximin, leximin, nash, ks, pf-lottery, ...) choose among candidate
decisions: the proposals, the ranking rules' lists (lists) or weighted compromises (flows). Utilities are
normalised per stakeholder over the candidates with the payoff table: ``u = (v - worst) / (best - worst)``,
best = the value of its own proposal (its ideal), worst = the lowest value among the candidates.

Pillar (iii): :func:`evaluate_decision` — every metric, each stakeholder's value and utility, and
:func:`fairarena.aggregation.stakeholders.evaluate` (utility, regret, proportionality, decision share,
worst-off).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fairarena.aggregation import candidates as C
from fairarena.errors import InputError, SolverError
from fairarena.registry import Registry
from fairarena.tourism.destination import Destination
from fairarena.tourism.metrics import flow_metrics, list_metrics
from fairarena.tourism.stakeholders import Stakeholder, stakeholder_value

__all__ = ["DECISIONS", "RANKING_RULES", "rule_names", "poi_scores", "propose", "candidates", "utility_matrix",
           "decide", "evaluate_decision", "to_mapping", "flows_problem", "lists_problem", "encode", "decode"]

DECISIONS = {"lists": "a ranked list of k POIs per tourist group",
             "flows": "visitors of each group at each POI in each slot, under capacities"}

#: the list-only rules (a ranking of POIs per group), beside the aggregation's candidate rules (``RULES``)
RANKING_RULES: Registry[str] = Registry("ranking rule", field="rule")
RANKING_RULES.add("borda", "borda", title="Borda (per group, over POIs)",
                  description="POIs ranked by total Borda score over the stakeholders' rankings; top k",
                  citation="Borda (1781)")
RANKING_RULES.add("schulze", "schulze", title="Schulze ranking (per group, over POIs)",
                  description="Schulze's ranking from the strongest paths of the pairwise margins; top k",
                  citation="Schulze, Soc. Choice Welf. 36 (2011)")
RANKING_RULES.add("pav", "pav", title="Proportional approval voting (committee of k)",
                  description="each stakeholder approves its top 2k POIs; exact PAV committee via abcvoting (branch and bound)",
                  citation="Thiele (1895); Aziz et al., Soc. Choice Welf. 48 (2017)")
RANKING_RULES.add("mes", "equal-shares", title="Method of Equal Shares (committee of k)",
                  description="each stakeholder approves its top 2k POIs; equal shares via abcvoting",
                  citation="Peters and Skowron, EC 2020")


def committees_available() -> bool:
    """PAV and MES need ``abcvoting`` (the ``tourism`` extra: ``pip install fairarena[tourism]``)."""
    import importlib.util

    return importlib.util.find_spec("abcvoting") is not None


def rule_names(decision: str) -> list[str]:
    """The rules that apply to ``decision``: ranking rules (lists only; PAV and MES when ``abcvoting`` is
    installed), then candidate rules."""
    from fairarena.aggregation.rules import RULES

    cand = [n for n in RULES.names(kind="candidates")]
    if decision == "lists":
        ranking = [r for r in RANKING_RULES if r not in ("pav", "mes") or committees_available()]
        return ranking + [n for n in cand if n not in RANKING_RULES]
    return cand


def check_rule(decision: str, rule: str) -> None:
    if decision == "lists" and rule in ("pav", "mes") and not committees_available():
        raise InputError("--rule", rule, "the abcvoting package (pip install 'fairarena[tourism]')")
    if rule not in rule_names(decision):
        raise InputError("--rule", rule, f"one of {', '.join(rule_names(decision))} for --decision {decision}")


# -- proposals ---------------------------------------------------------------------------------
def poi_scores(d: Destination, s: Stakeholder, g: int) -> np.ndarray:
    """Stakeholder ``s``'s score of every POI for group ``g``'s list (higher = preferred)."""
    a = d.arrays
    rel = a.relevance[g]
    if s.kind == "tourists":
        return rel.copy()
    ratio = (a.baseline / a.capacity[:, None]).max(axis=1)
    if s.kind == "residents":
        return -a.residential.astype(float) - 0.1 * ratio + 0.01 * rel
    if s.kind == "local-business":
        return a.small.astype(float) + 0.5 * (1.0 - a.popularity) + 0.01 * rel
    if s.kind == "destination":
        envmax = a.env.max() if a.env.max() > 0 else 1.0
        return -0.5 * a.env / envmax - 0.5 * np.minimum(1.0, ratio / d.comfort) + 0.01 * rel
    raise InputError("stakeholder", s.name, "a known stakeholder kind")


def _top(score: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-score, kind="stable")[:k]


def propose_lists(d: Destination, s: Stakeholder, k: int) -> np.ndarray:
    a = d.arrays
    G = len(a.groups)
    L = np.empty((G, k), dtype=int)
    for g in range(G):
        sc = poi_scores(d, s, g)
        if s.kind == "local-business":  # rotate over the favoured POIs so exposure is spread
            order = np.argsort(-sc, kind="stable")
            n_fav = max(k, int(a.small.sum()))
            off = (g * k) % n_fav
            pick = [order[(off + i) % n_fav] for i in range(k)]
            L[g] = pick
        else:
            L[g] = _top(sc, k)
    return L


@dataclass
class _FlowLP:
    G: int
    P: int
    S: int
    A: Any
    lo: np.ndarray
    hi: np.ndarray
    bounds_hi: np.ndarray


def _flow_lp(d: Destination) -> _FlowLP:
    from scipy.sparse import coo_matrix

    a = d.arrays
    G, P, S = len(a.groups), len(a.pois), a.baseline.shape[1]
    nF, nO = G * P * S, P * S
    idx = np.arange(nF).reshape(G, P, S)
    rows, cols, vals, lo, hi = [], [], [], [], []
    r = 0
    for g in range(G):           # every visitor of g makes one visit per slot
        for s_ in range(S):
            rows += [r] * P
            cols += idx[g, :, s_].tolist()
            vals += [1.0] * P
            lo.append(a.size[g])
            hi.append(a.size[g])
            r += 1
    free = np.floor(np.maximum(a.capacity[:, None] - a.baseline, 0.0))
    for j in range(P):           # free capacity; overflow o_js >= baseline + sum_g F - comfort cap
        for s_ in range(S):
            rows += [r] * G
            cols += idx[:, j, s_].tolist()
            vals += [1.0] * G
            lo.append(-np.inf)
            hi.append(free[j, s_])
            r += 1
            rows += [r] * (G + 1)
            cols += idx[:, j, s_].tolist() + [nF + j * S + s_]
            vals += [1.0] * G + [-1.0]
            lo.append(-np.inf)
            hi.append(d.comfort * a.capacity[j] - a.baseline[j, s_])
            r += 1
    A = coo_matrix((vals, (rows, cols)), shape=(r, nF + nO)).tocsr()
    return _FlowLP(G, P, S, A, np.array(lo), np.array(hi), np.concatenate([np.repeat(a.size, P * S), np.full(nO, np.inf)]))


def overflow(d: Destination, F: np.ndarray) -> np.ndarray:
    """Visitors above comfort x capacity per (POI, slot), flattened (the flow programs' overflow variables)."""
    a = d.arrays
    return np.maximum(a.baseline + F.sum(axis=0) - d.comfort * a.capacity[:, None], 0.0).ravel()


def flow_coefficients(d: Destination, s: Stakeholder) -> np.ndarray:
    """The linear objective (to maximise) over ``(F, overflow)`` that stands for ``s``'s value (module doc)."""
    a = d.arrays
    G, P, S = len(a.groups), len(a.pois), a.baseline.shape[1]
    T = a.size.sum() * S
    cF = np.zeros((G, P, S))
    cO = np.zeros((P, S))
    tie = 1e-4 * a.relevance[:, :, None] / S
    for m, w in s.objective.items():
        if m == "satisfaction":
            mine = np.array([s.persona is None or p == s.persona for p in a.personas])
            tot = a.size[mine].sum()
            if tot > 0:
                cF += w * np.where(mine[:, None, None], a.relevance[:, :, None] / (S * tot), 0.0)
        elif m == "crowding_residential":
            cap_res = a.capacity[a.residential].sum() * S
            if cap_res > 0:
                cF += w * (a.residential[None, :, None] / cap_res)
        elif m == "small_exposure_share":
            cF += w * a.small[None, :, None] / T
        elif m == "exposure_gini":   # linear surrogate: visits to less popular POIs lower the Gini
            cF += -w * (1.0 - a.popularity)[None, :, None] / T
        elif m == "emissions_norm":
            envmax = a.env.max() if a.env.max() > 0 else 1.0
            cF += w * a.env[None, :, None] / (T * envmax)
        elif m == "over_capacity_share":
            cO += w * np.ones((P, S)) / T
        else:
            raise InputError("objective", m, "a metric with a linear flow form")
    return np.concatenate([(cF + tie).ravel(), cO.ravel()])


def solve_flows(d: Destination, c: np.ndarray, lp: _FlowLP | None = None) -> np.ndarray:
    """Integer flows maximising ``c`` (HiGHS); raises SolverError when HiGHS does not prove optimality."""
    from scipy.optimize import Bounds, LinearConstraint
    from fairarena.solver_console import milp  # HiGHS's console never on stdout

    lp = lp or _flow_lp(d)
    nF = lp.G * lp.P * lp.S
    integrality = np.concatenate([np.ones(nF), np.zeros(lp.P * lp.S)])
    res = milp(-c, constraints=LinearConstraint(lp.A, lp.lo, lp.hi), integrality=integrality,
               bounds=Bounds(np.zeros(len(c)), lp.bounds_hi), options={"disp": False})
    if res.status != 0 or res.x is None:
        raise SolverError(f"flow program not solved to optimality: {res.message}")
    return np.round(res.x[:nF]).reshape(lp.G, lp.P, lp.S)


def solve_flows_maximin(d: Destination, coefs: list[np.ndarray], lo: np.ndarray, hi: np.ndarray,
                        lp: _FlowLP | None = None) -> np.ndarray:
    """Flows near ``max min_a (c_a z - lo_a) / (hi_a - lo_a)`` over the whole feasible set (the egalitarian
    compromise of the stakeholders' linear objectives): the LP relaxation solved exactly (HiGHS), then
    rounded deterministically — each (group, slot) keeps the floor of its LP flows and places its remaining
    visitors one at a time on the POI with the largest fractional part that still has free capacity. The
    integer program itself is too slow for the time budget (it ran for over 10 minutes on 40 POIs), so
    this candidate is a rounded LP optimum, not an exact integer maximin."""
    from scipy.optimize import Bounds, LinearConstraint
    from fairarena.solver_console import milp  # HiGHS's console never on stdout
    from scipy.sparse import csr_matrix, hstack, vstack

    a = d.arrays
    lp = lp or _flow_lp(d)
    nF = lp.G * lp.P * lp.S
    n = lp.A.shape[1]
    span = np.maximum(hi - lo, 1e-12)
    rows = csr_matrix(np.stack([c / sp for c, sp in zip(coefs, span)]))          # c_a z / span_a - t >= lo_a / span_a
    A = vstack([hstack([lp.A, csr_matrix((lp.A.shape[0], 1))]), hstack([rows, csr_matrix(-np.ones((len(coefs), 1)))])])
    lo_all = np.concatenate([lp.lo, lo / span])
    hi_all = np.concatenate([lp.hi, np.full(len(coefs), np.inf)])
    c = np.zeros(n + 1)
    c[-1] = -1.0
    res = milp(c, constraints=LinearConstraint(A.tocsr(), lo_all, hi_all), integrality=np.zeros(n + 1),
               bounds=Bounds(np.zeros(n + 1), np.concatenate([lp.bounds_hi, [np.inf]])), options={"disp": False})
    if res.status != 0 or res.x is None:
        raise SolverError(f"maximin flow LP not solved to optimality: {res.message}")
    X = res.x[:nF].reshape(lp.G, lp.P, lp.S)
    F = np.floor(X + 1e-9)
    frac = X - F
    free = np.floor(np.maximum(a.capacity[:, None] - a.baseline, 0.0)) - F.sum(axis=0)
    for g in range(lp.G):
        for s_ in range(lp.S):
            missing = int(round(a.size[g] - F[g, :, s_].sum()))
            order = np.lexsort((np.arange(lp.P), -frac[g, :, s_]))
            while missing > 0:
                j = next(int(j) for j in order if free[j, s_] >= 1)   # total free >= size: always found
                F[g, j, s_] += 1
                free[j, s_] -= 1
                frac[g, j, s_] = -1.0
                order = np.lexsort((np.arange(lp.P), -frac[g, :, s_]))
                missing -= 1
    return F


def propose(d: Destination, s: Stakeholder, decision: str, k: int = 5, lp: _FlowLP | None = None) -> np.ndarray:
    """Stakeholder ``s``'s proposal (its optimum; module doc)."""
    if decision == "lists":
        return propose_lists(d, s, k)
    return solve_flows(d, flow_coefficients(d, s), lp)


# -- ranking rules (lists) ---------------------------------------------------------------------
def _rankings(d: Destination, stakeholders: list[Stakeholder], g: int) -> np.ndarray:
    return np.stack([np.argsort(-poi_scores(d, s, g), kind="stable") for s in stakeholders])


def _as_utilities(rankings: np.ndarray) -> np.ndarray:
    """Rankings ``(N, P)`` (alternatives best first) as utilities ``-position``, so the aggregation's
    preference, Borda and margin functions read them (distinct positions: strict orders)."""
    N, P = rankings.shape
    pos = np.empty_like(rankings)
    pos[np.arange(N)[:, None], rankings] = np.arange(P)[None, :]
    return -pos.astype(float)


def borda_scores(rankings: np.ndarray) -> np.ndarray:
    """Borda score of each of P alternatives: ``sum_voters (P - 1 - position)`` (the classical points, from
    the aggregation's Borda score :func:`fairarena.aggregation.candidates.borda_scores`, which is twice
    that minus ``N (P - 1)`` on strict orders)."""
    N, P = rankings.shape
    return (C.borda_scores(_as_utilities(rankings)) + N * (P - 1)) / 2.0


def schulze_ranking(rankings: np.ndarray) -> np.ndarray:
    """Alternatives ordered by Schulze's relation (``a`` above ``b`` when the strongest path a->b beats
    b->a), ties by Borda score then index. Strongest paths over the pairwise margins: the aggregation's
    Schulze (:func:`fairarena.aggregation.candidates.strongest_paths`)."""
    P = rankings.shape[1]
    p = C.strongest_paths(C.margins(_as_utilities(rankings)[None]))[0]
    wins = (p > p.T).sum(axis=1)
    return np.lexsort((np.arange(P), -borda_scores(rankings), -wins))


def committee(rankings: np.ndarray, k: int, rule: str) -> np.ndarray:
    from abcvoting import abcrules
    from abcvoting.preferences import Profile as ABCProfile

    N, P = rankings.shape
    m = min(P, 2 * k)
    prof = ABCProfile(P)
    prof.add_voters([set(int(x) for x in r[:m]) for r in rankings])
    if rule == "pav":
        com = abcrules.compute("pav", prof, k, resolute=True, algorithm="branch-and-bound")[0]
    else:
        com = abcrules.compute("equal-shares", prof, k, resolute=True)[0]
    com = sorted(com)
    b = borda_scores(rankings)
    return np.array(sorted(com, key=lambda j: (-b[j], j)), dtype=int)


def ranking_rule_lists(d: Destination, stakeholders: list[Stakeholder], rule: str, k: int) -> np.ndarray:
    a = d.arrays
    L = np.empty((len(a.groups), k), dtype=int)
    for g in range(len(a.groups)):
        R = _rankings(d, stakeholders, g)
        if rule == "borda":
            L[g] = np.lexsort((np.arange(R.shape[1]), -borda_scores(R)))[:k]
        elif rule == "schulze":
            L[g] = schulze_ranking(R)[:k]
        else:
            L[g] = committee(R, k, rule)
    return L


# -- candidates, utilities, rules ---------------------------------------------------------------
def metrics_of(d: Destination, decision: str, x: np.ndarray, attention: str = "position") -> dict[str, Any]:
    return list_metrics(d, x, model=attention) if decision == "lists" else flow_metrics(d, x)


@dataclass
class Candidates:
    names: list[str]
    decisions: list[np.ndarray]
    values: np.ndarray            # (N, K) stakeholder values
    metrics: list[dict[str, Any]] = field(default_factory=list)


def candidates(d: Destination, stakeholders: list[Stakeholder], decision: str, k: int = 5, *,
               attention: str = "position") -> Candidates:
    """The proposals, then (lists) every ranking rule's lists or (flows) equal-weight and pairwise
    compromises of the normalised objectives."""
    names: list[str] = []
    xs: list[np.ndarray] = []
    lp = _flow_lp(d) if decision == "flows" else None
    for s in stakeholders:
        names.append(s.name)
        xs.append(propose(d, s, decision, k, lp))
    if decision == "lists":
        for r in rule_names("lists"):
            if r not in RANKING_RULES:
                continue
            names.append(f"rule:{r}")
            xs.append(ranking_rule_lists(d, stakeholders, r, k))
    ms = [metrics_of(d, decision, x, attention) for x in xs]
    V = np.array([[stakeholder_value(d, s, m, decision) for m in ms] for s in stakeholders])
    if decision == "flows":
        coefs = [flow_coefficients(d, s) for s in stakeholders]
        span = np.maximum(V.max(axis=1) - V.min(axis=1), 1e-9)
        N = len(stakeholders)
        combos = [("compromise:all", list(range(N)))] + [
            (f"compromise:{stakeholders[i].name}+{stakeholders[j].name}", [i, j])
            for i, j in itertools.combinations(range(N), 2)]
        for nm, members in combos:
            c = sum(coefs[i] / span[i] for i in members)
            names.append(nm)
            xs.append(solve_flows(d, c, lp))
            ms.append(metrics_of(d, decision, xs[-1], attention))
        # the egalitarian compromise over the whole feasible set, on the linear objectives normalised by the
        # proposals' payoff table (own optimum = 1, worst proposal = 0)
        zs = [np.concatenate([x.ravel(), overflow(d, x)]) for x in xs[:N]]
        L = np.array([[c @ z for z in zs] for c in coefs])
        names.append("compromise:maximin-lp")
        xs.append(solve_flows_maximin(d, coefs, L.min(axis=1), np.diag(L), lp))
        ms.append(metrics_of(d, decision, xs[-1], attention))
        V = np.array([[stakeholder_value(d, s, m, decision) for m in ms] for s in stakeholders])
    return Candidates(names, xs, V, ms)


def utility_matrix(V: np.ndarray, ideal: np.ndarray | None = None) -> np.ndarray:
    """Payoff-table normalisation (module doc): ``(V - worst) / (best - worst)`` per row, clipped to
    [0, 1]; best = ``ideal`` (default the row maximum), worst = the row minimum; a row with best = worst
    is indifferent (1). The aggregation's per-agent normalisation
    (:func:`fairarena.aggregation.candidates.per_agent_range`), clipped."""
    return np.clip(C.per_agent_range(V, ideal, tol=1e-12), 0.0, 1.0)


def _profile(stakeholders: list[Stakeholder], names: list[str], U: np.ndarray) -> Any:
    from fairarena.aggregation.rules import Profile, Voter

    agents = [Voter(s.name, group=s.kind) for s in stakeholders]
    return Profile.from_utilities(agents, names, U)


def decide(d: Destination, stakeholders: list[Stakeholder], decision: str, rule: str, cands: Candidates,
           k: int = 5, seed: int = 0) -> dict[str, Any]:
    """Apply ``rule``; returns ``{"rule", "decision" (array), "chosen" (candidate name or None),
    "lottery" (or None), "note"}``."""
    check_rule(decision, rule)
    if decision == "lists" and rule in RANKING_RULES:
        i = cands.names.index(f"rule:{rule}")
        return {"rule": rule, "decision": cands.decisions[i], "chosen": cands.names[i], "lottery": None,
                "note": RANKING_RULES.entry(rule).description}
    from fairarena.aggregation.rules import aggregate

    U = utility_matrix(cands.values)
    prof = _profile(stakeholders, cands.names, U)
    dec = aggregate(prof, rule, seed=seed)
    if dec.winner is not None:
        i = cands.names.index(dec.winner)
        return {"rule": rule, "decision": cands.decisions[i], "chosen": dec.winner, "lottery": None, "note": dec.note}
    lot = dec.lottery or {}
    draw = dec.draw if dec.draw is not None else max(lot, key=lot.get)
    i = cands.names.index(draw)
    return {"rule": rule, "decision": cands.decisions[i], "chosen": draw, "lottery": lot, "note": dec.note}


# -- evaluation --------------------------------------------------------------------------------
def evaluate_decision(d: Destination, stakeholders: list[Stakeholder], decision: str, x: np.ndarray,
                      cands: Candidates, attention: str = "position") -> dict[str, Any]:
    """Every metric of ``x``, each stakeholder's value and utility (normalised like the candidates) and
    the stakeholder evaluation's view (utility, regret, proportionality, decision share, worst-off)."""
    from fairarena.aggregation.stakeholders import evaluate

    m = metrics_of(d, decision, x, attention)
    v = np.array([stakeholder_value(d, s, m, decision) for s in stakeholders])
    V = np.concatenate([cands.values, v[:, None]], axis=1)
    U = utility_matrix(V)
    prof = _profile(stakeholders, cands.names + ["decision"], U)
    p = np.zeros(U.shape[1])
    p[-1] = 1.0
    ev = evaluate(prof, lottery=p)
    table = [{"stakeholder": s.name, "value": float(v[i]), "utility": float(U[i, -1]),
              "regret": float(1.0 - U[i, -1])} for i, s in enumerate(stakeholders)]
    return {"metrics": m, "stakeholders": table, "evaluation": ev}


def to_mapping(d: Destination, decision: str, x: np.ndarray) -> dict[str, Any]:
    a = d.arrays
    if decision == "lists":
        return {a.groups[g]: [a.pois[j] for j in x[g]] for g in range(len(a.groups))}
    out: dict[str, Any] = {}
    for g in range(len(a.groups)):
        row = {}
        for j in range(len(a.pois)):
            per = [int(v) for v in x[g, j]]
            if any(per):
                row[a.pois[j]] = dict(zip(d.slots, per))
        out[a.groups[g]] = row
    return out


def flows_problem(d: Destination) -> Any:
    """The flows as an :class:`~fairarena.allocation.problem.AllocationProblem`: individuals are the
    tourist groups, resources are (POI, slot) pairs ``"P01@morning"`` with capacity ``floor(capacity -
    baseline)`` (indivisible: visitors), need = the group's size for every (POI, slot) its persona finds
    relevant. ``survival``/``urgency`` are neutral (1, 0) and the weights uniform: the triage metrics of this
    problem are not the tourism metrics; the arena and the aggregation rules see capacities and feasibility."""
    from fairarena.allocation.problem import AllocationProblem

    a = d.arrays
    G, P, S = len(a.groups), len(a.pois), a.baseline.shape[1]
    res = [f"{p}@{s}" for p in a.pois for s in d.slots]
    cap = np.floor(np.maximum(a.capacity[:, None] - a.baseline, 0.0)).ravel()
    need = np.repeat((a.relevance > 0)[:, :, None], S, axis=2).reshape(G, P * S) * a.size[:, None]
    for g in range(G):
        if not need[g].any():
            need[g] = a.size[g]
    return AllocationProblem(ids=a.groups, resources=tuple(res), capacity=cap, need=need,
                             indivisible=np.ones(P * S, dtype=bool), survival=np.ones(G), urgency=np.zeros(G),
                             disadvantage=np.full(G, 1.0 / G), vulnerability=np.full(G, 1.0 / G),
                             gini_resource=res[0])


def lists_problem(d: Destination) -> Any:
    """The lists as an :class:`~fairarena.allocation.problem.AllocationProblem` (what a scripted debate over
    lists negotiates in the arena): individuals are the tourist groups, resources the POIs, and a list of
    ``k`` is stated as position scores, ``k`` for the first POI down to 1 for the last and 0 for a POI not in
    the list (:func:`encode`, :func:`decode`). Need = ``P`` (the number of POIs, the largest score any ``k``
    can give) for every (group, POI), capacity = ``G x P``, so the problem does not depend on ``k`` and a
    capacity is never binding: a list's validity (scores exactly ``k..1`` on ``k`` distinct POIs) is checked
    by :func:`decode`."""
    from fairarena.allocation.problem import AllocationProblem

    a = d.arrays
    G, P = len(a.groups), len(a.pois)
    return AllocationProblem(ids=a.groups, resources=tuple(a.pois), capacity=np.full(P, float(G * P)),
                             need=np.full((G, P), float(P)), indivisible=np.ones(P, dtype=bool),
                             survival=np.ones(G), urgency=np.zeros(G), disadvantage=np.full(G, 1.0 / G),
                             vulnerability=np.full(G, 1.0 / G), gini_resource=a.pois[0])


def encode(d: Destination, decision: str, x: np.ndarray) -> np.ndarray:
    """A decision as an allocation of its arena problem: flows ``(G, P, S)`` -> ``(G, P x S)`` (the
    resources of :func:`flows_problem`); lists ``(G, k)`` -> position scores ``(G, P)`` (:func:`lists_problem`)."""
    a = d.arrays
    G, P = len(a.groups), len(a.pois)
    if decision == "flows":
        return np.asarray(x, dtype=float).reshape(G, -1)
    L = np.asarray(x, dtype=int)
    out = np.zeros((G, P))
    k = L.shape[1]
    for g in range(G):
        out[g, L[g]] = np.arange(k, 0, -1)
    return out


def decode(d: Destination, decision: str, x: np.ndarray) -> tuple[np.ndarray | None, list[str]]:
    """The decision an allocation of the arena problem states, and what makes it no decision (empty list:
    valid). Flows: always a ``(G, P, S)`` array (the per-slot rule is :func:`flow_feasibility`'s to check).
    Lists: per group the POIs with a positive score, highest first; every group must score exactly ``k..1``
    on ``k`` distinct POIs, with the same ``k`` for every group."""
    a = d.arrays
    G, P, S = len(a.groups), len(a.pois), len(d.slots)
    x = np.asarray(x, dtype=float)
    if decision == "flows":
        return x.reshape(G, P, S), []
    rows, bad = [], []
    for g in range(G):
        pos = np.flatnonzero(x[g] > 0.5)
        order = pos[np.lexsort((pos, -x[g, pos]))]
        k = len(order)
        if k == 0 or sorted(np.round(x[g, order]).astype(int).tolist()) != list(range(1, k + 1)):
            bad.append(f"{a.groups[g]}: position scores must be k..1 on k distinct POIs")
        rows.append(order)
    if not bad and len({len(r) for r in rows}) != 1:
        bad.append("every group's list must have the same length k")
    if bad:
        return None, bad
    return np.stack(rows), []
