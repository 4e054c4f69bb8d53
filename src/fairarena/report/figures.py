"""Figures for reports, as inline SVG text (matplotlib, no pyplot state, no files, no fonts needed).

:func:`svg_of` turns a matplotlib :class:`~matplotlib.figure.Figure` into an ``<svg>`` element ready to
inline in HTML: text as paths (no font dependency in the browser), no creation date (same input, same
bytes), and every ``id`` prefixed so several figures in one page never share an id.
:func:`means_figure` is the standard study figure: per framework, the mean of A and of its opponent
with their 95% bootstrap intervals, one panel per pairing. :func:`joint_vs_sides_figure` puts the joint
recommendation against each side's final, one point per cohort; :func:`slopegraph_figure` follows each
side from its round-1 proposal to its final and to the joint recommendation.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from fairarena.stats import StudyStats, better_word, direction_sign

_ID_RE = re.compile(r'\bid="([^"]+)"')


def utility_heatmap(M: Sequence[Sequence[float]], rows: Sequence[str], columns: Sequence[str], *,
                    label: str = "normalised utility (1 = own ideal)", title: str | None = None) -> Figure:
    """Heat map of utilities in [0, 1]: one row per decision (a rule, a debate), one column per stakeholder,
    each cell annotated, each row labelled with its smallest utility (the worst-off stakeholder's); NaN
    cells stay blank. The council table's and the council study's Arrow's-trade-off figure."""
    A = np.asarray(M, dtype=float).reshape(len(rows), len(columns))
    fig = Figure(figsize=(1.1 * len(columns) + 3.2, 0.32 * len(rows) + 1.6), layout="constrained")
    ax = fig.subplots()
    im = ax.imshow(A, vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(columns)), list(columns), rotation=30, ha="right", fontsize=7)
    ax.set_yticks(range(len(rows)), [f"{r} (min {A[i].min():.2f})" if A.shape[1] and not np.isnan(A[i]).any() else r
                                     for i, r in enumerate(rows)], fontsize=7)
    for i, j in np.ndindex(*A.shape):
        if not math.isnan(A[i, j]):
            ax.text(j, i, f"{A[i, j]:.2f}", ha="center", va="center", fontsize=6,
                    color="white" if A[i, j] < 0.5 else "black")
    if title:
        ax.set_title(title, fontsize=8)
    fig.colorbar(im, ax=ax, label=label)
    return fig


def prefix_ids(svg: str, prefix: str) -> str:
    """Prefix every ``id`` and every reference to it (``url(#id)``, ``href="#id"``) with ``prefix``."""
    ids = set(_ID_RE.findall(svg))
    if not ids:
        return svg
    svg = _ID_RE.sub(lambda m: f'id="{prefix}{m.group(1)}"', svg)
    pattern = re.compile(r"(url\(#|href=\"#)(" + "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
                         + r")(?=[)\"])")
    return pattern.sub(lambda m: f"{m.group(1)}{prefix}{m.group(2)}", svg)


def svg_of(fig: Figure, *, prefix: str = "") -> str:
    """The figure as one inline ``<svg>`` element (XML prolog, DOCTYPE and metadata removed; ids
    prefixed with ``prefix`` when given — the HTML builder prefixes each figure by its position)."""
    buf = io.StringIO()
    with rc_context({"svg.hashsalt": "fairarena", "svg.fonttype": "path"}):   # ids from a fixed salt: same bytes
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buf.getvalue()
    start = text.find("<svg")
    if start < 0:
        raise RuntimeError("matplotlib produced no <svg> element")
    text = text[start:]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, count=1, flags=re.S)
    text = text.replace("<svg ", '<svg role="img" ', 1)
    return prefix_ids(text, prefix) if prefix else text


def means_figure(st: StudyStats, metric: str, *, title: str | None = None,
                 framework_titles: dict[str, str] | None = None) -> Figure:
    """Grouped bars: per framework, mean of A and of the opponent with 95% bootstrap intervals;
    one panel per pairing. A significant winner's bar is outlined in black."""
    fig = Figure(figsize=(3.2 * len(st.opponents) + 0.6, 3.2), layout="constrained")
    axes = fig.subplots(1, len(st.opponents), sharey=True, squeeze=False)[0]
    x = np.arange(len(st.frameworks))
    w = 0.38
    for ax, opp in zip(axes, st.opponents):
        for k, (side, colour) in enumerate((("A", "#1f77b4"), ("opponent", "#ff7f0e"))):
            means, lo, hi, edge = [], [], [], []
            for fw in st.frameworks:
                try:
                    r = st.cell(opp, fw, metric).result
                except KeyError:   # a pair that never debated (a study of participants against each other)
                    means.append(math.nan), lo.append(0.0), hi.append(0.0), edge.append(colour)
                    continue
                m, ci = (r.mean_a, r.ci_a) if side == "A" else (r.mean_b, r.ci_b)
                means.append(m)
                # max(0, .): a constant sample's interval is [m, m] up to rounding (e.g. -1e-17)
                lo.append(max(0.0, m - ci[0]) if math.isfinite(ci[0]) and math.isfinite(m) else 0.0)
                hi.append(max(0.0, ci[1] - m) if math.isfinite(ci[1]) and math.isfinite(m) else 0.0)
                edge.append("black" if r.winner == ("A" if side == "A" else "B") else colour)
            ax.bar(x + (k - 0.5) * w, means, w, yerr=[lo, hi], color=colour, edgecolor=edge, linewidth=1.5,
                   capsize=2)
        ax.set_xticks(x, [(framework_titles or {}).get(f, f) for f in st.frameworks], rotation=30, ha="right",
                      fontsize=8)
        ax.set_title(f"A vs {opp}", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel(f"{metric} ({better_word(st.directions.get(metric, 'max'))} is better)", fontsize=8)
    handles = [Patch(facecolor="#1f77b4", label="A"), Patch(facecolor="#ff7f0e", label="opponent"),
               Patch(facecolor="white", edgecolor="black", linewidth=1.5, label="significant winner")]
    fig.legend(handles=handles, loc="outside upper center", ncols=3, fontsize=7, frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


OPPONENT_COLOURS = ("#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#7f7f7f")
FRAMEWORK_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")


def _finite(*xs: object) -> bool:
    return all(isinstance(x, (int, float)) and math.isfinite(x) for x in xs)


def joint_vs_sides_figure(points: Mapping[str, Sequence[Mapping[str, object]]], *,
                          directions: Mapping[str, str] | None = None, opponents: Sequence[str] = ()) -> Figure:
    """Per metric (a row; ``points``: metric -> dicts with ``cohort``, ``opponent``, ``a``, ``b``, ``joint``,
    the metric's values of one debate), two panels: the joint recommendation against A's final (left) and
    against the opponent's final (right), one point per cohort and opponent (the mean of its debates;
    missing or non-finite values skipped), the diagonal y = x, and in each panel's title how many points
    the joint is better, equal (within 1e-9, relative) and worse (better: above the diagonal when the
    metric's direction is ``max``)."""
    metrics = list(points)
    fig = Figure(figsize=(9.0, 2.9 * len(metrics) + 0.4), layout="constrained")
    axes = fig.subplots(len(metrics), 2, squeeze=False)
    for row, metric in enumerate(metrics):
        pts = points[metric]
        direction = (directions or {}).get(metric, "max")
        opps = list(opponents) or list(dict.fromkeys(str(p["opponent"]) for p in pts))
        acc: dict[tuple[object, str], list[list[float]]] = {}
        for p in pts:
            for k, side in enumerate(("a", "b")):
                if _finite(p.get(side), p.get("joint")):
                    cell = acc.setdefault((p["cohort"], str(p["opponent"])), [[], [], [], []])
                    cell[2 * k].append(float(p[side]))          # type: ignore[arg-type]
                    cell[2 * k + 1].append(float(p["joint"]))   # type: ignore[arg-type]
        for k, who in enumerate(("A", "opponent")):
            ax = axes[row][k]
            xs_all: list[float] = []
            ys_all: list[float] = []
            for j, opp in enumerate(opps):
                xs = [float(np.mean(c[2 * k])) for (_, o), c in acc.items() if o == opp and c[2 * k]]
                ys = [float(np.mean(c[2 * k + 1])) for (_, o), c in acc.items() if o == opp and c[2 * k]]
                ax.scatter(xs, ys, s=14, alpha=0.75, color=OPPONENT_COLOURS[j % len(OPPONENT_COLOURS)],
                           label=f"A vs {opp}", edgecolors="none")
                xs_all += xs
                ys_all += ys
            sign = float(direction_sign(direction))
            tol = [1e-9 * max(1.0, abs(x)) for x in xs_all]
            better = sum(sign * (y - x) > t for x, y, t in zip(xs_all, ys_all, tol))
            worse = sum(sign * (x - y) > t for x, y, t in zip(xs_all, ys_all, tol))
            if xs_all:
                lo, hi = min(xs_all + ys_all), max(xs_all + ys_all)
                pad = (hi - lo) * 0.05 or 0.01
                ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="black", lw=0.8, ls=":")
            ax.set_xlabel(f"{who}'s final {metric}", fontsize=8)
            ax.set_ylabel(f"joint {metric} ({better_word(direction)} is better)", fontsize=8)
            ax.set_title(f"{metric}, joint vs {who}: of {len(xs_all)} points, joint better {better}, equal "
                         f"{len(xs_all) - better - worse}, worse {worse}", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
    handles, labels = axes[0][1].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside upper center", ncols=len(labels), fontsize=7, frameon=False)
    return fig


def slopegraph_figure(lines: Mapping[str, Sequence[Mapping[str, object]]], *,
                      directions: Mapping[str, str] | None = None, frameworks: Sequence[str] = (),
                      opponents: Sequence[str] = ()) -> Figure:
    """Slopegraphs from round 1 to final to joint: per metric (a row; ``lines``: metric -> dicts with
    ``framework``, ``opponent``, ``side`` ("A" or "opponent") and ``values``, the metric at round 1, final
    and joint of one debate), a panel per side and opponent. Each distinct debate line thin grey (lines with
    a non-finite value left out), the mean per framework a coloured line with points."""
    metrics = list(lines)
    first = [x for m in metrics for x in lines[m]]
    frameworks = list(frameworks) or list(dict.fromkeys(str(x["framework"]) for x in first))
    opponents = list(opponents) or list(dict.fromkeys(str(x["opponent"]) for x in first))
    stages = ("round 1", "final", "joint")
    fig = Figure(figsize=(2.6 * 2 * len(opponents) + 1.0, 2.8 * len(metrics) + 0.5), layout="constrained")
    axes = fig.subplots(len(metrics), 2 * len(opponents), squeeze=False)
    for row, metric in enumerate(metrics):
        direction = (directions or {}).get(metric, "max")
        for j, opp in enumerate(opponents):
            for k, side in enumerate(("A", "opponent")):
                ax = axes[row][2 * j + k]
                grey: set[tuple[float, ...]] = set()
                for fi, fw in enumerate(frameworks):
                    vals = [tuple(map(float, x["values"])) for x in lines[metric]   # type: ignore[call-overload]
                            if x["opponent"] == opp and x["side"] == side and x["framework"] == fw
                            and all(_finite(v) for v in x["values"])]               # type: ignore[attr-defined]
                    grey.update(vals)
                    if vals:
                        mean = np.mean(np.array(vals), axis=0)
                        ax.plot(range(3), mean, "-o", color=FRAMEWORK_COLOURS[fi % len(FRAMEWORK_COLOURS)], lw=1.8,
                                ms=4, label=fw, zorder=3)
                gx = [x for _ in grey for x in (0.0, 1.0, 2.0, math.nan)]
                gy = [y for v in sorted(grey) for y in (*v, math.nan)]
                ax.plot(gx, gy, color="#9aa3ad", lw=0.5, alpha=0.35, zorder=1)   # one path for every debate
                ax.set_xticks(range(3), stages, fontsize=7)
                ax.set_xlim(-0.2, 2.2)
                ax.tick_params(labelsize=7)
                ax.grid(axis="y", alpha=0.3)
                ax.set_title(f"{metric}, A vs {opp}: {'A' if side == 'A' else opp}", fontsize=8)
        axes[row][0].set_ylabel(f"{metric} ({better_word(direction)} is better)", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside upper center", ncols=min(len(labels), 6), fontsize=7, frameon=False)
    return fig
