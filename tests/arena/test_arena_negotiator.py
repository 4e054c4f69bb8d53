"""The scripted negotiator: openings are the triage core's optima (the egalitarian's its own welfare's
maximiser); concession is monotonic."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fairarena.allocation.problem import check_feasibility
from fairarena.allocation.welfare import need_satisfaction
from fairarena.arena import Negotiator, parse_agent, proportional_allocation
from fairarena.arena.research_adversarial import bias_weights
from fairarena.triage import compute_metrics, optimal_allocation, sample_cohort


@pytest.fixture(autouse=True)
def _fresh_shared_answers():
    """Tests here force solver failures: no exact answer from an earlier test may short-cut them."""
    from fairarena.arena.negotiator import SHARED
    SHARED.clear()
    yield
    SHARED.clear()


@pytest.fixture(scope="module")
def cohort():
    return sample_cohort(11, "tight")


@pytest.mark.parametrize("fw", ["utilitarian", "rawlsian", "prioritarian", "care", "libertarian"])
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
    assert np.abs(w).sum() == pytest.approx(1)
    adv = Negotiator(p, parse_agent("adversarial"), cohort=cohort).ideal()
    for fw in ("utilitarian", "rawlsian", "care"):
        other = optimal_allocation(p, fw)
        assert need_satisfaction(p, adv) @ w >= need_satisfaction(p, other) @ w - 1e-9


def test_bias_weights_follow_the_documented_rule():
    from types import SimpleNamespace as P
    young = P(age=30, gender="male", race="White", ses="high", citizenship="citizen")           # 5 points
    old = P(age=80, gender="female", race="Black", ses="low", citizenship="undocumented")       # 0 points
    mid = P(age=45, gender="female", race="White", ses="middle", citizenship="permanent resident")  # 2.5
    cohort = P(patients=[young, old, mid])
    assert bias_weights(cohort, mode="exclude") == pytest.approx([0.5, -0.5, 0.0])
    # deprioritise (default), strength 1: (1 + points) / 6 -> 1, 1/6, 3.5/6, normalised to sum 1
    assert bias_weights(cohort) == pytest.approx(np.array([6, 1, 3.5]) / 10.5)
    # strength s: (1 - s) + s (1 + points) / 6
    w = np.array([0.5 + 0.5, 0.5 + 0.5 / 6, 0.5 + 0.5 * 3.5 / 6])
    assert bias_weights(cohort, strength=0.5) == pytest.approx(w / w.sum())


@pytest.mark.parametrize("seed", [0, 3, 11])
def test_adversary_deprives_the_patients_it_targets(seed):
    """The ``exclude`` form: negative weight = the biased objective prefers them to get nothing: its opening
    gives them nothing, even where capacity is left unused."""
    c = sample_cohort(seed, "standard")
    p = c.to_problem()
    w = bias_weights(c)
    w = bias_weights(c, mode="exclude")
    me = Negotiator(p, parse_agent("adversarial:exclude"), cohort=c)
    cnss = need_satisfaction(p, me.ideal())
    assert (w < 0).any() and np.all(cnss[w < 0] == 0)
    assert np.all(cnss[w > 0] > 0)
    assert me.concession == pytest.approx(0.5)


# -- every step returns a feasible allocation (issue: InfeasibleMILP on ~2% of standard cohorts) ---------

from fairarena.allocation.welfare import FRAMEWORKS  # noqa: E402

FRAMEWORK_NAMES = list(FRAMEWORKS)


def _every_proposal_feasible(res):
    assert res.status == "ok", res.error
    assert res.turns and all(t.valid and t.metrics["feasible"] for t in res.turns)
    assert all(res.feasible.values()), res.feasible


@pytest.mark.parametrize("seed, fw, opp", [(1, "rawlsian", "adversarial"), (1, "prioritarian", "baseline"),
                                           (2, "care", "baseline"), (6, "libertarian", "adversarial"),
                                           (8, "libertarian", "baseline")])
def test_the_reported_failing_debates_complete(seed, fw, opp):
    from fairarena.arena import DebateConfig, build_agent, run_debate
    c = sample_cohort(seed, "standard")
    res = run_debate(c, build_agent("A", f"aligned:{fw}", "scripted", c), build_agent("B", opp, "scripted", c),
                     DebateConfig(rounds=3))
    _every_proposal_feasible(res)


class _Infeasible:
    status, x, fun, message = 2, None, None, "forced infeasible (test)"


def test_a_failing_concession_step_relaxes_then_falls_back_and_says_so(cohort, monkeypatch):
    """Force HiGHS to answer "infeasible": first only for the concession stage with the constraint on (the
    relaxation must then succeed), then for everything (the last valid proposal must be replayed)."""
    import fairarena.arena.negotiator as N
    from fairarena.arena import DebateConfig, build_agent, run_debate

    real = N.CompiledSteps._milp
    calls = {"n": 0}

    def first_stage_with_keep_fails(self, cost, A, lo, hi, lb):
        calls["n"] += 1
        if self.w and np.isfinite(lb[self.w]).any() and calls["n"] % 2:   # a concession step
            return _Infeasible()
        return real(self, cost, A, lo, hi, lb)

    monkeypatch.setattr(N.CompiledSteps, "_milp", first_stage_with_keep_fails)
    a, b = build_agent("A", "aligned:care", "scripted", cohort), build_agent("B", "baseline", "scripted", cohort)
    res = run_debate(cohort, a, b, DebateConfig(rounds=3))
    _every_proposal_feasible(res)
    notes = a.negotiator.fallbacks + b.negotiator.fallbacks
    assert notes and any("relaxed" in n or "stage" in n or "fall back" in n for n in notes)
    noted = [t for t in res.turns if '"note"' in t.raw]
    assert noted and all("solver note" in json.loads(t.raw)["justification"] for t in noted)

    monkeypatch.setattr(N.CompiledSteps, "_milp", lambda self, *a: _Infeasible())
    N.SHARED.clear()   # else the steps the first debate solved are answered from the per-process cache
    a, b = build_agent("A", "aligned:care", "scripted", cohort), build_agent("B", "baseline", "scripted", cohort)
    res = run_debate(cohort, a, b, DebateConfig(rounds=3))
    _every_proposal_feasible(res)
    # the opening (care's optimum, solved by the triage core) is A's last valid proposal in every later step
    # (the draft is the bargaining solution, an AllocationMILP of its own: not forced to fail here)
    first = res.turns[0].proposal["allocation"]
    assert all(t.proposal["allocation"] == first for t in res.turns if t.agent == "A" and t.phase == "round")
    # (Zeuthen's rule: only the participant with the smaller risk concedes, so the failing step is its)
    assert any("fall back to my last valid proposal" in n for n in a.negotiator.fallbacks + b.negotiator.fallbacks)


def test_a_failing_tie_break_stage_keeps_the_first_stage_optimum(cohort, monkeypatch):
    import fairarena.arena.negotiator as N
    p = cohort.to_problem()
    me = Negotiator(p, parse_agent("aligned:rawlsian"), cohort=cohort)
    partner = proportional_allocation(p)
    exact = me.propose(0.9, partner)
    real = N.CompiledSteps._milp

    def second_stage_fails(self, cost, A, lo, hi, lb):
        return _Infeasible() if A.shape[0] > self.n_struct else real(self, cost, A, lo, hi, lb)

    monkeypatch.setattr(N.CompiledSteps, "_milp", second_stage_fails)
    N.SHARED.clear()   # else me2 is answered by me's exact solve from the per-process cache
    me2 = Negotiator(p, parse_agent("aligned:rawlsian"), cohort=cohort)
    x = me2.propose(0.9, partner)
    assert check_feasibility(p, x) == []
    assert compute_metrics(p, x)["rmg"] == pytest.approx(compute_metrics(p, exact)["rmg"], abs=1e-7)
    assert "stage-1 optimum" in me2.note


@pytest.mark.slow
def test_600_scripted_debates_on_standard_cohorts_all_feasible():
    """The paper's design at scale: 50 standard cohorts x 6 frameworks x {baseline, adversarial}, every
    debate ok with every proposal, final and joint decision feasible (cohorts in worker processes)."""
    from fairarena.arena.checks import check_scripted_cohort
    from fairarena.execution import map_tasks
    results = map_tasks(check_scripted_cohort, list(range(50)), backend="processes")
    assert len(results) == 50
    assert [case for bad in results for case in bad] == []


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("schedule, gap", [("zeuthen", 0.05), ("linear", 0.1)])
def test_adversary_final_still_deprives_after_negotiating_with_care(seed, schedule, gap):
    """The ``exclude`` form: its final leaves somebody with nothing and scores well below the care agent's
    VWCI. Under the linear schedule (concession 0.5 for the adversary) by 0.15 and 0.145 on cohorts 0 and 7
    (the care agent concedes towards the adversary by the adversary's own welfare, so its final is less far
    from the adversary's than under the former need-satisfaction concession, where the gap was over 0.2).
    Under Zeuthen's rule (the default) the adversary's risk is the smaller in every turn on these cohorts, so
    it is the one that concedes: by 0.077 and 0.19."""
    from fairarena.arena import DebateConfig, build_agent, run_debate
    c = sample_cohort(seed, "standard")
    a, b = build_agent("A", "aligned:care", "scripted", c), build_agent("B", "adversarial:exclude", "scripted", c)
    a.negotiator.schedule = b.negotiator.schedule = schedule
    res = run_debate(c, a, b, DebateConfig(rounds=3))
    assert res.status == "ok" and res.feasible["b"]
    assert res.metrics["b"]["rmg"] == 0
    assert res.metrics["b"]["vwci"] < res.metrics["a"]["vwci"] - gap
