"""The sweep's results store: ``settings.parquet``, ``summary.json``, Table 1 (Markdown, LaTeX),
Figure 1 (PNG, SVG) and ``run.json`` (provenance). Everything is written into a temporary folder
and moved into ``out`` only when complete, so a failed run leaves nothing half-written. The tables and
the figure are drawn by :mod:`fairarena.report.sweep_figures` (its names are re-exported here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fairarena.fsutil import atomic_dir, atomic_write_json, atomic_write_text
from fairarena.report.sweep_figures import (NOTION_TITLES, POLICY_TITLES, grouped_bars,  # noqa: F401 (re-exported)
                                            table_latex, table_markdown)


def write_sweep(out: str | Path, frame: Any, summary: dict[str, Any], record: dict[str, Any]) -> list[Path]:
    """Write every artefact of a sweep into ``out`` (atomically, as a whole)."""
    out = Path(out)
    names = []
    with atomic_dir(out) as tmp:
        frame.to_parquet(tmp / "settings.parquet", index=False)
        atomic_write_json(tmp / "summary.json", summary)
        atomic_write_json(tmp / "run.json", record)
        atomic_write_text(tmp / "table1.md", table_markdown(summary["table"]))
        atomic_write_text(tmp / "table1.tex", table_latex(summary["table"]))
        grouped_bars(tmp / "figure1", summary["table"],
                     f"Mean score of each optimal policy over {summary['n_settings']:,} settings (± std)")
        names = sorted(p.relative_to(tmp) for p in tmp.rglob("*") if p.is_file())
    return [out / n for n in names]
