"""The scripted negotiator: openings are the triage core's optima; concession is monotonic."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.allocation.problem import check_feasibility
from fairarena.allocation.welfare import need_satisfaction
from fairarena.arena import Negotiator, parse_agent, proportional_allocation
from fairarena.arena.research_adversarial import bias_weights
from fairarena.triage import compute_metrics, optimal_allocation, sample_cohort


@pytest.fixture(scope="module")
def cohort():
    return sample_cohort(11, "tight")


@pytest.mark.parametrize("fw", ["utilitarian", "egalitarian", "rawlsian", "prioritarian", "care", "libertarian"])
def test_opening_is_the_framework_optimum(cohort, fw):
    p = cohort.to_problem()
    x = Negotiator(p, parse_agent(f"aligned:{fw}"), cohort=cohort).ideal()
    assert np.allclose(x, optimal_allocation(p, fw))


@pytest.mark.parametrize("fw, key, sign", [("utilitarian", "esg", 1), ("rawlsian", "rmg", 1), ("care", "vwci", 1),
                                          ("prioritarian", "dw_esg", 1)])
def test_concession_is_monotonic_and_keeps_its_promise(cohort, fw, key, sign):
    p = cohort.to_problem()
    me = Negotiator(p, parse_agent(f"aligned:{fw}"), cohort=cohort)
    partner = proportional_allocation(p)
    target = need_satisfaction(p, partner)
    own = []
    for lam in (0.0, 0.3, 0.6, 0.9, 1.0):
        x = me.propose(lam, partner)
        assert check_feasibility(p, x) == []
        kept = np.minimum(need_satisfaction(p, x), target).sum()
        assert kept >= lam * target.sum() - 1e-6
        own.append(sign * compute_metrics(p, x)[key])
    assert all(a >= b - 1e-7 for a, b in zip(own, own[1:]))  # own welfare never rises
    assert own[0] > own[-1] + 1e-6  # and conceding costs something on this cohort


def test_proportional_baseline(cohort):
    p = cohort.to_problem()
    x = proportional_allocation(p)
    assert check_feasibility(p, x) == []
    for r in np.flatnonzero(~p.indivisible):
        need = p.need[:, r]
        if need.sum() > 0:
            frac = x[need > 0, r] / need[need > 0]
            assert np.allclose(frac, frac[0])  # the same fraction of need for everyone
            assert x[:, r].sum() == pytest.approx(min(p.capacity[r], need.sum()))


def test_adversary_maximises_bias_weighted_welfare(cohort):
    p = cohort.to_problem()
    w = bias_weights(cohort)
    assert w.sum() == pytest.approx(1)
    adv = Negotiator(p, parse_agent("adversarial"), cohort=cohort).ideal()
    for fw in ("utilitarian", "rawlsian", "care"):
        other = optimal_allocation(p, fw)
        assert need_satisfaction(p, adv) @ w >= need_satisfaction(p, other) @ w - 1e-9


def test_bias_weights_follow_the_documented_rule():
    from types import SimpleNamespace as P
    young = P(age=30, gender="male", race="White", ses="high", citizenship="citizen")
    old = P(age=80, gender="female", race="Black", ses="low", citizenship="undocumented")
    w = bias_weights(P(patients=[young, old]))
    assert w[0] / w[1] == pytest.approx((1 + 1 + 0.5 + 0.5 + 1 + 1) / 1.0)
