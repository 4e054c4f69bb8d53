"""Effects measured against noise: every emergence, patching, moderation and bias figure beside its null.

A 12-debate study of a 0.5B-parameter model whose agents copied each other still reported "the joint
beats both finals" in 3 of 12 debates, patching gains and an intrinsic framework bias (issue 20). A
figure means something only against what the same measure gives when nothing is going on. The nulls:

* **the baseline-vs-baseline control** — the study design's ``baseline_control`` debates (two unaligned
  agents, one debate per cohort, seed and closing). For joint-beats-both, patching and moderation, each
  debate's figure is compared with the control debates *of the same cohort*: per cohort, the mean over
  its treated debates minus the mean over its control debates; the effect is the mean of these
  differences over cohorts, its 95 % interval a cohort bootstrap
  (:func:`fairarena.stats.bootstrap.bootstrap_mean_ci`), its p-value the sign-flip permutation test
  (:func:`sign_flip_test`). Without control debates these figures are reported as *untested*;
* **a label permutation** for the intrinsic framework bias — A's final value of a metric, per cohort and
  alignment (mean over opponents and samples); under the null the alignment labels are exchangeable
  within a cohort. The statistic is the variance of the alignment means; p from permuting the labels
  within every cohort (:func:`label_permutation_test`). No control needed;
* **the unaligned agent** for "an aligned agent's proposals are nearest its own framework's optimum"
  (:func:`fairarena.stats.transcripts.bias_confusion`): per cohort, the share of A-aligned-to-F proposals
  nearest F minus the share of the same cohort's baseline-opponent proposals nearest F.

A figure *beats its null* when its (Holm-adjusted over all the figures of the report, by default) p is
below alpha and its effect has the claimed sign. :func:`noise_report` computes them all; the copy rates
(:mod:`fairarena.stats.transcripts`) travel beside them.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from fairarena.errors import InputError
from fairarena.stats.bootstrap import DEFAULT_LEVEL, DEFAULT_SEED, bootstrap_mean_ci
from fairarena.stats.multiple import CORRECTIONS
from fairarena.stats.paired import ALPHA, ROUND_DECIMALS, direction_sign

DEFAULT_PERMUTATIONS = 10_000
PERM_CHUNK = 256               # permutations drawn at a time by label_permutation_test (speed only)
PERM_CACHE_CELLS = 30_000_000  # permutations x rows x labels kept for the next test of the same shape (<= 30 MB)


# ---------------------------------------------------------------------------------------------------
# permutation tests
# ---------------------------------------------------------------------------------------------------

def _check_perm(n_permutations: int) -> None:
    if int(n_permutations) != n_permutations or n_permutations < 1:
        raise InputError("n_permutations", n_permutations, "a positive integer")


def sign_flip_test(d: Sequence[float] | np.ndarray, *, n_permutations: int = DEFAULT_PERMUTATIONS,
                   seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Two-sided one-sample permutation test of ``mean(d) = 0`` by flipping the signs of the ``d_i``
    (valid when each ``d_i`` is symmetric about 0 under the null, e.g. a paired difference).

    Returns ``(mean(d), p)``. Exact — every one of the ``2^n`` sign vectors — when ``2^n <=
    n_permutations``; else ``n_permutations`` random sign vectors (numpy PCG64, ``seed``) and
    ``p = (1 + #{|mean*| >= |mean|}) / (1 + n_permutations)``. Values are rounded to 1e-12 first, so
    floating-point noise is not an effect. Empty: ``(nan, nan)``; all zero: ``(0, 1)``."""
    _check_perm(n_permutations)
    d = np.round(np.asarray(d, dtype=float).ravel(), ROUND_DECIMALS)
    d = d[~np.isnan(d)]
    n = d.size
    if n == 0:
        return math.nan, math.nan
    obs = float(d.mean())
    if not np.any(d):
        return 0.0, 1.0
    thr = abs(obs) - 1e-12
    if n <= 30 and 2 ** n <= n_permutations:
        signs = 1 - 2 * ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1)
        stats = np.abs(signs @ d) / n
        return obs, float((stats >= thr).mean())
    rng = np.random.default_rng(seed)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(int(n_permutations), n))
    stats = np.abs(signs @ d) / n
    return obs, float((1 + (stats >= thr).sum()) / (1 + n_permutations))


def label_permutation_test(table: Sequence[Sequence[float]] | np.ndarray, *,
                           n_permutations: int = DEFAULT_PERMUTATIONS,
                           seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Do the columns (labels) of a (blocks x labels) table differ? Permutation test within blocks.

    Statistic: the variance (ddof 0) of the column means. Under the null the labels are exchangeable
    within each row (block, here a cohort), so each row is permuted independently. Rows with a NaN are
    dropped. Exact — every combination of row permutations — when ``(L!)^K <= n_permutations``; else
    ``n_permutations`` random ones (``p = (1 + #) / (1 + n_permutations)``). No complete row or fewer
    than 2 columns: ``(nan, nan)``; no spread at all: ``(0, 1)``."""
    _check_perm(n_permutations)
    x = np.round(np.asarray(table, dtype=float), ROUND_DECIMALS)
    if x.ndim != 2:
        raise InputError("table", x.shape, "a 2-d table (blocks x labels)")
    x = x[~np.isnan(x).any(axis=1)]
    k, m = x.shape
    if k < 1 or m < 2:
        return math.nan, math.nan
    obs = float(x.mean(axis=0).var())
    if obs == 0.0:
        return 0.0, 1.0
    thr = obs - 1e-15
    perms = np.array(list(itertools.permutations(range(m))))        # m! <= 720 for six frameworks
    if len(perms) ** k <= n_permutations:
        count = total = 0
        for combo in itertools.product(range(len(perms)), repeat=k):
            y = x[np.arange(k)[:, None], perms[list(combo)]]
            count += int(y.mean(axis=0).var() >= thr)
            total += 1
        return obs, count / total
    B = int(n_permutations)
    flat, offset = x.ravel(), (np.arange(k) * m)[:, None]
    stats = np.empty(B)
    for s, idx in _permutation_chunks(int(seed), B, k, m):
        idx += offset
        stats[s:s + len(idx)] = flat[idx].mean(axis=1).var(axis=1)
    return obs, float((1 + (stats >= thr).sum()) / (1 + B))


def _permutation_chunks(seed: int, B: int, k: int, m: int) -> Any:
    """``(start, idx)`` for the ``B`` permutations of :func:`label_permutation_test`, ``PERM_CHUNK`` at a time
    (``idx``: a fresh ``(n, k, m)`` intp array). A uniform permutation per (b, row) is the argsort of uniform
    draws, ``argsort(default_rng(seed).random((B, k, m)), axis=2)``; drawn in chunks, since the generator fills
    its draws in order, they are that one draw cut along b (the same permutations), in arrays that stay in
    cache. They depend only on ``(seed, B, k, m)``, and a study tests every metric's table of the same shape
    with the same seed, so up to PERM_CACHE_CELLS cells they are kept (as int8/int16) and reused."""
    if B * k * m <= PERM_CACHE_CELLS and m <= 32_767:
        perms = _permutations(seed, B, k, m)
        for s in range(0, B, PERM_CHUNK):
            yield s, perms[s:s + PERM_CHUNK].astype(np.intp)
        return
    rng = np.random.default_rng(seed)
    for s in range(0, B, PERM_CHUNK):
        yield s, np.argsort(rng.random((min(PERM_CHUNK, B - s), k, m)), axis=2)


@functools.lru_cache(maxsize=2)
def _permutations(seed: int, B: int, k: int, m: int) -> np.ndarray:
    out = np.empty((B, k, m), dtype=np.int8 if m <= 127 else np.int16)
    rng = np.random.default_rng(seed)
    for s in range(0, B, PERM_CHUNK):
        out[s:s + PERM_CHUNK] = np.argsort(rng.random((min(PERM_CHUNK, B - s), k, m)), axis=2)
    out.setflags(write=False)
    return out


# ---------------------------------------------------------------------------------------------------
# one figure against its null
# ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NullResult:
    """One figure beside its null."""

    figure: str                  # joint_beats_both | patching | moderation | framework_bias | own_framework
    metric: str                  # the metric (or stage) the figure is about
    opponent: str                # pairing ("all": every debate)
    value: float                 # the figure (mean over the study's debates)
    null: str                    # baseline control | label permutation | unaligned agent | none
    null_value: float            # the same measure under the null (nan for a permutation test)
    effect: float                # mean over cohorts of (figure - null) ; the statistic of a permutation test
    ci: tuple[float, float]      # cohort-bootstrap interval of the effect
    n_cohorts: int
    p: float
    p_adjusted: float | None
    claim: str                   # the sign the figure claims: max (above its null) | min (below) | any
    beats_null: bool | None      # None: untested (no null available)
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci"] = list(self.ci)
        return out


def _decide(p: float, effect: float, claim: str, alpha: float) -> bool:
    if not math.isfinite(p) or p >= alpha:
        return False
    if claim == "any":
        return True
    return effect * direction_sign(claim) > 0


def against_control(treated: Mapping[Hashable, Sequence[float]], control: Mapping[Hashable, Sequence[float]] | None,
                    *, figure: str, metric: str, opponent: str, claim: str = "max", alpha: float = ALPHA,
                    n_permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED,
                    level: float = DEFAULT_LEVEL, null: str = "baseline control", detail: str = "") -> NullResult:
    """A per-debate figure (``treated[cohort]`` = its values in that cohort's debates) against the same
    figure in the control debates of the same cohorts (module docstring). ``control`` None or without a
    common cohort: untested (``beats_null`` None)."""
    t = {c: [v for v in vs if not math.isnan(v)] for c, vs in treated.items()}
    t = {c: vs for c, vs in t.items() if vs}
    value = float(np.mean([v for vs in t.values() for v in vs])) if t else math.nan
    nan2 = (math.nan, math.nan)
    if not control:
        return NullResult(figure, metric, opponent, value, "none", math.nan, math.nan, nan2, len(t), math.nan, None,
                          claim, None, detail or "no baseline-vs-baseline control debates in this study")
    c = {k: [v for v in vs if not math.isnan(v)] for k, vs in control.items()}
    common = [k for k in t if c.get(k)]
    if not common:
        return NullResult(figure, metric, opponent, value, null, math.nan, math.nan, nan2, 0, math.nan, None,
                          claim, None, detail or "no cohort has both a treated and a control debate")
    diffs = np.array([np.mean(t[k]) - np.mean(c[k]) for k in common])
    null_value = float(np.mean([v for k in common for v in c[k]]))
    effect, p = sign_flip_test(diffs, n_permutations=n_permutations, seed=seed)
    ci = bootstrap_mean_ci(diffs, seed=seed, level=level)
    return NullResult(figure, metric, opponent, value, null, null_value, effect, ci, len(common), p, None, claim,
                      _decide(p, effect, claim, alpha), detail)


def adjust(results: Sequence[NullResult], correction: str = "holm", alpha: float = ALPHA) -> list[NullResult]:
    """Apply a multiple-comparison correction over every tested figure; ``beats_null`` is decided on the
    adjusted p (``correction="none"``: on the raw p)."""
    CORRECTIONS.check(correction)
    ps = np.array([r.p if r.beats_null is not None else math.nan for r in results], dtype=float)
    adj = CORRECTIONS[correction](ps)
    out = []
    for r, pa in zip(results, adj):
        if r.beats_null is None or math.isnan(pa):
            out.append(r)
        else:
            out.append(replace(r, p_adjusted=float(pa), beats_null=_decide(float(pa), r.effect, r.claim, alpha)))
    return out


# ---------------------------------------------------------------------------------------------------
# the figures of a study
# ---------------------------------------------------------------------------------------------------

def _by_cohort(rows: Iterable[tuple[Hashable, float]]) -> dict[Hashable, list[float]]:
    out: dict[Hashable, list[float]] = defaultdict(list)
    for c, v in rows:
        out[c].append(v)
    return dict(out)


def per_debate_figures(traces: Iterable[Mapping[str, Any]], directions: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each debate's own joint-beats-both (0/1 per metric, vs round 1 and vs finals), patching gain per
    stage and opponent movement per stage, by calling the emergence measures on that debate alone
    (:mod:`fairarena.stats.emergence`: one home per formula)."""
    from fairarena.stats.emergence import joint_beats_both, moderation, patching

    out = []
    for tr in traces:
        row: dict[str, Any] = {"key": tr.get("key"), "cohort": tr["cohort"], "opponent": tr["opponent"],
                               "framework": tr.get("framework"), "joint_r1": {}, "joint_final": {}}
        for r in joint_beats_both([tr], directions):
            if r["opponent"] == "all":
                row["joint_r1"][r["metric"]] = r["vs_round1"]
                row["joint_final"][r["metric"]] = r["vs_final"]
        pd = patching([tr], attributes=())["per_debate"]
        row["patching"] = dict(pd[0]["gain"]) if pd else {}
        row["moderation"] = {r["stage"]: r["movement"] for r in moderation([tr])}
        out.append(row)
    return out


def _series(rows: Sequence[Mapping[str, Any]], field: str, key: str) -> dict[Hashable, list[float]]:
    return _by_cohort((r["cohort"], float(r[field][key])) for r in rows if key in r[field])


def noise_report(traces: Sequence[Mapping[str, Any]], control: Sequence[Mapping[str, Any]] | None,
                 directions: Mapping[str, str], *, finals: Any = None,
                 bias_hits: Sequence[Mapping[str, Any]] | None = None, copies: Mapping[str, Any] | None = None,
                 alpha: float = ALPHA, correction: str = "holm", n_permutations: int = DEFAULT_PERMUTATIONS,
                 seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Every figure of the emergence analysis against its null (JSON-ready).

    ``traces``: the framework-aligned debates; ``control``: the baseline-vs-baseline debates (None or
    empty: the control-based figures are untested). ``finals``: the long-form frame of
    :func:`fairarena.stats.samples.samples_frame` (A's final values) for the framework-bias test.
    ``bias_hits``: :func:`fairarena.stats.transcripts.bias_confusion`'s ``hits`` (own-framework test).
    ``copies``: :func:`fairarena.stats.transcripts.copy_summary` of the study, passed through.
    Returns ``{"figures": [NullResult.to_dict()...], "settings", "copies", "control_debates"}``."""
    kw = dict(alpha=alpha, n_permutations=n_permutations, seed=seed)
    _check_perm(n_permutations)
    CORRECTIONS.check(correction)
    treated = per_debate_figures(traces, directions)
    ctrl = per_debate_figures(control, directions) if control else []
    opponents = list(dict.fromkeys(r["opponent"] for r in treated))
    results: list[NullResult] = []
    for opp in opponents + ["all"]:
        rows = [r for r in treated if opp == "all" or r["opponent"] == opp]
        for field, fig in (("joint_r1", "joint beats both openings"), ("joint_final", "joint beats both finals")):
            for m in directions:
                results.append(against_control(_series(rows, field, m), _series(ctrl, field, m) if ctrl else None,
                                               figure=fig, metric=m, opponent=opp, **kw))
        stages = sorted({s for r in rows for s in r["patching"]}, key=_stage_key)
        for s in stages:
            results.append(against_control(_series(rows, "patching", s), _series(ctrl, "patching", s) if ctrl else None,
                                           figure="patching gain", metric=s, opponent=opp, **kw))
        if opp != "all":
            for s in sorted({s for r in rows for s in r["moderation"]}, key=_stage_key):
                results.append(against_control(_series(rows, "moderation", s),
                                               _series(ctrl, "moderation", s) if ctrl else None,
                                               figure="moderation", metric=s, opponent=opp, **kw))
    if finals is not None:
        results += framework_bias_nulls(finals, directions, n_permutations=n_permutations, seed=seed, alpha=alpha)
    if bias_hits:
        results += own_framework_nulls(bias_hits, **kw)
    results = adjust(results, correction, alpha)
    return {"figures": [r.to_dict() for r in results], "control_debates": len(ctrl),
            "settings": {"alpha": alpha, "correction": correction, "n_permutations": n_permutations, "seed": seed,
                         "test": "sign-flip permutation of per-cohort differences (figures against the control); "
                                 "within-cohort label permutation (framework bias)"},
            "copies": dict(copies) if copies is not None else None}


def _stage_key(stage: str) -> tuple[int, int]:
    from fairarena.stats.emergence import stage_order

    return stage_order(stage)


def framework_bias_nulls(finals: Any, directions: Mapping[str, str], *, n_permutations: int = DEFAULT_PERMUTATIONS,
                         seed: int = DEFAULT_SEED, alpha: float = ALPHA) -> list[NullResult]:
    """Per metric: do A's final values differ between alignments beyond noise? (label permutation within
    cohorts on the cohort x alignment table of A's mean final value over opponents and samples; feasible
    finals only). ``value`` is the spread (max - min) of the alignment means; ``detail`` names the best
    alignment in the metric's direction."""
    out = []
    df = finals[finals["a_feasible"].astype(bool)] if "a_feasible" in finals else finals
    for m, direction in directions.items():
        col = f"a_{m}"
        if col not in df:
            continue
        tab = df.pivot_table(index="cohort", columns="framework", values=col, aggfunc="mean", sort=False)
        if tab.shape[1] < 2:
            continue
        means = tab.mean(axis=0)
        sign = direction_sign(direction)
        best = str((means * sign).idxmax())
        stat, p = label_permutation_test(tab.to_numpy(float), n_permutations=n_permutations, seed=seed)
        k = int((~tab.isna().any(axis=1)).sum())
        tested = math.isfinite(p)
        out.append(NullResult("framework bias", m, "all", float(means.max() - means.min()), "label permutation",
                              math.nan, stat, (math.nan, math.nan), k, p, None, "any",
                              _decide(p, stat, "any", alpha) if tested else None,
                              f"best alignment {best} ({means[best]:.4g})"))
    return out


def own_framework_nulls(hits: Sequence[Mapping[str, Any]], **kw: Any) -> list[NullResult]:
    """Per alignment F and stage: the share of A-aligned-to-F proposals nearest F's optimum against the
    share of the same cohorts' baseline-opponent proposals nearest F (module docstring)."""
    out = []
    a_hits = [h for h in hits if h.get("framework")]
    b_hits = [h for h in hits if not h.get("framework") and h.get("proposer") == "baseline"]
    for s in sorted({h["stage"] for h in a_hits}, key=_stage_key):
        for fw in list(dict.fromkeys(h["framework"] for h in a_hits)):
            t = _by_cohort((h["cohort"], float(h["own"])) for h in a_hits if h["stage"] == s and h["framework"] == fw)
            c = _by_cohort((h["cohort"], float(h["near"].get(fw, 0.0))) for h in b_hits if h["stage"] == s)
            out.append(against_control(t, c or None, figure="nearest own framework", metric=f"{fw} ({s})",
                                       opponent="all", null="unaligned agent", **kw))
    return out


__all__ = ["DEFAULT_PERMUTATIONS", "NullResult", "adjust", "against_control", "framework_bias_nulls",
           "label_permutation_test", "noise_report", "own_framework_nulls", "per_debate_figures",
           "sign_flip_test"]
