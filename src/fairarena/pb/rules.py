"""The PB rules on an :class:`~fairarena.pb.election.Election`: every decision is a feasible project set.

* :func:`greedy` — the cities' greedy rule: projects by total support (approvals, points), the most supported
  first, each funded when it still fits (pabutools' ``greedy_utilitarian_welfare`` with ``Cost_Sat``; ties by
  project id as text, pabutools' lexicographic tie-breaking);
* :func:`equal_shares` — the Method of Equal Shares (satisfaction ``cost``: a voter's utility for a project is
  its cost, ``Cost_Sat``; ``cardinality``: 1, ``Cardinality_Sat``), with a completion: ``add1`` (the budget per voter
  raised by 1 while the outcome stays within the budget, the last such outcome kept: the completion of
  equalshares.net that Wieliczka's file names, ``rule;equalshares/add1``), ``add1-exhaustive`` (the same, but
  stopping at the first exhaustive outcome: pabutools' ``voter_budget_increment=1``; on Wieliczka it stops 4
  steps early, funding 66 and 67 instead of 46) or none. A vectorised implementation of pabutools' algorithm (same tie-breaking),
  equal to it on the files of ``tests/pb`` and about 10x faster (docs/performance.md);
* :func:`phragmen` — sequential Phragmén through pabutools (on the approvals: a positive score approves);
* :func:`max_utilitarian` — the project set of greatest total satisfaction (a knapsack: HiGHS MILP), as
  pabutools' ``max_additive_utilitarian_welfare``.
"""

from __future__ import annotations

import numpy as np

from fairarena.errors import InputError, SolverError
from fairarena.pb.election import Election

__all__ = ["greedy", "equal_shares", "phragmen", "max_utilitarian", "knapsack", "SATISFACTIONS", "PB_RULES",
           "pb_rule", "utilities"]

SATISFACTIONS = ("cost", "cardinality")
COMPLETIONS = (None, "none", "add1", "add1-exhaustive")
#: the PB rules by name (compare's rows, in order)
PB_RULES = ("greedy", "equal-shares", "phragmen", "max-utilitarian")

_EPS = 1e-9


def _tie_order(e: Election) -> np.ndarray:
    """Rank of each project under pabutools' lexicographic tie-breaking (its id as text)."""
    order = sorted(range(e.n_projects), key=lambda j: e.project_ids[j])
    rank = np.empty(e.n_projects, dtype=int)
    rank[order] = np.arange(e.n_projects)
    return rank


def utilities(e: Election, satisfaction: str = "cost") -> np.ndarray:
    """``(voters, projects)``: a voter's utility for a project (its score, times the cost under ``cost``)."""
    if satisfaction not in SATISFACTIONS:
        raise InputError("satisfaction", satisfaction, f"one of {', '.join(SATISFACTIONS)}")
    return e.scores * e.costs[None, :] if satisfaction == "cost" else e.scores.copy()


def greedy(e: Election) -> np.ndarray:
    """The greedy rule (module doc): a bool mask of the funded projects."""
    support = e.scores.sum(axis=0)
    rank = _tie_order(e)
    order = sorted(range(e.n_projects), key=lambda j: (-support[j], rank[j]))
    mask = np.zeros(e.n_projects, dtype=bool)
    left = e.budget
    for j in order:
        if support[j] > 0 and e.costs[j] <= left + _EPS:
            mask[j] = True
            left -= e.costs[j]
    return mask


def _mes_once(U: np.ndarray, costs: np.ndarray, b0: float, sup: list[np.ndarray], usup: list[np.ndarray],
              rank: np.ndarray) -> np.ndarray:
    n, m = U.shape
    b = np.full(n, float(b0))
    mask = np.zeros(m, dtype=bool)
    total_u = np.array([u.sum() for u in usup])
    remaining = []
    afford = np.full(m, np.inf)
    for j in range(m):
        if total_u[j] > 0:
            if costs[j] > 0:
                afford[j] = costs[j] / total_u[j]
                remaining.append(j)
            else:
                mask[j] = True
    while remaining:
        best, best_js, best_rho = np.inf, [], np.inf
        for j in sorted(remaining, key=lambda j: afford[j]):
            if afford[j] > best * (1 + _EPS):
                break
            bs = b[sup[j]]
            if bs.sum() < costs[j] * (1 - 1e-12):
                remaining.remove(j)
                continue
            u = usup[j]
            r = bs / u
            o = np.argsort(r, kind="stable")
            rs, us, bo = r[o], u[o], bs[o]
            paid = np.concatenate(([0.0], np.cumsum(bo)[:-1]))
            rest = np.cumsum(us[::-1])[::-1]
            rho = (costs[j] - paid) / rest
            k = int(np.argmax(rho <= rs * (1 + 1e-12)))
            rho_j = float(rho[k])
            afford[j] = rho_j
            if rho_j < best * (1 - _EPS):
                best, best_js = rho_j, [j]
            elif rho_j <= best * (1 + _EPS):
                best_js.append(j)
        if not best_js:
            break
        j = min(best_js, key=lambda j: rank[j])
        rho_j = afford[j]
        s = sup[j]
        b[s] -= np.minimum(b[s], rho_j * usup[j])
        mask[j] = True
        remaining.remove(j)
    return mask


#: elections of at most this many projects run Equal Shares' add1 steps in batches (:func:`_mes_batch`)
BATCH_MAX_PROJECTS = 20
_BATCH_MIN, _BATCH_MAX = 8, 256


def _distinct(U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct utility rows and their multiplicities: voters with the same row start with the same budget
    and are always charged alike, so Equal Shares treats them as one voter of weight ``w``."""
    uniq, counts = np.unique(U, axis=0, return_counts=True)
    return uniq, counts.astype(float)


def _mes_batch(Ud: np.ndarray, w: np.ndarray, costs: np.ndarray, b0s: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Equal Shares run for several starting budgets per voter at once (one row per budget ``b0s[k]``) on the
    distinct ballots ``Ud`` with multiplicities ``w``: the same choices as :func:`_mes_once` (each round every
    row funds the remaining affordable project of least rho, ties by ``rank``), vectorised over the rows.
    Returns ``(len(b0s), projects)`` bool."""
    K = len(b0s)
    D, m = Ud.shape
    B = np.repeat(np.asarray(b0s, dtype=float)[:, None], D, axis=1)
    mask = np.zeros((K, m), dtype=bool)
    sup = [np.nonzero(Ud[:, j] > 0)[0] for j in range(m)]
    usup = [Ud[s, j] for j, s in enumerate(sup)]
    wsup = [w[s] for s in sup]
    wu = [ws * us for ws, us in zip(wsup, usup)]
    remaining = np.zeros((K, m), dtype=bool)
    for j in range(m):
        if wu[j].sum() > 0:
            if costs[j] > 0:
                remaining[:, j] = True
            else:
                mask[:, j] = True
    rows = np.arange(K)
    while remaining.any():
        rho = np.full((K, m), np.inf)
        for j in np.nonzero(remaining.any(axis=0))[0]:
            live = np.nonzero(remaining[:, j])[0]
            bs = B[np.ix_(live, sup[j])]
            afford = bs @ wsup[j] >= costs[j] * (1 - 1e-12)
            remaining[live[~afford], j] = False
            live, bs = live[afford], bs[afford]
            if not len(live):
                continue
            r = bs / usup[j][None, :]
            o = np.argsort(r, axis=1, kind="stable")
            rs = np.take_along_axis(r, o, axis=1)
            wb = np.take_along_axis(bs * wsup[j][None, :], o, axis=1)
            wus = wu[j][o]
            paid = np.cumsum(wb, axis=1) - wb
            rest = np.cumsum(wus[:, ::-1], axis=1)[:, ::-1]
            rr = (costs[j] - paid) / rest
            k = np.argmax(rr <= rs * (1 + 1e-12), axis=1)
            rho[live, j] = rr[np.arange(len(live)), k]
        best = rho.min(axis=1)
        going = np.isfinite(best)
        if not going.any():
            break
        tied = rho <= best[:, None] * (1 + _EPS)
        pick = np.where(tied, rank[None, :], np.iinfo(np.int64).max).argmin(axis=1)
        for j in np.unique(pick[going]):
            ks = rows[going & (pick == j)]
            charge = rho[ks, j][:, None] * usup[j][None, :]
            sub = B[np.ix_(ks, sup[j])]
            B[np.ix_(ks, sup[j])] = sub - np.minimum(sub, charge)
            mask[ks, j] = True
            remaining[ks, j] = False
        remaining[~going] = False
    return mask


def equal_shares(e: Election, satisfaction: str = "cost", completion: str | None = "add1",
                 trace: list[np.ndarray] | None = None, batch: bool | None = None) -> np.ndarray:
    """The Method of Equal Shares (module doc); ``trace`` collects the outcome of every add1 step.

    ``batch`` (default: elections of at most :data:`BATCH_MAX_PROJECTS` projects) runs the add1 steps several
    budgets at a time on the distinct ballots (:func:`_mes_batch`): the same outcomes as one run per step
    (``batch=False``; compared on all 272 small Pabulib elections, tests/pb/test_pb_speed.py), many times faster
    on small elections with many voters."""
    if completion not in COMPLETIONS:
        raise InputError("completion", completion, "one of add1, add1-exhaustive, none")
    U = utilities(e, satisfaction)
    if batch is None:
        batch = e.n_projects <= BATCH_MAX_PROJECTS
    rank = _tie_order(e)
    b = e.budget / e.n_voters
    if batch:
        Ud, w = _distinct(U)
        supported = (Ud > 0).any(axis=0)
        run = lambda bs: _mes_batch(Ud, w, e.costs, np.asarray(bs), rank)  # noqa: E731
    else:
        sup = [np.nonzero(U[:, j] > 0)[0] for j in range(e.n_projects)]
        usup = [U[s, j] for j, s in enumerate(sup)]
        supported = np.array([len(s) > 0 for s in sup])
        run = lambda bs: [_mes_once(U, e.costs, bs[0], sup, usup, rank)]  # noqa: E731
    previous = None
    size = 1 if completion in (None, "none") or not batch else _BATCH_MIN
    while True:
        budgets = [b]
        for _ in range(size - 1):                 # b + 1 + 1 ...: the same floats as one step at a time
            budgets.append(budgets[-1] + 1.0)
        outs = np.asarray(run(budgets))
        if completion in (None, "none"):
            if trace is not None:
                trace.append(outs[0])
            return outs[0]
        spent = outs.astype(float) @ e.costs
        over = spent > e.budget + _EPS
        stop = over | ~np.any(supported[None, :] & ~outs, axis=1)
        if completion == "add1-exhaustive":
            stop |= ~np.any(supported[None, :] & ~outs & (e.costs[None, :] <= (e.budget - spent)[:, None] + _EPS),
                            axis=1)
        k = int(np.argmax(stop)) if stop.any() else len(outs)
        if trace is not None:
            trace.extend(list(outs[:k + 1]))
        if k < len(outs):
            if not over[k]:
                return outs[k]
            if k > 0:
                return outs[k - 1]
            return previous if previous is not None else outs[0]
        previous = outs[-1]
        b = budgets[-1] + 1.0
        if batch:
            size = min(_BATCH_MAX, size * 2)


def phragmen(e: Election) -> np.ndarray:
    """Sequential Phragmén through pabutools, on the approvals (a positive score approves)."""
    from pabutools.election import ApprovalMultiProfile, FrozenApprovalBallot, Instance, Project
    from pabutools.rules import sequential_phragmen

    projects = [Project(pid, int(c) if float(c).is_integer() else float(c)) for pid, c in zip(e.project_ids, e.costs)]
    inst = Instance(projects, budget_limit=int(e.budget) if float(e.budget).is_integer() else e.budget)
    # one ballot per distinct approval set, with its multiplicity (the same outcome: ties are broken over
    # projects, never voters; checked equal on the 272 small Pabulib files and the shipped ones)
    uniq, counts = np.unique(e.approvals, axis=0, return_counts=True)
    prof = ApprovalMultiProfile(instance=inst)
    for row, c in zip(uniq, counts):
        prof[FrozenApprovalBallot([projects[j] for j in np.nonzero(row)[0]])] = int(c)
    out = sequential_phragmen(inst, prof)
    return e.index(p.name for p in out)


def knapsack(values: np.ndarray, costs: np.ndarray, budget: float) -> np.ndarray:
    """The project set of greatest total value within the budget (HiGHS MILP; ties: the solver's)."""
    from scipy.optimize import Bounds, LinearConstraint

    from fairarena.solver_console import milp

    m = len(values)
    if not np.any(values > 0):
        return np.zeros(m, dtype=bool)
    res = milp(-np.asarray(values, dtype=float), integrality=np.ones(m), bounds=Bounds(0, 1),
               constraints=[LinearConstraint(np.asarray(costs, dtype=float)[None, :], -np.inf, budget)],
               options={"mip_rel_gap": 1e-9})
    if res.status != 0 or res.x is None:
        raise SolverError(f"knapsack: {res.message}")
    return res.x > 0.5


def max_utilitarian(e: Election, satisfaction: str = "cost") -> np.ndarray:
    """The feasible project set of greatest total voter satisfaction (module doc)."""
    return knapsack(utilities(e, satisfaction).sum(axis=0), e.costs, e.budget)


def pb_rule(e: Election, rule: str, satisfaction: str = "cost") -> np.ndarray:
    """One of :data:`PB_RULES` on the election."""
    if rule == "greedy":
        return greedy(e)
    if rule == "equal-shares":
        return equal_shares(e, satisfaction, "add1")
    if rule == "phragmen":
        return phragmen(e)
    if rule == "max-utilitarian":
        return max_utilitarian(e, satisfaction)
    raise InputError("rule", rule, f"one of {', '.join(PB_RULES)}")


def pabutools_equal_shares(e: Election, satisfaction: str = "cost", completion: str | None = "add1") -> np.ndarray:
    """pabutools' own Method of Equal Shares on the file (for comparison: exact fractions, slower). Any add1
    completion is pabutools' own, which stops at the first exhaustive outcome (``add1-exhaustive`` here)."""
    from pabutools.election import Cardinality_Sat, Cost_Sat
    from pabutools.rules import method_of_equal_shares

    inst, prof = e.pabutools()
    out = method_of_equal_shares(inst, prof, sat_class=Cost_Sat if satisfaction == "cost" else Cardinality_Sat,
                                 voter_budget_increment=None if completion in (None, "none") else 1)
    return e.index(p.name for p in out)


def pabutools_greedy(e: Election) -> np.ndarray:
    """pabutools' greedy_utilitarian_welfare with Cost_Sat on the file."""
    from pabutools.election import Cost_Sat
    from pabutools.rules import greedy_utilitarian_welfare

    inst, prof = e.pabutools()
    return e.index(p.name for p in greedy_utilitarian_welfare(inst, prof, sat_class=Cost_Sat))

