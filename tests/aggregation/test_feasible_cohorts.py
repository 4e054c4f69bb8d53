"""Feasible-set rules on standard triage cohorts (the council: six agents, one per framework) against an
enumeration of every achievable CNSS vector.

Under the indicator CNSS form every framework's metric depends on the allocation only through CNSS,
and a need counts as served exactly when it gets its clinical minimum. So the achievable CNSS vectors
are the sums, over resources, of one served set per resource whose minima fit that resource's capacity:
enumerated here resource by resource (a few thousand to a hundred thousand vectors), with the metrics
taken from :data:`METRICS` on CNSS alone. Seeds 7 and 11 are the two slowest standard cohorts for
leximin (benchmarks/bench_aggregation.py)."""

import itertools

import numpy as np
import pytest

from fairarena.aggregation.council import council_profile
from fairarena.aggregation.feasible import NASH_TOL
from fairarena.aggregation.objectives import OBJECTIVES, utilities, utility_range
from fairarena.aggregation.rules import aggregate
from fairarena.allocation.metrics import METRICS
from fairarena.triage.archetypes import sample_cohort


def achievable_cnss(p) -> np.ndarray:
    """Every CNSS vector some feasible allocation of ``p`` (indicator form) reaches, ``(K, n)``."""
    k = np.maximum(p.n_needed.astype(int), 1)
    radix = np.cumprod(np.concatenate([[1], k[:-1] + 1])).astype(np.int64)  # mixed radix: count_i in 0..k_i
    codes = np.zeros(1, dtype=np.int64)
    for r in range(p.n_resources):
        who = np.flatnonzero(p.needed[:, r])
        least = np.ceil(p.threshold[who, r] - 1e-9) if p.indivisible[r] else p.threshold[who, r]
        offsets = [int(radix[who[np.array(s, dtype=bool)]].sum())
                   for s in itertools.product((0, 1), repeat=len(who))
                   if least[np.array(s, dtype=bool)].sum() <= p.capacity[r] + 1e-9]
        codes = np.unique((codes[:, None] + np.asarray(offsets, dtype=np.int64)[None, :]).ravel())
    return ((codes[:, None] // radix) % (k + 1)) / k


def normalised(p, names, C) -> np.ndarray:
    """The agents' normalised utilities ``(N, K)`` of CNSS vectors ``C (K, n)`` (objectives module doc)."""
    out = []
    for nm in names:
        obj = OBJECTIVES.get(nm)
        val = np.asarray(METRICS.get(obj.metric).fn(p, None, C), dtype=float)
        worst, best = utility_range(p, nm)
        out.append(np.ones(len(C)) if abs(best - worst) <= 1e-12 else np.clip((val - worst) / (best - worst), 0, 1))
    return np.stack(out)


@pytest.fixture(scope="module", params=[7, 11])
def cohort(request):
    p = sample_cohort(request.param, "standard").to_problem()
    assert p.cnss == "indicator"
    prof = council_profile(p)
    names = [a.objective for a in prof.agents]
    U = normalised(p, names, achievable_cnss(p))
    return p, prof, names, U


def _u(p, names, x):
    return utilities(p, names, x[None])[:, 0]


def test_enumeration_reaches_every_framework_optimum(cohort):
    """The reference is sound: each agent's best over the enumeration is its own optimum (utility 1),
    and the council's proposals' utilities are among the enumerated vectors."""
    p, prof, names, U = cohort
    assert np.allclose(U.max(axis=1), 1.0, atol=1e-9)
    for k in range(prof.U.shape[1]):
        assert np.abs(U - prof.U[:, [k]]).max(axis=0).min() < 1e-9


def test_leximin_against_enumeration(cohort):
    p, prof, names, U = cohort
    S = np.sort(U, axis=0).T  # (K, N): each achievable vector's utilities, ascending
    best = S[np.lexsort(np.round(S, 9).T[::-1])[-1]]  # the lexicographic maximum (smallest first)
    got = np.sort(_u(p, names, aggregate(prof, "leximin-feasible").allocation))
    assert np.allclose(got, best, atol=1e-7), (got, best)


def test_utilitarian_ks_groups_nash_against_enumeration(cohort):
    p, prof, names, U = cohort
    u = {r: _u(p, names, aggregate(prof, r).allocation)
         for r in ("utilitarian-feasible", "ks-feasible", "maxmin-groups", "nash-bargaining")}
    assert u["utilitarian-feasible"].sum() == pytest.approx(U.sum(0).max(), abs=1e-7)
    assert u["ks-feasible"].min() == pytest.approx(U.min(0).max(), abs=1e-7)
    assert u["maxmin-groups"].min() == pytest.approx(U.min(0).max(), abs=1e-7)
    with np.errstate(divide="ignore"):
        best = np.log(U).sum(0).max()
    assert np.log(u["nash-bargaining"]).sum() >= best - len(names) * NASH_TOL - 1e-9
