"""The scripted negotiator negotiates: every participant responds, the joint is the Nash bargaining
solution of the finals (checked against closed forms and, on standard cohorts, for Pareto optimality and
the disagreement values), the adversary deprioritises, the egalitarian agent does not level down."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from fairarena.allocation.metrics import need_satisfaction
from fairarena.allocation.milp import AllocationMILP
from fairarena.allocation.problem import AllocationProblem, allocation_from_mapping, check_feasibility
from fairarena.arena import DebateConfig, Negotiator, build_agent, parse_agent, run_debate
from fairarena.arena.negotiator import Welfare, nash_bargain
from fairarena.arena.protocol import Agent, Debate
from fairarena.errors import InputError
from fairarena.llm import ScriptedChatModel
from fairarena.triage import sample_cohort


def _debate(seed: int, a: str, b: str, capacity: str = "standard"):
    c = sample_cohort(seed, capacity)
    A, B = build_agent("A", a, "scripted", c), build_agent("B", b, "scripted", c)
    res = run_debate(c, A, B, DebateConfig(rounds=3))
    assert res.status == "ok", res.error
    return c.to_problem(), res, A.negotiator, B.negotiator


def _final(p, res, who):
    return next(allocation_from_mapping(p, t.proposal["allocation"]) for t in res.turns
                if t.agent == who and t.phase == "final")


# -- 1. every participant responds, the baseline included ---------------------------------------------------

def test_the_baseline_final_moves_with_the_aligned_agent_it_faces():
    """Same standard cohort, six different partners: the baseline's final is not one fixed allocation (before,
    it was the same allocation against all six on every standard cohort: it never moved)."""
    for seed in (0, 2):
        finals = set()
        for fw in ("utilitarian", "egalitarian", "rawlsian", "prioritarian", "care", "libertarian"):
            p, res, _, _ = _debate(seed, f"aligned:{fw}", "baseline")
            finals.add(tuple(np.round(_final(p, res, "B").ravel(), 6)))
        assert len(finals) >= 2


def test_the_baseline_concedes_towards_its_partner():
    """Its final never gives the partner less (by the partner's own objective) than its opening does, and
    against some partner whose ideal it does not share it gives strictly more."""
    gains = []
    for seed in (0, 1, 2, 3):
        for fw in ("utilitarian", "care"):
            p, res, a, b = _debate(seed, f"aligned:{fw}", "baseline", "tight")
            before, after = a.welfare.value(p, b.ideal()), a.welfare.value(p, _final(p, res, "B"))
            assert after >= before - 1e-9
            gains.append(after - before)
    assert max(gains) > 1e-6


# -- 2./3. the joint: the Nash bargaining solution ---------------------------------------------------------

def _line_problem(need2: float = 1.0, capacity: float = 1.0) -> AllocationProblem:
    """Two patients, one divisible resource, fractional need satisfaction: CNSS_1 = x_1, CNSS_2 = x_2 / need2."""
    return AllocationProblem(ids=("P1", "P2"), resources=("R",), capacity=np.array([capacity]),
                             need=np.array([[1.0], [need2]]), indivisible=np.array([False]),
                             survival=np.array([1.0, 0.0]), urgency=np.zeros(2), disadvantage=np.array([0.5, 0.5]),
                             vulnerability=np.array([0.0, 1.0]), gini_resource="R", cnss="fractional")


def _alloc(p, *amounts):
    return np.array([[a] for a in amounts], dtype=float)


TOL = 2e-3   # on the allocation: the outer approximation keeps each Nash log within BARGAIN_TOL (1e-6), so the
#            log-product within 2e-6 of its maximum, where it is flat: the point within ~sqrt(2e-6)


def test_nash_bargain_splits_one_divisible_resource_equally():
    """u_A = x_1, u_B = x_2, x_1 + x_2 <= 1, d = (0, 0)  ->  (0.5, 0.5)."""
    p = _line_problem()
    w = {"A": Welfare("linear", np.array([1.0, 0.0])), "B": Welfare("linear", np.array([0.0, 1.0]))}
    bar = nash_bargain(p, w, {"A": 1.0, "B": 1.0}, {"A": _alloc(p, 1, 0), "B": _alloc(p, 0, 1)})
    assert bar.disagreement == {"A": 0.0, "B": 0.0}
    assert bar.allocation[:, 0] == pytest.approx([0.5, 0.5], abs=TOL)


def test_nash_bargain_asymmetric_closed_form_differs_from_both_finals():
    """Patient 2 needs 2 units, capacity 2: c_1 + 2 c_2 <= 2, c_1 <= 1. With u_A = c_1, u_B = c_2 the frontier
    is c_2 = 1 - c_1 / 2 and max (c_1 - d_A)(1 - c_1/2 - d_B) is at c_1 = 1 - d_B + d_A / 2. Finals
    c = (0.4, 0.8) and (0, 1) give d = (0, 0.8): the solution is c = (0.2, 0.9), neither final."""
    p = _line_problem(need2=2.0, capacity=2.0)
    w = {"A": Welfare("linear", np.array([1.0, 0.0])), "B": Welfare("linear", np.array([0.0, 1.0]))}
    finals = {"A": _alloc(p, 0.4, 1.6), "B": _alloc(p, 0.0, 2.0)}
    bar = nash_bargain(p, w, {"A": 1.0, "B": 1.0}, finals)
    assert bar.disagreement == pytest.approx({"A": 0.0, "B": 0.8})
    c = need_satisfaction(p, bar.allocation)
    assert c == pytest.approx([0.2, 0.9], abs=TOL)
    for f in finals.values():
        assert np.abs(bar.allocation - f).max() > 0.1


class _LineDomain:
    """A bare allocation problem as a debate instance (the triage domain needs a cohort)."""

    name, item, item_id, setting = "line", "patient", "PATIENT_ID", "a test allocation"

    def problem(self, instance):
        return instance

    def render(self, instance):
        return "Two patients, one divisible resource."

    def rules(self, problem):
        return "Allocate."

    def retrieval_query(self, instance, framework):
        return framework

    def to_dict(self, instance):
        return {}


def test_the_protocol_joint_is_the_nash_bargaining_solution_of_its_finals():
    """Two scripted agents with linear objectives (utilitarian with survival (1, 0): u_A = x_1; care with
    vulnerability (0, 1): u_B = x_2) on x_1 + x_2 <= 1. Whatever finals the rounds end on, the joint must be
    the Nash bargaining solution for the disagreement values they set: on the frontier x_1 + x_2 = 1,
    x_1 - d_A = x_2 - d_B, i.e. x_1 = (1 + d_A - d_B) / 2. The closing record says how it was formed."""
    p = _line_problem()
    agents = []
    for name, spec in (("A", "aligned:utilitarian"), ("B", "aligned:care")):
        neg = Negotiator(p, parse_agent(spec))
        agents.append(Agent(name, neg.profile, ScriptedChatModel(neg, name="negotiator"), "scripted", neg))
    debate = Debate(p, agents, DebateConfig(rounds=3), domain=_LineDomain())
    out = debate.run()
    fa, fb = (out["finals"][k].allocation[:, 0] for k in ("A", "B"))
    d_a, d_b = min(fa[0], fb[0]), min(fa[1], fb[1])
    joint = allocation_from_mapping(p, out["joint"].allocation)[:, 0]
    assert joint == pytest.approx([(1 + d_a - d_b) / 2, (1 - d_a + d_b) / 2], abs=TOL)
    assert np.abs(joint - fa).max() > 0.01 and np.abs(joint - fb).max() > 0.01   # neither final
    assert "Nash bargaining" in out["joint"].details["how"]


def _pareto_gap(p, welfares, spans, x):
    """max sum_k (W_k(y) - W_k(x)) / span_k over feasible y with every W_k(y) >= W_k(x): 0 iff no feasible
    allocation is better for one participant and no worse for any (a MILP of its own)."""
    m = AllocationMILP(p)
    ws = []
    for wf in welfares:
        v = m.add_var(-np.inf, np.inf)
        wf.bound(m, v)
        value = wf.value(p, x)
        m.add_row({v: 1.0}, lo=value - 1e-7 * max(1.0, abs(value)))
        ws.append((v, value))
    obj = {v: 1.0 / s for (v, _), s in zip(ws, spans)}
    best, _ = m.solve(obj, "max")
    return best - sum(value / s for (_, value), s in zip(ws, spans))


@pytest.mark.parametrize("seed, fw, opp", [(1, "utilitarian", "baseline"), (1, "egalitarian", "adversarial"),
                                           (4, "rawlsian", "adversarial"), (4, "libertarian", "baseline"),
                                           (9, "prioritarian", "adversarial"), (9, "care", "baseline")])
def test_the_joint_is_pareto_optimal_and_gives_nobody_less_than_its_disagreement_value(seed, fw, opp):
    p, res, a, b = _debate(seed, f"aligned:{fw}", opp, "tight")
    joint = allocation_from_mapping(p, res.final["joint"]["allocation"])
    assert check_feasibility(p, joint) == []
    finals = [_final(p, res, "A"), _final(p, res, "B")]
    spans = []
    for neg in (a, b):
        d = min(neg.welfare.value(p, f) for f in finals)
        assert neg.welfare.value(p, joint) >= d - 1e-6 * max(1.0, abs(d))
        spans.append(max(neg.ideal_value() - d, 1e-3))
    assert _pareto_gap(p, [a.welfare, b.welfare], spans, joint) <= 1e-5


def test_three_participants_bargain_too():
    c = sample_cohort(2, "tight")
    agents = [build_agent(n, s, "scripted", c) for n, s in (("A", "aligned:rawlsian"), ("B", "baseline"),
                                                              ("C", "aligned:utilitarian"))]
    res = run_debate(c, agents, DebateConfig(rounds=3))
    assert res.status == "ok" and all(res.feasible.values())
    p = c.to_problem()
    joint = allocation_from_mapping(p, res.final["joint"]["allocation"])
    finals = [_final(p, res, n) for n in "ABC"]
    for ag in agents:
        d = min(ag.negotiator.welfare.value(p, f) for f in finals)
        assert ag.negotiator.welfare.value(p, joint) >= d - 1e-6 * max(1.0, abs(d))


# -- 4. the adversary deprioritises; its old form is an option ------------------------------------------------

@pytest.mark.parametrize("seed", [0, 3, 11])
def test_the_adversary_deprioritises_rather_than_excludes(seed):
    """Default: every patient it could serve gets something; the patients its bias targets get less on
    average than the ones it favours. ``adversarial:exclude`` keeps the former form (targets get nothing)."""
    from fairarena.arena.research_adversarial import bias_weights
    c = sample_cohort(seed, "standard")
    p = c.to_problem()
    x = Negotiator(p, parse_agent("adversarial"), cohort=c).ideal()
    cnss = need_satisfaction(p, x)
    assert cnss.min() > 0
    signed = bias_weights(c, mode="exclude")
    assert cnss[signed < 0].mean() < cnss[signed > 0].mean()
    old = need_satisfaction(p, Negotiator(p, parse_agent("adversarial:exclude"), cohort=c).ideal())
    assert np.all(old[signed < 0] == 0)


def test_the_adversary_final_keeps_something_for_everybody():
    p, res, _, _ = _debate(0, "aligned:care", "adversarial")
    assert res.metrics["b"]["rmg"] > 0


@pytest.mark.parametrize("spec", ["adversarial:deprioritise=0", "adversarial:deprioritise=1.5",
                                  "adversarial:deprioritise=-0.2", "adversarial:deprioritise=nan",
                                  "adversarial:deprioritise=x", "adversarial:exclude=0.5", "adversarial:mild"])
def test_an_adversary_option_outside_its_range_is_refused(spec):
    with pytest.raises(InputError) as e:
        parse_agent(spec)
    assert e.value.field == "agent" and "(0, 1]" in str(e.value)


def test_the_debate_command_refuses_a_bad_adversary_option_before_any_work(tmp_path):
    from fairarena.cli import app
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["debate", "--agent-b", "adversarial:deprioritise=2", "--out", str(out)])
    assert r.exit_code == 2
    assert "adversarial:deprioritise=2" in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert not out.exists()


def test_a_valid_strength_is_kept_in_the_profile():
    prof = parse_agent("adversarial:deprioritise=0.5")
    assert prof.name == "adversarial:deprioritise=0.5" and prof.kind == "adversarial"
    assert parse_agent("adversarial:exclude").name == "adversarial:exclude"


# -- 5. the egalitarian agent does not level down ---------------------------------------------------------

def _dominated(p, x) -> bool:
    """Some feasible allocation gives every patient at least CNSS(x) and someone more (a MILP)."""
    m = AllocationMILP(p)
    c = need_satisfaction(p, x)
    for e, ci in zip(m.cnss, c):
        m.add_row(e, lo=float(ci) - 1e-9)
    total, _ = m.solve(m.weighted_cnss(np.ones(p.n)), "max")
    return total > float(c.sum()) + 1e-6


@pytest.mark.parametrize("seed", [0, 1, 2, 5])
def test_the_egalitarian_opening_is_neither_empty_nor_dominated(seed):
    c = sample_cohort(seed, "standard")
    p = c.to_problem()
    x = Negotiator(p, parse_agent("aligned:egalitarian"), cohort=c).ideal()
    assert need_satisfaction(p, x).sum() > 0
    assert not _dominated(p, x)


def test_no_egalitarian_proposal_levels_down():
    p, res, a, _ = _debate(0, "aligned:egalitarian", "baseline")
    for t in res.turns:
        if t.agent == "A" and t.proposal.get("allocation"):
            x = allocation_from_mapping(p, t.proposal["allocation"])
            assert not _dominated(p, x), (t.phase, t.round)
            assert "ESG 0.000, RMG 0.000" not in t.proposal["justification"]


def test_the_strict_egalitarian_form_is_kept_as_an_option():
    """``egalitarian="range"`` (the former own welfare) still levels down on this cohort: its ideal is the
    empty allocation."""
    c = sample_cohort(0, "standard")
    p = c.to_problem()
    x = Negotiator(p, parse_agent("aligned:egalitarian"), cohort=c, egalitarian="range").ideal()
    assert need_satisfaction(p, x).sum() == 0
