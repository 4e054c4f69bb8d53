"""Figures for reports, as inline SVG text (matplotlib, no pyplot state, no files, no fonts needed).

:func:`svg_of` turns a matplotlib :class:`~matplotlib.figure.Figure` into an ``<svg>`` element ready to
inline in HTML: text as paths (no font dependency in the browser), no creation date (same input, same
bytes), and every ``id`` prefixed so several figures in one page never share an id.
:func:`means_figure` is the standard study figure: per framework, the mean of A and of its opponent
with their 95% bootstrap intervals, one panel per pairing.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence

import numpy as np
from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from fairarena.stats import StudyStats

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
                r = st.cell(opp, fw, metric).result
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
    axes[0].set_ylabel(f"{metric} ({st.directions.get(metric, 'higher')} is better)", fontsize=8)
    handles = [Patch(facecolor="#1f77b4", label="A"), Patch(facecolor="#ff7f0e", label="opponent"),
               Patch(facecolor="white", edgecolor="black", linewidth=1.5, label="significant winner")]
    fig.legend(handles=handles, loc="outside upper center", ncols=3, fontsize=7, frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig
