"""The ``make demo`` section of participatory budgeting: one real election, Warsaw-Wesoła 2023 (shipped), by
age group: every rule, the aggregation rules over the groups' proposals, the scripted debate and the city's
outcome (``fairarena pb compare --file ... --groups age``), with the JSON and the plot in ``OUT/pb/``."""

from __future__ import annotations

from pathlib import Path


def pb_demo(out: Path, full: bool = False) -> None:
    from fairarena.cli_common import console
    from fairarena.fsutil import atomic_write_json
    from fairarena.pb.compare import compare, plot, table
    from fairarena.pb.domain import example_path

    folder = Path(out) / "pb"
    folder.mkdir(parents=True, exist_ok=True)
    result = compare(example_path("wesola"), "age")
    console.print(table(result), highlight=False, soft_wrap=True, markup=False)
    atomic_write_json(folder / "wesola_2023_age.json", result)
    plot(result, folder / "wesola_2023_age.png")
    console.print(f"written: {folder / 'wesola_2023_age.json'}, {folder / 'wesola_2023_age.png'} "
                  f"(the same as: fairarena pb compare --file {example_path('wesola')} --groups age --plot F.png)",
                  highlight=False, soft_wrap=True, markup=False)
