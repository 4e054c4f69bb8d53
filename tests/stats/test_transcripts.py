"""Transcript analyses: copy rates, convergence, contestation vs override, the framework-bias confusion."""

from __future__ import annotations

import math

import pytest

from fairarena.stats.transcripts import (bias_confusion, containment, contestation, convergence, copy_rates,
                                         copy_summary, debate_turns, nearest_frameworks, ngrams)


# ------------------------------------------------------------------------------------------ turns and copies

def _event(agent, phase, rnd, alloc, just, crit="", attempt=0):
    return {"type": "turn", "agent": agent, "phase": phase, "round": rnd, "attempt": attempt, "valid": True,
            "proposal": {"allocation": alloc, "justification": just, "critique": crit}}


def test_debate_turns_reads_every_turn_in_order():
    events = [{"type": "header"}, _event("A", "round", 1, {"P1": {"ICU": 1}}, "x"),
              _event("B", "round", 1, {"P1": {"ICU": 0}}, "y"), _event("B", "round", 1, {}, "z", attempt=1),
              _event("A", "final", 1, {"P1": {"ICU": 1}}, "w"), {"type": "closing"}, {"type": "footer"}]
    turns = debate_turns(events)
    assert [(t["agent"], t["stage"], t["attempt"]) for t in turns] == [("A", "r1", 0), ("B", "r1", 0), ("B", "r1", 1),
                                                                       ("A", "final", 0)]
    assert turns[0]["allocation"] == {"P1": {"ICU": 1}} and turns[2]["allocation"] == {}


def test_ngrams_and_containment():
    assert ngrams("The cat sat on the mat") == {("the", "cat", "sat"), ("cat", "sat", "on"), ("sat", "on", "the"),
                                                ("on", "the", "mat")}
    assert ngrams("Too short") == {("too", "short")}
    assert containment("the cat sat on the mat", "a cat sat on the sofa") == 0.5     # cat sat on, sat on the
    assert math.isnan(containment("", "anything"))


def test_copy_rates_by_hand():
    a1 = {"P1": {"ICU": 1, "MedA": 10}, "P2": {"ICU": 0, "MedA": 0}}
    b1 = {"P1": {"ICU": 0, "MedA": 10}, "P2": {"ICU": 1, "MedA": 5}}
    a2 = {"P1": {"ICU": 0, "MedA": 10}, "P2": {"ICU": 1, "MedA": 0}}          # adopts 2 of the 3 cells B changed
    turns = [{"agent": "A", "stage": "r1", "allocation": a1, "justification": "save the sickest first", "critique": ""},
             {"agent": "B", "stage": "r1", "allocation": b1, "justification": "beds for the young", "critique": "no"},
             {"agent": "A", "stage": "r2", "allocation": a2, "justification": "beds for the young", "critique": ""}]
    r = copy_rates(turns)
    assert math.isnan(r[0]["cells_same"]) and math.isnan(r[0]["text_history"])
    assert r[1]["cells_same"] == 0.25 and math.isnan(r[1]["cells_adopted"]) and r[1]["text_copied"] == 0.0
    assert r[2]["cells_same"] == 0.75 and r[2]["cells_adopted"] == pytest.approx(2 / 3)
    assert r[2]["text_copied"] == 1.0 and r[2]["text_history"] == 1.0


def _text_history_slowly(turns):
    """The history measure as its definition reads (the obvious, quadratic way): per turn after the first,
    containment of its justification in ``"\\n".join`` of every earlier justification and critique."""
    out, history = [], []
    for t in turns:
        out.append(containment(t["justification"], "\n".join(history)) if history else math.nan)
        history += [t["justification"], t["critique"]]
    return out


def _copied_slowly(turns):
    out, last = [], {}
    for t in turns:
        other = next((last[a] for a in last if a != t["agent"]), None)
        out.append(containment(t["justification"], other["justification"] + "\n" + other["critique"])
                   if other is not None else math.nan)
        last[t["agent"]] = t
    return out


def test_copy_rates_text_measures_match_their_definition_on_random_debates():
    """The history's n-grams are kept as the debate goes (linear time); they are the n-grams of the joined
    history, also across the boundary of two texts, and of histories shorter than an n-gram."""
    import random

    rng = random.Random(7)
    words = ["a", "b", "c", "Save", "ΑΣ", "x'y", "é", "1", "the"]
    same = lambda x, y: (math.isnan(x) and math.isnan(y)) or x == y   # noqa: E731
    for _ in range(1500):
        turns = [{"agent": rng.choice("AB"), "stage": "r1", "allocation": {},
                  "justification": " ".join(rng.choices(words, k=rng.randint(0, 6))),
                  "critique": " ".join(rng.choices(words, k=rng.randint(0, 3)))} for _ in range(rng.randint(0, 8))]
        got = copy_rates(turns)
        assert all(same(r["text_history"], h) for r, h in zip(got, _text_history_slowly(turns)))
        assert all(same(r["text_copied"], c) for r, c in zip(got, _copied_slowly(turns)))
    assert ngrams("one two three four") == set(zip(["one", "two"], ["two", "three"], ["three", "four"]))


def test_copy_summary_flags_agents_that_copy_text_and_cells():
    same = {"P1": {"ICU": 1}}
    t = [{"agent": "A", "stage": "r1", "allocation": same, "justification": "one two three four", "critique": ""},
         {"agent": "B", "stage": "r1", "allocation": {"P1": {"ICU": 0}}, "justification": "five six seven", "critique": ""},
         {"agent": "A", "stage": "r2", "allocation": {"P1": {"ICU": 0}}, "justification": "five six seven", "critique": ""},
         {"agent": "B", "stage": "r2", "allocation": {"P1": {"ICU": 0}}, "justification": "five six seven", "critique": ""}]
    s = copy_summary([copy_rates(t)])
    assert s["copying"] is True and s["from_round2"]["A"]["cells_adopted"] == 1.0
    t[3] = dict(t[3], justification="my own words entirely here")
    assert copy_summary([copy_rates(t)])["copying"] is False


# ------------------------------------------------------------------------------------------ convergence, contestation

def _t(agent, stage, cnss, feasible=True, **metrics):
    return {"agent": agent, "stage": stage, "metrics": {"cnss": cnss, **metrics}, "feasible": feasible}


def _trace(turns, joint=None, opponent="adversarial", cohort=0, framework="egalitarian"):
    return {"key": f"k{cohort}{opponent}", "cohort": cohort, "framework": framework, "opponent": opponent,
            "turns": turns, "joint": None if joint is None else {"metrics": {"cnss": joint}, "feasible": True}}


def test_convergence_is_the_mean_cnss_gap_per_stage():
    tr = _trace([_t("A", "r1", [1, 1, 0, 0]), _t("B", "r1", [0, 1, 1, 0]),
                 _t("A", "final", [1, 1, 0.5, 0]), _t("B", "final", [1, 1, 0.5, 0])])
    out = convergence([tr, _trace([_t("A", "r1", [1, 0]), _t("B", "r1", [1, 0], feasible=False)], cohort=1)])
    assert out["per_debate"][0]["distance"] == {"r1": 0.5, "final": 0.0}
    rows = {(r["opponent"], r["stage"]): r for r in out["by_stage"]}
    assert rows[("adversarial", "r1")]["n"] == 1 and rows[("all", "final")]["agree"] == 1.0


def test_contestation_classes():
    opening = [0.0, 0.0, 1.0, 1.0]                       # the adversary's opening targets P1 and P2
    def debate(b_final, joint, cohort):
        return _trace([_t("A", "r1", [1, 1, 0.5, 0.5]), _t("B", "r1", opening), _t("A", "final", joint),
                       _t("B", "final", b_final)], joint=joint, cohort=cohort)
    out = contestation([debate(opening, [1, 1, 1, 1], 0),            # B never moves: the joint overrides it
                        debate([0.5, 0.0, 1, 1], [1, 1, 1, 1], 1),   # B restores a quarter of what the joint does
                        debate([1, 1, 1, 1], [1, 1, 1, 1], 2),       # B converted
                        debate(opening, opening, 3),                 # nothing restored
                        _trace([_t("B", "r1", [1, 1, 1, 1])], cohort=4)])   # nobody targeted: left out
    assert [d["class"] for d in out["per_debate"]] == ["override", "contestation", "conversion", "none"]
    d1 = out["per_debate"][1]
    assert d1["by_opponent"]["final"] == 0.25 and d1["joint"] == 1.0 and d1["by_A"]["r1"] == 1.0
    assert out["classes"] == [{"opponent": "adversarial", "n": 4, "override": 1, "contestation": 1, "conversion": 1,
                               "none": 1}]


# ------------------------------------------------------------------------------------------ bias

def test_nearest_framework_normalises_each_metric_over_the_optima():
    optima = {"u": {"esg": 5.0, "rmg": 0.0}, "r": {"esg": 3.0, "rmg": 1.0}, "e": {"esg": 4.0, "rmg": 1.0}}
    near, dist = nearest_frameworks({"esg": 4.8, "rmg": 0.6}, optima, ("esg", "rmg"))
    # normalised: esg (4.8-3)/2 = 0.9, rmg 0.6; u (1, 0), r (0, 1), e (0.5, 1)
    assert dist["u"] == pytest.approx(math.hypot(0.1, 0.6)) and dist["e"] == pytest.approx(math.hypot(0.4, 0.4))
    assert near == ["e"]
    tie, _ = nearest_frameworks({"esg": 4.0, "rmg": 0.5}, {"a": {"esg": 3.0, "rmg": 0.5}, "b": {"esg": 5.0, "rmg": 0.5}},
                                ("esg", "rmg"))
    assert tie == ["a", "b"]                             # rmg is equal at every optimum: left out


def test_every_framework_optimum_is_nearest_to_itself_on_a_real_cohort():
    from fairarena.allocation.frameworks import framework_optima
    from fairarena.allocation.metrics import compute_metrics
    from fairarena.triage import sample_cohort

    problem = sample_cohort(3, "standard").to_problem()
    optima = {f: compute_metrics(problem, x) for f, x in framework_optima(problem).items()}
    for f, m in optima.items():
        near, dist = nearest_frameworks(m, optima)
        assert f in near and dist[f] == 0.0


def test_bias_confusion_counts_ties_fractionally():
    optima = {0: {"utilitarian": {"esg": 5.0}, "rawlsian": {"esg": 3.0}}}
    tr = _trace([_t("A", "final", [1], esg=4.9), _t("B", "final", [1], esg=4.0), _t("A", "r1", [1], esg=3.1)],
                opponent="baseline", framework="rawlsian")
    out = bias_confusion([tr], optima, metrics=("esg",))
    assert out["frameworks"] == ["utilitarian", "rawlsian"]
    fin = {r["proposer"]: r for r in out["tables"]["final"]}
    assert fin["aligned:rawlsian"]["counts"] == {"utilitarian": 1.0, "rawlsian": 0.0}
    assert fin["baseline"]["counts"] == {"utilitarian": 0.5, "rawlsian": 0.5}
    assert out["tables"]["r1"][0]["counts"] == {"utilitarian": 0.0, "rawlsian": 1.0}
    own = [h for h in out["hits"] if h.get("framework")]
    assert {h["stage"]: h["own"] for h in own} == {"r1": 1.0, "final": 0.0}


def test_the_observed_scale_keeps_a_metric_where_the_optima_barely_differ_from_dominating():
    optima = {0: {"utilitarian": {"esg": 5.0, "rmg": 0.50}, "rawlsian": {"esg": 3.0, "rmg": 0.51}}}
    tr = _trace([_t("A", "final", [1], esg=4.9, rmg=0.9), _t("B", "final", [1], esg=4.0, rmg=0.5)],
                opponent="baseline", framework="utilitarian")

    def a_row(scale):
        out = bias_confusion([tr], optima, metrics=("esg", "rmg"), stages=("final",), scale=scale)
        return next(r for r in out["tables"]["final"] if r["proposer"] == "aligned:utilitarian")["counts"]

    assert a_row("optima") == {"utilitarian": 0.0, "rawlsian": 1.0}        # rmg's 0.01 spread decides
    assert a_row("observed") == {"utilitarian": 1.0, "rawlsian": 0.0}
    with pytest.raises(Exception, match="scale"):
        bias_confusion([tr], optima, scale="zscore")
