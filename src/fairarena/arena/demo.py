"""``fairarena demo`` section: the council — six agents, one aligned to each framework, deliberate on one
cohort, and the same cohort is aggregated by every rule; the debate's joint decision is one more row of
the table (docs/aggregation.md, docs/arena.md)."""

from __future__ import annotations

import time
from pathlib import Path


def council_demo(out: Path, full: bool = False) -> None:
    """The standard cohort of seed 0: every rule's decision and the six-agent scripted debate's joint, with
    each framework's metric and each stakeholder's utility; files and the plot in ``OUT/council``."""
    from fairarena.aggregation.cli import print_council
    from fairarena.arena.council import council_debate
    from fairarena.cli_common import console
    from fairarena.fsutil import atomic_write_json

    t = time.perf_counter()
    folder = Path(out) / "council"
    folder.mkdir(parents=True, exist_ok=True)
    run = council_debate(0, "standard", closing="joint-draft", transcript=folder / "debate.jsonl")
    res = run.council
    atomic_write_json(folder / "council.json", res.to_dict())
    res.plot(folder / "council.png")
    print_council(res)
    row = "the row 'debate' is the six-agent debate's joint" if run.joint_in_table else \
        "the six-agent debate ended without a feasible joint (no 'debate' row)"
    console.print(f"every rule and the debate on one cohort in {time.perf_counter() - t:.1f} s ({row}); "
                  f"files, transcript and plot in {folder}; from the command line: "
                  "fairarena aggregate council --seed 0 --out DIR")
