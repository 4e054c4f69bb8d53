"""Every framework x metric cell of a study, from a long-form table of debates.

Input: one record per debate — its cohort, the framework Agent A is aligned to, the opponent (the
pairing: "baseline", "adversarial", ...), the metric values of A's and of the opponent's allocation, the
two feasibility flags, and optionally the joint recommendation's values and flag. Records are plain
:class:`DebateRecord` objects or mappings with the same keys; a pandas frame with flat columns
(``a_<metric>``, ``opp_<metric>``, ``joint_<metric>``) is accepted by :func:`compare_frame`.

Output: :class:`StudyStats`, one :class:`CellResult` per (opponent, framework, metric) with the paired
comparison of :mod:`fairarena.stats.paired`, plus the joint recommendation's mean and interval. The
bootstrap intervals of all cells are computed in one vectorised pass
(:func:`fairarena.stats.bootstrap.bootstrap_means_ci`), each equal to the per-cell interval.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from fairarena.errors import InputError
from fairarena.stats.bootstrap import (CI_METHODS, DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, GENERATOR,
                                       bootstrap_means_ci)
from fairarena.stats.multiple import CORRECTIONS
from fairarena.stats.paired import (ALPHA, PairedResult, canonical_direction, compare_pairs, check_options,
                                    direction_sign, select_pairs)

FAMILIES = ("all", "opponent")


@dataclass(frozen=True)
class DebateRecord:
    """One debate: who was compared on which cohort, the metric values, feasibility."""

    cohort: Hashable
    framework: str
    opponent: str
    a: Mapping[str, float]
    opp: Mapping[str, float]
    a_feasible: bool = True
    opp_feasible: bool = True
    joint: Mapping[str, float] | None = None
    joint_feasible: bool = True


@dataclass(frozen=True)
class CellResult:
    """One (opponent, framework, metric) cell: the paired comparison and the joint recommendation."""

    opponent: str
    framework: str
    metric: str
    result: PairedResult
    joint_n: int = 0
    joint_mean: float = math.nan
    joint_ci: tuple[float, float] = (math.nan, math.nan)
    joint_n_missing: int = 0        # feasible joint recommendations whose value is undefined (NaN), dropped

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"opponent": self.opponent, "framework": self.framework, "metric": self.metric}
        out.update(self.result.to_dict())
        out.update(joint_n=self.joint_n, joint_mean=self.joint_mean, joint_ci=list(self.joint_ci),
                   joint_n_missing=self.joint_n_missing)
        return out


@dataclass(frozen=True)
class StudyStats:
    """All cells of a study plus the settings that produced them."""

    cells: tuple[CellResult, ...]
    opponents: tuple[str, ...]
    frameworks: tuple[str, ...]
    metrics: tuple[str, ...]
    directions: Mapping[str, str]
    settings: Mapping[str, Any] = field(default_factory=dict)

    def cell(self, opponent: str, framework: str, metric: str) -> CellResult:
        for c in self.cells:
            if (c.opponent, c.framework, c.metric) == (opponent, framework, metric):
                return c
        raise KeyError((opponent, framework, metric))

    def to_records(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.cells]

    def to_dict(self) -> dict[str, Any]:
        return {"settings": dict(self.settings), "directions": dict(self.directions),
                "opponents": list(self.opponents), "frameworks": list(self.frameworks),
                "metrics": list(self.metrics), "cells": self.to_records()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StudyStats:
        """Inverse of :meth:`to_dict` (e.g. statistics stored as JSON, tables rendered later). A file written
        before the one direction vocabulary (``higher`` / ``lower``) is read as ``max`` / ``min``
        (:func:`fairarena.stats.paired.canonical_direction`, the legacy read path)."""
        res_fields = set(PairedResult.__dataclass_fields__)
        cells = []
        for c in data["cells"]:
            r = {k: v for k, v in c.items() if k in res_fields}
            r["ci_a"], r["ci_b"] = tuple(r["ci_a"]), tuple(r["ci_b"])
            r["direction"] = canonical_direction(r["direction"])
            cells.append(CellResult(c["opponent"], c["framework"], c["metric"], PairedResult(**r),
                                    joint_n=c.get("joint_n", 0), joint_mean=c.get("joint_mean", math.nan),
                                    joint_ci=tuple(c.get("joint_ci", (math.nan, math.nan))),
                                    joint_n_missing=c.get("joint_n_missing", 0)))
        return cls(tuple(cells), tuple(data["opponents"]), tuple(data["frameworks"]), tuple(data["metrics"]),
                   {m: canonical_direction(d) for m, d in data["directions"].items()},
                   dict(data.get("settings", {})))

    def to_frame(self) -> Any:
        """The cells as a pandas DataFrame (pandas imported only here)."""
        import pandas as pd

        return pd.DataFrame(self.to_records())


def _as_record(r: DebateRecord | Mapping[str, Any], i: int) -> DebateRecord:
    if isinstance(r, DebateRecord):
        return r
    if not isinstance(r, Mapping):
        raise InputError(f"records[{i}]", r, "a DebateRecord or a mapping")
    missing = [k for k in ("cohort", "framework", "opponent", "a", "opp") if k not in r]
    if missing:
        raise InputError(f"records[{i}]", dict(r), "keys cohort, framework, opponent, a, opp (missing: "
                         + ", ".join(missing) + ")")
    known = DebateRecord.__dataclass_fields__
    return DebateRecord(**{k: v for k, v in r.items() if k in known})


def _value(m: Mapping[str, float] | None, metric: str, where: str) -> float:
    if m is None:
        return math.nan
    try:
        v = m[metric]
    except KeyError:
        raise InputError(where, sorted(m), f"a value for metric {metric!r}") from None
    return math.nan if v is None else float(v)


def compare_table(records: Iterable[DebateRecord | Mapping[str, Any]], metrics: Mapping[str, str], *,
                  test: str = "auto", alpha: float = ALPHA, correction: str = "none", family: str = "all",
                  zero_method: str = "wilcox", n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                  level: float = DEFAULT_LEVEL, ci_method: str = "percentile",
                  opponents: Sequence[str] | None = None,
                  frameworks: Sequence[str] | None = None, observed_only: bool = False) -> StudyStats:
    """Every opponent x framework x metric cell of a study.

    ``metrics`` maps each metric name to its direction (``max`` or ``min``). ``correction``
    ("none" or "holm") is applied over ``family``: ``"all"`` cells at once, or each ``"opponent"``
    (pairing) separately; raw and adjusted p are both kept. Opponents and frameworks appear in the
    order given, else in order of first appearance. A second debate for the same (cohort, framework,
    opponent) is an error: pairing by cohort must be one-to-one. ``observed_only``: only the (opponent,
    framework) pairs some record has (a duel of participants, where a participant never meets itself),
    else every combination (an empty cell has n = 0).
    """
    check_options(test, alpha, zero_method)
    CORRECTIONS.check(correction)
    if ci_method not in CI_METHODS:
        raise InputError("ci_method", ci_method, "one of " + ", ".join(CI_METHODS))
    if family not in FAMILIES:
        raise InputError("family", family, "one of " + ", ".join(FAMILIES))
    if not metrics:
        raise InputError("metrics", metrics, "at least one metric name -> direction")
    for d in metrics.values():
        direction_sign(d)
    directions = dict(metrics)

    groups: dict[tuple[str, str], dict[Hashable, DebateRecord]] = {}
    opp_order: list[str] = []
    fw_order: list[str] = []
    for i, raw in enumerate(records):
        r = _as_record(raw, i)
        key = (str(r.opponent), str(r.framework))
        g = groups.setdefault(key, {})
        if r.cohort in g:
            raise InputError(f"records[{i}].cohort", r.cohort, f"one debate per cohort for opponent "
                             f"{key[0]!r} and framework {key[1]!r} (this cohort appears twice)")
        g[r.cohort] = r
        if key[0] not in opp_order:
            opp_order.append(key[0])
        if key[1] not in fw_order:
            fw_order.append(key[1])
    opp_list = list(opponents) if opponents is not None else opp_order
    fw_list = list(frameworks) if frameworks is not None else fw_order

    cells: list[CellResult] = []
    samples: list[np.ndarray] = []        # bootstrap inputs: a, b, joint per cell
    for opp in opp_list:
        for fw in fw_list:
            if observed_only and (opp, fw) not in groups:
                continue
            recs = list(groups.get((opp, fw), {}).values())
            fa = np.array([r.a_feasible for r in recs], bool)
            fb = np.array([r.opp_feasible for r in recs], bool)
            fj = np.array([r.joint_feasible for r in recs], bool)
            has_joint = np.array([r.joint is not None for r in recs], bool)
            for metric in metrics:
                a = np.array([_value(r.a, metric, f"a[{opp}/{fw}]") for r in recs])
                b = np.array([_value(r.opp, metric, f"opp[{opp}/{fw}]") for r in recs])
                j = np.array([_value(r.joint, metric, f"joint[{opp}/{fw}]") if r.joint is not None else math.nan
                              for r in recs])
                a2, b2, n_exc, n_mis = select_pairs(a, b, fa, fb)
                res = compare_pairs(a2, b2, n_exc, n_mis, direction=metrics[metric], test=test, alpha=alpha,
                            zero_method=zero_method)
                j2 = j[fj & ~np.isnan(j)]
                samples += [a2, b2, j2]
                cells.append(CellResult(opp, fw, metric, res, joint_n=int(j2.size),
                                        joint_mean=float(j2.mean()) if j2.size else math.nan,
                                        joint_n_missing=int((fj & np.isnan(j) & has_joint).sum())))

    ci = bootstrap_means_ci(samples, n_resamples=n_resamples, seed=seed, level=level, method=ci_method)
    for k, c in enumerate(cells):
        ca, cb, cj = ci[3 * k], ci[3 * k + 1], ci[3 * k + 2]
        cells[k] = replace(c, result=replace(c.result, ci_a=(float(ca[0]), float(ca[1])),
                                             ci_b=(float(cb[0]), float(cb[1]))),
                           joint_ci=(float(cj[0]), float(cj[1])))

    if correction != "none":
        keys = [c.opponent if family == "opponent" else "" for c in cells]
        for fam in dict.fromkeys(keys):
            idx = [k for k, key in enumerate(keys) if key == fam]
            adj = CORRECTIONS[correction](np.array([cells[k].result.p for k in idx]))
            for k, pa in zip(idx, adj):
                if not math.isnan(pa):
                    cells[k] = replace(cells[k], result=cells[k].result.with_adjusted(float(pa), correction))

    settings = {"test": test, "alpha": alpha, "correction": correction, "family": family,
                "zero_method": zero_method, "round_differences": 1e-12, "bootstrap": ci_method,
                "n_resamples": n_resamples, "seed": seed, "level": level, "generator": GENERATOR,
                "effect_sizes": "cohens_d (pooled SD of both sides), d_z (SD of the differences)"}
    return StudyStats(tuple(cells), tuple(opp_list), tuple(fw_list), tuple(metrics), directions, settings)


def records_from_frame(df: Any, metrics: Iterable[str]) -> list[DebateRecord]:
    """Records from a pandas frame with columns cohort, framework, opponent, ``a_<metric>``,
    ``opp_<metric>``, optional ``joint_<metric>``, and optional ``a_feasible`` / ``opp_feasible`` /
    ``joint_feasible`` (default True)."""
    metrics = list(metrics)
    cols = set(df.columns)
    need = {"cohort", "framework", "opponent"} | {f"{s}_{m}" for s in ("a", "opp") for m in metrics}
    if need - cols:
        raise InputError("columns", sorted(cols), "also " + ", ".join(sorted(need - cols)))
    has_joint = all(f"joint_{m}" in cols for m in metrics)
    out = []
    for row in df.to_dict("records"):
        out.append(DebateRecord(
            cohort=row["cohort"], framework=str(row["framework"]), opponent=str(row["opponent"]),
            a={m: row[f"a_{m}"] for m in metrics}, opp={m: row[f"opp_{m}"] for m in metrics},
            a_feasible=bool(row.get("a_feasible", True)), opp_feasible=bool(row.get("opp_feasible", True)),
            joint={m: row[f"joint_{m}"] for m in metrics} if has_joint else None,
            joint_feasible=bool(row.get("joint_feasible", True))))
    return out


def compare_frame(df: Any, metrics: Mapping[str, str], **kwargs: Any) -> StudyStats:
    """:func:`compare_table` on a pandas frame (see :func:`records_from_frame` for its columns)."""
    return compare_table(records_from_frame(df, metrics), metrics, **kwargs)
