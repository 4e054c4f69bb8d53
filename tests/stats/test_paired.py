"""Every number of fairarena.stats against a slow, obvious implementation written here, plus properties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from fairarena.errors import InputError
from fairarena.stats import (better_word, bootstrap_mean_ci, bootstrap_means_ci, canonical_direction,
                             cohens_d_pooled, cohens_dz, holm, paired_comparison, round_differences)

# ------------------------------------------------------------------ slow references


def slow_t(d):
    n = len(d)
    mean = sum(d) / n
    var = sum((x - mean) ** 2 for x in d) / (n - 1)
    t = mean / math.sqrt(var / n)
    p = 2 * (1 - sps.t.cdf(abs(t), n - 1))
    return t, p


def midranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def slow_wilcoxon_exact(d):
    """Two-sided p by enumerating all 2^n sign assignments of the (mid-)ranks of the non-zero |d|."""
    d = [x for x in d if x != 0]
    r = midranks([abs(x) for x in d])
    w_obs = sum(rk for rk, x in zip(r, d) if x > 0)
    total = 0
    le = ge = 0
    for signs in itertools.product((0, 1), repeat=len(d)):
        w = sum(rk for rk, s in zip(r, signs) if s)
        total += 1
        le += w <= w_obs + 1e-9
        ge += w >= w_obs - 1e-9
    return min(1.0, 2 * min(le, ge) / total), min(w_obs, sum(r) - w_obs)


def slow_wilcoxon_normal(d):
    """Normal approximation with the tie-corrected variance, zeros dropped, no continuity correction."""
    d = [x for x in d if x != 0]
    n = len(d)
    r = midranks([abs(x) for x in d])
    w = sum(rk for rk, x in zip(r, d) if x > 0)
    ties = {}
    for x in d:
        ties[abs(x)] = ties.get(abs(x), 0) + 1
    var = n * (n + 1) * (2 * n + 1) / 24 - sum(t ** 3 - t for t in ties.values()) / 48
    z = (w - n * (n + 1) / 4) / math.sqrt(var)
    return 2 * (1 - sps.norm.cdf(abs(z)))


def slow_holm(p, alpha):
    """Holm's procedure by definition: reject sorted hypotheses while p_(k) <= alpha / (m - k + 1)."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    rejected = set()
    for k, i in enumerate(order, start=1):
        if p[i] <= alpha / (m - k + 1):
            rejected.add(i)
        else:
            break
    return rejected


def slow_cohens_d(a, b):
    n_a, n_b = len(a), len(b)
    ma, mb = sum(a) / n_a, sum(b) / n_b
    va = sum((x - ma) ** 2 for x in a) / (n_a - 1)
    vb = sum((x - mb) ** 2 for x in b) / (n_b - 1)
    sp = math.sqrt(((n_a - 1) * va + (n_b - 1) * vb) / (n_a + n_b - 2))
    return (ma - mb) / sp


def slow_percentile(sorted_vals, q):
    h = (len(sorted_vals) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (h - lo) * (sorted_vals[hi] - sorted_vals[lo])


def slow_bootstrap(x, n_resamples=2000, seed=42, level=0.95):
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(x), size=(n_resamples, len(x)))
    means = []
    for b in range(n_resamples):
        s = 0.0
        for i in idx[b]:
            s += x[i]
        means.append(s / len(x))
    means.sort()
    return slow_percentile(means, (1 - level) / 2), slow_percentile(means, (1 + level) / 2)


# ------------------------------------------------------------------ data


def normal_pair(seed, n=30, shift=0.8):
    rng = np.random.default_rng(seed)
    b = rng.normal(50, 5, n)
    return b + rng.normal(shift, 2, n), b


def skewed_pair(seed, n=30):
    rng = np.random.default_rng(seed)
    b = rng.normal(50, 5, n)
    return b + rng.exponential(1.0, n) ** 3, b


# ------------------------------------------------------------------ the tests against references


@pytest.mark.parametrize("seed", range(4))
def test_ttest_matches_hand_formula(seed):
    a, b = normal_pair(seed)
    r = paired_comparison(a, b, test="ttest")
    t, p = slow_t(list(round_differences(a, b)))
    assert r.test == "ttest"
    assert r.statistic == pytest.approx(t, rel=1e-10)
    assert r.p == pytest.approx(p, rel=1e-7, abs=1e-14)


@pytest.mark.parametrize("d", [
    [1.5, -0.3, 2.2, 0.7, -1.1, 3.4, 0.2, 1.9],                 # no ties, no zeros: scipy's exact path
    [1.0, 1.0, -2.0, 3.0, 3.0, 3.0, -0.5, 4.0, 2.0],            # ties: exact permutation path (n <= 13)
    [0.0, 1.0, -1.0, 2.0, 2.5, 0.0, 3.0, -0.5, 1.5, 4.0],       # zeros dropped (zero_method="wilcox")
    [0.4] * 6,                                                   # constant non-zero differences
])
def test_wilcoxon_small_n_matches_enumeration(d):
    b = np.linspace(10, 20, len(d))
    a = b + np.array(d)
    r = paired_comparison(a, b, test="wilcoxon")
    p, w = slow_wilcoxon_exact(list(round_differences(a, b)))
    assert r.test == "wilcoxon"
    assert r.p == pytest.approx(p, rel=1e-9)
    assert r.statistic == pytest.approx(w)


def test_wilcoxon_large_n_with_ties_matches_normal_approximation():
    rng = np.random.default_rng(3)
    d = rng.integers(-3, 6, 40) / 4.0          # many ties and zeros, n > 13
    b = rng.normal(10, 1, 40)
    a = b + d
    r = paired_comparison(a, b, test="wilcoxon")
    assert r.p == pytest.approx(slow_wilcoxon_normal(list(round_differences(a, b))), rel=1e-9)
    assert r.n_zero == int(np.sum(d == 0))


def test_rounding_removes_float_noise_ties_and_zeros():
    # 0.1 + 0.2 - 0.3 is 5.55e-17, not 0; after rounding these differences are exact zeros
    b = np.array([0.3, 0.6, 0.9, 1.2, 1.5, 0.7])
    a = np.array([0.1 + 0.2, 0.4 + 0.2, 0.7 + 0.2, 1.0 + 0.2, 1.3 + 0.2, 0.5 + 0.2])
    assert np.any(a - b != 0)
    for test in ("auto", "ttest", "wilcoxon"):
        r = paired_comparison(a, b, test=test)
        assert r.p == 1.0 and r.winner == "tie" and r.n_zero == 6 and r.mean_diff == 0.0
        assert r.cohens_d == 0.0 and r.d_z == 0.0
    # equal differences up to noise are one tie group (mid-ranks), as in the enumeration
    d = np.array([0.1 + 0.2, 0.3, 0.3, -0.1, 0.5, 0.7, 0.9])
    b = np.full(7, 2.0)
    r = paired_comparison(b + d, b, test="wilcoxon")
    assert r.p == pytest.approx(slow_wilcoxon_exact([0.3, 0.3, 0.3, -0.1, 0.5, 0.7, 0.9])[0], rel=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_cohens_d_pooled_and_dz_by_formula(seed):
    a, b = normal_pair(seed)
    r = paired_comparison(a, b)
    assert r.cohens_d == pytest.approx(slow_cohens_d(list(a), list(b)), rel=1e-9)
    assert cohens_d_pooled(a, b) == pytest.approx(slow_cohens_d(list(a), list(b)), rel=1e-12)
    d = list(a - b)
    m = sum(d) / len(d)
    sd = math.sqrt(sum((x - m) ** 2 for x in d) / (len(d) - 1))
    assert r.d_z == pytest.approx(m / sd, rel=1e-9)
    assert cohens_dz(a - b) == pytest.approx(m / sd, rel=1e-12)
    # pooled d and d_z are different quantities; the paired design makes d_z the larger here
    assert abs(r.d_z) > abs(r.cohens_d)


def test_cohens_d_unequal_sizes_uses_weighted_pooling():
    a, b = [1.0, 2.0, 4.0, 7.0], [2.0, 3.0, 3.5, 5.0, 6.0, 9.0]
    assert cohens_d_pooled(a, b) == pytest.approx(slow_cohens_d(a, b), rel=1e-12)


@pytest.mark.parametrize("n", [5, 12, 31])
def test_bootstrap_matches_explicit_loop_and_scipy(n):
    x = np.random.default_rng(n).gamma(2.0, 3.0, n)
    lo, hi = bootstrap_mean_ci(x)
    slo, shi = slow_bootstrap(list(x))
    assert (lo, hi) == pytest.approx((slo, shi), rel=1e-12)
    ref = sps.bootstrap((x,), np.mean, n_resamples=2000, method="percentile",
                        rng=np.random.default_rng(42), vectorized=True).confidence_interval
    assert (lo, hi) == pytest.approx((ref.low, ref.high), rel=1e-12)


def test_bootstrap_batch_equals_one_by_one():
    rng = np.random.default_rng(1)
    samples = [rng.normal(size=n) for n in (10, 10, 7, 0, 25, 7, 10)]
    batch = bootstrap_means_ci(samples, n_resamples=500, seed=7, level=0.9)
    for s, row in zip(samples, batch):
        if s.size == 0:
            assert np.isnan(row).all()
        else:
            assert tuple(row) == pytest.approx(bootstrap_mean_ci(s, n_resamples=500, seed=7, level=0.9), rel=1e-12)
            assert tuple(row) == pytest.approx(slow_bootstrap(list(s), 500, 7, 0.9), rel=1e-12)


def test_bootstrap_constant_sample_is_a_point():
    assert bootstrap_mean_ci([0.1] * 9) == (0.1, 0.1)


def test_holm_matches_definition():
    rng = np.random.default_rng(5)
    for _ in range(30):
        p = list(rng.uniform(0, 0.2, rng.integers(1, 9)))
        adj = holm(p)
        for alpha in (0.01, 0.03, 0.05, 0.1):
            assert {i for i, q in enumerate(adj) if q <= alpha} == slow_holm(p, alpha)
        assert np.all(adj >= np.array(p) - 1e-15) and np.all(adj <= 1.0)


def test_holm_pinned_and_nan_not_counted():
    # sorted 0.01, 0.03, 0.04 (m = 3): 3*0.01 = 0.03; 2*0.03 = 0.06; max(0.06, 1*0.04) = 0.06
    assert list(holm([0.04, 0.01, 0.03])) == pytest.approx([0.06, 0.03, 0.06])
    # sorted 0.001, 0.02, 0.03, 0.5 (m = 4): 0.004, 0.06, max(0.06, 0.06), max(0.06, 0.5); then the cap at 1
    assert list(holm([0.02, 0.5, 0.001, 0.03])) == pytest.approx([0.06, 0.5, 0.004, 0.06])
    assert list(holm([0.9, 0.6])) == pytest.approx([1.0, 1.0])
    out = holm([0.04, math.nan, 0.01, 0.03])
    assert math.isnan(out[1]) and list(out[[0, 2, 3]]) == pytest.approx([0.06, 0.03, 0.06])


# ------------------------------------------------------------------ selection, properties, exclusions


def test_auto_selects_by_shapiro_wilk():
    a, b = normal_pair(0, n=40)
    r = paired_comparison(a, b)
    assert r.normality_p == pytest.approx(sps.shapiro(round_differences(a, b)).pvalue)
    assert r.normality_p >= 0.05 and r.test == "ttest"
    a, b = skewed_pair(0, n=40)
    r = paired_comparison(a, b)
    assert r.normality_p < 0.05 and r.test == "wilcoxon"
    assert r.test_requested == "auto"
    assert paired_comparison(a, b, test="ttest").test == "ttest"


def test_auto_falls_back_to_wilcoxon_when_normality_is_untestable():
    r = paired_comparison([1.0, 2.0], [0.0, 1.5])
    assert r.test == "wilcoxon" and r.normality_p is None and "not testable" in r.note
    r = paired_comparison([3.0, 4.0, 5.0, 6.0], [2.0, 3.0, 4.0, 5.0])   # constant difference 1
    assert r.test == "wilcoxon" and r.p == pytest.approx(2 / 2 ** 4)
    t = paired_comparison([3.0, 4.0, 5.0, 6.0], [2.0, 3.0, 4.0, 5.0], test="ttest")
    assert t.statistic == math.inf and t.p == 0.0 and t.winner == "A"


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("test", ["auto", "ttest", "wilcoxon"])
def test_swapping_sides_flips_sign_and_winner(seed, test):
    a, b = normal_pair(seed)
    r, s = paired_comparison(a, b, test=test), paired_comparison(b, a, test=test)
    assert s.p == pytest.approx(r.p, rel=1e-9) and s.test == r.test
    assert s.cohens_d == pytest.approx(-r.cohens_d) and s.d_z == pytest.approx(-r.d_z)
    assert s.mean_diff == pytest.approx(-r.mean_diff)
    assert {"A": "B", "B": "A", "tie": "tie"}[r.winner] == s.winner
    assert r.ci_a == s.ci_b and r.ci_b == s.ci_a


@pytest.mark.parametrize("test", ["auto", "ttest", "wilcoxon"])
def test_adding_a_constant_to_both_sides_changes_nothing(test):
    # values on a 1/64 grid and an integer shift: the differences are exactly the same floats
    rng = np.random.default_rng(11)
    b = rng.integers(0, 64 * 40, 25) / 64
    a = b + rng.integers(-64, 3 * 64, 25) / 64
    r, s = paired_comparison(a, b, test=test), paired_comparison(a + 1000, b + 1000, test=test)
    for f in ("p", "statistic", "test", "cohens_d", "d_z", "winner", "mean_diff", "normality_p", "n_zero"):
        assert getattr(s, f) == getattr(r, f), f
    assert s.mean_a == pytest.approx(r.mean_a + 1000) and s.ci_a == pytest.approx(np.add(r.ci_a, 1000))


def test_direction_decides_the_winner():
    a, b = normal_pair(0, shift=3.0)
    assert paired_comparison(a, b, direction="max").winner == "A"
    assert paired_comparison(a, b, direction="min").winner == "B"
    assert paired_comparison(a, b).direction == "max"     # the default, stored as given
    same = paired_comparison(a, a + 1e-3 * np.sin(np.arange(a.size)), direction="max")
    assert same.winner == "tie" and not same.significant


def test_one_direction_vocabulary_and_the_legacy_words_only_on_read():
    # max/min is the one vocabulary: higher/lower (what statistics files held before) is refused where a
    # direction is given, and mapped only by canonical_direction, the read path of a stored file
    a, b = normal_pair(0, shift=3.0)
    for word in ("higher", "lower", "MAX", None):
        with pytest.raises(InputError) as e:
            paired_comparison(a, b, direction=word)
        assert e.value.field == "direction"
    assert [canonical_direction(d) for d in ("max", "min", "higher", "lower")] == ["max", "min", "max", "min"]
    with pytest.raises(InputError):
        canonical_direction("up")
    assert (better_word("max"), better_word("min")) == ("higher", "lower")


def test_infeasible_and_missing_pairs_are_excluded_and_counted():
    a, b = normal_pair(2, n=20)
    fa = np.ones(20, bool)
    fb = np.ones(20, bool)
    fa[[1, 4]] = False
    fb[[4, 7, 9]] = False              # cohort 4 infeasible on both sides: excluded once
    a = a.copy()
    a[12] = np.nan
    r = paired_comparison(a, b, feasible_a=fa, feasible_b=fb)
    assert (r.n, r.n_excluded, r.n_missing) == (15, 4, 1)
    keep = fa & fb & ~np.isnan(a)
    ref = paired_comparison(a[keep], b[keep])
    assert (r.p, r.cohens_d, r.ci_a, r.test) == (ref.p, ref.cohens_d, ref.ci_a, ref.test)
    # nothing left
    e = paired_comparison(a[:3], b[:3], feasible_a=[False] * 3)
    assert e.n == 0 and e.n_excluded == 3 and e.winner == "tie" and e.test == "none" and math.isnan(e.p)


@pytest.mark.parametrize("kwargs, field", [
    ({"test": "anova"}, "test"), ({"alpha": 1.5}, "alpha"), ({"direction": "up"}, "direction"),
    ({"zero_method": "drop"}, "zero_method"), ({"n_resamples": 0}, "n_resamples"),
])
def test_bad_options_name_the_field(kwargs, field):
    with pytest.raises(InputError) as e:
        paired_comparison([1.0, 2.0, 3.0], [1.0, 1.0, 1.0], **kwargs)
    assert e.value.field == field


def test_mismatched_lengths_are_an_input_error():
    with pytest.raises(InputError):
        paired_comparison([1.0, 2.0], [1.0])


@pytest.mark.parametrize("seed", range(3))
def test_ttest_equals_scipy_ttest_rel(seed):
    a, b = normal_pair(seed, n=17)
    r = paired_comparison(a, b, test="ttest")
    ref = sps.ttest_rel(a, b)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-9) and r.p == pytest.approx(ref.pvalue, rel=1e-9)


def test_basic_and_bca_intervals():
    x = np.random.default_rng(9).gamma(2.0, 3.0, 23)
    lo, hi = slow_bootstrap(list(x))
    m = float(np.mean(x))
    assert bootstrap_mean_ci(x, method="basic") == pytest.approx((2 * m - hi, 2 * m - lo), rel=1e-12)
    ref = sps.bootstrap((x,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(42),
                        vectorized=True).confidence_interval
    assert bootstrap_mean_ci(x, method="bca") == pytest.approx((ref.low, ref.high), rel=1e-12)
    assert bootstrap_mean_ci([2.0] * 5, method="bca") == (2.0, 2.0)
    with pytest.raises(InputError) as e:
        bootstrap_mean_ci(x, method="studentized")
    assert e.value.field == "ci_method"
    r = paired_comparison(x, x[::-1], ci_method="basic")
    assert r.ci_a == pytest.approx(bootstrap_mean_ci(x, method="basic"), rel=1e-12)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as hst  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(hst.lists(hst.tuples(hst.integers(-200, 200), hst.integers(-40, 40)), min_size=2, max_size=30),
       hst.integers(-10_000, 10_000), hst.sampled_from(["auto", "ttest", "wilcoxon"]))
def test_properties_on_grid_data(pairs, shift, test):
    # values on a 1/8 grid: every difference and shift is exact in floating point
    b = np.array([p[0] for p in pairs]) / 8
    a = b + np.array([p[1] for p in pairs]) / 8
    r = paired_comparison(a, b, test=test, n_resamples=50)
    s = paired_comparison(b, a, test=test, n_resamples=50)
    t = paired_comparison(a + shift / 8, b + shift / 8, test=test, n_resamples=50)
    assert (r.test, r.n_zero) == (s.test, s.n_zero) == (t.test, t.n_zero)
    assert r.p == pytest.approx(s.p, rel=1e-9, nan_ok=True) and r.p == t.p or (math.isnan(r.p) and math.isnan(t.p))
    assert {"A": "B", "B": "A", "tie": "tie"}[r.winner] == s.winner and t.winner == r.winner
    assert r.d_z == -s.d_z or (math.isnan(r.d_z) and math.isnan(s.d_z))
    assert 0.0 <= r.p <= 1.0 or math.isnan(r.p)
    if r.winner != "tie":
        assert r.p < 0.05 and np.sign(r.mean_diff) == (1 if r.winner == "A" else -1)


def test_hand_worked_example():
    # a = 1..5, b = 2: d = (-1, 0, 1, 2, 3), mean 1, s_d = sqrt(2.5); s_a^2 = 2.5, s_b^2 = 0
    a, b = [1.0, 2.0, 3.0, 4.0, 5.0], [2.0] * 5
    t = paired_comparison(a, b, test="ttest")
    assert t.statistic == pytest.approx(math.sqrt(2))                 # 1 / (sqrt(2.5) / sqrt(5))
    assert t.p == pytest.approx(0.2301996, abs=1e-7)                   # 2 P(T_4 >= sqrt 2)
    assert t.cohens_d == pytest.approx(1 / math.sqrt(1.25))            # pooled SD sqrt((2.5 + 0) / 2)
    assert t.d_z == pytest.approx(1 / math.sqrt(2.5))
    w = paired_comparison(a, b, test="wilcoxon")
    # zero dropped; |d| = 1, 1, 2, 3 -> ranks 1.5, 1.5, 3, 4; W+ = 8.5, W- = 1.5;
    # of the 16 sign assignments, 3 give W+ >= 8.5 -> two-sided p = 6/16
    assert w.statistic == 1.5 and w.p == pytest.approx(6 / 16) and w.n_zero == 1


def test_core_imports_neither_pandas_nor_matplotlib():
    import subprocess
    import sys

    code = "import sys, fairarena.stats; print('pandas' in sys.modules, 'matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
