"""Tourism debates through the generic arena (issue 21): the flow rules are the arena's (a proposal that
breaks them is invalid), every closing the arena offers ends a scripted debate of the generic objective
negotiator with a valid joint or is refused up front in one line, and the mean-repair closing's domain
repair gives the nearest valid flows (checked against enumeration on a tiny destination)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fairarena.aggregation.rules import RULES
from fairarena.arena import DebateConfig, run_debate
from fairarena.arena.closing import CLOSING_RULES, check_domain_closing
from fairarena.arena.parsing import ParsedProposal
from fairarena.arena.protocol import Debate
from fairarena.domains import DOMAINS
from fairarena.domains.protocol import violations_of
from fairarena.errors import InputError
from fairarena.tourism.arena import TOURISM, encode_flows_nearest
from fairarena.tourism.metrics import flow_feasibility

REFUSED = {n for n in CLOSING_RULES
           if CLOSING_RULES.entry(n).meta.get("source") == "aggregation" and RULES.entry(n).kind != "candidates"}


def test_the_arena_adapter_applies_the_flow_rules():
    d = DOMAINS.get("tourism").sample(0, pois=12)
    problem = TOURISM.problem(d)
    x = np.zeros((len(problem.ids), len(problem.resources)))     # within capacities, nobody placed
    debate = Debate.__new__(Debate)
    debate.domain, debate.instance, debate._rules = TOURISM, d, True
    out = debate.validated(ParsedProposal(x))
    assert not out.valid and any("places 0 of" in v for v in out.violations)
    assert out.violations == flow_feasibility(d, x.reshape(len(d.groups), len(d.pois), len(d.slots)))


@pytest.mark.parametrize("name", ["tourism", "tourism-lists"])
@pytest.mark.parametrize("closing", list(CLOSING_RULES))
def test_every_closing_gives_a_valid_joint_or_is_refused_up_front(name, closing):
    dom = DOMAINS.get(name)
    d = dom.sample(0, pois=12)
    specs = [f"aligned:{p.name}" for p in dom.participants(d)]
    if closing in REFUSED:
        with pytest.raises(InputError) as exc:
            run_debate(d, specs, config=DebateConfig(rounds=2, closing=closing), domain=dom)
        msg = str(exc.value)
        assert "\n" not in msg and msg.startswith(f"closing = {closing!r}") and "nash" in msg
        return
    res = run_debate(d, specs, config=DebateConfig(rounds=2, closing=closing), domain=dom)
    joint = res.final["joint"]
    assert res.status == "ok" and res.feasible["joint"] and joint["allocation"], joint["note"]
    x = np.asarray(__import__("fairarena.allocation.problem", fromlist=["x"]).allocation_from_mapping(
        dom.problem(d), joint["allocation"]), dtype=float)
    assert violations_of(dom, d, x) == []


def test_refusal_needs_a_domain_that_scores_its_own_participants():
    assert REFUSED >= {"utilitarian-feasible", "nash-bargaining", "mean", "median"}
    assert check_domain_closing(DOMAINS.get("triage"), "nash-bargaining") == "nash-bargaining"
    assert check_domain_closing(TOURISM, "nash") == "nash"
    with pytest.raises(InputError):
        check_domain_closing(TOURISM, "nash-bargaining")


def test_nearest_flows_is_exact_on_valid_flows_and_no_single_move_improves_it():
    """A valid target comes back unchanged (distance 0); for a random target, no move of one visitor between
    two POIs of one group and slot that keeps the rules lowers the distance (checked by trying every move)."""
    dom = DOMAINS.get("tourism")
    d = dom.sample(1, pois=6)
    a = d.arrays
    G, P, S = len(a.groups), len(a.pois), len(d.slots)
    x = np.asarray(dom.optimum(d, dom.participants(d)[0]), dtype=float)
    assert np.array_equal(encode_flows_nearest(d, x), x)
    target = np.random.default_rng(0).uniform(0, a.size.max() / 2, size=(G, P * S))
    got = encode_flows_nearest(d, target)
    F = got.reshape(G, P, S)
    assert flow_feasibility(d, F) == []
    dist = float(np.abs(got - target).sum())
    for g, s_, j, j2 in itertools.product(range(G), range(S), range(P), range(P)):
        if j == j2 or F[g, j, s_] < 1:
            continue
        H = F.copy()
        H[g, j, s_] -= 1
        H[g, j2, s_] += 1
        if not flow_feasibility(d, H):
            assert float(np.abs(H.reshape(G, -1) - target).sum()) >= dist - 1e-9


def test_repair_keeps_a_valid_decision_and_fixes_lists():
    dom = DOMAINS.get("tourism-lists")
    d = dom.sample(0, pois=12)
    p = dom.participants(d)[0]
    x = np.asarray(dom.optimum(d, p), dtype=float)
    assert np.array_equal(dom.repair(d, x), x)
    mean = (x + np.asarray(dom.optimum(d, dom.participants(d)[1]), dtype=float)) / 2
    y = dom.repair(d, mean)
    assert dom.violations(d, y) == []
    k = int((x[0] > 0).sum())
    for g in range(len(y)):          # each group's k highest mean scores, scored k..1 (ties: the first POI)
        top = np.argsort(-mean[g], kind="stable")[:k]
        assert list(y[g, top]) == list(range(k, 0, -1)) and (y[g] > 0).sum() == k
