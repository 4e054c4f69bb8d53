"""Effects against noise: the permutation tests, the control comparison, and a FAKE COPYING agent whose
study must come out as "no effect"."""

from __future__ import annotations

import hashlib
import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from fairarena.errors import InputError
from fairarena.stats.emergence import emergence
from fairarena.stats.noise import (against_control, label_permutation_test, noise_report, per_debate_figures,
                                   sign_flip_test)
from fairarena.stats.samples import samples_frame
from fairarena.stats.transcripts import copy_rates, copy_summary

DIRECTIONS = {"esg": "max", "rmg": "max", "var": "min", "dw_esg": "max", "vwci": "max",
              "gini": "min"}


# ------------------------------------------------------------------------------------------ the tests

@pytest.mark.parametrize("d", [[0.3, -0.1, 0.2, 0.5, 0.4], [1, 2, 3, -1, 0.5, 0.25, 2, 1.5, -0.3],
                               [0.0, 0.2, 0.2, -0.2, 0.1]])
def test_exact_sign_flip_equals_scipy_permutation_test(d):
    mean, p = sign_flip_test(d)
    ref = sps.permutation_test((np.asarray(d, float),), np.mean, permutation_type="samples",
                               alternative="two-sided", n_resamples=np.inf)
    assert mean == pytest.approx(np.mean(d)) and p == pytest.approx(ref.pvalue)


def test_sign_flip_monte_carlo_is_close_to_exact_and_reproducible():
    d = np.random.default_rng(2).normal(0.3, 1, 16)       # 2^16 sign vectors > 10,000: random ones
    signs = np.array(list(itertools.product([-1, 1], repeat=16)))
    exact = float((np.abs(signs @ d) >= abs(d.sum()) - 1e-12).mean())
    _, p = sign_flip_test(d)
    assert p == pytest.approx(exact, abs=0.015) and sign_flip_test(d) == sign_flip_test(d)


def test_sign_flip_degenerate():
    assert sign_flip_test([0.0, 0.0, 1e-14]) == (0.0, 1.0)    # float noise is no effect
    assert all(math.isnan(v) for v in sign_flip_test([]))
    with pytest.raises(InputError, match="n_permutations"):
        sign_flip_test([1.0], n_permutations=0)


def _slow_label_p(x):
    x = np.asarray(x, float)
    obs = x.mean(axis=0).var()
    hits = total = 0
    for rows in itertools.product(*[list(itertools.permutations(r)) for r in x]):
        total += 1
        hits += np.array(rows).mean(axis=0).var() >= obs - 1e-15
    return hits / total


def test_label_permutation_exact_against_enumeration():
    x = [[1.0, 2.0, 4.0], [0.5, 0.7, 0.6], [2.0, 2.5, 3.5]]
    stat, p = label_permutation_test(x)
    assert stat == pytest.approx(np.asarray(x).mean(axis=0).var()) and p == pytest.approx(_slow_label_p(x))


def test_label_permutation_monte_carlo_is_close_to_exact():
    x = np.random.default_rng(8).normal(size=(13, 2)) + [0.0, 0.4]
    exact = _slow_label_p(x)
    _, p = label_permutation_test(x, n_permutations=4000)          # 2^13 = 8192 > 4000: random
    assert p == pytest.approx(exact, abs=0.03)


def test_label_permutation_finds_a_real_difference_and_no_difference():
    rng = np.random.default_rng(0)
    real = rng.normal(size=(12, 3)) * 0.1 + [0.0, 0.5, 1.0]
    assert label_permutation_test(real)[1] < 0.001
    assert label_permutation_test(np.tile([[1.0, 2.0]], (1, 1)) * 0 + 3.0) == (0.0, 1.0)


# ------------------------------------------------------------------------------------------ against the control

def test_against_control_pairs_cohorts_and_needs_a_control():
    treated = {c: [0.5 + 0.01 * c, 0.6] for c in range(10)}
    control = {c: [0.1] for c in range(10)}
    r = against_control(treated, control, figure="f", metric="m", opponent="all")
    assert r.beats_null and r.effect == pytest.approx(np.mean([np.mean(v) - 0.1 for v in treated.values()]))
    assert r.p == pytest.approx(2 / 2 ** 10) and r.ci[0] > 0
    same = against_control(treated, treated, figure="f", metric="m", opponent="all")
    assert (same.effect, same.p, same.beats_null) == (0.0, 1.0, False)
    none = against_control(treated, None, figure="f", metric="m", opponent="all")
    assert none.beats_null is None and "control" in none.detail
    wrong_way = against_control(control, treated, figure="f", metric="m", opponent="all")
    assert wrong_way.p < 0.05 and not wrong_way.beats_null                   # significant, but the wrong sign


# ------------------------------------------------------------------------------------------ a fake copying agent

def _problem(seed: int):
    from fairarena.triage import sample_cohort

    return sample_cohort(seed, "standard").to_problem()


def _random_feasible(problem, label: str) -> np.ndarray:
    """A random allocation within capacity (independent of what the label means)."""
    rng = np.random.default_rng(int(hashlib.sha256(label.encode()).hexdigest()[:8], 16))
    x = rng.random(problem.need.shape) * problem.need
    x *= np.minimum(1.0, problem.capacity / np.maximum(x.sum(axis=0), 1e-12))
    return np.where(problem.indivisible, np.floor(x), x)


def _turn(problem, agent, stage, x, text):
    from fairarena.allocation.metrics import compute_metrics

    m = compute_metrics(problem, x)
    alloc = {pid: {r: float(x[i, k]) for k, r in enumerate(problem.resources) if problem.needed[i, k]}
             for i, pid in enumerate(problem.ids)}
    return {"agent": agent, "stage": stage, "metrics": m, "feasible": m["feasible"], "repairs": 0,
            "violations": [], "allocation": alloc, "justification": text, "critique": "", "attempt": 0}


def fake_copying_debate(cohort: int, framework: str | None, opponent: str, rounds: int = 3):
    """FAKE agents (no model): A opens with a random allocation seeded by its label and cohort, then every
    turn copies the other agent's last allocation and justification word for word; the joint is A's
    final. The alignment changes the opening's random draw, nothing systematic."""
    p = _problem(cohort)
    x = _random_feasible(p, f"{framework}/{cohort}")
    text = f"My proposal {hashlib.md5(f'{framework}{cohort}'.encode()).hexdigest()[:6]} serves the patients by need."
    turns = [_turn(p, "A", "r1", x, text)]
    stages = [f"r{k}" for k in range(1, rounds + 1)] + ["final"]
    for s in stages:
        for ag in ("B", "A") if s == "r1" else ("A", "B"):
            if (ag, s) == ("A", "r1"):
                continue
            turns.append(_turn(p, ag, s, x, text))                     # the other's last, copied
    patients = [{"id": pid, "age": 30 + 5 * i, "gender": "female", "race": "r", "ses": "s", "citizenship": "c"}
                for i, pid in enumerate(p.ids)]
    trace = {"key": f"{cohort}-{framework}-{opponent}", "cohort": cohort, "framework": framework,
             "opponent": opponent, "patients": patients,
             "turns": [{k: t[k] for k in ("agent", "stage", "metrics", "feasible", "repairs", "violations")}
                       for t in turns],
             "joint": {"metrics": turns[-2]["metrics"], "feasible": True}}
    return trace, turns


@pytest.fixture(scope="module")
def copying_study():
    cohorts, frameworks, opponents = range(8), ("utilitarian", "egalitarian", "rawlsian"), ("baseline", "adversarial")
    traces, turns = [], []
    for c in cohorts:
        for fw in frameworks:
            for opp in opponents:
                tr, tu = fake_copying_debate(c, fw, opp)
                traces.append(tr)
                turns.append(tu)
    control = [fake_copying_debate(c, None, "baseline")[0] for c in cohorts]
    return traces, turns, control


def _finals(traces):
    recs = [{"cohort": t["cohort"], "framework": t["framework"], "opponent": t["opponent"],
             "a": next(u["metrics"] for u in t["turns"] if u["agent"] == "A" and u["stage"] == "final"),
             "opp": next(u["metrics"] for u in t["turns"] if u["agent"] == "B" and u["stage"] == "final")}
            for t in traces]
    return samples_frame(recs, DIRECTIONS)


def test_a_fake_copying_study_reports_figures_that_do_not_beat_their_null(copying_study):
    traces, turns, control = copying_study
    # the plain emergence analysis still names a best alignment per metric, from noise
    means = {}
    for t in traces:
        a = next(u for u in t["turns"] if u["agent"] == "A" and u["stage"] == "final")["metrics"]
        for m in DIRECTIONS:
            means.setdefault((t["opponent"], t["framework"], m), []).append(a[m])
    means = {k: float(np.mean(v)) for k, v in means.items()}
    em = emergence(traces, DIRECTIONS, means, {"esg": "utilitarian", "rmg": "rawlsian", "gini": "egalitarian"})
    spread = [max(r["means"].values()) - min(r["means"].values()) for r in em["framework_bias"]]
    assert max(spread) > 0                                  # a "bias" figure exists ...
    rep = noise_report(traces, control, DIRECTIONS, finals=_finals(traces),
                       copies=copy_summary(copy_rates(t) for t in turns))
    figs = rep["figures"]
    assert {f["figure"] for f in figs} >= {"joint beats both openings", "joint beats both finals", "patching gain",
                                          "moderation", "framework bias"}
    assert all(f["beats_null"] is False for f in figs), [f for f in figs if f["beats_null"]]   # ... and no effect
    assert rep["copies"]["copying"] is True
    assert rep["copies"]["from_round2"]["B"]["text_copied"] == 1.0
    assert rep["copies"]["from_round2"]["A"]["cells_same"] == 1.0


def test_without_a_control_the_control_figures_are_untested(copying_study):
    traces, _, _ = copying_study
    figs = noise_report(traces, None, DIRECTIONS)["figures"]
    assert figs and all(f["beats_null"] is None and f["null"] == "none" for f in figs)


def _effect_trace(cohort, framework, opponent, joint_gain):
    """Hand-made trace: A and B propose 0.5/0.4 ESG; the joint adds joint_gain."""
    def t(ag, st, v, c):
        return {"agent": ag, "stage": st, "metrics": {"esg": v, "cnss": c}, "feasible": True}
    return {"key": f"{cohort}{framework}{opponent}", "cohort": cohort, "framework": framework, "opponent": opponent,
            "patients": [], "turns": [t("A", "r1", 0.5, [1.0, 0.0]), t("B", "r1", 0.4, [0.0, 1.0]),
                                      t("A", "final", 0.5, [1.0, 0.0]), t("B", "final", 0.4, [0.0, 1.0])],
            "joint": {"metrics": {"esg": 0.5 + joint_gain, "cnss": [1.0, 1.0]}, "feasible": True}}


def test_a_real_effect_beats_its_null():
    traces = [_effect_trace(c, "rawlsian", "baseline", 0.1 if c % 5 else 0.0) for c in range(16)]
    control = [_effect_trace(c, None, "baseline", 0.1 if c == 3 else 0.0) for c in range(16)]
    rep = noise_report(traces, control, {"esg": "max"})
    fig = {(f["figure"], f["metric"], f["opponent"]): f for f in rep["figures"]}
    jf = fig[("joint beats both finals", "esg", "all")]
    assert jf["value"] == pytest.approx(12 / 16) and jf["null_value"] == pytest.approx(1 / 16)
    assert jf["beats_null"] is True and jf["p_adjusted"] >= jf["p"]
    assert per_debate_figures(traces[:1], {"esg": "max"})[0]["joint_final"] == {"esg": 0.0}
