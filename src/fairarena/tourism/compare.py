"""``tourism compare``: every rule on one destination, side by side, plus the scripted debate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fairarena.tourism.decisions import candidates, debate, decide, evaluate_decision, rule_names
from fairarena.tourism.destination import Destination
from fairarena.tourism.stakeholders import Stakeholder

__all__ = ["compare", "plot_compare"]


def compare(d: Destination, stakeholders: list[Stakeholder], decision: str, *, k: int = 5, rounds: int = 3,
            seed: int = 0, attention: str = "position", closing: str = "nash") -> dict[str, Any]:
    """One row per rule (and one for the debate closed by ``closing``): chosen candidate, each stakeholder's
    utility, every scalar metric and the worst-off stakeholder."""
    cands = candidates(d, stakeholders, decision, k, attention=attention)
    rows = []

    def row(name: str, chosen: Any, x: Any) -> None:
        ev = evaluate_decision(d, stakeholders, decision, x, cands, attention)
        rows.append({"rule": name, "chosen": chosen,
                     "utilities": {r["stakeholder"]: r["utility"] for r in ev["stakeholders"]},
                     "metrics": {m: v for m, v in ev["metrics"].items() if isinstance(v, float)},
                     "worst_off": ev["evaluation"]["worst_off"], "gini_utilities": ev["evaluation"]["gini_utilities"]})

    for r in rule_names(decision):
        res = decide(d, stakeholders, decision, r, cands, k, seed)
        row(r, res["chosen"], res["decision"])
    if rounds > 0:
        deb = debate(stakeholders, cands, closing, rounds, seed)
        row(f"debate({rounds} rounds, {closing})", deb["chosen"], cands.decisions[deb["index"]])
    return {"decision_kind": decision, "stakeholders": [s.name for s in stakeholders], "candidates": cands.names,
            "rows": rows, "seed": seed, "attention": attention}


def plot_compare(result: dict[str, Any], path: Path) -> None:
    """Grouped bars: each rule's utility for every stakeholder (PNG, written atomically)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from fairarena.fsutil import atomic_path

    rows = result["rows"]
    names = result["stakeholders"]
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(rows)), 4))
    w = 0.8 / len(names)
    for i, n in enumerate(names):
        ax.bar(np.arange(len(rows)) + i * w, [r["utilities"][n] for r in rows], w, label=n)
    ax.set_xticks(np.arange(len(rows)) + 0.4 - w / 2)
    ax.set_xticklabels([r["rule"] for r in rows], rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("normalised utility")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)
