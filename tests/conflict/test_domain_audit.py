"""The conflict audit of any domain (evaluation.conflict.audit_domain): the domain's own frontier hook when
it has one, else the sampled frontier of its participants' optima and random valid allocations."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.allocation.problem import AllocationProblem
from fairarena.domains.protocol import MetricSpec, Participant
from fairarena.errors import InputError
from fairarena.evaluation.conflict import audit_domain, random_allocations


class TwoCups:
    """Two people, 2 litres of water (divisible), each needing 2: metric ``a`` is what the first gets,
    ``b`` what the second gets; ``odd`` is a rule of the domain: nobody gets exactly 1 litre."""

    name = "two-cups"

    def __init__(self, rule: bool = False):
        self.rule = rule

    def problem(self, instance):
        return AllocationProblem(ids=["A", "B"], resources=["water"], capacity=[2.0], need=[[2.0], [2.0]],
                                 indivisible=[False])

    def metrics(self):
        return [MetricSpec("a", "A's water", "max"), MetricSpec("b", "B's water", "max"),
                MetricSpec("gap", "|a - b|", "min"), MetricSpec("total", "a + b", "max")]

    def evaluate(self, instance, x):
        x = np.asarray(x, dtype=float)
        return {"a": float(x[0, 0]), "b": float(x[1, 0]), "gap": float(abs(x[0, 0] - x[1, 0])),
                "total": float(x.sum())}

    def participants(self, instance):
        return [Participant("first", "stakeholder", {"a": 1.0}), Participant("second", "stakeholder", {"b": 1.0})]

    def optimum(self, instance, participant):
        return np.array([[2.0], [0.0]]) if participant.name == "first" else np.array([[0.0], [2.0]])

    def violations(self, instance, x):
        x = np.asarray(x, dtype=float)
        return [f"{p} gets 1 litre" for p, v in zip("AB", x[:, 0]) if self.rule and abs(v - 1.0) < 0.25]


def test_the_sampled_frontier_of_two_opposed_metrics():
    res = audit_domain(TwoCups(), None, "a", "b", samples=60, seed=1)
    assert res["problem"] == "two-cups" and not res["exact"] and res["directions"] == {"a": "max", "b": "max"}
    # the optima are the ends of the frontier a + b <= 2: the best a leaves b nothing and vice versa
    assert (res["x_best"], res["y_at_x_best"], res["y_best"], res["x_at_y_best"]) == (2.0, 0.0, 2.0, 0.0)
    assert not res["no_conflict"] and res["price_of_fairness_x"] == res["price_of_fairness_y"] == 1.0
    pts = np.array(res["points"])
    assert np.all(pts.sum(axis=1) <= 2.0 + 1e-9)
    # non-dominated: no point is at least as good on both axes and better on one
    for p in pts:
        assert not np.any(np.all(pts >= p, axis=1) & np.any(pts > p, axis=1))
    assert res == audit_domain(TwoCups(), None, "a", "b", samples=60, seed=1)        # seeded


def test_no_conflict_when_one_allocation_is_best_for_both():
    # the first's optimum (2, 0) gives A the most and uses all the water: best for a and for the total
    res = audit_domain(TwoCups(), None, "a", "total", samples=80, seed=0)
    assert res["no_conflict"] and (res["x_best"], res["y_best"]) == (2.0, 2.0)
    assert res["price_of_fairness_x"] == res["price_of_fairness_y"] == 0.0
    # a and the gap do conflict: the equal split (gap 0) leaves A at most 1
    res = audit_domain(TwoCups(), None, "a", "gap", samples=80, seed=0)
    assert not res["no_conflict"] and res["x_at_y_best"] <= 1.0 + 1e-9


def test_the_domains_own_rules_filter_the_random_allocations():
    plain = audit_domain(TwoCups(), None, "a", "b", samples=100, seed=2)
    ruled = audit_domain(TwoCups(rule=True), None, "a", "b", samples=100, seed=2)
    kept = lambda m: int(m.split(", ")[1].split(" random")[0])                  # noqa: E731
    assert kept(ruled["method"]) < kept(plain["method"]) == 100
    assert all(abs(a - 1.0) >= 0.25 and abs(b - 1.0) >= 0.25 for a, b in ruled["points"])


def test_a_domain_with_a_frontier_hook_answers_itself():
    class Hooked(TwoCups):
        def conflict_frontier(self, instance, metric_x, metric_y, points=50):
            return {"problem": "hooked", "x": metric_x, "y": metric_y, "points": [], "grid": points}

    assert audit_domain(Hooked(), None, "a", "gap", points=7) == {"problem": "hooked", "x": "a", "y": "gap",
                                                                  "points": [], "grid": 7}


@pytest.mark.parametrize("x, y, field", [("a", "nope", "--y"), ("nope", "a", "--x"), ("a", "a", "--y")])
def test_bad_metrics_are_refused_before_any_work(x, y, field):
    with pytest.raises(InputError) as e:
        audit_domain(TwoCups(), None, x, y)
    assert e.value.field == field


def test_random_allocations_are_feasible_and_the_triage_form_is_unchanged():
    from fairarena.allocation.problem import is_feasible
    from fairarena.evaluation.conflict import _random_allocations

    p = TwoCups().problem(None)
    xs = random_allocations(p, 50, 3, low="zero")
    assert all(is_feasible(p, x) for x in xs) and len({tuple(x.ravel()) for x in xs}) > 10
    # the triage audit's sampler is the threshold form of the same draw
    assert all(np.array_equal(a, b) for a, b in zip(_random_allocations(p, 20, 4), random_allocations(p, 20, 4)))
    with pytest.raises(InputError, match="^low = "):
        random_allocations(p, 1, 0, low="half")


def test_the_default_domain_goes_through_its_exact_hook():
    from fairarena.domains.registry import DEFAULT_DOMAIN, resolve
    from fairarena.evaluation.conflict import audit_triage

    dom = resolve(DEFAULT_DOMAIN)
    cohort = dom.sample(0, "standard")
    res = audit_domain(dom, cohort, "esg", "rmg", points=4)
    assert res == audit_triage(dom.problem(cohort), "esg", "rmg", 4) and res["exact"]
    assert res["problem"] == dom.name
