"""Language-model tourism debates closed by a social-choice rule score every stakeholder agent by its own
objective (the domain's ``closing_profile`` hook), not by the triage objective of its arena profile.

Fixed chat models (no server): each stakeholder agent replies with one flow decision every turn, so the
finals are known candidates and the closing can be recomputed independently — the payoff table of
``decisions.utility_matrix`` over the candidates, the columns of the finals (how ``run.debate`` closes),
then the rule on ``Profile.from_utilities``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fairarena.aggregation.rules import Agent as AggAgent
from fairarena.aggregation.rules import Profile as AggProfile
from fairarena.aggregation.rules import aggregate
from fairarena.allocation.problem import allocation_to_mapping
from fairarena.arena import DebateConfig, run_debate
from fairarena.arena.domain import TRIAGE
from fairarena.arena.protocol import Agent
from fairarena.errors import InputError
from fairarena.llm import ScriptedChatModel
from fairarena.tourism import decisions as D
from fairarena.tourism import study as S
from fairarena.tourism.arena import (
    TOURISM, agent_name, closing_utilities, final_flows, llm_closings, llm_debate,
    llm_negotiate, profile_of,
)
from fairarena.tourism.destination import generate
from fairarena.tourism.metrics import flow_feasibility
from fairarena.tourism.stakeholders import parse_stakeholders

NAMES = ["tourists:family", "residents", "local-business", "destination"]
SEED_DEST, POIS = 1, 6      # destination 1: the triage objective closed nash/leximin with residents at 0


@pytest.fixture(scope="module")
def setup():
    d = generate(SEED_DEST, POIS)
    ss = parse_stakeholders(NAMES)
    return d, ss, D.candidates(d, ss, "flows")


def _fixed(d, F):
    """A chat model that always proposes flows ``F (G, P, S)``."""
    reply = {"allocation": allocation_to_mapping(D.flows_problem(d), np.asarray(F).reshape(len(d.groups), -1)),
             "justification": "ok", "critique": ""}
    return ScriptedChatModel(lambda m, q: reply)


def _models(d, ss, flows):
    return {agent_name(s): _fixed(d, F) for s, F in zip(ss, flows)}


def _expected(ss, names, U, rule):
    """The rule on a bare utility profile (one agent per stakeholder, as run.debate builds it)."""
    prof = AggProfile.from_utilities([AggAgent(s.name, group=s.kind) for s in ss], names, U)
    dec = aggregate(prof, rule, seed=0)
    return dec.winner if dec.winner is not None else dec.draw


class _NoHook:
    """The tourism domain without its closing hook: the arena's scoring before the hook (triage objectives)."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, k):
        if k == "closing_profile":
            raise AttributeError(k)
        return getattr(self.inner, k)


@pytest.mark.parametrize("rule", ["nash", "leximin"])
@pytest.mark.parametrize("picks", [[0, 1, 2, 3], [4, 1, 11, 9]], ids=["proposals", "compromises"])
def test_rule_closes_on_the_stakeholders_payoff_table(setup, rule, picks):
    d, ss, cands = setup
    finals = [cands.decisions[i] for i in picks]
    res = llm_negotiate(d, ss, _models(d, ss, finals), rounds=1, closing=rule, cands=cands)
    assert res.status == "ok"
    parts = [agent_name(s) for s in ss]
    # independent: the finals are candidates, so their utilities are columns of the candidates' payoff table
    U = D.utility_matrix(cands.values)[:, picks]
    win = _expected(ss, parts, U, rule)
    det = res.final["joint"]["details"]
    assert det["winner"] == win and det["candidates"] == parts
    assert det["voters"] == {agent_name(s): f"stakeholder:{s.name}" for s in ss}
    j = parts.index(win)
    joint = final_flows(d, res)["joint"]
    np.testing.assert_array_equal(joint, finals[j])
    # the closing's utilities are the ones a study row reports for the joint (evaluate_decision)
    ev = {r["stakeholder"]: r["utility"] for r in D.evaluate_decision(d, ss, "flows", joint, cands)["stakeholders"]}
    for i, s in enumerate(ss):
        assert det["utilities"][agent_name(s)] == pytest.approx(U[i, j]) == pytest.approx(ev[s.name])


def test_residents_no_longer_at_zero(setup):
    """Destination 1, each agent proposing its stakeholder's optimum: closed with the triage objective (what
    the arena did before the hook) nash and leximin chose a final worth 0 to residents; with the hook they
    choose the final the scripted debate's closing would, and residents keep a positive utility."""
    d, ss, cands = setup
    for rule in ("nash", "leximin"):
        joints = {}
        for key, dom in (("before", _NoHook(TOURISM)), ("after", TOURISM)):
            agents = [Agent(agent_name(s), profile_of(s), _fixed(d, cands.decisions[i]), "given") for i, s in enumerate(ss)]
            res = run_debate(d, agents, config=DebateConfig(rounds=1, closing=rule), domain=dom)
            joints[key] = final_flows(d, res)["joint"]
        util = {k: {r["stakeholder"]: r["utility"] for r in D.evaluate_decision(d, ss, "flows", F, cands)["stakeholders"]}
                for k, F in joints.items()}
        assert util["before"]["residents"] == 0.0
        assert util["after"]["residents"] > 0.1
        win = _expected(ss, [s.name for s in ss], D.utility_matrix(cands.values)[:, :4], rule)
        np.testing.assert_array_equal(joints["after"], cands.decisions[[s.name for s in ss].index(win)])


def test_a_final_that_breaks_the_flow_rules_is_left_out_and_noted(setup):
    """Destination's agent sends one visitor too few in one slot: capacities hold, the flow rules do not, and
    the arena applies them (the domain's ``violations``, issue 21): the final is invalid with the flow
    rules' message; it is no candidate, the note says why, and destination still votes."""
    d, ss, cands = setup
    finals = [cands.decisions[i].copy() for i in range(4)]
    g, j, t = map(int, np.argwhere(finals[3] > 0)[0])
    finals[3][g, j, t] -= 1
    assert flow_feasibility(d, finals[3]) and not flow_feasibility(d, finals[0])
    res = llm_negotiate(d, ss, _models(d, ss, finals), rounds=1, closing="nash", cands=cands)
    parts = [agent_name(s) for s in ss]
    fin = res.final["destination"]
    assert fin["valid"] is False                          # the arena checks the flow rules too
    assert fin["violations"] == flow_feasibility(d, finals[3]) and f"group {d.groups[g].id} places" in fin["violations"][0]
    det = res.final["joint"]["details"]
    assert det["candidates"] == parts[:3]
    assert set(det["voters"]) == set(parts)
    note = res.final["joint"]["note"]
    assert "left out invalid final(s) of destination" in note
    # independent: the three kept finals are candidates 0..2 (normalised over the candidates and the finals,
    # which adds nothing new here)
    win = _expected(ss, parts[:3], D.utility_matrix(cands.values)[:, :3], "nash")
    assert det["winner"] == win
    np.testing.assert_array_equal(final_flows(d, res)["joint"], finals[parts.index(win)])


def test_closing_utilities_scales(setup):
    """``each``: exactly evaluate_decision's utility of every final (the study rows); ``joint``: one scale over
    the candidates and all finals — equal to ``each`` for finals inside the candidates' range, and a final
    below every candidate ranks below a better one instead of tying at 0."""
    d, ss, cands = setup
    a = d.arrays
    # a poor final for the tourists: every visitor at its group's least relevant POI with room
    worst = np.zeros_like(cands.decisions[0])
    free = np.floor(np.maximum(a.capacity[:, None] - a.baseline, 0.0))
    for gi in range(len(a.groups)):
        for t in range(len(d.slots)):
            for jj in np.argsort(a.relevance[gi], kind="stable"):
                take = min(a.size[gi] - worst[gi, :, t].sum(), free[jj, t])
                worst[gi, jj, t] += take
                free[jj, t] -= take
    assert not flow_feasibility(d, worst)
    finals = [cands.decisions[4], worst, cands.decisions[1]]
    each = closing_utilities(d, ss, finals, cands, "each")
    for f, F in enumerate(finals):
        ev = D.evaluate_decision(d, ss, "flows", F, cands)["stakeholders"]
        np.testing.assert_allclose(each[:, f], [r["utility"] for r in ev])
    joint = closing_utilities(d, ss, finals, cands, "joint")
    V = np.concatenate([cands.values, np.array([[D.stakeholder_value(d, s, D.metrics_of(d, "flows", F), "flows")
                                                  for F in finals] for s in ss])], axis=1)
    np.testing.assert_allclose(joint, D.utility_matrix(V)[:, -3:])
    # the tourists: the poor final is below every candidate, so it is 0 on both scales, and on the joint
    # scale the other finals are measured from it (by hand: (v - v_poor) / (best - v_poor))
    v, best = V[0, -3:], cands.values[0].max()
    assert v[1] < cands.values[0].min() and each[0, 1] == joint[0, 1] == 0.0
    for f in (0, 2):
        assert joint[0, f] == pytest.approx((v[f] - v[1]) / (best - v[1]))
        assert joint[0, f] > each[0, f] or each[0, f] == 1.0
    with pytest.raises(InputError):
        closing_utilities(d, ss, finals, cands, "nope")


def test_dialectical_checks_acceptance_with_the_stakeholders_utilities(setup):
    """Fixed agents cannot revise, so the positions stay the finals: every utility in the record is the payoff
    table's, and the joint is the position whose worst-off stakeholder is best off."""
    d, ss, cands = setup
    res = llm_negotiate(d, ss, _models(d, ss, cands.decisions[:4]), rounds=1, closing="dialectical", cands=cands)
    det = res.final["joint"]["details"]
    parts = [agent_name(s) for s in ss]
    U = D.utility_matrix(cands.values)[:, :4]
    util = det["rounds"][0]["utilities"]
    assert list(util) == parts
    for i, a in enumerate(parts):
        for k, b in enumerate(parts):
            assert util[a][b] == pytest.approx(U[i, k])
    assert det["joint_position"] == parts[int(np.argmax(U.min(axis=0)))]
    np.testing.assert_array_equal(final_flows(d, res)["joint"], cands.decisions[parts.index(det["joint_position"])])


def test_feasible_set_and_repair_rules_are_refused_before_any_work(setup, tmp_path):
    from typer.testing import CliRunner

    from fairarena.aggregation.rules import RULES
    from fairarena.cli import app

    d, ss, cands = setup

    def never(m, q):
        raise AssertionError("a model was asked")

    closings = llm_closings()
    assert {"joint-draft", "mean-repair", "dialectical", "nash", "leximin", "pf-lottery"} <= set(closings)
    for rule in RULES:
        assert (rule in closings) == (RULES.entry(rule).kind == "candidates")
    models = {agent_name(s): ScriptedChatModel(never) for s in ss}
    for rule in ("utilitarian-feasible", "nash-bargaining", "mean"):
        with pytest.raises(InputError) as e:
            llm_negotiate(d, ss, models, closing=rule)
        assert e.value.field == "closing"
    base = dict(stakeholders=NAMES, decision="flows", rules=[], k=2, pois=6, model="openai:m@http://127.0.0.1:9/v1")
    S.check_design(**base, closing="nash")
    S.check_design(**base, closing="dialectical")
    with pytest.raises(InputError) as e:
        S.check_design(**base, closing="leximin-feasible")
    assert e.value.field == "study.closing"
    dest = tmp_path / "d.json"
    dest.write_text(json.dumps(d.to_dict()))
    r = CliRunner().invoke(app, ["tourism", "run", "--destination", str(dest), "--decision", "flows", "--model",
                                 "openai:m@http://127.0.0.1:9/v1", "--rule", "ks-feasible", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "--rule" in r.output and not (tmp_path / "o").exists()


def test_llm_debate_records_its_closing(setup):
    d, ss, cands = setup
    out = llm_debate(d, ss, _models(d, ss, cands.decisions[:4]), rounds=1, closing="leximin", cands=cands)
    assert out["closing"]["rule"] == "leximin" and out["closing"]["details"]["rule"] == "leximin"
    assert "payoff table" in out["closing"]["note"]


def test_triage_has_no_closing_hook():
    """Triage keeps the objectives of participant_objective (tests/arena pin them): no hook, no domain profile."""
    from fairarena.arena.closing import ClosingContext

    assert getattr(TRIAGE, "closing_profile", None) is None
    ctx = ClosingContext(None, ["A", "B"], {}, lambda *a, **k: None, domain=TRIAGE)
    assert ctx.domain_profile({}) is None
    assert ClosingContext(None, ["A", "B"], {}, lambda *a, **k: None).domain_profile({}) is None
