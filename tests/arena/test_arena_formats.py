"""Proposal formats: the priorities realisation rule against hand-computed answers, feasibility as a
property, the parser's violations in the repair prompt, and scripted debates/studies in both formats."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairarena.allocation.problem import AllocationProblem, allocation_to_mapping, check_feasibility
from fairarena.arena import DebateConfig, build_agent, run_debate
from fairarena.arena.formats import PROPOSAL_FORMATS, parse_priorities, realise_priorities, speak_priorities
from fairarena.errors import InputError
from fairarena.llm import ScriptedChatModel
from fairarena.triage import sample_cohort

IDS = ("P1", "P2", "P3", "P4")


def problem(icu_cap: float = 2, nursing_cap: float = 20) -> AllocationProblem:
    # ICU indivisible (needs 1, 2, 0, 3); Nursing divisible (needs 8, 6.5, 10, 4)
    need = np.array([[1, 8], [2, 6.5], [0, 10], [3, 4]], dtype=float)
    n = len(IDS)
    return AllocationProblem(IDS, ("ICU", "Nursing"), np.array([icu_cap, nursing_cap], float), need,
                             np.array([True, False]), np.full(n, 0.5), np.arange(n, dtype=float),
                             np.full(n, 1 / n), np.full(n, 1 / n))


def test_registry_names_and_default():
    assert list(PROPOSAL_FORMATS) == ["allocation", "priorities"]
    assert DebateConfig().proposal_format == "allocation"
    with pytest.raises(InputError, match="proposal_format"):
        DebateConfig(proposal_format="haiku")


def test_bare_ids_get_their_need_until_capacity_runs_out():
    p = problem()
    x, v, notes = realise_priorities(p, {"ICU": ["P4", "P1", "P2"], "Nursing": ["P3", "P1", "P2"]})
    assert v == [] and notes == []
    # ICU cap 2: P4 needs 3 -> gets 2 (capacity), P1 and P2 nothing left
    assert x[:, 0].tolist() == [0, 0, 0, 2]
    # Nursing cap 20: P3 10, P1 8, P2 min(6.5, 2) = 2; P4 not listed -> 0
    assert x[:, 1].tolist() == [8, 2, 10, 0]


def test_indivisible_amounts_round_down_and_amounts_clip_to_need():
    p = problem(icu_cap=3, nursing_cap=20)
    x, v, notes = realise_priorities(p, {"ICU": [["P2", 1.7], ["P4", 2.9999999999], ["P1", 5]],
                                         "Nursing": [["P4", 9], ["P2", 3.25]]})
    assert v == []
    # ICU: P2 floor(1.7) = 1; P4 3 (within 1e-9 of 3), capped by need 3 and capacity 2 -> 2; P1 none left
    assert x[:, 0].tolist() == [0, 1, 0, 2]
    # Nursing: P4 asks 9 > need 4 -> 4 (noted); P2 3.25
    assert x[:, 1].tolist() == [0, 3.25, 0, 4]
    assert any("clipped to the need 4" in n for n in notes)
    assert any("ICU for P1: 5 clipped" in n for n in notes)


def test_divisible_capacity_exhaustion_gives_the_fractional_rest():
    p = problem(nursing_cap=7.25)
    x, v, _ = realise_priorities(p, {"Nursing": ["P4", ["P2", 3], "P1", "P3"]})
    # P4 4, P2 3, P1 min(8, 0.25) = 0.25, P3 nothing left
    assert v == [] and x[:, 1].tolist() == [0.25, 3, 0, 4] and not check_feasibility(p, x)


def test_duplicates_first_mention_counts_and_non_needers_get_nothing():
    p = problem()
    x, v, notes = realise_priorities(p, {"Nursing": [["P1", 3], "P1", ["P1", 8], "P3"], "ICU": ["P3", "P1"]})
    assert v == []
    assert x[0, 1] == 3 and x[2, 1] == 10            # P1 stays at 3; P3 full need
    assert x[2, 0] == 0 and x[0, 0] == 1             # P3 does not need ICU
    assert sum("P1 listed again for Nursing" in n for n in notes) == 2
    assert any("P3 does not need ICU" in n for n in notes)


def test_unknown_ids_resources_and_bad_entries_are_violations_rest_realised():
    p = problem()
    x, v, _ = realise_priorities(p, {"ICU": ["P9", "P1"], "Oxygen": ["P1"], "Nursing": [["P2", -1], {"x": 1}, "P2"]})
    assert x[0, 0] == 1 and x[1, 1] == 6.5 and not check_feasibility(p, x)
    assert any(s.startswith("unknown patient P9 in the ICU list") for s in v)
    assert any(s.startswith("unknown resource Oxygen") for s in v)
    assert any("Nursing amount for P2 is -1" in s for s in v)
    assert any("neither a patient id nor an [id, amount] pair" in s for s in v)
    assert len(v) == 4
    _, v2, _ = realise_priorities(p, ["P1"])
    assert v2 and "not an object" in v2[0]
    _, v3, _ = realise_priorities(p, {"ICU": "P1"})
    assert v3 == ["ICU is str, not a list of patient ids or [id, amount] pairs"]


def test_parse_keeps_what_was_said_and_what_was_realised():
    p = problem()
    stated = {"ICU": ["P2"], "Nursing": [["P1", 2]]}
    text = "Here:\n```json\n" + json.dumps({"priorities": stated, "justification": "j", "critique": "c"}) + "\n```"
    parsed = parse_priorities(text, p)
    assert parsed.valid and parsed.form == "fenced-json"
    rec = parsed.to_dict()
    assert rec["stated"] == stated and rec["proposal_format"] == "priorities"
    assert rec["allocation"]["P2"]["ICU"] == 2 and rec["allocation"]["P1"]["Nursing"] == 2
    free = parse_priorities(json.dumps({"allocation": {"P1": {"ICU": 1}}}), p)
    assert not free.valid and "without a \"priorities\" key" in free.violations[0]


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["ICU", "Nursing", "icu", "Oxygen"]),
                       st.lists(st.one_of(st.sampled_from(IDS + ("P9",)),
                                          st.tuples(st.sampled_from(IDS + ("P9",)),
                                                    st.one_of(st.floats(-5, 50), st.integers(-2, 50))).map(list)),
                                max_size=10)),
       st.integers(0, 7), st.floats(0, 40))
def test_realised_allocation_is_always_feasible_and_within_need(prio, icu_cap, nursing_cap):
    p = problem(icu_cap, nursing_cap)
    x, _, _ = realise_priorities(p, prio)
    assert check_feasibility(p, x, atol=1e-9) == []
    assert np.all(x <= p.need + 1e-9)
    assert np.all(x[:, 0] == np.floor(x[:, 0]))
    listed = {e if isinstance(e, str) else e[0] for items in prio.values() for e in items}
    for i, pid in enumerate(IDS):
        if pid not in listed:
            assert not x[i].any()   # not listed -> nothing


def test_speak_then_realise_gives_the_allocation_back():
    c = sample_cohort(3, "standard")
    p = c.to_problem()
    a = build_agent("A", "aligned:prioritarian", "scripted", c)
    x = a.negotiator.ideal()
    stated = speak_priorities(p, allocation_to_mapping(p, x))
    y, v, notes = realise_priorities(p, stated)
    assert v == [] and notes == []
    assert np.allclose(x, y, atol=1e-6)
    for res, items in stated.items():   # ordered by amount / need, decreasing
        r = p.resources.index(res)
        shares = [amt / p.need[p.ids.index(pid), r] for pid, amt in items]
        assert shares == sorted(shares, reverse=True)


def test_unknown_patient_is_quoted_in_the_repair_prompt(tmp_path):
    c = sample_cohort(1, "tight")
    prompts: list[str] = []

    def script(messages, params):
        prompts.append(messages[-1]["content"])
        ids = ["P99", "P1"] if len(prompts) == 1 else ["P1"]
        return {"priorities": {"ICU": ids}, "justification": "j", "critique": "c"}

    a = build_agent("A", "baseline", "scripted", c)
    b = build_agent("B", "baseline", "scripted", c)
    b.model = ScriptedChatModel(script)
    res = run_debate(c, a, b, DebateConfig(rounds=1, proposal_format="priorities", closing="mean-repair"),
                     transcript=tmp_path / "t.jsonl")
    assert "unknown patient P99 in the ICU list" in prompts[1]
    assert '"priorities"' in prompts[0]
    assert res.feasible["b"]


@pytest.mark.parametrize("fmt", ["allocation", "priorities"])
def test_scripted_debate_in_each_format(fmt, tmp_path):
    c = sample_cohort(2, "standard")
    a = build_agent("A", "aligned:rawlsian", "scripted", c)
    b = build_agent("B", "adversarial", "scripted", c)
    res = run_debate(c, a, b, DebateConfig(rounds=2, proposal_format=fmt), transcript=tmp_path / "t.jsonl")
    assert all(res.feasible.values())
    p = c.to_problem()
    turns = [json.loads(line) for line in open(tmp_path / "t.jsonl")]
    proposals = [t["proposal"] for t in turns if t.get("proposal")]
    assert proposals
    for rec in proposals:
        assert rec["valid"]
        from fairarena.allocation.problem import allocation_from_mapping
        assert check_feasibility(p, allocation_from_mapping(p, rec["allocation"])) == []
        assert ("stated" in rec) == (fmt == "priorities")
    if fmt == "priorities":
        assert all(json.loads(t["raw"]).keys() >= {"priorities"} for t in turns if t.get("raw"))


def test_both_formats_same_scripted_outcome():
    """The scripted negotiator states its allocation as priorities that realise to the same allocation, so a
    scripted study in either format reaches the same numbers on the same cohorts."""
    c = sample_cohort(4, "tight")
    out = {}
    for fmt in PROPOSAL_FORMATS:
        a = build_agent("A", "aligned:utilitarian", "scripted", c)
        b = build_agent("B", "baseline", "scripted", c)
        out[fmt] = run_debate(c, a, b, DebateConfig(rounds=1, proposal_format=fmt))
    ma, mp = out["allocation"].metrics, out["priorities"].metrics
    assert ma.keys() == mp.keys() and "joint" in ma
    for side in ma:
        for k, v in ma[side].items():
            if isinstance(v, float):
                assert v == pytest.approx(mp[side][k], abs=1e-6), (side, k)


def test_study_design_accepts_registered_formats_and_runs_both(tmp_path):
    from fairarena.study.design import StudyConfig, expand

    base = dict(name="f", cohorts=2, agent_a=["aligned:rawlsian"], opponents=["baseline"], rounds=1)
    keys = {}
    for fmt in PROPOSAL_FORMATS:
        cfg = StudyConfig(**base, proposal_format=fmt)
        tasks = expand(cfg)
        keys[fmt] = {t.key for t in tasks}
        for t in tasks:
            assert t.debate_config().proposal_format == fmt
    assert not keys["allocation"] & keys["priorities"]   # a different format is a different debate


def test_tiny_scripted_study_in_each_format_same_cohorts(tmp_path):
    """The study runner runs the same debates in both formats: every realised allocation (rounds, finals,
    joint) is feasible, and the scripted negotiator reaches the same metrics either way."""
    from fairarena.allocation.problem import allocation_from_mapping
    from fairarena.study.design import StudyConfig, cohort_of, to_toml
    from fairarena.study.store import read_records, run_study

    by_format = {}
    for fmt in PROPOSAL_FORMATS:
        cfg = StudyConfig(name="f", cohorts=2, agent_a=["aligned:egalitarian"], opponents=["baseline", "adversarial"],
                          rounds=1, proposal_format=fmt)
        s = run_study(cfg, to_toml(cfg), tmp_path / fmt)
        assert (s.ok, s.failed) == (4, 0)
        recs = read_records(tmp_path / fmt)
        for rec in recs.values():
            p = cohort_of(rec["task"]["cohort_seed"], rec["task"]["capacity"]).to_problem()
            assert rec["task"]["proposal_format"] == fmt
            assert all(side["feasible"] for row in rec["rounds"] for k, side in row.items() if k != "round")
            for side in ("a", "b"):
                assert check_feasibility(p, allocation_from_mapping(p, rec["final"][side]["allocation"])) == []
        by_format[fmt] = {(r["task"]["cohort_seed"], r["task"]["agent_b"]): r for r in recs.values()}
    assert by_format["allocation"].keys() == by_format["priorities"].keys()
    for k, ra in by_format["allocation"].items():
        rp = by_format["priorities"][k]
        p = cohort_of(k[0], "standard").to_problem()
        for side in ("a", "b"):
            xa, xp = (allocation_from_mapping(p, r["final"][side]["allocation"]) for r in (ra, rp))
            assert np.allclose(xa, xp, atol=1e-6)


def test_a_reply_cut_off_after_the_priorities_is_realised():
    """Small models often run out of tokens in the justification: a complete priorities object before the
    cut is read (form salvaged-json); a cut inside the priorities is not."""
    p = problem()
    text = '{"priorities": {"ICU": ["P2"], "Nursing": [["P1", 2]]}, "justification": "because the wor'
    parsed = parse_priorities(text, p)
    assert parsed.valid and parsed.form == "salvaged-json"
    assert parsed.allocation[1, 0] == 2 and parsed.allocation[0, 1] == 2
    assert parsed.justification == "because the wor"
    broken = parse_priorities('{"priorities": {"ICU": ["P2"], "Nursing": [["P1", 2', p)
    assert not broken.valid and broken.allocation is None


def test_cli_proposal_format(tmp_path):
    from typer.testing import CliRunner

    from fairarena.cli import app

    runner = CliRunner()
    bad = runner.invoke(app, ["debate", "--proposal-format", "haiku", "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "proposal_format" in bad.output and "allocation, priorities" in bad.output
    assert not (tmp_path / "bad").exists()
    ok = runner.invoke(app, ["debate", "--seed", "5", "--rounds", "1", "--proposal-format", "priorities", "--json",
                             "--out", str(tmp_path / "ok")])
    assert ok.exit_code == 0, ok.output
    header = json.loads(open(tmp_path / "ok" / "transcript.jsonl").readline())
    assert header["config"]["proposal_format"] == "priorities"
    assert "priorities" in header["proposal_schema"]["properties"]


def test_priorities_prompts_ask_for_priorities_only():
    c = sample_cohort(1, "tight")
    seen: list[list[dict]] = []

    def script(messages, params):
        seen.append(messages)
        return {"priorities": {"ICU": ["P1"]}, "justification": "j", "critique": "c"}

    a = build_agent("A", "aligned:rawlsian", "scripted", c)
    a.model = ScriptedChatModel(script)
    b = build_agent("B", "baseline", "scripted", c)
    run_debate(c, a, b, DebateConfig(rounds=1, proposal_format="priorities"))
    system, user = seen[0][0]["content"], seen[0][1]["content"]
    assert "You negotiate a hospital triage allocation" in system   # the triage system prompt, restated
    assert '{"priorities"' in system and '{"allocation"' not in system
    assert '{"priorities"' in user and '{"allocation"' not in user
    free = []
    a.model = ScriptedChatModel(lambda m, p: (free.append(m), {"allocation": {}, "justification": "", "critique": ""})[1])
    run_debate(c, a, build_agent("B", "baseline", "scripted", c), DebateConfig(rounds=1))
    assert '{"allocation"' in free[0][0]["content"] and '"priorities"' not in free[0][0]["content"]
