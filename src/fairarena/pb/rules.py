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


def equal_shares(e: Election, satisfaction: str = "cost", completion: str | None = "add1",
                 trace: list[np.ndarray] | None = None) -> np.ndarray:
    """The Method of Equal Shares (module doc); ``trace`` collects the outcome of every add1 step."""
    if completion not in COMPLETIONS:
        raise InputError("completion", completion, "one of add1, add1-exhaustive, none")
    U = utilities(e, satisfaction)
    sup = [np.nonzero(U[:, j] > 0)[0] for j in range(e.n_projects)]
    usup = [U[s, j] for j, s in enumerate(sup)]
    rank = _tie_order(e)
    b = e.budget / e.n_voters
    supported = np.array([len(s) > 0 for s in sup])
    previous = None
    while True:
        out = _mes_once(U, e.costs, b, sup, usup, rank)
        if trace is not None:
            trace.append(out)
        if completion in (None, "none"):
            return out
        spent = e.cost(out)
        if spent > e.budget + _EPS:
            return previous if previous is not None else out
        left = e.budget - spent
        if completion == "add1-exhaustive" and not np.any(supported & ~out & (e.costs <= left + _EPS)):
            return out
        if not np.any(supported & ~out):
            return out
        previous = out
        b += 1.0


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
    from scipy.optimize import Bounds, LinearConstraint, milp

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

