"""``fairarena demo`` section: one council cohort aggregated by every rule (the council, docs/aggregation.md)."""

from __future__ import annotations

import time
from pathlib import Path


def council_demo(out: Path, full: bool = False) -> None:
    """Six agents (one per framework) on the standard cohort of seed 0; every rule's decision with each
    framework's metric and each stakeholder's utility; files and the plot in ``OUT/council``."""
    from fairarena.aggregation.cli import print_council
    from fairarena.aggregation.council import council
    from fairarena.cli_common import console
    from fairarena.fsutil import atomic_write_json

    t = time.perf_counter()
    res = council(0, "standard")
    folder = Path(out) / "council"
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_json(folder / "council.json", res.to_dict())
    res.plot(folder / "council.png")
    print_council(res)
    console.print(f"every rule on one cohort in {time.perf_counter() - t:.1f} s; "
                  f"files and plot in {folder}; the same from the command line: "
                  "fairarena aggregate council --seed 0 --out DIR")
