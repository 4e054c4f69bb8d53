"""Figure 3: scores of p_t over time and the policy's evolution, mean and band over seeds.

The paper's Figure 3 shows the PF, EF and UF scores (:data:`FIGURE3_NOTIONS`); any registered
notion can be drawn (``notions=``), labelled with its title from the notion registry."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from fairarena.learners.simulate import SimulationResult

FIGURE3_NOTIONS = ("pf", "ef", "uf")  # the paper's Figure 3
COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive")


def score_styles(notions: Sequence[str]) -> dict[str, tuple[str, str]]:
    """``{notion: (label, colour)}``: each name checked against the notion registry (an unknown
    name raises ``InputError`` listing the notions), labelled ``NAME score``; colours in a fixed order."""
    from fairarena.bandit.notions import get_notion

    return {x: (f"{get_notion(x).name.upper()} score", COLOURS[i % len(COLOURS)]) for i, x in enumerate(notions)}


def figure3(results: Mapping[str, SimulationResult], path: str | Path, title: str = "",
            band: tuple[float, float] = (10.0, 90.0), notions: Sequence[str] = FIGURE3_NOTIONS) -> Path:
    """One row per learner: left, the scores of ``p_t`` on ``notions`` (default PF / EF / UF) against ``t`` (log scale; line =
    mean over seeds, band = the ``band`` percentiles); right, the mean policy as a stacked area per
    arm. Written atomically to ``path`` (format from the suffix)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fairarena.fsutil import atomic_path

    names = list(results)
    fig, axes = plt.subplots(len(names), 2, figsize=(11, 3.0 * len(names) + 0.6), squeeze=False)
    for row, name in enumerate(names):
        res = results[name]
        t = res.grid
        ax = axes[row, 0]
        for key, (label, colour) in score_styles(notions).items():
            v = res.scores[key]
            ax.plot(t, v.mean(axis=0), color=colour, label=label, lw=1.6)
            if v.shape[0] > 1:
                lo, hi = np.percentile(v, band, axis=0)
                ax.fill_between(t, lo, hi, color=colour, alpha=0.2, lw=0)
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel(f"{name}\nscore of $p_t$")
        ax.grid(True, which="both", alpha=0.25)
        if row == 0:
            ax.legend(loc="lower right", fontsize=8)
        ax = axes[row, 1]
        mean_pol = res.policies.mean(axis=0)  # (G, K)
        k = mean_pol.shape[1]
        cmap = plt.get_cmap("tab10" if k <= 10 else "tab20")
        ax.stackplot(t, mean_pol.T, labels=[f"arm {a + 1}" for a in range(k)],
                     colors=[cmap(a % cmap.N) for a in range(k)], alpha=0.85)
        ax.set_xscale("log")
        ax.set_ylim(0, 1)
        ax.set_xlim(t[0], t[-1])
        ax.set_ylabel("mean policy $p_t$")
        if row == 0:
            ax.legend(loc="upper right", fontsize=7, ncol=min(k, 5))
    for ax in axes[-1]:
        ax.set_xlabel("round t")
    seeds = len(next(iter(results.values())).seeds)
    fig.suptitle(title or f"Fair bandit learners ({seeds} seeds; band {band[0]:g}-{band[1]:g}%)", fontsize=11)
    fig.tight_layout()
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=130, format=path.suffix.lstrip(".") or "png")
    plt.close(fig)
    return path
