"""No levelling down in the rules that pick among proposals (issue 19, item 2): dominated proposals are
set aside by default, and lotteries are scored on the expected metric."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.aggregation.council import council, council_profile
from fairarena.aggregation.rules import RULES, aggregate
from fairarena.allocation.metrics import compute_metrics, compute_metrics_batch, METRIC_KEYS
from fairarena.allocation.pareto import dominated_mask, is_dominated
from fairarena.errors import InputError
from fairarena.triage.archetypes import sample_cohort

CANDIDATE_RULES = [r for r in RULES if RULES.entry(r).kind == "candidates"]


@pytest.fixture(scope="module")
def strict_profiles():
    """Councils whose egalitarian agent proposes the strict (empty) optimum."""
    return [council_profile(sample_cohort(s, "standard").to_problem(), egalitarian="strict") for s in range(4)]


def test_strict_council_has_an_empty_dominated_proposal(strict_profiles):
    for prof in strict_profiles:
        k = prof.candidates.index("egalitarian")
        assert not prof.X[k].any()
        assert dominated_mask(prof.problem, prof.X)[k]


@pytest.mark.parametrize("rule", CANDIDATE_RULES)
def test_candidate_rules_never_pick_a_dominated_proposal(strict_profiles, rule):
    for prof in strict_profiles:
        dom = dominated_mask(prof.problem, prof.X)
        assert not dom.all()
        d = aggregate(prof, rule, seed=0)
        support = list(d.lottery) if d.lottery is not None else [d.winner]
        assert all(not dom[prof.candidates.index(c)] for c in support), (rule, support)
        assert not is_dominated(prof.problem, d.drawn_allocation(prof))
        assert "set aside" in d.note


def test_without_the_screen_plurality_levels_down(strict_profiles):
    """Today's behaviour, kept as pareto='off': plurality puts weight on the empty proposal."""
    hits = 0
    for prof in strict_profiles:
        d = aggregate(prof, "plurality", seed=0, pareto="off")
        support = list(d.lottery) if d.lottery is not None else [d.winner]
        hits += "egalitarian" in support
    assert hits == len(strict_profiles)


def test_unknown_screen_is_refused(strict_profiles):
    with pytest.raises(InputError) as exc:
        aggregate(strict_profiles[0], "borda", pareto="sometimes")
    assert exc.value.field == "pareto" and "screen" in str(exc.value)


def test_every_dominated_candidate_keeps_the_rule_defined():
    """All candidates dominated: none set aside (the rule still decides), and the note says so."""
    from fairarena.aggregation.rules import Agent, Profile

    p = sample_cohort(0, "standard").to_problem()
    one = p.zeros()
    one[0] = p.threshold[0]  # one patient at its clinical minimums, nobody else served
    prof = Profile.from_proposals(p, [Agent("a", "utilitarian", p.zeros()), Agent("b", "rawlsian", one)])
    assert dominated_mask(p, prof.X).all()
    d = aggregate(prof, "utilitarian")
    assert "every candidate is Pareto-dominated" in d.note


def test_lottery_rows_are_scored_on_the_expected_metric():
    differs = False
    for s in range(3):
        res = council(s, "standard", rules=["pf-lottery"])
        row = res.rows[0]
        assert row["lottery"] is not None and row["metric_basis"].startswith("expected metric")
        prof = council_profile(sample_cohort(s, "standard").to_problem())
        M = compute_metrics_batch(prof.problem, prof.X)
        p = np.array([row["lottery"].get(c, 0.0) for c in prof.candidates])
        for k in METRIC_KEYS:
            assert row["metrics"][k] == pytest.approx(float(p @ M[k]), nan_ok=True), k
        of_mean = compute_metrics(prof.problem, row["allocation"])
        differs |= any(abs(of_mean[k] - row["metrics"][k]) > 1e-6 for k in ("rmg", "gini_cnss", "var"))
    assert differs  # the two readings do differ on these cohorts: the choice matters


def test_aggregate_run_labels_the_expected_metric_and_the_metric_of_the_expected_allocation():
    from fairarena.aggregation.cli import run_result
    from fairarena.allocation.frameworks import FRAMEWORKS
    from fairarena.allocation.problem import allocation_to_mapping

    p = sample_cohort(1, "standard").to_problem()
    data = {"agents": [{"name": f, "objective": f, "allocation": allocation_to_mapping(p, FRAMEWORKS.get(f).solve(p))}
                       for f in FRAMEWORKS]}
    out = run_result(p, data, "pf-lottery", 0, "range", "zero")
    m, lot = out["metrics"], out["lottery"]["probabilities"]
    assert set(m) == {"expected", "of_expected_allocation", "drawn"}
    prof = council_profile(p)
    M = compute_metrics_batch(p, prof.X)
    probs = np.array([lot.get(c, 0.0) for c in prof.candidates])
    for k in ("esg", "rmg", "gini_cnss"):
        assert m["expected"][k] == pytest.approx(float(probs @ M[k]))
    mean_x = np.einsum("k,knr->nr", probs, prof.X)
    assert m["of_expected_allocation"]["rmg"] == pytest.approx(compute_metrics(p, mean_x)["rmg"])
