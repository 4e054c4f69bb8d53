"""Reports of study statistics: tables (Markdown, LaTeX, CSV, HTML) and a self-contained HTML report.

* :mod:`fairarena.report.tables` — the :class:`Table` model (with optional :class:`Panel` blocks), its
  renderers and the builders of the triage-debate paper's Table 2 (means) and Table 3 (tests and effect
  sizes) in the paper's two-panel layout;
* :mod:`fairarena.report.figures` — matplotlib figures as inline SVG;
* :mod:`fairarena.report.html` — the offline HTML report (sections, tabs, per-item drill-down);
* :mod:`fairarena.report.sweep_figures` — the procedural-fairness sweep's Table 1 and its grouped bar
  charts (Figures 1 and 2).

Names are imported lazily (importing this package, or one of its modules, loads neither matplotlib nor
the statistics).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from fairarena.lazy import lazy_exports

if TYPE_CHECKING:
    from fairarena.report.tables import Table

_FIGURES = ("joint_vs_sides_figure", "means_figure", "prefix_ids", "slopegraph_figure", "svg_of",
            "utility_heatmap")
_HTML = ("DrillDown", "FigureBlock", "Item", "KeyValues", "Preformatted", "Report", "Section", "Text",
         "render_html", "write_html")
_TABLES = ("FORMATS", "PANEL_CHARS", "PAPER_PANELS", "RENDERERS", "Cell", "Panel", "Row", "Table", "column_chars",
           "fit_panels", "format_num", "format_p", "format_p_paper", "latex_escape", "panel_metrics", "render", "stars",
           "table2", "table3", "to_csv", "to_html", "to_latex", "to_markdown", "value_text")
_LAZY = {**{n: "fairarena.report.figures" for n in _FIGURES}, **{n: "fairarena.report.html" for n in _HTML},
         **{n: "fairarena.report.tables" for n in _TABLES}}


def write_tables(tables: Mapping[str, Table], out_dir: str | os.PathLike[str],
                 formats: Iterable[str] = ("markdown", "latex", "csv")) -> list[Path]:
    """Write every table in every format as ``out_dir/<name><suffix>`` (atomically); returns the paths.

    Formats are checked before anything is written."""
    from fairarena.fsutil import atomic_write_text
    from fairarena.report.tables import RENDERERS, render

    formats = [RENDERERS.check(f) for f in formats]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, t in tables.items():
        for f in formats:
            paths.append(atomic_write_text(out / f"{name}{RENDERERS.entry(f).suffix}", render(t, f)))
    return paths


__all__ = sorted([*_LAZY, "write_tables"])

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
