"""The tourism section of ``fairarena demo``: one comparison of every rule on a seeded destination and one
conflict audit (tourist satisfaction vs exposure Gini, full-list vs position-based attention)."""

from __future__ import annotations

from pathlib import Path


def tourism_demo(out: Path, full: bool = False) -> None:
    from rich.table import Table

    from fairarena.cli_common import console
    from fairarena.tourism.conflict import audit_tourism, plot_frontier
    from fairarena.fsutil import atomic_write_json
    from fairarena.tourism.compare import compare, plot_compare
    from fairarena.tourism.destination import generate
    from fairarena.tourism.stakeholders import parse_stakeholders

    d = generate(1, 40)
    ss = parse_stakeholders("tourists:family,residents,local-business,destination")
    folder = Path(out) / "tourism"
    folder.mkdir(parents=True, exist_ok=True)
    res = compare(d, ss, "lists", k=5, rounds=3, seed=0)
    atomic_write_json(folder / "compare.json", res)
    plot_compare(res, folder / "compare.png")
    t = Table(title="tourism: every rule on a 40-POI destination (lists, k = 5; normalised utilities)")
    t.add_column("rule")
    for s in ss:
        t.add_column(s.name)
    for r in res["rows"]:
        t.add_row(r["rule"], *[f"{r['utilities'][s.name]:.2f}" for s in ss])
    console.print(t)
    audit = audit_tourism(d, "satisfaction", "exposure_gini", points=50, k=5)
    atomic_write_json(folder / "conflict.json", audit)
    plot_frontier(audit, str(folder / "frontier.png"))
    alt = audit["alternatives"][0]
    console.print(f"conflict audit, satisfaction vs exposure Gini: price of fairness {audit['price_of_fairness_x']:.2f} / "
                  f"{audit['price_of_fairness_y']:.2f} under full-list attention, {alt['price_of_fairness_x']:.2f} / "
                  f"{alt['price_of_fairness_y']:.2f} under position-based attention (budget 3): the conflict "
                  f"{alt['verdict']}. Files in {folder}")
