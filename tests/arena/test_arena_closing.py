"""Closing a debate by an aggregation rule, the dialectical protocol, the one repair, the council debate."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from fairarena.aggregation.objectives import utilities
from fairarena.aggregation.rules import RULES, Agent as AggAgent, Profile as AggProfile, aggregate
from fairarena.allocation.problem import allocation_from_mapping
from fairarena.arena import CLOSING_RULES, DebateConfig, build_agent, read_transcript, run_debate
from fairarena.arena.closing import NON_ALIGNED_OBJECTIVES, participant_objective
from fairarena.arena.profiles import parse_agent
from fairarena.arena.result import result_keys
from fairarena.cli import app
from fairarena.triage import load_cohort, sample_cohort

runner = CliRunner()


@pytest.fixture(scope="module")
def cohort():
    return sample_cohort(1, "standard")


def _agents(cohort, specs):
    return [build_agent(chr(ord("A") + k), spec, "scripted", cohort) for k, spec in enumerate(specs)]


def test_every_aggregation_rule_is_a_closing_rule_derived_from_the_registry():
    for name in RULES:
        assert name in CLOSING_RULES, name
        e = CLOSING_RULES.entry(name)
        assert e.source == "aggregation" and e.interactive is False and RULES.entry(name).description in e.description
    assert {n for n in CLOSING_RULES if CLOSING_RULES.entry(n).meta.get("source") == "aggregation"} == set(RULES)


def test_objectives_of_participants():
    assert participant_objective(parse_agent("aligned:care")) == "care"
    assert participant_objective(parse_agent("baseline")) == NON_ALIGNED_OBJECTIVES["baseline"] == "utilitarian"
    assert participant_objective(parse_agent("adversarial")) is None
    assert participant_objective(parse_agent("adversarial-rag")) is None
    assert participant_objective(parse_agent("adversarial"), {"adversarial": "rawlsian"}) == "rawlsian"


@pytest.mark.parametrize("rule", ["nash", "pf-lottery"])
def test_debate_closed_by_a_rule_equals_aggregate_run_on_the_same_finals(tmp_path, rule):
    out = tmp_path / "debate"
    specs = ["aligned:rawlsian", "aligned:utilitarian", "aligned:egalitarian", "baseline", "adversarial"]
    r = runner.invoke(app, ["debate", "--seed", "1", *[a for s in specs for a in ("--agent", s)], "--model", "scripted",
                            "--rounds", "2", "--closing", rule, "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "result.json").read_text())
    names = [a["name"] for a in doc["agents"]]
    assert all(doc["feasible"][n] for n in names)
    objectives = {"A": "rawlsian", "B": "utilitarian", "C": "egalitarian", "D": "utilitarian"}
    # the finals as a proposals file: voters as agents, the adversary's final as an extra candidate
    proposals = {"agents": [{"name": n, "objective": objectives[n], "allocation": doc["final"][n]["allocation"]}
                            for n in "ABCD"],
                 "candidates": {"E": doc["final"]["E"]["allocation"]}}
    (tmp_path / "proposals.json").write_text(json.dumps(proposals))
    r2 = runner.invoke(app, ["aggregate", "run", "--problem", str(out / "cohort.json"), "--proposals",
                             str(tmp_path / "proposals.json"), "--rule", rule, "--seed", "1", "--json"])
    assert r2.exit_code == 0, r2.output
    agg = json.loads(r2.output)
    expect = agg["decision"].get("drawn_allocation") or agg["decision"]["allocation"]
    joint = doc["final"]["joint"]
    p = load_cohort(out / "cohort.json").to_problem()
    assert np.allclose(allocation_from_mapping(p, joint["allocation"], "joint"), allocation_from_mapping(p, expect, "x"))
    det = joint["details"]
    assert det["voters"] == objectives and det["candidates"] == list("ABCDE")
    assert det["utilities"] == pytest.approx(agg["decision"]["utilities"])
    assert (det["lottery"] is None) == (agg["lottery"] is None)
    if agg["lottery"]:
        assert det["lottery"] == pytest.approx(agg["lottery"]["probabilities"]) and det["draw"] == agg["lottery"]["draw"]
    assert "E (no objective) do not vote" in joint["note"]


def test_feasible_set_rule_closes_with_the_rule_optimum(cohort):
    agents = _agents(cohort, ["aligned:rawlsian", "aligned:care"])
    res = run_debate(cohort, agents, DebateConfig(rounds=1, closing="utilitarian-feasible"))
    p = cohort.to_problem()
    keys = result_keys(["A", "B"])   # the two-agent result keeps its a/b keys
    finals = [allocation_from_mapping(p, res.final[keys[n]]["allocation"], n) for n in "AB"]
    prof = AggProfile.from_proposals(p, [AggAgent("A", "rawlsian", finals[0]), AggAgent("B", "care", finals[1])])
    d = aggregate(prof, "utilitarian-feasible", seed=0)
    x = allocation_from_mapping(p, res.final["joint"]["allocation"], "joint")
    assert res.feasible["joint"] and np.allclose(x, d.allocation)
    # the optimum over the feasible set is at least as good in total as either final
    u = utilities(p, ["rawlsian", "care"], np.stack([x, *finals]), "range").sum(axis=0)
    assert u[0] >= u[1:].max() - 1e-6


def test_fewer_than_two_voters_is_recorded_not_raised(cohort):
    res = run_debate(cohort, _agents(cohort, ["aligned:rawlsian", "adversarial"]), DebateConfig(rounds=1, closing="borda"))
    assert res.status == "ok" and res.final["joint"]["allocation"] is None and res.feasible["joint"] is False
    assert "a rule needs two" in res.final["joint"]["note"]


def test_mean_repair_closing_equals_the_aggregation_mean_rule(cohort):
    p = cohort.to_problem()
    specs = ["aligned:rawlsian", "aligned:utilitarian", "aligned:care"]
    a = run_debate(cohort, _agents(cohort, specs), DebateConfig(rounds=1, closing="mean-repair"))
    b = run_debate(cohort, _agents(cohort, specs), DebateConfig(rounds=1, closing="mean"))
    xa = allocation_from_mapping(p, a.final["joint"]["allocation"], "a")
    xb = allocation_from_mapping(p, b.final["joint"]["allocation"], "b")
    assert np.array_equal(xa, xb)
    # and both are the repaired coordinate-wise mean of the three finals
    from fairarena.aggregation.repair import repair_to_feasible

    finals = [allocation_from_mapping(p, a.final[n]["allocation"], n) for n in "ABC"]
    assert np.array_equal(xa, repair_to_feasible(p, np.mean(np.stack(finals), axis=0)))


def test_one_repair_function():
    import fairarena.arena as arena
    import fairarena.arena.closing as closing
    from fairarena.aggregation.repair import repair_to_feasible

    assert arena.repair_to_feasible is repair_to_feasible and closing.repair_to_feasible is repair_to_feasible


# -- dialectical -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed,pair,share", [(0, ("rawlsian", "utilitarian"), 0.8),        # compatible after revising
                                             (0, ("egalitarian", "prioritarian"), 0.9),    # round limit, not compatible
                                             (1, ("egalitarian", "prioritarian"), 0.9),
                                             (0, ("utilitarian", "care"), 0.8)])           # compatible at once
def test_dialectical_terminates_records_distances_and_honours_the_share(tmp_path, seed, pair, share):
    c = sample_cohort(seed, "standard")
    p = c.to_problem()
    limit = 4
    res = run_debate(c, _agents(c, [f"aligned:{f}" for f in pair]),
                     DebateConfig(rounds=1, closing="dialectical", share=share, revisions=limit, seed=seed),
                     transcript=tmp_path / "t.jsonl")
    assert res.status == "ok"
    d = res.final["joint"]["details"]
    assert d["share"] == share and 0 <= d["revisions"] <= limit and len(d["rounds"]) == d["revisions"] + 1
    # every revision turn is in the transcript (only rejected positions revise)
    revise = [t for t in res.turns if t.phase == "revise"]
    assert len(revise) == sum(len(r["revised"]) for r in d["rounds"])
    # stops at compatibility or at the limit, never earlier
    assert d["compatible"] or d["revisions"] == limit
    assert all(not r["compatible"] for r in d["rounds"][:-1])
    for r in d["rounds"]:   # distances: symmetric, in [0, 1], the maximum recorded
        dist = r["distances"]
        assert all(dist[a][b] == pytest.approx(dist[b][a]) and 0 <= dist[a][b] <= 1 for a in dist for b in dist[a])
        assert r["max_distance"] == pytest.approx(max(v for row in dist.values() for v in row.values()))
    # the accepted joint: recomputed utilities of the joint allocation
    x = allocation_from_mapping(p, res.final["joint"]["allocation"], "joint")
    u = utilities(p, list(pair), x[None], "range")[:, 0]
    assert dict(zip("AB", u)) == pytest.approx(d["joint_utilities"])
    if d["accepted_by_all"]:
        assert all(v >= share - 1e-9 for v in u)
    else:
        assert min(u) < share
    if d["compatible"]:   # every agent keeps the share in the other's position, so the joint is accepted
        assert d["accepted_by_all"]
    ev = read_transcript(tmp_path / "t.jsonl")
    closing = [e for e in ev if e.get("type") == "closing"][0]
    assert closing["details"]["max_distance"] == d["max_distance"]


def test_dialectical_share_zero_closes_without_revising(cohort):
    res = run_debate(cohort, _agents(cohort, ["aligned:rawlsian", "aligned:care", "baseline"]),
                     DebateConfig(rounds=1, closing="dialectical", share=0.0))
    d = res.final["joint"]["details"]
    assert d["compatible"] and d["revisions"] == 0 and not [t for t in res.turns if t.phase == "revise"]


def test_scripted_revisions_concede_more_each_time(cohort):
    from fairarena.arena.negotiator import CONCESSION, Negotiator

    n = Negotiator(cohort.to_problem(), parse_agent("aligned:rawlsian"))
    n.state.phase = "revise"
    lams = []
    for k in range(3):
        lams.append(n.lam())
        n.revisions = k + 1
    assert lams == pytest.approx([1 - (1 - CONCESSION) / 2, 1 - (1 - CONCESSION) / 4, 1 - (1 - CONCESSION) / 8])


# -- the council debate ----------------------------------------------------------------------------------

def test_six_framework_debate_from_the_cli_closed_by_a_rule(tmp_path):
    from fairarena.allocation.frameworks import FRAMEWORKS

    args = [a for f in FRAMEWORKS for a in ("--agent", f"aligned:{f}")]
    r = runner.invoke(app, ["debate", "--seed", "0", "--capacity", "standard", *args, "--model", "scripted",
                            "--rounds", "2", "--closing", "leximin", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert [a["profile"] for a in doc["agents"]] == [f"aligned:{f}" for f in FRAMEWORKS]
    det = doc["final"]["joint"]["details"]
    assert det["voters"] == {chr(ord("A") + k): f for k, f in enumerate(FRAMEWORKS)} and doc["feasible"]["joint"]
    # leximin closes on a final whose sorted utilities are lexicographically largest (obvious check)
    prob = sample_cohort(0, "standard").to_problem()
    xs = [allocation_from_mapping(prob, doc["final"][n]["allocation"], n) for n in det["candidates"]]
    U = utilities(prob, list(FRAMEWORKS), np.stack(xs), "range")
    keys = [tuple(np.round(np.sort(U[:, k]), 9)) for k in range(len(xs))]
    best = [k for k in range(len(xs)) if keys[k] == max(keys)]
    x = allocation_from_mapping(prob, doc["final"]["joint"]["allocation"], "joint")
    assert any(np.array_equal(x, xs[k]) for k in best)


def test_council_debate_joins_the_council_table():
    from fairarena.allocation.frameworks import FRAMEWORKS
    from fairarena.allocation.metrics import compute_metrics
    from fairarena.arena.council import council_debate

    rules = ["nash", "leximin", "utilitarian-feasible"]
    out = council_debate(seed=0, capacity="standard", closing="nash", rounds=2, rules=rules)
    assert out.debate.status == "ok" and out.joint_in_table
    assert [a["name"] for a in out.debate.agents] == list(FRAMEWORKS)
    rows = {r["rule"]: r for r in out.council.rows}
    assert list(rows) == [*rules, "debate"] and rows["debate"]["kind"] == "joint"
    p = sample_cohort(0, "standard").to_problem()
    x = allocation_from_mapping(p, out.debate.final["joint"]["allocation"], "joint")
    assert np.array_equal(rows["debate"]["allocation"], x)
    assert rows["debate"]["metrics"]["esg"] == pytest.approx(compute_metrics(p, x)["esg"])
    # the debate's own nash closing over its finals vs the council's nash over the frameworks' optima:
    # both are scored with the same stakeholders' utilities
    assert set(rows["debate"]["utilities"]) == set(rows["nash"]["utilities"]) == set(FRAMEWORKS)
    u = utilities(p, list(FRAMEWORKS), x[None], "range")[:, 0]
    assert [rows["debate"]["utilities"][f] for f in FRAMEWORKS] == pytest.approx(u)


def test_layering_the_arena_imports_aggregation_never_the_reverse():
    import subprocess
    import sys

    code = ("import sys, fairarena.aggregation.rules, fairarena.aggregation.council, fairarena.aggregation.repair; "
            "print(sorted(m for m in sys.modules if m.startswith('fairarena.arena')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_an_aggregation_rule_registered_after_import_is_a_closing_too():
    # the closing registry is a view of the aggregation rules (their one home), not a copy taken at import
    from fairarena.aggregation.rules import RULES
    from fairarena.arena.closing import CLOSING_RULES, closing_rules, get_closing_rule

    name = "test-late-plurality"
    RULES.add(name, RULES.get("plurality"), description="plurality, registered late", kind="candidates")
    try:
        assert name not in CLOSING_RULES
        assert get_closing_rule(name).name == name and not get_closing_rule(name).interactive
        assert CLOSING_RULES.entry(name).meta["source"] == "aggregation" and name in closing_rules()
    finally:
        RULES.remove(name)
        CLOSING_RULES.remove(name)
