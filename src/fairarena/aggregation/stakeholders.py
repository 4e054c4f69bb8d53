"""Stakeholder-centric evaluation of a collective decision (an allocation, or a lottery over the agents'
candidates) and of the agents that shaped it (also :mod:`fairarena.evaluation`, which re-exports it:
it lives here, beside the profiles and utilities it reads, so the council and the ``evaluate``
command call it without the aggregation package importing the evaluation package). The same function evaluates an individual agent's
proposal (pass it as the decision) and the joint decision.

For each stakeholder (agent) ``a`` with normalised utility ``u_a`` (see
:mod:`fairarena.aggregation.objectives`; 1 = its ideal over the feasible set):

* ``utility`` u_a and ``regret`` ``1 - u_a`` (the distance to its own ideal);
* ``proportional``: ``u_a >= 1/N`` (at least a 1/N share of its best achievable, above its worst);
* ``decision_share``: the procedural-fairness score of the decision over the agents' favourite
  candidates (the bandit core's ``pf`` value: the largest share of the decision that can be assigned
  to agents, at most 1/N each, on candidates they rank first; 1 = every agent controls a full 1/N);
* the worst-off stakeholder and group (mean utility of the group's members), the Gini of utilities.

For allocation problems also the recipients' view: envy-freeness up to one good between patients
(patient i values a bundle by the CNSS it would give i; i envies j when ``CNSS_i(x_j) > CNSS_i(x_i)``;
EF1 holds for the pair when removing one unit of some resource from j's bundle removes the envy) and
the spread of CNSS (max - min, standard deviation).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairarena.aggregation import candidates as C
from fairarena.aggregation.objectives import utilities
from fairarena.aggregation.rules import Profile
from fairarena.allocation.metrics import need_satisfaction
from fairarena.allocation.problem import AllocationProblem
from fairarena.inequality import gini

__all__ = ["evaluate", "recipients_view", "envy_free_up_to_one", "utility_summary", "TOL"]

TOL = 1e-9


def evaluate(profile: Profile, *, allocation: np.ndarray | None = None,
             lottery: np.ndarray | None = None) -> dict[str, Any]:
    """Evaluate a decision: an ``allocation`` (scored with the agents' objectives) or a ``lottery``
    ``(K,)`` over the profile's candidates (expected utilities)."""
    N, K = profile.U.shape
    if lottery is not None:
        p = np.asarray(lottery, dtype=float)
        u = profile.U @ p
        U2, p2 = profile.U, p
    else:
        assert profile.problem is not None and allocation is not None
        u = utilities(profile.problem, [a.objective for a in profile.agents], np.asarray(allocation)[None],
                      profile.normalise)[:, 0]
        U2 = np.concatenate([profile.U, u[:, None]], axis=1)  # the decision as one more candidate
        p2 = np.zeros(K + 1)
        p2[K] = 1.0
    share = float(C.pf_score(U2, p2))
    ideal = 1.0 if profile.normalise == "range" else None
    groups: dict[str, list[int]] = {}
    for i, a in enumerate(profile.agents):
        groups.setdefault(a.group or a.name, []).append(i)
    gmean = {g: float(np.mean(u[idx])) for g, idx in groups.items()}
    worst = int(np.argmin(u))
    out: dict[str, Any] = {
        "stakeholders": [{"name": a.name, "objective": a.objective or None, "group": a.group,
                          "utility": float(u[i]),
                          "regret": None if ideal is None else float(ideal - u[i]),
                          "proportional": bool(u[i] >= 1.0 / N - TOL)} for i, a in enumerate(profile.agents)],
        "proportionality": bool(np.all(u >= 1.0 / N - TOL)),
        "decision_share": share,
        "worst_off": {"name": profile.agents[worst].name, "utility": float(u[worst])},
        "worst_group": (lambda g: {"group": g, "mean_utility": gmean[g]})(min(gmean, key=gmean.__getitem__)),
        "gini_utilities": gini_of_utilities(u),
        "mean_utility": float(np.mean(u)),
    }
    x = allocation
    if x is None and profile.X is not None and lottery is not None:
        x = np.einsum("k,knr->nr", np.asarray(lottery, float), profile.X)
    if profile.problem is not None and x is not None:
        out["recipients"] = recipients_view(profile.problem, x)
    return out


def gini_of_utilities(u: Any) -> float:
    """The Gini coefficient of the stakeholders' normalised utilities, a utility below the scale's 0 (a
    decision worse for someone than every candidate the scale was set by) counted as 0: the Gini of
    negative values is not an inequality measure (it can exceed 1)."""
    return float(gini(np.clip(np.asarray(u, dtype=float), 0.0, None)))


def utility_summary(utilities: dict[str, float]) -> dict[str, Any]:
    """The worst-off stakeholder, its utility and the Gini of utilities (:func:`gini_of_utilities`) of one
    decision's normalised utilities (stakeholder -> utility): a study row's evaluation."""
    worst = min(utilities, key=lambda a: utilities[a])
    return {"worst_off": worst, "min_utility": float(utilities[worst]),
            "gini_utilities": gini_of_utilities(list(utilities.values()))}


def _cnss_of(problem: AllocationProblem, i: int, bundle: np.ndarray) -> float:
    """Patient ``i``'s CNSS if it received ``bundle (R,)``."""
    x = problem.zeros()
    x[i] = bundle
    return float(need_satisfaction(problem, x)[i])


def envy_free_up_to_one(problem: AllocationProblem, x: np.ndarray) -> dict[str, Any]:
    """Envy and EF1 between patients (module doc); pairs listed as ``[i, j]`` ids (i envies j)."""
    x = np.asarray(x, dtype=float)
    own = need_satisfaction(problem, x)
    envy, ef1_bad = [], []
    for i in range(problem.n):
        for j in range(problem.n):
            if i == j:
                continue
            v = _cnss_of(problem, i, x[j])
            if v <= own[i] + TOL:
                continue
            envy.append([problem.ids[i], problem.ids[j]])
            ok = False
            for r in range(problem.n_resources):
                if x[j, r] <= TOL:
                    continue
                b = x[j].copy()
                b[r] = max(0.0, b[r] - 1.0)
                if _cnss_of(problem, i, b) <= own[i] + TOL:
                    ok = True
                    break
            if not ok:
                ef1_bad.append([problem.ids[i], problem.ids[j]])
    return {"envy_free": not envy, "ef1": not ef1_bad, "envy_pairs": envy, "ef1_violations": ef1_bad}


def recipients_view(problem: AllocationProblem, x: np.ndarray) -> dict[str, Any]:
    c = need_satisfaction(problem, np.asarray(x, float))
    ef = envy_free_up_to_one(problem, x)
    return {"cnss": [float(v) for v in c], "cnss_min": float(c.min()), "cnss_max": float(c.max()),
            "cnss_spread": float(c.max() - c.min()), "cnss_std": float(c.std()), **ef}
