"""Scripted tourism debates run through the arena's turn loop (fairarena.tourism.negotiator): the transcript is
an arena transcript, the joint is the Nash bargaining solution over the candidates (checked against an
enumeration), it is never Pareto-dominated among the candidates, nobody gets less than its worst final, the
same seed gives the same debate, and the joint can differ from the Nash rule's choice."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fairarena.tourism import decisions as D
from fairarena.tourism import run as R
from fairarena.tourism.destination import generate
from fairarena.tourism.negotiator import bargain, scripted_negotiate
from fairarena.tourism.stakeholders import parse_stakeholders

NAMES = ["tourists:family", "residents", "local-business", "destination"]


@pytest.fixture(scope="module", params=[("flows", 0), ("flows", 1), ("lists", 0), ("lists", 2)])
def case(request):
    decision, seed = request.param
    d = generate(seed, 12)
    ss = parse_stakeholders(NAMES)
    cands = D.candidates(d, ss, decision, 5)
    return decision, d, ss, cands, R.debate(d, ss, cands, decision, "joint-draft", 3, 0, k=5)


def test_the_scripted_debate_is_an_arena_debate(tmp_path):
    d = generate(0, 12)
    ss = parse_stakeholders(NAMES)
    cands = D.candidates(d, ss, "flows")
    res = scripted_negotiate(d, ss, cands, "flows", rounds=3, transcript=tmp_path / "t.jsonl")
    assert res.status == "ok" and len(res.rounds) == 3
    lines = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [lines[0]["type"], lines[-1]["type"]] == ["header", "footer"] and lines[0]["domain"] == "tourism"
    turns = [x for x in lines if x["type"] == "turn"]
    assert [(t["phase"], t["round"]) for t in turns[:4]] == [("round", 1)] * 4
    assert sum(t["phase"] == "final" for t in turns) == 4
    joint = res.final["joint"]
    assert joint["rule"] == "joint-draft" and joint["allocation"]
    how = joint["details"]["how"]
    assert "Nash bargaining solution" in how and "disagreement value" in how
    # every participant answered the draft; all compute the same solution, so all accept it
    assert [s["accept"] for s in joint["details"]["steps"][1:]] == [True, True, True]
    # the proposals move: someone's round-3 proposal differs from its round-1 opening
    deb = R.debate(d, ss, cands, "flows", "joint-draft", 3, 0)
    assert any(a != b for a, b in zip(deb["rounds"][0], deb["rounds"][-1]))


def test_joint_is_undominated_among_candidates_and_above_every_disagreement_value(case):
    decision, d, ss, cands, deb = case
    assert deb["status"] == "ok" and deb["index"] is not None
    U = D.utility_matrix(cands.values)
    u = U[:, deb["index"]]
    worst_final = U[:, [cands.names.index(f) for f in deb["finals"]]].min(axis=1)
    assert (u >= worst_final - 1e-12).all()
    dominated = [(U[:, k] >= u - 1e-12).all() and (U[:, k] > u + 1e-9).any() for k in range(U.shape[1])]
    assert not any(dominated), [cands.names[k] for k, x in enumerate(dominated) if x]


def test_same_seed_same_debate(case):
    decision, d, ss, cands, deb = case
    again = R.debate(d, ss, cands, decision, "joint-draft", 3, 0, k=5)
    keep = ("rounds", "finals", "chosen", "how", "note", "agreed")
    assert {k: again[k] for k in keep} == {k: deb[k] for k in keep}
    assert np.array_equal(again["decision"], deb["decision"])


def test_the_debate_can_differ_from_the_nash_rule():
    """Destination 0 (12 POIs), flows: the Nash rule maximises the product of payoff-table utilities
    (disagreement = each stakeholder's worst candidate) and picks the maximin LP compromise; the debate's
    bargaining, with disagreement = each stakeholder's worst final, picks the equal-weight compromise."""
    d = generate(0, 12)
    ss = parse_stakeholders(NAMES)
    cands = D.candidates(d, ss, "flows")
    deb = R.debate(d, ss, cands, "flows", "joint-draft", 3, 0)
    rule = D.decide(d, ss, "flows", "nash", cands)
    assert (rule["chosen"], deb["chosen"]) == ("compromise:maximin-lp", "compromise:all")


def _slow_bargain(U: np.ndarray, finals: list[int]) -> int:
    d = U[:, finals].min(axis=1)
    best, arg = None, None
    for k in range(U.shape[1]):
        g = U[:, k] - d
        if (g < -1e-9).any():
            continue
        key = (round(float(np.prod(np.maximum(g, 0))), 12), round(float(g.sum()), 12))
        if best is None or key > best:
            best, arg = key, k
    return arg


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 4).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=6, max_size=6), min_size=n, max_size=n),
    st.lists(st.integers(0, 5), min_size=n, max_size=n))))
def test_bargain_equals_an_enumeration_and_is_undominated(data):
    rows, finals = data
    U = np.array(rows)
    names = [f"s{i}" for i in range(len(rows))]
    b = bargain(U, names, {f"p{i}": f for i, f in enumerate(finals)})
    assert b.option == _slow_bargain(U, finals)
    u = U[:, b.option]
    assert (u >= U[:, finals].min(axis=1) - 1e-12).all()
    for k in range(U.shape[1]):
        assert not ((U[:, k] >= u).all() and (U[:, k] > u).any())


def test_scripted_closing_refused_for_lists_before_any_work(tmp_path):
    from typer.testing import CliRunner

    from fairarena.cli import app

    dest = tmp_path / "dest.json"
    runner = CliRunner()
    assert runner.invoke(app, ["tourism", "destination", "--seed", "2", "--pois", "10", "--out", str(dest)]).exit_code == 0
    r = runner.invoke(app, ["tourism", "run", "--destination", str(dest), "--rounds", "2", "--closing", "mean-repair",
                            "--out", str(tmp_path / "out")])
    assert r.exit_code == 2 and "--closing" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "out").exists()
    r = runner.invoke(app, ["tourism", "run", "--destination", str(dest), "--rounds", "2", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["decision"]["closing"] == "joint-draft" and out["decision"]["debate"]["how"]
