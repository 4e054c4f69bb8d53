"""Statistics for repeated samples: several debates per (cohort, framework, opponent).

With a language model at a non-zero temperature one debate per cell is one draw; a study with
``samples = k`` repeats each (cohort, framework, opponent) ``k`` times. The debates of one cohort are then
not independent observations, and the analysis must say how much of the spread is the model's sampling
noise and how much the cohorts. Three views, side by side (docs/study.md, "Repeated samples"):

* **the paper's test on sample means** — average the ``k`` samples of each cohort, then the paired
  protocol of :mod:`fairarena.stats.paired` over cohorts (Appendix D.3 of Chaki, Gourru & Velcin,
  arXiv:2604.13705: Shapiro-Wilk, then the paired t-test or the Wilcoxon signed-rank test);
* **a cluster bootstrap** of the mean paired difference: cohorts are resampled with replacement and
  every sample of a drawn cohort comes along (:func:`cluster_bootstrap_ci`, the index draw of
  :func:`fairarena.stats.bootstrap.resample_counts`, seed 42);
* **a linear mixed-effects model** of the paired difference ``d = a - b`` of each debate with the cohort as
  a random intercept, ``d_cs = mu + u_c + e_cs``, ``u_c ~ N(0, tau^2)``, ``e_cs ~ N(0, sigma^2)``, fitted by
  REML with statsmodels (:func:`mixed_effects`); ``mu`` is the effect, its Wald z-test the p-value;

plus the **variance shares** (:func:`variance_components`): the one-way random-effects ANOVA estimates of
``tau^2`` (between cohorts) and ``sigma^2`` (between samples of one cohort) and their shares of the total.

Input is a long-form frame, one row per debate: ``cohort, framework, opponent, sample`` and the metric
columns ``a_<metric>``, ``opp_<metric>`` with ``a_feasible`` / ``opp_feasible`` (as
:func:`fairarena.stats.study.records_from_frame`, plus ``sample``; :func:`samples_frame` builds it from
the records of :func:`fairarena.study.store.comparison_records`). Pure functions; statsmodels
and pandas are imported when used.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from fairarena.errors import InputError
from fairarena.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, _check, _counts
from fairarena.stats.paired import ALPHA, check_options, direction_sign, paired_comparison, round_differences


# ---------------------------------------------------------------------------------------------------
# clusters
# ---------------------------------------------------------------------------------------------------

def _clusters(values: Sequence[float] | np.ndarray, clusters: Sequence[Hashable] | np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, list[Hashable]]:
    """``(values, cluster index per value, cluster labels in order of first appearance)``."""
    y = np.asarray(values, dtype=float).ravel()
    labels = list(clusters)
    if len(labels) != y.size:
        raise InputError("clusters", f"{len(labels)} labels", f"one cluster label per value ({y.size})")
    order: dict[Hashable, int] = {}
    idx = np.array([order.setdefault(c, len(order)) for c in labels], dtype=int)
    return y, idx, list(order)


def cluster_bootstrap_ci(values: Sequence[float] | np.ndarray, clusters: Sequence[Hashable] | np.ndarray, *,
                         n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                         level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Percentile interval of the mean of ``values`` when whole clusters are resampled.

    Each resample draws ``K`` of the ``K`` clusters with replacement (the draw of
    :func:`~fairarena.stats.bootstrap.resample_counts` for ``K`` observations, so with one value per
    cluster this *is* :func:`~fairarena.stats.bootstrap.bootstrap_mean_ci`), keeps every value of each
    drawn cluster, and takes the mean of all the values kept (clusters of unequal size weigh by their
    size). NaN values are dropped first; no value left: ``(nan, nan)``."""
    _check(n_resamples, level)
    y, idx, labels = _clusters(values, clusters)
    keep = ~np.isnan(y)
    y, idx = y[keep], idx[keep]
    if y.size == 0:
        return math.nan, math.nan
    k = len(labels)
    sums = np.bincount(idx, weights=y, minlength=k)
    sizes = np.bincount(idx, minlength=k).astype(float)
    present = sizes > 0
    sums, sizes = sums[present], sizes[present]
    counts = _counts(sums.size, int(n_resamples), int(seed))          # (B, K'), shared read-only
    means = (counts @ sums) / (counts @ sizes)
    means = np.clip(means, y.min(), y.max())
    lo, hi = np.percentile(means, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(lo), float(hi)


@dataclass(frozen=True)
class VarianceComponents:
    """One-way random-effects decomposition of values grouped by cluster (cohort)."""

    n: int                       # values
    n_clusters: int
    n0: float                    # the ANOVA's effective cluster size
    between: float               # tau^2: variance between cluster means beyond sampling noise
    within: float                # sigma^2: variance between samples of one cluster
    share_between: float         # tau^2 / (tau^2 + sigma^2)
    share_within: float
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def variance_components(values: Sequence[float] | np.ndarray, clusters: Sequence[Hashable] | np.ndarray
                        ) -> VarianceComponents:
    """The ANOVA (method-of-moments) estimates of the between-cluster and within-cluster variances.

    With ``K`` clusters of sizes ``n_c`` (``N`` values), ``MSB = sum_c n_c (m_c - m)^2 / (K - 1)``,
    ``MSW = sum_c sum_s (y_cs - m_c)^2 / (N - K)``, ``n0 = (N - sum_c n_c^2 / N) / (K - 1)``:
    ``sigma^2 = MSW`` and ``tau^2 = max(0, (MSB - MSW) / n0)`` (truncated at 0). The shares are of
    ``tau^2 + sigma^2`` (both 0: shares NaN). Not estimable: ``sigma^2`` with no cluster of two or more
    values (every sample once), ``tau^2`` with fewer than two clusters — those are NaN with a note.
    NaN values are dropped first."""
    y, idx, _ = _clusters(values, clusters)
    keep = ~np.isnan(y)
    y = y[keep]
    _, idx = np.unique(idx[keep], return_inverse=True)          # clusters left after dropping NaN: 0..k-1
    sizes = np.bincount(idx).astype(float)
    n, k = int(y.size), int(sizes.size)
    nan = math.nan
    if n == 0:
        return VarianceComponents(0, 0, nan, nan, nan, nan, nan, "no value")
    means = np.bincount(idx, weights=y) / sizes
    grand = float(y.mean())
    resid = y - means[idx]
    notes = []
    within = float((resid ** 2).sum() / (n - k)) if n > k else nan
    if n <= k:
        notes.append("one value per cluster: the variance between samples is not estimable")
    if k >= 2:
        msb = float((sizes * (means - grand) ** 2).sum() / (k - 1))
        n0 = float((n - (sizes ** 2).sum() / n) / (k - 1))
        between = max(0.0, (msb - within) / n0) if not math.isnan(within) else nan
        if not math.isnan(within) and msb < within:
            notes.append("between-cluster estimate truncated at 0")
    else:
        n0, between = nan, nan
        notes.append("one cluster: the variance between clusters is not estimable")
    total = between + within
    if math.isnan(total) or total == 0.0:
        sb = sw = nan
        if total == 0.0:
            notes.append("no variance at all")
    else:
        sb, sw = between / total, within / total
    return VarianceComponents(n, k, n0, between, within, sb, sw, "; ".join(notes))


@dataclass(frozen=True)
class MixedEffects:
    """``y_cs = mu + u_c + e_cs`` fitted by REML (statsmodels MixedLM, cohort as the random intercept)."""

    n: int
    n_clusters: int
    estimate: float              # mu
    se: float
    z: float
    p: float                     # two-sided Wald test of mu = 0
    ci: tuple[float, float]      # Wald interval at the requested level
    var_between: float           # tau^2 (REML)
    var_within: float            # sigma^2 (REML)
    converged: bool
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci"] = list(self.ci)
        return out


def mixed_effects(values: Sequence[float] | np.ndarray, clusters: Sequence[Hashable] | np.ndarray, *,
                  level: float = DEFAULT_LEVEL) -> MixedEffects:
    """Fit the random-intercept model of ``values`` by REML (``statsmodels.MixedLM``, lbfgs).

    Degenerate inputs do not fit a model: every value equal (the effect is that constant, se 0, p 1 when
    it is 0 else 0); no cluster with two values (the random intercept and the residual cannot be told
    apart: NaN with a note); fewer than two clusters. Convergence warnings are kept in ``note``."""
    y, idx, labels = _clusters(values, clusters)
    keep = ~np.isnan(y)
    y, idx = y[keep], idx[keep]
    n = int(y.size)
    k = int(np.unique(idx).size)
    nan2 = (math.nan, math.nan)
    if n == 0:
        return MixedEffects(0, 0, math.nan, math.nan, math.nan, math.nan, nan2, math.nan, math.nan, False, "no value")
    y = round_differences(y, np.zeros_like(y))        # float noise is not variance
    if float(np.ptp(y)) == 0.0:
        c = float(y[0])
        return MixedEffects(n, k, c, 0.0, 0.0 if c == 0 else math.copysign(math.inf, c), 1.0 if c == 0 else 0.0,
                            (c, c), 0.0, 0.0, True, "every value equal: no model fitted")
    if k < 2 or n <= k:
        why = "fewer than two clusters" if k < 2 else "one value per cluster: the random intercept is not identified"
        return MixedEffects(n, k, float(y.mean()), math.nan, math.nan, math.nan, nan2, math.nan, math.nan, False,
                            why + "; no model fitted")
    from scipy import stats as sps
    from statsmodels.regression.mixed_linear_model import MixedLM

    notes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = MixedLM(y, np.ones((n, 1)), groups=idx)
        try:
            fit = model.fit(reml=True, method=["lbfgs", "powell"])
        except (np.linalg.LinAlgError, ValueError) as exc:
            return MixedEffects(n, k, float(y.mean()), math.nan, math.nan, math.nan, nan2, math.nan, math.nan,
                                False, f"fit failed: {exc}")
    notes += sorted({str(w.message).split("\n")[0] for w in caught})
    mu, se = float(fit.fe_params[0]), float(fit.bse_fe[0])
    z = mu / se if se > 0 else (0.0 if mu == 0 else math.copysign(math.inf, mu))
    p = float(2 * sps.norm.sf(abs(z)))
    q = float(sps.norm.ppf(0.5 + level / 2))
    return MixedEffects(n, k, mu, se, z, p, (mu - q * se, mu + q * se), float(np.asarray(fit.cov_re)[0, 0]),
                        float(fit.scale), bool(fit.converged), "; ".join(notes))


# ---------------------------------------------------------------------------------------------------
# the table of a study
# ---------------------------------------------------------------------------------------------------

def samples_frame(records: Iterable[Mapping[str, Any]], metrics: Iterable[str]) -> Any:
    """The long-form frame from comparison records (``cohort, framework, opponent, a, opp, a_feasible,
    opp_feasible`` and ``sample``, 0 when absent): one row per debate, columns ``a_<metric>``,
    ``opp_<metric>``."""
    import pandas as pd

    metrics = list(metrics)
    rows = []
    for i, r in enumerate(records):
        missing = [k for k in ("cohort", "framework", "opponent", "a", "opp") if k not in r]
        if missing:
            raise InputError(f"records[{i}]", sorted(r), "keys cohort, framework, opponent, a, opp (missing: "
                             + ", ".join(missing) + ")")
        row = {"cohort": r["cohort"], "framework": r["framework"], "opponent": r["opponent"],
               "sample": r.get("sample", 0) if r.get("sample") is not None else 0,
               "a_feasible": bool(r.get("a_feasible", True)), "opp_feasible": bool(r.get("opp_feasible", True))}
        for side in ("a", "opp"):
            vals = r[side] or {}
            for m in metrics:
                v = vals.get(m)
                row[f"{side}_{m}"] = math.nan if v is None else float(v)
        rows.append(row)
    cols = ["cohort", "framework", "opponent", "sample", "a_feasible", "opp_feasible"] + \
           [f"{s}_{m}" for s in ("a", "opp") for m in metrics]
    return pd.DataFrame(rows, columns=cols)


SAMPLE_COLUMNS = ("cohort", "framework", "opponent", "sample")


def _check_frame(df: Any, metrics: Sequence[str]) -> None:
    cols = set(df.columns)
    need = set(SAMPLE_COLUMNS) | {f"{s}_{m}" for s in ("a", "opp") for m in metrics}
    if need - cols:
        raise InputError("columns", sorted(cols), "also " + ", ".join(sorted(need - cols)))
    dup = df.duplicated(list(SAMPLE_COLUMNS))
    if bool(dup.any()):
        row = df[dup].iloc[0]
        raise InputError("sample", {k: row[k] for k in SAMPLE_COLUMNS},
                         "one debate per (cohort, framework, opponent, sample) (this one appears twice)")


def samples_table(df: Any, metrics: Mapping[str, str], *, test: str = "auto", alpha: float = ALPHA,
                  n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, level: float = DEFAULT_LEVEL,
                  mixed: bool = True) -> list[dict[str, Any]]:
    """Per (opponent, framework, metric): the three views of the A-minus-opponent difference.

    A debate counts when both sides are feasible and present (as in the paired protocol). Each row:
    ``n_cohorts``, ``n_debates``, ``samples`` (the largest number of samples of one cohort),
    ``mean_diff`` (mean over debates), ``cluster_ci`` (cluster bootstrap of that mean), ``cohort_test``
    (the paired protocol on per-cohort sample means, a :class:`~fairarena.stats.paired.PairedResult` as
    a dict), ``mixed`` (:class:`MixedEffects` of the differences, or None when ``mixed=False``),
    ``variance_diff`` and ``variance_a`` (:class:`VarianceComponents` of the difference and of A's value),
    and ``winner`` by the mixed model (``A``/``B``/``tie`` at ``alpha``, by the metric's direction; the
    cohort test's winner when no model was fitted)."""
    check_options(test, alpha, "wilcox")
    _check(n_resamples, level)
    if not metrics:
        raise InputError("metrics", metrics, "at least one metric name -> direction")
    for m, d in metrics.items():
        direction_sign(d)
    _check_frame(df, list(metrics))
    out = []
    fa = df["a_feasible"].astype(bool) if "a_feasible" in df else True
    fb = df["opp_feasible"].astype(bool) if "opp_feasible" in df else True
    df = df.assign(_ok=fa & fb)
    for (opp, fw), g in df.groupby(["opponent", "framework"], sort=False):
        for m, direction in metrics.items():
            h = g[g["_ok"] & g[f"a_{m}"].notna() & g[f"opp_{m}"].notna()]
            cohorts = h["cohort"].tolist()
            a, b = h[f"a_{m}"].to_numpy(float), h[f"opp_{m}"].to_numpy(float)
            d = round_differences(a, b)
            means = h.groupby("cohort", sort=False)[[f"a_{m}", f"opp_{m}"]].mean()
            ct = paired_comparison(means[f"a_{m}"].to_numpy(float), means[f"opp_{m}"].to_numpy(float),
                                   direction=direction, test=test, alpha=alpha, n_resamples=n_resamples,
                                   seed=seed, level=level)
            me = mixed_effects(d, cohorts, level=level) if mixed and d.size else None
            if me is not None and math.isfinite(me.p):
                sig = me.p < alpha
                winner = "tie" if not sig or me.estimate == 0 else (
                    "A" if me.estimate * direction_sign(direction) > 0 else "B")
            else:
                winner = ct.winner
            out.append({
                "opponent": str(opp), "framework": str(fw), "metric": m, "direction": ct.direction,
                "n_cohorts": int(means.shape[0]), "n_debates": int(d.size),
                "samples": int(h.groupby("cohort").size().max()) if d.size else 0,
                "n_excluded": int((~g["_ok"]).sum()),
                "mean_diff": float(d.mean()) if d.size else math.nan,
                "cluster_ci": list(cluster_bootstrap_ci(d, cohorts, n_resamples=n_resamples, seed=seed, level=level)),
                "cohort_test": ct.to_dict(),
                "mixed": None if me is None else me.to_dict(),
                "variance_diff": variance_components(d, cohorts).to_dict(),
                "variance_a": variance_components(a, cohorts).to_dict(),
                "winner": winner,
            })
    return out


__all__ = ["MixedEffects", "SAMPLE_COLUMNS", "VarianceComponents", "cluster_bootstrap_ci", "mixed_effects",
           "samples_frame", "samples_table", "variance_components"]
