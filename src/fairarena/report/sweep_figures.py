"""The procedural-fairness sweep's tables and figures: Table 1 (Markdown, LaTeX) and the grouped bar chart
of Figure 1 (a sweep's mean scores, :func:`fairarena.sweep.store.write_sweep`) and Figure 2 (the PrefLib
Dots example, :func:`fairarena.sweep.preflib_example.write_preflib`), with the notions' short labels.

matplotlib is imported only when a figure is drawn; the notion labels are read from the notion registry
(:mod:`fairarena.bandit.notions`) when used.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Mapping

import numpy as np


class _NotionLabels(Mapping[str, str]):
    """Short labels of the registered notions (``label`` metadata, else the name), read from the
    notion registry when used, so a user-registered notion gets its own label in tables and figures."""

    def _labels(self) -> dict[str, str]:
        from fairarena.bandit.notions import NOTIONS

        return {e.name: e.meta.get("label", e.name) for e in NOTIONS.entries()}

    def __getitem__(self, name: str) -> str:
        return self._labels()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._labels())

    def __len__(self) -> int:
        return len(self._labels())


POLICY_TITLES: Mapping[str, str] = _NotionLabels()
NOTION_TITLES = POLICY_TITLES


def table_markdown(table: Mapping[str, Mapping[str, list[float]]], digits: int = 2) -> str:
    lines = ["| policy | PF score | EF score | UF score |", "| --- | --- | --- | --- |"]
    for pname, row in table.items():
        cells = [f"{row[k][0]:.{digits}f} ± {row[k][1]:.{digits}f}" for k in ("pf", "ef", "uf")]
        lines.append(f"| {POLICY_TITLES.get(pname, pname)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def table_latex(table: Mapping[str, Mapping[str, list[float]]], digits: int = 2) -> str:
    lines = [r"\begin{tabular}{lccc}", r"\toprule", r"Policy & PF & EF & UF \\", r"\midrule"]
    for pname, row in table.items():
        cells = [f"${row[k][0]:.{digits}f} \\pm {row[k][1]:.{digits}f}$" for k in ("pf", "ef", "uf")]
        lines.append(f"{POLICY_TITLES.get(pname, pname)} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def grouped_bars(path_stem: Path, groups: Mapping[str, Mapping[str, tuple[float, float]]], title: str,
                 ylabel: str = "score") -> list[Path]:
    """Grouped bar chart: one group per policy, one bar per notion (PF bars highlighted),
    error bars = std clipped to [0, 1]. Writes ``<stem>.png`` and ``<stem>.svg`` atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fairarena.fsutil import atomic_path

    notions = ("pf", "ef", "uf")
    colours = {"pf": "#c0392b", "ef": "#9dbbd6", "uf": "#c9c9c9"}
    pols = list(groups)
    x = np.arange(len(pols))
    width = 0.26
    fig, ax = plt.subplots(figsize=(1.3 * len(pols) + 2.5, 3.6))
    for j, nname in enumerate(notions):
        means = [groups[p][nname][0] for p in pols]
        stds = np.array([groups[p][nname][1] for p in pols])
        # std error bars, clipped to the score range [0, 1]
        yerr = np.vstack([np.minimum(stds, means), np.minimum(stds, np.clip(1.0 - np.array(means), 0, None))])
        ax.bar(x + (j - 1) * width, means, width, yerr=yerr, capsize=3, label=f"{NOTION_TITLES[nname]} score",
               color=colours[nname], edgecolor="black" if nname == "pf" else "none",
               linewidth=1.2 if nname == "pf" else 0, error_kw={"elinewidth": 0.8})
    ax.set_xticks(x, [f"{POLICY_TITLES.get(p, p)} policy" for p in pols])
    ax.set_ylim(0, 1.08)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(ncol=3, fontsize=8, loc="lower right", framealpha=0.9)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    out = []
    for ext in ("png", "svg"):
        target = path_stem.with_suffix(f".{ext}")
        with atomic_path(target) as tmp:
            fig.savefig(tmp, format=ext, dpi=150, metadata={"Date": None} if ext == "svg" else None)
        out.append(target)
    plt.close(fig)
    return out
