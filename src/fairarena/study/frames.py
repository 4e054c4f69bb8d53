"""A finished study folder as pandas DataFrames, for notebooks: :func:`load` (``fairarena.study.load``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["StudyData", "load", "table_frame"]


@dataclass(frozen=True)
class StudyData:
    """What :func:`load` returns.

    - ``results``: one row per debate (a council study: per debate and rule), the task's fields, status and
      the metrics (``fairarena.study.store.results_frame``);
    - ``statistics``: the long-form statistics, one row per cell (opponent x framework x metric; a council
      study: the debate against each rule), ``fairarena.stats.StudyStats.to_frame``;
    - ``tables``: each table of ``fairarena study tables`` by name (``table2``, ``table3``, ...), rows
      indexed by (group, row label), columns by the table's header levels, raw values (no rounding);
    - ``analysis``: the analysis object itself (``StudyAnalysis`` or ``CouncilAnalysis``), for the rest.
    """

    path: Path
    results: Any
    statistics: Any
    tables: dict[str, Any]
    analysis: Any


def table_frame(table: Any) -> Any:
    """A :class:`fairarena.report.tables.Table` as a DataFrame (raw cell values; missing -> NaN)."""
    import pandas as pd

    columns = pd.MultiIndex.from_tuples([tuple(c) for c in table.columns]) if any(len(c) > 1 for c in table.columns) \
        else pd.Index([c[0] for c in table.columns])
    index = pd.MultiIndex.from_tuples([(r.group, r.label) for r in table.rows],
                                      names=["group", table.index_header or "row"])
    values = [[c.value for c in r.cells] for r in table.rows]
    return pd.DataFrame(values, index=index, columns=columns)


def load(path: str | Path, *, test: str = "auto", holm: bool = False, allow_partial: bool = False) -> StudyData:
    """Read a finished study folder (``fairarena study run``'s ``--out``): its results, statistics and
    tables as DataFrames. ``test``, ``holm`` and ``allow_partial`` as for ``fairarena study stats``; a
    missing or unfinished folder is an :class:`fairarena.errors.InputError` naming it."""
    from fairarena.study.store import results_frame
    from fairarena.study.analysis import analyse_study, study_tables

    root = Path(path)
    an = analyse_study(root, test=test, holm=holm, allow_partial=allow_partial)
    return StudyData(root, results_frame(root), an.stats.to_frame(),
                     {name: table_frame(t) for name, t in study_tables(an).items()}, an)
