"""The axiom audit: every candidate-set rule checked on random utility profiles (a few agents, a few
candidates, utilities on a 0.01 grid), batched per profile size. For each rule x axiom: the number of
profiles checked, the number violating, their share, and a minimal witness (the violating profile with
the fewest agents x candidates, then the first found) written as a utility-profile file that
``fairarena aggregate run --proposals W.json --rule R`` accepts.

Axioms (a rule's decision is a lottery; a deterministic rule's lottery is uniform over its tied winners):

* ``pareto``: no probability on a candidate Pareto-dominated by another candidate (ex post);
* ``anonymity``: permuting the agents leaves the lottery unchanged;
* ``neutrality``: permuting the candidates permutes the lottery;
* ``iia``: removing a candidate with probability 0 leaves the others' probabilities unchanged;
* ``non_dictatorship``: no agent whose favourite is chosen in every profile (the cell's share is the
  largest share of profiles in which one agent's unique favourite is chosen outright);
* ``monotonicity``: raising a chosen candidate in one agent's utilities (to that agent's top) does not
  lower its probability;
* ``condorcet``: a Condorcet winner (beats every other candidate by pairwise majority) is chosen with
  probability 1;
* ``rescaling``: multiplying one agent's utilities by a positive constant leaves the lottery unchanged;
* ``manipulation``: no agent gains expected (true) utility by reporting a permutation of its utilities
  or a 0/1 vector with 1 on one candidate (3 agents x 3 candidates).
"""

from __future__ import annotations

import itertools
import os
from typing import Any, Callable

import numpy as np

from fairarena.aggregation import candidates as C
from fairarena.aggregation.rules import RULES
from fairarena.errors import InputError

__all__ = ["AXIOMS", "SIZES", "audit", "audit_rules", "write_witnesses", "check_axiom"]

AXIOMS: dict[str, str] = {
    "pareto": "Pareto efficiency (ex post)",
    "anonymity": "anonymity (permute agents)",
    "neutrality": "neutrality (permute candidates)",
    "iia": "independence of irrelevant alternatives (remove a candidate with probability 0)",
    "non_dictatorship": "non-dictatorship (share: the most any one agent's favourite is chosen)",
    "monotonicity": "monotonicity (raise the chosen candidate in one agent's utilities)",
    "condorcet": "Condorcet consistency",
    "rescaling": "invariance to rescaling one agent's utilities",
    "manipulation": "strategy-proofness (no profitable misreport; 3 agents x 3 candidates)",
}
SIZES: tuple[tuple[int, int], ...] = ((3, 3), (3, 4), (4, 3), (4, 4), (5, 4))
ATOL = 1e-7

Fn = Callable[[np.ndarray], np.ndarray]


def audit_rules(rule: str) -> list[str]:
    """The candidate-set rules to audit on utility profiles (``all`` or one name)."""
    names = list(RULES.names(kind="candidates"))
    if rule == "all":
        return names
    RULES.check(rule)
    return [rule] if rule in names else []


def audit_feasible_rules(rule: str) -> list[str]:
    """The feasible-set and repair rules to audit on tiny allocation problems (``all`` or one name)."""
    names = [r for r in RULES.names() if RULES.entry(r).kind != "candidates"]
    if rule == "all":
        return names
    RULES.check(rule)
    return [rule] if rule in names else []


def _fn(rule: str) -> Fn:
    return RULES.entry(rule).batched


def _same(a: np.ndarray, b: np.ndarray, atol: float = ATOL) -> np.ndarray:
    return np.abs(a - b).max(axis=-1) <= atol


def check_axiom(fn: Fn, axiom: str, U: np.ndarray, rng: np.random.Generator,
                atol: float = ATOL) -> tuple[np.ndarray, list[Any]]:
    """Boolean violations ``(B,)`` of ``axiom`` for rule ``fn`` on profiles ``U (B, N, K)`` and a
    per-profile detail (what was changed) for the witnesses."""
    B, N, K = U.shape
    P = fn(U)
    details: list[Any] = [None] * B
    if axiom == "pareto":
        ge = (U[:, :, :, None] >= U[:, :, None, :]).all(axis=1)     # (B, a, b): a >= b for everyone
        gt = (U[:, :, :, None] > U[:, :, None, :]).any(axis=1)
        dominated = (ge & gt).any(axis=1)                             # (B, b): some a dominates b
        bad = ((P > atol) & dominated).any(axis=1)
        return bad, [{"dominated_chosen": [int(k) for k in np.flatnonzero((P[b] > atol) & dominated[b])]}
                     for b in range(B)]
    if axiom == "anonymity":
        perm = rng.permutation(N)
        while N > 1 and np.all(perm == np.arange(N)):
            perm = rng.permutation(N)
        bad = ~_same(fn(U[:, perm]), P, atol)
        return bad, [{"agent_order": perm.tolist()}] * B
    if axiom == "neutrality":
        perm = rng.permutation(K)
        while np.all(perm == np.arange(K)):
            perm = rng.permutation(K)
        bad = ~_same(fn(U[:, :, perm]), P[:, perm], atol)
        return bad, [{"candidate_order": perm.tolist()}] * B
    if axiom == "iia":
        bad = np.zeros(B, dtype=bool)
        for k in range(K):
            idx = np.flatnonzero((P[:, k] <= atol) & ~bad)
            if idx.size == 0:
                continue
            keep = [j for j in range(K) if j != k]
            Q = fn(U[idx][:, :, keep])
            v = ~_same(Q, P[idx][:, keep], atol)
            bad[idx[v]] = True
            for b in idx[v]:
                details[b] = {"removed_candidate": k}
        return bad, details
    if axiom == "non_dictatorship":
        fav = C.favourites(U)
        unique = fav.sum(axis=2) == 1
        chosen = (P > 1 - atol)
        hit = (fav & chosen[:, None, :]).any(axis=2) & unique      # (B, N)
        return hit, [None] * B                                     # evaluated as a share per agent
    if axiom == "monotonicity":
        w = P.argmax(axis=1)
        i = rng.integers(0, N, size=B)
        V = U.copy()
        top = V[np.arange(B), i].max(axis=1)
        V[np.arange(B), i, w] = np.maximum(V[np.arange(B), i, w], top + 0.05)
        Q = fn(V)
        bad = Q[np.arange(B), w] < P[np.arange(B), w] - atol
        return bad, [{"agent": int(i[b]), "raised_candidate": int(w[b]),
                      "to": float(V[b, i[b], w[b]])} for b in range(B)]
    if axiom == "condorcet":
        M = C.margins(U)
        idx = np.arange(K)
        M[:, idx, idx] = 1.0
        cw = (M > 0).all(axis=2)                                   # (B, K)
        has = cw.any(axis=1)
        c = cw.argmax(axis=1)
        bad = has & (P[np.arange(B), c] < 1 - atol)
        return bad, [{"condorcet_winner": int(c[b])} for b in range(B)]
    if axiom == "rescaling":
        i = rng.integers(0, N, size=B)
        V = U.copy()
        V[np.arange(B), i] *= 0.25
        bad = ~_same(fn(V), P, atol)
        return bad, [{"agent": int(i[b]), "factor": 0.25} for b in range(B)]
    if axiom == "manipulation":
        true_u = np.einsum("bnk,bk->bn", U, P)
        bad = np.zeros(B, dtype=bool)
        reports = [list(p) for p in itertools.permutations(range(K)) if list(p) != list(range(K))]
        for a in range(N):
            for rep in [*reports, *(("unit", k) for k in range(K))]:
                V = U.copy()
                if isinstance(rep, tuple):
                    V[:, a] = 0.0
                    V[:, a, rep[1]] = 1.0
                else:
                    V[:, a] = U[:, a][:, rep]
                Q = fn(V)
                gain = np.einsum("bk,bk->b", U[:, a], Q) > true_u[:, a] + atol
                new = gain & ~bad
                for b in np.flatnonzero(new):
                    details[b] = {"agent": a, "misreport": [float(v) for v in V[b, a]]}
                bad |= gain
        return bad, details
    raise InputError("axiom", axiom, f"one of {', '.join(AXIOMS)}")


def _profiles(profiles: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    per = [profiles // len(SIZES) + (1 if j < profiles % len(SIZES) else 0) for j in range(len(SIZES))]
    return [rng.integers(0, 101, size=(b, n, k)) / 100.0 for b, (n, k) in zip(per, SIZES)]


def audit(rules: list[str] | None = None, *, profiles: int = 500, seed: int = 0) -> dict[str, Any]:
    """The rules x axioms table and minimal witnesses (module doc). Deterministic for a seed."""
    rules = list(RULES.names(kind="candidates")) if rules is None else rules
    stacks = _profiles(profiles, seed)
    small = np.random.default_rng(seed + 1).integers(0, 101, size=(profiles, 3, 3)) / 100.0
    table: dict[str, dict[str, Any]] = {}
    witnesses: list[dict[str, Any]] = []
    for r in rules:
        fn = _fn(r)
        table[r] = {}
        for ax in AXIOMS:
            rng = np.random.default_rng([seed, list(AXIOMS).index(ax)])
            groups = [small] if ax == "manipulation" else stacks
            nviol, nchk, best = 0, 0, None
            hits_total = None
            for U in groups:
                if U.shape[0] == 0:
                    continue
                bad, det = check_axiom(fn, ax, U, rng)
                if ax == "non_dictatorship":
                    # per agent index: profiles where its unique favourite was chosen outright
                    hits = bad.sum(axis=0)
                    hits_total = hits if hits_total is None else (
                        np.pad(hits_total, (0, max(0, hits.size - hits_total.size)))[:max(hits.size, hits_total.size)]
                        + np.pad(hits, (0, max(0, hits_total.size - hits.size))))
                    nchk += U.shape[0]
                    continue
                nchk += U.shape[0]
                nviol += int(bad.sum())
                if bad.any() and best is None:  # groups are ordered by size: the first hit is minimal
                    b = int(np.flatnonzero(bad)[0])
                    best = (U[b], det[b])
            if ax == "non_dictatorship":
                share = float(hits_total.max() / nchk) if hits_total is not None else 0.0
                table[r][ax] = {"checked": nchk, "violations": int(share >= 1.0), "share": share}
                continue
            table[r][ax] = {"checked": nchk, "violations": nviol, "share": nviol / nchk if nchk else 0.0}
            if best is not None:
                U0, det0 = best
                witnesses.append({"rule": r, "axiom": ax, "detail": det0, "profile": _witness_profile(U0)})
    return {"profiles": profiles, "seed": seed, "sizes": [list(s) for s in SIZES], "axioms": AXIOMS,
            "table": table, "witnesses": witnesses}


def _witness_profile(U: np.ndarray) -> dict[str, Any]:
    N, K = U.shape
    return {"candidates": [f"c{k}" for k in range(K)],
            "agents": [{"name": f"a{i}", "utilities": [round(float(v), 6) for v in U[i]]} for i in range(N)]}


def write_witnesses(result: dict[str, Any], folder: str | os.PathLike[str]) -> list[str]:
    """One file per violation, ``RULE__AXIOM.json`` (a utility profile with an ``audit`` key)."""
    from fairarena.fsutil import atomic_write_json

    os.makedirs(folder, exist_ok=True)
    out = []
    for w in result["witnesses"]:
        path = os.path.join(folder, f"{w['rule']}__{w['axiom']}.json")
        atomic_write_json(path, {**w["profile"], "audit": {"rule": w["rule"], "axiom": w["axiom"],
                                                           "detail": w["detail"]}})
        out.append(path)
    return out


# -- feasible-set and repair rules on tiny allocation problems ---------------------------------------

FEASIBLE_AXIOMS: dict[str, str] = {
    "pareto": "Pareto efficiency over the whole feasible set (brute force over every feasible allocation)",
    "anonymity": "anonymity (permute agents: the same utilities, permuted)",
}


def tiny_instance(rng: np.random.Generator) -> Any:
    """A random 3-patient problem with 2-3 indivisible resources (every allocation enumerable)."""
    from fairarena.allocation.problem import AllocationProblem

    R = int(rng.integers(2, 4))
    need = rng.integers(0, 3, size=(3, R)).astype(float)
    for i in range(3):
        if need[i].sum() == 0:
            need[i, rng.integers(0, R)] = 1.0
    cap = np.maximum(1, np.floor(need.sum(0) * rng.uniform(0.3, 0.8, size=R))).astype(float)
    w = rng.dirichlet(np.ones(3))
    v = rng.dirichlet(np.ones(3))
    return AllocationProblem(ids=("P1", "P2", "P3"), resources=tuple(f"R{r}" for r in range(R)), capacity=cap,
                             need=need, indivisible=np.ones(R, dtype=bool), survival=rng.uniform(0.2, 1.0, 3),
                             urgency=rng.integers(1, 4, 3).astype(float), disadvantage=w, vulnerability=v,
                             gini_resource="R0")


def enumerate_allocations(problem: Any) -> np.ndarray:
    """Every feasible integral allocation within need (brute force; tiny problems only)."""
    cols = []
    for r in range(problem.n_resources):
        cols.append([c for c in itertools.product(*(range(int(problem.need[i, r]) + 1) for i in range(problem.n)))
                     if sum(c) <= problem.capacity[r]])
    return np.stack([np.array(combo, dtype=float).T for combo in itertools.product(*cols)])


def audit_feasible(rules: list[str] | None = None, *, instances: int = 10, seed: int = 0) -> dict[str, Any]:
    """Feasible-set and repair rules on ``instances`` tiny random problems with three agents (random
    framework objectives, random feasible proposals): Pareto efficiency against every feasible
    allocation and anonymity. Utilities are compared within the feasible rules' modelling tolerance
    (the egalitarian grid, 2^-GINI_BITS)."""
    from fairarena.aggregation.feasible import GINI_BITS
    from fairarena.aggregation.objectives import OBJECTIVES, utilities
    from fairarena.aggregation.rules import Profile, Voter, aggregate

    rules = [r for r in RULES.names() if RULES.entry(r).kind != "candidates"] if rules is None else rules
    tol = 2.0**-GINI_BITS + 1e-6
    rng = np.random.default_rng([seed, 14])
    objs = list(OBJECTIVES.names(where=lambda e: bool(e.obj.milp)))
    table = {r: {ax: {"checked": 0, "violations": 0, "share": 0.0} for ax in FEASIBLE_AXIOMS} for r in rules}
    examples: list[dict[str, Any]] = []
    for _ in range(instances):
        p = tiny_instance(rng)
        X = enumerate_allocations(p)
        names = [objs[int(k)] for k in rng.choice(len(objs), size=3, replace=False)]
        props = X[rng.choice(len(X), size=3)]
        agents = [Voter(f"a{i}", o, props[i]) for i, o in enumerate(names)]
        U = utilities(p, names, X)
        prof = Profile.from_proposals(p, agents)
        perm = [2, 0, 1]
        prof_p = Profile.from_proposals(p, [agents[j] for j in perm])
        for r in rules:
            u = utilities(p, names, aggregate(prof, r).allocation[None])[:, 0]
            dom = np.any(np.all(U >= u[:, None] + tol, axis=0) | (np.all(U >= u[:, None] - 1e-9, axis=0)
                                                                 & np.any(U > u[:, None] + tol, axis=0)))
            up = utilities(p, [names[j] for j in perm], aggregate(prof_p, r).allocation[None])[:, 0]
            anon = not np.allclose(up, u[perm], atol=tol)
            for ax, bad in (("pareto", bool(dom)), ("anonymity", anon)):
                cell = table[r][ax]
                cell["checked"] += 1
                cell["violations"] += int(bad)
                if bad and not any(e["rule"] == r and e["axiom"] == ax for e in examples):
                    examples.append({"rule": r, "axiom": ax, "objectives": names,
                                     "capacity": p.capacity.tolist(), "need": p.need.tolist()})
    for r in rules:
        for c in table[r].values():
            c["share"] = c["violations"] / c["checked"] if c["checked"] else 0.0
    return {"instances": instances, "seed": seed, "axioms": FEASIBLE_AXIOMS, "table": table, "examples": examples}


# -- adversarial search ---------------------------------------------------------------------------

SEARCH_ATOL = 1e-5
"""The search compares lotteries to 1e-5: it steers into ties, where the PF lottery's optimiser returns
equivalent lotteries that differ by ~1e-7 (solver tolerance, not a violation)."""
SEARCH_AXIOMS = [ax for ax in AXIOMS if ax != "non_dictatorship"]  # non-dictatorship is a share, not a witness


def _neighbours(U: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` mutations of each profile in ``U (S, N, K)`` -> ``(S, m, N, K)``, on the 0.01 grid: half move
    one utility by up to +-0.2, half copy one utility of the same agent onto another (ties between
    candidates are where rules' decisions turn)."""
    S, N, K = U.shape
    V = np.repeat(U[:, None], m, axis=1).copy()
    s, j = np.meshgrid(np.arange(S), np.arange(m), indexing="ij")
    a = rng.integers(0, N, size=(S, m))
    k = rng.integers(0, K, size=(S, m))
    k2 = rng.integers(0, K, size=(S, m))
    step = rng.integers(-20, 21, size=(S, m)) / 100.0
    moved = np.clip(np.round(V[s, j, a, k] + step, 2), 0.0, 1.0)
    copied = V[s, j, a, k2]
    V[s, j, a, k] = np.where(j % 2 == 0, moved, copied)
    return V


def search_violation(rule: str, axiom: str, *, starts: int = 8, steps: int = 30, neighbours: int = 16,
                     seed: int = 0) -> dict[str, Any]:
    """Seeded local search for a profile violating ``axiom`` under ``rule``.

    From ``starts`` random profiles of each size (smallest first; 3 x 3 only for manipulation), each
    step checks the axiom on ``neighbours`` mutations of every current profile (:func:`_neighbours`,
    batched) and stops at the first violation; otherwise every profile moves to its neighbour whose
    decision is closest to a tie (the largest ``1 - max_k P_k``, the rule's lottery spread; a uniform
    random neighbour breaks equal scores), since violations of anonymity, neutrality, IIA, monotonicity
    and the others happen where a small change turns the decision. Returns ``found``, the number of
    profiles checked and, if found, the witness (profile and what was changed)."""
    fn = _fn(rule)
    rng = np.random.default_rng([seed, list(RULES.names()).index(rule), list(AXIOMS).index(axiom), 77])
    sizes = [(3, 3)] if axiom == "manipulation" else list(SIZES)
    checked = 0
    for n, k in sizes:
        U = rng.integers(0, 101, size=(starts, n, k)) / 100.0
        for _ in range(steps):
            V = _neighbours(U, neighbours, rng)
            flat = V.reshape(-1, n, k)
            bad, det = check_axiom(fn, axiom, flat, rng, SEARCH_ATOL)
            checked += flat.shape[0]
            if bad.any():
                b = int(np.flatnonzero(bad)[0])
                return {"rule": rule, "axiom": axiom, "found": True, "checked": checked,
                        "detail": det[b], "profile": _witness_profile(flat[b])}
            P = fn(flat).reshape(starts, neighbours, k)
            score = 1.0 - P.max(axis=2) + 1e-3 * rng.random((starts, neighbours))
            U = V[np.arange(starts), score.argmax(axis=1)]
    return {"rule": rule, "axiom": axiom, "found": False, "checked": checked}


def audit_search(rules: list[str] | None = None, *, steps: int = 30, seed: int = 0) -> dict[str, Any]:
    """:func:`search_violation` for every rule x axiom (module doc); ``witnesses`` in the
    :func:`write_witnesses` form (axiom names suffixed ``-search``)."""
    rules = list(RULES.names(kind="candidates")) if rules is None else rules
    table: dict[str, dict[str, Any]] = {}
    witnesses: list[dict[str, Any]] = []
    for r in rules:
        table[r] = {}
        for ax in SEARCH_AXIOMS:
            res = search_violation(r, ax, steps=steps, seed=seed)
            table[r][ax] = {"found": res["found"], "checked": res["checked"]}
            if res["found"]:
                witnesses.append({"rule": r, "axiom": f"{ax}-search", "detail": res["detail"],
                                  "profile": res["profile"]})
    return {"steps": steps, "seed": seed, "axioms": SEARCH_AXIOMS, "table": table, "witnesses": witnesses}


# -- Pareto witnesses on triage cohorts (files `aggregate run --problem --proposals` reads) -----------

def pareto_improvement(profile: Any, allocation: np.ndarray) -> np.ndarray | None:
    """A feasible allocation that gives every agent of ``profile`` at least its utility of ``allocation``
    and one agent more (beyond the egalitarian grid's 2^-GINI_BITS), or ``None``.

    One MILP (:class:`~fairarena.aggregation.feasible.FeasibleModel`): every ``u_a >= u_a(allocation) -
    2^-GINI_BITS``, maximise ``sum_a u_a``; the answer is then certified with the true utilities (so a
    witness never rests on the model's rounding)."""
    from fairarena.aggregation.feasible import GINI_BITS, FeasibleModel
    from fairarena.aggregation.objectives import utilities

    p = profile.problem
    objs = [a.objective for a in profile.agents]
    u0 = utilities(p, objs, np.asarray(allocation, dtype=float)[None])[:, 0]
    fm = FeasibleModel(p, objs, profile.names)
    grid = 2.0**-GINI_BITS
    for a, u in enumerate(fm.u):
        fm.m.add_row({u: 1.0}, lo=max(0.0, float(u0[a]) - grid))
    x = fm.m.lexicographic([(fm.total(), "max")])
    u1 = utilities(p, objs, x[None])[:, 0]
    if np.all(u1 >= u0 - 1e-9) and np.any(u1 > u0 + grid + 1e-6):
        return x
    return None


def cohort_pareto_witnesses(rules: list[str], *, cohorts: int = 3, seed: int = 0,
                            capacity: str = "standard", domain: Any = None) -> dict[str, Any]:
    """Pareto efficiency of ``rules`` on the council of ``cohorts`` sampled instances (seeds ``seed,
    seed+1, ...``) of ``domain`` (a registered name or a domain object; default the package's default
    domain, :data:`fairarena.domains.registry.DEFAULT_DOMAIN`: triage cohorts, six agents, one per
    framework): per rule the instances checked and violated, and for the first violation per rule a
    witness (the instance, the proposals and the dominating allocation) that
    :func:`write_cohort_witnesses` writes as files ``aggregate run`` accepts. The instance comes from the
    domain (``sample``, with the ``capacity`` variant when the domain has ``variants``; ``problem``)."""
    from fairarena.aggregation.council import council_profile, sample_instance
    from fairarena.aggregation.rules import aggregate
    from fairarena.aggregation.objectives import utilities

    table = {r: {"checked": 0, "violations": 0} for r in rules}
    witnesses: list[dict[str, Any]] = []
    for c in range(seed, seed + cohorts):
        dom, cohort = sample_instance(domain, c, capacity)
        prof = council_profile(dom.problem(cohort))
        for r in rules:
            d = aggregate(prof, r)
            if d.lottery is not None:  # ex post Pareto is the random audit's; an expected allocation is not a decision
                continue
            x = d.allocation
            better = pareto_improvement(prof, x)
            table[r]["checked"] += 1
            if better is not None:
                table[r]["violations"] += 1
                if not any(w["rule"] == r for w in witnesses):
                    objs = [a.objective for a in prof.agents]
                    witnesses.append({"rule": r, "axiom": "pareto", "cohort_seed": c, "cohort": cohort, "domain": dom,
                                      "profile": prof, "decision": x, "dominating": better,
                                      "utilities": utilities(prof.problem, objs, x[None])[:, 0].tolist(),
                                      "dominating_utilities": utilities(prof.problem, objs, better[None])[:, 0].tolist()})
    for cell in table.values():
        cell["share"] = cell["violations"] / cell["checked"] if cell["checked"] else 0.0
    return {"cohorts": cohorts, "seed": seed, "capacity": capacity, "table": table, "witnesses": witnesses}


def write_cohort_witnesses(result: dict[str, Any], folder: str | os.PathLike[str]) -> list[str]:
    """Per witness ``RULE__pareto__cohort.json`` and ``RULE__pareto__proposals.json`` (the second with an
    ``audit`` key holding the rule's decision and the dominating allocation with both utility vectors):
    ``aggregate run --problem ..cohort.json --proposals ..proposals.json --rule RULE`` reproduces it."""
    from fairarena.aggregation.io import profile_to_json
    from fairarena.allocation.problem import allocation_to_mapping
    from fairarena.fsutil import atomic_write_json

    os.makedirs(folder, exist_ok=True)
    out = []
    for w in result["witnesses"]:
        p = w["profile"].problem
        base = os.path.join(folder, f"{w['rule']}__pareto")
        atomic_write_json(base + "__cohort.json", w["domain"].to_dict(w["cohort"]))
        doc = profile_to_json(w["profile"])
        doc["audit"] = {"rule": w["rule"], "axiom": "pareto", "cohort_seed": w["cohort_seed"],
                        "decision": allocation_to_mapping(p, w["decision"]), "utilities": w["utilities"],
                        "dominating": allocation_to_mapping(p, w["dominating"]),
                        "dominating_utilities": w["dominating_utilities"]}
        atomic_write_json(base + "__proposals.json", doc)
        out += [base + "__cohort.json", base + "__proposals.json"]
    return out
