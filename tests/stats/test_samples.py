"""Repeated samples: cluster bootstrap, variance components, the mixed-effects model, the samples table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fairarena.errors import InputError
from fairarena.stats import bootstrap_mean_ci, paired_comparison
from fairarena.stats.samples import (cluster_bootstrap_ci, mixed_effects, samples_frame, samples_table,
                                     variance_components)


def _clustered(k: int = 12, s: int = 3, tau: float = 1.0, sigma: float = 0.5, mu: float = 0.3, seed: int = 1):
    rng = np.random.default_rng(seed)
    u = rng.normal(0, tau, k)
    cl = np.repeat(np.arange(k), s)
    return mu + u[cl] + rng.normal(0, sigma, k * s), cl


# ------------------------------------------------------------------------------------------ cluster bootstrap

def test_cluster_bootstrap_with_one_value_per_cluster_is_the_ordinary_bootstrap():
    x = np.random.default_rng(3).normal(size=17)
    assert cluster_bootstrap_ci(x, list(range(17))) == pytest.approx(bootstrap_mean_ci(x), abs=1e-12)


def test_cluster_bootstrap_equals_an_explicit_loop_over_resampled_cohorts():
    y, cl = _clustered(k=7, s=2)
    y = np.append(y, [5.0, 6.0, 7.0])            # an unequal cluster: three more values in cohort 0
    cl = np.append(cl, [0, 0, 0])
    B = 500
    idx = np.random.default_rng(42).integers(0, 7, size=(B, 7))   # the draw resample_counts makes
    means = []
    for b in range(B):
        vals = np.concatenate([y[cl == c] for c in idx[b]])
        means.append(vals.mean())
    want = np.percentile(means, [2.5, 97.5])
    got = cluster_bootstrap_ci(y, cl, n_resamples=B)
    assert got == pytest.approx(tuple(want), abs=1e-12)


def test_cluster_bootstrap_is_wider_than_the_naive_one_when_cohorts_dominate():
    y, cl = _clustered(k=10, s=5, tau=1.0, sigma=0.1)
    lo, hi = cluster_bootstrap_ci(y, cl)
    nlo, nhi = bootstrap_mean_ci(y)
    assert hi - lo > 1.5 * (nhi - nlo)


def test_cluster_bootstrap_bad_input():
    with pytest.raises(InputError, match="clusters"):
        cluster_bootstrap_ci([1.0, 2.0], [0])
    assert all(math.isnan(v) for v in cluster_bootstrap_ci([math.nan], [0]))


# ------------------------------------------------------------------------------------------ variance components

def test_variance_components_of_a_hand_worked_example():
    # cohorts {1, 3} and {5, 7}: means 2 and 6; MSW = 4 / 2 = 2; MSB = 2 * (4 + 4) / 1 = 16; n0 = 2
    vc = variance_components([1, 3, 5, 7], ["a", "a", "b", "b"])
    assert (vc.within, vc.between, vc.n0) == (2.0, 7.0, 2.0)
    assert vc.share_between == pytest.approx(7 / 9) and vc.share_within == pytest.approx(2 / 9)


def _slow_anova(y, cl):
    groups = {}
    for v, c in zip(y, cl):
        groups.setdefault(c, []).append(v)
    n, k = len(y), len(groups)
    grand = sum(y) / n
    ssw = sum((v - sum(g) / len(g)) ** 2 for g in groups.values() for v in g)
    ssb = sum(len(g) * (sum(g) / len(g) - grand) ** 2 for g in groups.values())
    msw, msb = ssw / (n - k), ssb / (k - 1)
    n0 = (n - sum(len(g) ** 2 for g in groups.values()) / n) / (k - 1)
    return max(0.0, (msb - msw) / n0), msw


def test_variance_components_match_the_textbook_formulas_on_unequal_clusters():
    rng = np.random.default_rng(5)
    cl = rng.integers(0, 6, size=40)
    y = rng.normal(size=40) + cl * 0.4
    vc = variance_components(y, cl)
    between, within = _slow_anova(list(y), list(cl))
    assert vc.between == pytest.approx(between, rel=1e-12) and vc.within == pytest.approx(within, rel=1e-12)


def test_variance_components_degenerate_cases():
    one = variance_components([1.0, 2.0, 3.0], [0, 1, 2])                 # every sample once
    assert math.isnan(one.within) and math.isnan(one.share_between) and "not estimable" in one.note
    flat = variance_components([2.0, 2.0, 2.0, 2.0], [0, 0, 1, 1])
    assert flat.between == 0.0 and flat.within == 0.0 and math.isnan(flat.share_between)
    neg = variance_components([0.0, 2.0, 0.0, 2.0], [0, 0, 1, 1])          # equal cohort means
    assert neg.between == 0.0 and neg.share_within == 1.0


# ------------------------------------------------------------------------------------------ mixed effects

def test_mixed_model_on_balanced_data_agrees_with_the_anova_estimates():
    y, cl = _clustered(k=15, s=4)
    me = mixed_effects(y, cl)
    vc = variance_components(y, cl)
    assert me.converged
    assert me.estimate == pytest.approx(y.mean(), abs=1e-6)             # balanced: the GLS mean is the mean
    assert me.var_between == pytest.approx(vc.between, rel=1e-3)         # REML = ANOVA when not truncated
    assert me.var_within == pytest.approx(vc.within, rel=1e-3)
    # Var(mu) = (tau^2 + sigma^2 / s) / k = MSB / N on balanced data
    msb = vc.within + vc.n0 * vc.between
    assert me.se == pytest.approx(math.sqrt(msb / y.size), rel=1e-3)
    from scipy import stats as sps
    assert me.p == pytest.approx(2 * sps.norm.sf(abs(me.estimate / me.se)), rel=1e-9)


def test_mixed_model_is_more_cautious_than_treating_samples_as_independent():
    y, cl = _clustered(k=8, s=6, tau=0.6, sigma=0.2, mu=0.25, seed=11)
    me = mixed_effects(y, cl)
    naive_se = y.std(ddof=1) / math.sqrt(y.size)
    assert me.se > 2 * naive_se


def test_mixed_model_degenerate_inputs_fit_nothing():
    assert mixed_effects([0.0] * 6, [0, 0, 1, 1, 2, 2]).p == 1.0
    c = mixed_effects([0.5] * 4, [0, 0, 1, 1])
    assert (c.estimate, c.p) == (0.5, 0.0)
    one = mixed_effects([0.1, 0.4, -0.2], [0, 1, 2])
    assert math.isnan(one.p) and "not identified" in one.note


# ------------------------------------------------------------------------------------------ the table

def _frame(samples: int = 3, k: int = 10, effect: float = 0.2, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(k):
        level = rng.normal()
        for s in range(samples):
            b = level + rng.normal(0, 0.3)
            rows.append({"cohort": c, "framework": "rawlsian", "opponent": "baseline", "sample": s,
                         "a": {"rmg": b + effect + rng.normal(0, 0.1)}, "opp": {"rmg": b},
                         "a_feasible": True, "opp_feasible": not (c == 0 and s == 0)})
    return samples_frame(rows, ["rmg"])


def test_samples_table_reports_the_three_views():
    df = _frame()
    (row,) = samples_table(df, {"rmg": "max"}, n_resamples=300)
    ok = df[df["opp_feasible"]]
    assert (row["n_cohorts"], row["n_debates"], row["samples"], row["n_excluded"]) == (10, 29, 3, 1)
    d = (ok["a_rmg"] - ok["opp_rmg"]).to_numpy()
    assert row["mean_diff"] == pytest.approx(d.mean())
    means = ok.groupby("cohort")[["a_rmg", "opp_rmg"]].mean()
    ref = paired_comparison(means["a_rmg"], means["opp_rmg"], direction="max", n_resamples=300)
    assert row["cohort_test"]["p"] == ref.p and row["cohort_test"]["n"] == 10
    assert row["mixed"]["estimate"] == pytest.approx(d.mean(), abs=0.02)
    assert row["winner"] == "A" and row["cluster_ci"][0] > 0
    assert 0 <= row["variance_diff"]["share_within"] <= 1


def test_samples_table_with_no_effect_is_a_tie():
    (row,) = samples_table(_frame(effect=0.0, seed=4), {"rmg": "max"}, n_resamples=300)
    assert row["winner"] == "tie" and row["cluster_ci"][0] < 0 < row["cluster_ci"][1]


def test_samples_table_bad_input():
    df = _frame()
    with pytest.raises(InputError, match="columns"):
        samples_table(df.drop(columns=["sample"]), {"rmg": "max"})
    with pytest.raises(InputError, match="sample"):
        samples_table(pd.concat([df, df.iloc[:1]]), {"rmg": "max"})
    with pytest.raises(InputError, match="direction"):
        samples_table(df, {"rmg": "sideways"})
