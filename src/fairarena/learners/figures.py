"""Figure 3: scores of p_t over time and the policy's evolution, mean and band over seeds."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np

from fairarena.learners.simulate import SimulationResult

SCORE_STYLE = {"pf": ("PF score", "tab:blue"), "ef": ("EF score", "tab:orange"), "uf": ("UF score", "tab:green")}


def figure3(results: Mapping[str, SimulationResult], path: str | Path, title: str = "",
            band: tuple[float, float] = (10.0, 90.0)) -> Path:
    """One row per learner: left, the PF / EF / UF scores of ``p_t`` against ``t`` (log scale; line =
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
        for key, (label, colour) in SCORE_STYLE.items():
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
