"""Paired comparison of two sides (Agent A vs its opponent) over cohorts: test, effect sizes, winner.

The protocol follows the triage-debate paper (Chaki, Gourru & Velcin, "Beyond Arrow's Impossibility:
Fairness as an Emergent Property of Multi-Agent Collaboration", arXiv:2604.13705, Appendix D.3):
observations are paired by cohort; a pair is excluded when either side's allocation is infeasible;
normality of the paired differences is checked with Shapiro-Wilk and decides between the paired t-test
and the Wilcoxon signed-rank test; the effect size is Cohen's d with the pooled standard deviation;
the means carry 95% bootstrap intervals (2,000 resamples); alpha = 0.05. Choices the paper leaves open
are fixed here and documented in ``docs/study.md`` (each has an option):

* differences ``d_i = a_i - b_i`` are rounded to 1e-12 (absolute) before anything is computed from
  them, so floating-point noise between equal allocations is an exact zero and equal differences are
  exact ties;
* ``test="auto"``: Shapiro-Wilk on the rounded differences at level ``alpha``; p >= alpha -> paired
  t-test, else Wilcoxon. With fewer than 3 pairs or zero spread of the differences normality cannot be
  tested and the Wilcoxon test is used. ``test="ttest"`` / ``"wilcoxon"`` force one;
* Wilcoxon zeros: ``zero_method="wilcox"`` (scipy's default and Wilcoxon's original rule: zero
  differences are dropped before ranking; this is what a default scipy/R analysis, as in the paper,
  does). ``"pratt"`` (rank the zeros, then drop their ranks) and ``"zsplit"`` are options. Ties get
  mid-ranks; the p-value is scipy's ``method="auto"``: exact distribution for n <= 50 without ties or
  zeros, an exact permutation enumeration for n <= 13 with ties, else the normal approximation with
  the tie-corrected variance (no continuity correction);
* all differences zero: no test can reject; statistic 0, p = 1. A constant non-zero difference: the
  t statistic is +-inf with p = 0 (its limit), the Wilcoxon test runs normally;
* Cohen's d (pooled) = mean(d) / sqrt((s_a^2 + s_b^2) / 2), the pooled SD of the two sides (equal n),
  as the paper states; d_z = mean(d) / s_d, the standardised mean of the differences, is reported
  beside it. Both are signed A minus B in metric units (not by the metric's direction); 0/0 is 0;
* winner: "tie" unless the deciding p (Holm-adjusted when a correction was applied, else raw) is below
  alpha; then the side whose mean is better in the metric's direction (``max`` or ``min``, the domains'
  vocabulary and the only one the package writes; prose renders it with :func:`better_word`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from scipy import stats as sps

from fairarena.errors import InputError
from fairarena.registry import Registry
from fairarena.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_means_ci

ALPHA = 0.05
ROUND_DECIMALS = 12
ZERO_METHODS = ("wilcox", "pratt", "zsplit")

# the direction vocabulary lives in its own light module (the study's workers use it without scipy)
from fairarena.stats.directions import better_word, canonical_direction, direction_sign  # noqa: E402,F401


# ---------------------------------------------------------------------------------------------------
# the two tests, as a registry (name -> function of the rounded differences -> (statistic, p))
# ---------------------------------------------------------------------------------------------------

TestFn = Callable[[np.ndarray, str], tuple[float, float]]
TESTS: Registry[TestFn] = Registry("paired test", field="test")


@TESTS.register("ttest", title="paired t-test",
                description="one-sample t-test of the paired differences against 0, n-1 degrees of freedom")
def _ttest(d: np.ndarray, zero_method: str) -> tuple[float, float]:
    n = d.size
    if n < 2:
        return math.nan, math.nan
    m, s = float(d.mean()), float(d.std(ddof=1))
    if s == 0.0:
        return (0.0, 1.0) if m == 0.0 else (math.copysign(math.inf, m), 0.0)
    t = m / (s / math.sqrt(n))      # scipy.stats.ttest_1samp(d, 0), without its per-call overhead (tested equal)
    return t, float(2.0 * sps.t.sf(abs(t), n - 1))


@TESTS.register("wilcoxon", title="Wilcoxon signed-rank test",
                description="two-sided, mid-ranks for ties, zeros by zero_method, scipy method='auto'")
def _wilcoxon(d: np.ndarray, zero_method: str) -> tuple[float, float]:
    if d.size == 0:
        return math.nan, math.nan
    if not np.any(d):
        return 0.0, 1.0
    r = sps.wilcoxon(d, zero_method=zero_method, method="auto")
    return float(r.statistic), float(r.pvalue)


TEST_CHOICES: tuple[str, ...] = ("auto", *TESTS.names())


# ---------------------------------------------------------------------------------------------------
# effect sizes
# ---------------------------------------------------------------------------------------------------

def _ratio(num: float, den: float) -> float:
    if den == 0.0 or not math.isfinite(den):
        return 0.0 if num == 0.0 else (math.copysign(math.inf, num) if den == 0.0 else math.nan)
    return num / den


def cohens_d_pooled(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Cohen's d of A minus B with the pooled SD ``sqrt(((n_a-1)s_a^2 + (n_b-1)s_b^2)/(n_a+n_b-2))``."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.size < 2 or b.size < 2:
        return math.nan
    pooled = math.sqrt(((a.size - 1) * a.var(ddof=1) + (b.size - 1) * b.var(ddof=1)) / (a.size + b.size - 2))
    return _ratio(float(a.mean() - b.mean()), pooled)


def cohens_dz(d: Sequence[float] | np.ndarray) -> float:
    """Standardised mean of paired differences: ``mean(d) / sd(d, ddof=1)``."""
    d = np.asarray(d, float)
    if d.size < 2:
        return math.nan
    return _ratio(float(d.mean()), float(d.std(ddof=1)))


def round_differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a - b`` rounded to 1e-12 (absolute), with ``-0.0`` made ``0.0``."""
    return np.round(np.asarray(a, float) - np.asarray(b, float), ROUND_DECIMALS) + 0.0


# ---------------------------------------------------------------------------------------------------
# one comparison
# ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PairedResult:
    """One paired comparison of side A with side B (means, intervals, test, effect sizes, winner)."""

    n: int                      # pairs used
    n_excluded: int             # pairs dropped because either side was infeasible
    n_missing: int              # pairs dropped because a value was missing (NaN)
    mean_a: float
    mean_b: float
    ci_a: tuple[float, float]   # bootstrap percentile interval of mean_a
    ci_b: tuple[float, float]
    mean_diff: float            # mean of the rounded differences a - b
    sd_diff: float
    n_zero: int                 # zero differences (after rounding)
    test_requested: str         # auto | ttest | wilcoxon
    test: str                   # the test that ran: ttest | wilcoxon | none
    statistic: float            # t, or Wilcoxon's statistic as scipy reports it
    p: float                    # raw two-sided p
    p_adjusted: float | None    # after a multiple-comparison correction (None when none was applied)
    correction: str             # none | holm
    normality_p: float | None   # Shapiro-Wilk p of the differences (None when not run)
    cohens_d: float             # pooled-SD Cohen's d, A minus B
    d_z: float                  # mean(d) / sd(d)
    direction: str              # max | min: which is better
    alpha: float
    significant: bool
    winner: str                 # A | B | tie
    note: str = ""

    @property
    def p_decision(self) -> float:
        return self.p if self.p_adjusted is None else self.p_adjusted

    def with_adjusted(self, p_adjusted: float, correction: str) -> PairedResult:
        sig, win = _decide(p_adjusted, self.alpha, self.mean_diff, self.direction)
        return replace(self, p_adjusted=float(p_adjusted), correction=correction, significant=sig, winner=win)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci_a"], out["ci_b"] = list(self.ci_a), list(self.ci_b)
        return out


def _decide(p: float, alpha: float, mean_diff: float, direction: str) -> tuple[bool, str]:
    sig = bool(math.isfinite(p) and p < alpha)
    if not sig or mean_diff == 0.0 or not math.isfinite(mean_diff):
        return sig, "tie"
    return sig, ("A" if mean_diff * direction_sign(direction) > 0 else "B")


def check_options(test: str = "auto", alpha: float = ALPHA, zero_method: str = "wilcox") -> None:
    """Validate the options shared by every comparison (InputError naming the field)."""
    if test not in TEST_CHOICES:
        raise InputError("test", test, "one of " + ", ".join(TEST_CHOICES))
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise InputError("alpha", alpha, "a significance level strictly between 0 and 1")
    if zero_method not in ZERO_METHODS:
        raise InputError("zero_method", zero_method, "one of " + ", ".join(ZERO_METHODS))


def select_pairs(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
                 feasible_a: Sequence[bool] | np.ndarray | None = None,
                 feasible_b: Sequence[bool] | np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Keep the pairs where both sides are feasible and present: ``(a, b, n_excluded, n_missing)``.

    ``n_excluded`` counts pairs with an infeasible side; ``n_missing`` counts feasible pairs with a NaN.
    """
    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    if a.shape != b.shape:
        raise InputError("b", f"{b.size} values", f"as many values as a ({a.size}), paired by cohort")
    fa = np.ones(a.size, bool) if feasible_a is None else np.asarray(feasible_a, bool).ravel()
    fb = np.ones(b.size, bool) if feasible_b is None else np.asarray(feasible_b, bool).ravel()
    if fa.shape != a.shape or fb.shape != a.shape:
        raise InputError("feasible", f"{fa.size}/{fb.size} flags", f"one flag per pair ({a.size})")
    feasible = fa & fb
    present = ~(np.isnan(a) | np.isnan(b))
    keep = feasible & present
    return a[keep], b[keep], int((~feasible).sum()), int((feasible & ~present).sum())


def compare_pairs(a: np.ndarray, b: np.ndarray, n_excluded: int, n_missing: int, *, direction: str, test: str,
          alpha: float, zero_method: str) -> PairedResult:
    """The comparison of already-selected pairs, without intervals (``ci_*`` NaN; filled by callers)."""
    n = a.size
    d = round_differences(a, b)
    direction_sign(direction)
    nan2 = (math.nan, math.nan)
    if n == 0:
        return PairedResult(0, n_excluded, n_missing, math.nan, math.nan, nan2, nan2, math.nan, math.nan, 0,
                            test, "none", math.nan, math.nan, None, "none", None, math.nan, math.nan,
                            direction, alpha, False, "tie", "no pair left to compare")
    note = ""
    normality_p: float | None = None
    chosen = test
    if test == "auto":
        if n < 3 or float(np.ptp(d)) == 0.0:
            chosen = "wilcoxon"
            note = "normality not testable (fewer than 3 pairs or constant differences): Wilcoxon"
        else:
            normality_p = float(sps.shapiro(d).pvalue)
            chosen = "ttest" if normality_p >= alpha else "wilcoxon"
    statistic, p = TESTS[chosen](d, zero_method)
    if not np.any(d):
        note = (note + "; " if note else "") + "all differences are zero"
    mean_diff = float(d.mean())
    sd_diff = float(d.std(ddof=1)) if n > 1 else math.nan
    if n > 1:
        pooled = math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2.0)
        d_pooled, d_z = _ratio(mean_diff, pooled), _ratio(mean_diff, sd_diff)
    else:
        d_pooled = d_z = math.nan
    sig, win = _decide(p, alpha, mean_diff, direction)
    return PairedResult(n, n_excluded, n_missing, float(a.mean()), float(b.mean()), nan2, nan2, mean_diff, sd_diff,
                        int(n - np.count_nonzero(d)), test, chosen, statistic, p, None, "none", normality_p,
                        d_pooled, d_z, direction, alpha, sig, win, note)


def paired_comparison(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *,
                      feasible_a: Sequence[bool] | np.ndarray | None = None,
                      feasible_b: Sequence[bool] | np.ndarray | None = None,
                      direction: str = "max", test: str = "auto", alpha: float = ALPHA,
                      zero_method: str = "wilcox", n_resamples: int = DEFAULT_RESAMPLES,
                      seed: int = DEFAULT_SEED, level: float = DEFAULT_LEVEL,
                      ci_method: str = "percentile") -> PairedResult:
    """Compare side A with side B over cohorts (``a[i]``, ``b[i]`` are cohort ``i``'s values).

    See the module docstring for the protocol and every choice it makes.
    """
    check_options(test, alpha, zero_method)
    direction_sign(direction)
    a2, b2, n_exc, n_mis = select_pairs(a, b, feasible_a, feasible_b)
    res = compare_pairs(a2, b2, n_exc, n_mis, direction=direction, test=test, alpha=alpha, zero_method=zero_method)
    if res.n:
        ci = bootstrap_means_ci([a2, b2], n_resamples=n_resamples, seed=seed, level=level, method=ci_method)
        res = replace(res, ci_a=(float(ci[0, 0]), float(ci[0, 1])), ci_b=(float(ci[1, 0]), float(ci[1, 1])))
    return res
