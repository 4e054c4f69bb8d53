"""``tourism compare``: every rule on one destination, side by side, plus the scripted debate (run through the
arena, :func:`fairarena.tourism.run.debate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fairarena.tourism.decisions import Candidates, candidates, decide, evaluate_decision, rule_names
from fairarena.tourism.destination import Destination
from fairarena.tourism.metrics import flow_feasibility, satisfaction
from fairarena.tourism.run import debate
from fairarena.tourism.stakeholders import Stakeholder

__all__ = ["compare", "plot_compare", "decision_row", "rule_rows_of", "debate_note"]


def decision_row(d: Destination, stakeholders: list[Stakeholder], decision: str, name: str, kind: str,
                 chosen: str | None, x: Any, cands: Candidates, attention: str = "position", note: str = ""
                 ) -> dict[str, Any]:
    """One decision scored for every stakeholder (the row of ``tourism compare`` and of a tourism study):
    ``{"rule", "kind" ("rule" | "debate"), "chosen" (candidate name or None), "metrics" (every scalar metric,
    plus ``satisfaction`` over all tourist groups), "utilities" (stakeholder -> utility normalised with the
    payoff table over the candidates and this decision, :func:`~fairarena.tourism.decisions.evaluate_decision`),
    "worst_off" (stakeholder), "min_utility", "gini_utilities", "feasible" (lists: always; flows: no
    :func:`~fairarena.tourism.metrics.flow_feasibility` violation), "note"}``."""
    ev = evaluate_decision(d, stakeholders, decision, x, cands, attention)
    m = ev["metrics"]
    metrics = {"satisfaction": satisfaction(d, m, None, decision)}
    metrics.update({k: v for k, v in m.items() if isinstance(v, float)})
    utilities = {r["stakeholder"]: r["utility"] for r in ev["stakeholders"]}
    return {"rule": name, "kind": kind, "chosen": chosen, "metrics": metrics, "utilities": utilities,
            "worst_off": ev["evaluation"]["worst_off"]["name"], "min_utility": min(utilities.values()),
            "gini_utilities": ev["evaluation"]["gini_utilities"],
            "feasible": decision == "lists" or not flow_feasibility(d, x), "note": note}


def rule_rows_of(d: Destination, stakeholders: list[Stakeholder], decision: str, cands: Candidates,
                 rules: list[str], *, k: int = 5, seed: int = 0, attention: str = "position") -> list[dict[str, Any]]:
    """One :func:`decision_row` per rule of ``rules``, in that order (each rule applied to ``cands``)."""
    rows = []
    for r in rules:
        res = decide(d, stakeholders, decision, r, cands, k, seed)
        rows.append(decision_row(d, stakeholders, decision, r, "rule", res["chosen"], res["decision"], cands,
                                 attention, str(res["note"] or "")))
    return rows


def debate_note(deb: dict[str, Any]) -> str:
    """How a scripted debate ended, in words (the arena closing's own account when it gives one)."""
    head = f"{len(deb['rounds'])} rounds, " + ("every final the same" if deb["agreed"] else "the finals differ")
    how = deb.get("how") or deb.get("note") or ""
    return f"{head}; {deb['closing']}: {how}" if how else f"{head}; {deb['closing']} closed over the finals"


def compare(d: Destination, stakeholders: list[Stakeholder], decision: str, *, k: int = 5, rounds: int = 3,
            seed: int = 0, attention: str = "position", closing: str = "joint-draft") -> dict[str, Any]:
    """One row per rule (and one for the debate closed by ``closing``), each a :func:`decision_row`."""
    cands = candidates(d, stakeholders, decision, k, attention=attention)
    rows = rule_rows_of(d, stakeholders, decision, cands, rule_names(decision), k=k, seed=seed, attention=attention)
    if rounds > 0:
        deb = debate(d, stakeholders, cands, decision, closing, rounds, seed, k=k)
        if deb["decision"] is None:
            from fairarena.errors import SolverError
            raise SolverError(f"the scripted debate ended without a joint decision: {deb['error'] or deb['note']}")
        rows.append(decision_row(d, stakeholders, decision, f"debate({rounds} rounds, {closing})", "debate",
                                 deb["chosen"], deb["decision"], cands, attention, debate_note(deb)))
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
