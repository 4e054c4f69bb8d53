"""EJR and PJR of a funded project set, checked exactly on approval elections with few projects.

Definitions (approval ballots ``A_i``, budget ``b``, ``n`` voters, a satisfaction ``sat`` additive over
projects: ``cost`` — a project is worth its cost, pabutools' ``Cost_Sat``; ``cardinality`` — it is worth 1,
``Cardinality_Sat``):

* a group ``N'`` of voters is **T-cohesive** for a non-empty project set ``T`` when every member approves all
  of ``T`` and ``|N'| / n * b >= cost(T)`` (Peters, Pierczyński, Skowron 2021, "Proportional participatory
  budgeting with additive utilities", NeurIPS; Łoś, Christoff, Grossi 2022, "Proportional budget
  allocations: towards a systematization", IJCAI);
* **EJR** (PPS 2021): for every T-cohesive group some member has ``sat(W ∩ A_i) >= sat(T)``;
  **EJR up to one project** (the default here, ``up_to_one=True``; what the Method of Equal Shares
  guarantees): ``sat(W ∩ A_i) + max_{p in T \\ W} sat(p) >= sat(T)``;
* **PJR** (ŁCG 2022): for every T-cohesive group the funded projects some member approves are worth at least
  ``sat(T)``: ``sat(W ∩ U_{i in N'} A_i) >= sat(T)``; **PJR up to one project** adds the same surplus.

These are exactly pabutools' ``is_EJR_approval`` / ``is_PJR_approval`` (with ``up_to_func=max`` for "up to
one"), which enumerate every subset of voters and are usable only with a dozen voters; here the voters are
never enumerated:

* EJR: for each ``T`` (every subset of the projects, ``cost(T) <= b``), the voters approving all of ``T`` who
  are not satisfied form a violating group exactly when there are at least ``l(T) = ceil(n cost(T) / b)`` of
  them (all of them have the same ``sat(T)``);
* PJR: the union of a group's ballots grows with the group, so a violation is a set ``X ⊆ W`` with
  ``sat(X) + surplus < sat(T)`` such that at least ``l(T)`` voters approve all of ``T`` and no funded project
  outside ``X``: counted for every ``(T, X)`` at once by a subset-sum transform over the funded projects.

Cost: ``O(2^m * (K + 2^|W| |W|))`` per check with ``K`` distinct ballots: milliseconds on the 10-project
Pabulib instances whatever the number of voters. Limited to :data:`MAX_PROJECTS` projects.

Each violation comes with a **minimal witness**: the project set ``T`` with the fewest projects (then the
lowest cost, then the first in the election's project order), and the smallest violating group: ``l(T)``
voters (their ids, the first ``l(T)`` in file order among those who qualify).

**Priceability** (Peters & Skowron 2020; the conditions of pabutools' ``priceable`` with ``exhaustive=False``,
``stable=False``): a voter budget ``b`` with ``n b >= budget`` and payments ``p_i(c) >= 0`` such that a voter pays
only for funded projects it approves and at most ``b`` in all, each funded project is paid exactly its cost,
and for every unfunded project the leftover money of its supporters, ``sum_{i approves c} (b - sum_c' p_i(c'))``,
is at most its cost. :func:`is_priceable` solves that LP (HiGHS) on the distinct ballots, each with its
multiplicity: a price system of the voters, averaged within each ballot type, is one of the types (every
condition is linear and treats voters of one type alike), and one of the types gives one to every voter; so
the answer is the voters' LP's, with as many variables as distinct ballots times funded projects (Warsaw-Wesoła
2023, 1,181 voters: tens of milliseconds, against 15-40 s for pabutools' LP over every voter through CBC).
:func:`priceable` asks pabutools itself (``pabutools.analysis.priceability.priceable``), for comparison
(tests/pb/test_pb_axioms.py compares the two).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairarena.errors import InputError

__all__ = ["check", "MAX_PROJECTS", "AXIOMS", "priceable", "is_priceable", "is_priceable_election",
           "ballot_types"]

#: most projects an exact check enumerates (2^m project sets)
MAX_PROJECTS = 16
AXIOMS = ("EJR", "PJR")
_TOL = 1e-9


def ballot_types(approvals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ballots as bitmasks (bit j: project j approved), their counts, and each voter's type index."""
    A = np.asarray(approvals, dtype=bool)
    m = A.shape[1]
    codes = (A.astype(np.int64) << np.arange(m, dtype=np.int64)[None, :]).sum(axis=1)
    types, inverse, counts = np.unique(codes, return_inverse=True, return_counts=True)
    return types, counts, inverse


def _values(costs: np.ndarray, satisfaction: str) -> np.ndarray:
    if satisfaction == "cost":
        return np.asarray(costs, dtype=float)
    if satisfaction == "cardinality":
        return np.ones(len(costs))
    raise InputError("satisfaction", satisfaction, "cost or cardinality")


def _set_values(v: np.ndarray) -> np.ndarray:
    """``out[s] = sum_{j in s} v[j]`` for every bitmask ``s`` over ``len(v)`` bits."""
    m = len(v)
    idx = np.arange(2 ** m, dtype=np.int64)
    bits = ((idx[:, None] >> np.arange(m)[None, :]) & 1).astype(float)
    return bits @ v if m else np.zeros(1)


def check(approvals: np.ndarray, costs: np.ndarray, budget: float, funded: np.ndarray, satisfaction: str = "cost",
          up_to_one: bool = True, voter_ids: Any = None, project_ids: Any = None) -> dict[str, Any]:
    """EJR and PJR of the funded set (module doc): ``{"EJR": bool, "PJR": bool, "witness": {axiom: ... | None}}``.

    A witness: ``{"T": [project ids], "cost": cost(T), "size": l(T), "voters": [ids of l(T) voters],
    "qualifying": how many voters could be in such a group}`` (PJR adds ``"X"``: the funded projects those
    voters approve, together worth less than ``sat(T)``)."""
    A = np.asarray(approvals, dtype=bool)
    costs = np.asarray(costs, dtype=float)
    W = np.asarray(funded, dtype=bool)
    n, m = A.shape
    if m > MAX_PROJECTS:
        raise InputError("projects", m, f"at most {MAX_PROJECTS} for an exact EJR/PJR check")
    pids = list(project_ids) if project_ids is not None else [str(j) for j in range(m)]
    vids = list(voter_ids) if voter_ids is not None else [str(i) for i in range(n)]
    v = _values(costs, satisfaction)
    types, counts, inverse = ballot_types(A)
    full = 2 ** m
    setcost = _set_values(costs)
    setval = _set_values(v)
    T = np.arange(1, full, dtype=np.int64)
    # l(T): the smallest group that may claim T (group * b >= cost(T) * n), at least one voter
    need = np.maximum(1, np.ceil(setcost[T] * n / budget - _TOL)).astype(np.int64) if budget > 0 else np.full(len(T), n + 1)
    contains = (types[None, :] & T[:, None]) == T[:, None]            # (T, K): the ballot approves all of T
    supporters = contains @ counts
    ok = (setcost[T] <= budget + _TOL) & (supporters >= need)
    T, need, contains = T[ok], need[ok], contains[ok]
    wmask = int((W.astype(np.int64) << np.arange(m, dtype=np.int64)).sum())
    thr = setval[T]
    if up_to_one:
        missing = T & ~wmask
        bits = ((missing[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)
        surplus = np.where(bits, v[None, :], 0.0).max(axis=1, initial=0.0)
    else:
        surplus = np.zeros(len(T))
    order_key = lambda i: (bin(int(T[i])).count("1"), setcost[T[i]], _proj_order(int(T[i]), m))  # noqa: E731
    out: dict[str, Any] = {"satisfaction": satisfaction, "up_to_one": up_to_one, "witness": {}}
    # EJR: unsatisfied supporters of T
    sat_type = setval[types & wmask]
    unsat = contains & (sat_type[None, :] + surplus[:, None] < thr[:, None] - _TOL * np.maximum(1, thr[:, None]))
    bad = np.nonzero(unsat @ counts >= need)[0]
    out["EJR"] = not len(bad)
    if len(bad):
        i = min(bad, key=order_key)
        voters = np.nonzero(unsat[i][inverse])[0][: need[i]]
        out["witness"]["EJR"] = _witness(int(T[i]), pids, setcost, need[i], voters, vids, int((unsat[i] @ counts)))
    else:
        out["witness"]["EJR"] = None
    # PJR: g[T, X] = voters approving all of T whose funded approvals lie within X (X over the funded bits)
    fbits = np.nonzero(W)[0]
    k = len(fbits)
    wpart = np.zeros(len(types), dtype=np.int64)
    for r, j in enumerate(fbits):
        wpart |= ((types >> j) & 1) << r
    onehot = np.zeros((len(types), 2 ** k))
    onehot[np.arange(len(types)), wpart] = counts
    g = contains.astype(float) @ onehot                               # (T, 2^k)
    for r in range(k):                                                # subset sums over X
        step = 1 << r
        idx = np.arange(2 ** k)
        has = (idx & step) > 0
        g[:, has] += g[:, idx[has] ^ step]
    xval = _set_values(v[fbits]) if k else np.zeros(1)
    low = xval[None, :] + surplus[:, None] < thr[:, None] - _TOL * np.maximum(1, thr[:, None])
    viol = low & (g >= need[:, None] - 0.5)
    bad = np.nonzero(viol.any(axis=1))[0]
    out["PJR"] = not len(bad)
    if len(bad):
        i = min(bad, key=order_key)
        xs = np.nonzero(viol[i])[0]
        x = int(xs[np.argmin(xval[xs])])                              # the violating X worth least
        inside = np.array([(types[t] & T[i]) == T[i] and (wpart[t] & ~x) == 0 for t in range(len(types))])
        voters = np.nonzero(inside[inverse])[0][: need[i]]
        wit = _witness(int(T[i]), pids, setcost, need[i], voters, vids, int(g[i, x]))
        wit["X"] = [pids[fbits[r]] for r in range(k) if x >> r & 1]
        out["witness"]["PJR"] = wit
    else:
        out["witness"]["PJR"] = None
    return out


def _proj_order(t: int, m: int) -> tuple[int, ...]:
    return tuple(j for j in range(m) if t >> j & 1)


def _witness(t: int, pids: list[str], setcost: np.ndarray, size: int, voters: np.ndarray, vids: list[str],
             qualifying: int) -> dict[str, Any]:
    return {"T": [pids[j] for j in range(len(pids)) if t >> j & 1], "cost": float(setcost[t]), "size": int(size),
            "voters": [str(vids[i]) for i in voters], "qualifying": qualifying}


def check_election(e: Any, mask: np.ndarray, satisfaction: str = "cost", up_to_one: bool = True) -> dict[str, Any]:
    """:func:`check` on an :class:`~fairarena.pb.election.Election` (approval ballots: a positive score)."""
    return check(e.approvals, e.costs, e.budget, mask, satisfaction, up_to_one, e.voter_ids, e.project_ids)


def priceable(e: Any, mask: np.ndarray, max_seconds: int = 60) -> bool | None:
    """pabutools' priceability of the funded set (module doc); None when its LP gives no answer."""
    from pabutools.analysis.priceability import priceable as _priceable

    inst, prof = e.pabutools()
    chosen = [p for p in inst if p.name in set(e.ids(mask))]
    try:
        res = _priceable(inst, prof, chosen, exhaustive=False, max_seconds=max_seconds)
    except Exception:  # noqa: BLE001 - the LP backend's failure: no answer
        return None
    return bool(res.validate()) if res.validate() is not None else None



def is_priceable(approvals: np.ndarray, costs: np.ndarray, budget: float, funded: np.ndarray) -> bool:
    """Whether the funded set is priceable (module doc), by one LP over the distinct ballots. Costs and money are
    in units of the budget (a budget of 0: only the empty set, trivially priced)."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    A = np.asarray(approvals, dtype=bool)
    W = np.asarray(funded, dtype=bool)
    costs = np.asarray(costs, dtype=float)
    n, m = A.shape
    if budget <= 0 or n == 0:
        return not W.any()
    if float(costs[W].sum()) > budget * (1 + _TOL):
        return False
    c = costs / budget                                  # money in units of the budget
    uniq, w = np.unique(A, axis=0, return_counts=True)
    w = w.astype(float)
    K = len(uniq)
    pairs = [(k, j) for k in range(K) for j in np.nonzero(uniq[k] & W)[0]]   # type k may pay for funded j
    P = len(pairs)
    nv = P + 1                                          # the payments, then b (the last variable)
    rows, cols, vals, ub = [], [], [], []
    r = 0
    by_type: list[list[int]] = [[] for _ in range(K)]
    for v, (k, j) in enumerate(pairs):
        by_type[k].append(v)
    for k in range(K):                                  # sum_c p_k(c) - b <= 0
        for v in by_type[k]:
            rows.append(r); cols.append(v); vals.append(1.0)
        rows.append(r); cols.append(P); vals.append(-1.0)
        ub.append(0.0); r += 1
    for j in np.nonzero(~W)[0]:                         # leftover of c's supporters <= cost(c)
        sup = np.nonzero(uniq[:, j])[0]
        if not len(sup):
            continue
        rows.append(r); cols.append(P); vals.append(float(w[sup].sum()))
        for k in sup:
            for v in by_type[k]:
                rows.append(r); cols.append(v); vals.append(-w[k])
        ub.append(float(c[j])); r += 1
    rows.append(r); cols.append(P); vals.append(-float(n)); ub.append(-1.0); r += 1   # n b >= 1 (the budget)
    A_ub = coo_matrix((vals, (rows, cols)), shape=(r, nv)).tocsr()
    eq_rows, eq_cols, eq_vals, b_eq = [], [], [], []
    funded_j = list(np.nonzero(W)[0])
    where = {j: i for i, j in enumerate(funded_j)}
    for v, (k, j) in enumerate(pairs):                  # sum_k w_k p_k(c) = cost(c) for funded c
        eq_rows.append(where[j]); eq_cols.append(v); eq_vals.append(w[k])
    for j in funded_j:
        b_eq.append(float(c[j]))
    A_eq = coo_matrix((eq_vals, (eq_rows, eq_cols)), shape=(len(funded_j), nv)).tocsr() if funded_j else None
    res = linprog(np.zeros(nv), A_ub=A_ub, b_ub=np.array(ub), A_eq=A_eq, b_eq=np.array(b_eq) if funded_j else None,
                  bounds=[(0, None)] * nv, method="highs")
    return bool(res.status == 0)


def is_priceable_election(e: Any, mask: np.ndarray) -> bool:
    """:func:`is_priceable` on an :class:`~fairarena.pb.election.Election` (approval ballots: a positive score)."""
    return is_priceable(e.approvals, e.costs, e.budget, mask)
