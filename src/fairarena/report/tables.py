"""Tables of study statistics, rendered as Markdown, LaTeX (booktabs), CSV and HTML.

One small :class:`Table` model (grouped rows, multi-level column headers, cells carrying a value, its
display text, significance marks and emphasis, and optional :class:`Panel` blocks of columns) and four
renderers; two builders make the triage-debate paper's tables from :class:`fairarena.stats.StudyStats`:

* :func:`table2` — means per framework x metric x pairing x side. The default ``layout="paper"`` is the
  paper's Table 2 (Chaki, Gourru & Velcin, arXiv 2604.13705, Section 5): two panels of three metrics
  (ESG, Gini, RMG | Var, DW-ESG, VWCI), per metric the columns A, B (A vs the baseline) and A, C (A vs the
  adversary), one row per framework; the joint recommendation is a third panel (``joint="panel"``) or a
  further column per pairing (``joint="columns"``). Var is printed to 4 decimals, the others to 3, as
  the paper. ``layout="wide"`` is the earlier single table (rows grouped by pairing, A | opponent | joint
  per metric). The significant winner is emphasised;
* :func:`table3` — p and effect size per framework x metric x pairing, in the same two panels as the
  paper's Table 3 (its Appendix D.3): per metric ``A vs B: p, d`` and ``A vs C: p, d``, with ``*`` when
  the deciding p is below alpha (``marks="levels"``: ``*``/``**``/``***``).

A panelled table is one table: CSV writes it wide (every column, one line per row); Markdown, LaTeX and
HTML write one block per panel, so no block is wider than the paper's 13 columns.

Undefined values: a mean over no pair is printed ``undef.`` when the cell's pairs were all dropped
because a value was undefined (NaN, e.g. the nursing Gini of an allocation that gives nobody nursing),
``n/a`` when there was no feasible pair at all; a note under the table says how many pairs each metric
lost to undefined values.

Significance marks (:func:`stars`): ``*`` p < 0.05, ``**`` p < 0.01, ``***`` p < 0.001, applied to the
deciding p (Holm-adjusted when the statistics were corrected, else raw), and only when that p is below
the study's alpha.
"""

from __future__ import annotations

import csv
import html
import io
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fairarena.errors import InputError
from fairarena.registry import Registry
from fairarena.stats import StudyStats, better_word

MARK_LEVELS = ((0.001, "***"), (0.01, "**"), (0.05, "*"))
TEST_LETTERS = {"ttest": "t", "wilcoxon": "W", "none": "-"}
TEST_NAMES = {"ttest": "paired t-test", "wilcoxon": "Wilcoxon signed-rank", "none": "no test (no pair left)"}


@dataclass(frozen=True)
class Cell:
    """One table cell: the raw value (for CSV), its display text, marks, emphasis and a tooltip."""

    value: float | str | None
    text: str
    mark: str = ""
    emphasis: bool = False
    title: str = ""


@dataclass(frozen=True)
class Row:
    label: str
    cells: tuple[Cell, ...]
    group: str = ""


@dataclass(frozen=True)
class Panel:
    """A block of a table's columns (by index) shown together, beside the row labels."""

    title: str
    columns: tuple[int, ...]


@dataclass(frozen=True)
class Table:
    """Rows (optionally grouped) x columns; each column is a tuple of header levels, top first.

    ``panels`` (optional) split the columns into blocks that Markdown, LaTeX and HTML render one after
    the other (each with the row labels); CSV ignores them and writes every column."""

    title: str
    columns: tuple[tuple[str, ...], ...]
    rows: tuple[Row, ...]
    index_header: str = ""
    notes: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    panels: tuple[Panel, ...] = ()

    def __post_init__(self) -> None:
        depth = {len(c) for c in self.columns}
        if len(depth) > 1:
            raise InputError("columns", self.columns, "header tuples of one depth")
        for r in self.rows:
            if len(r.cells) != len(self.columns):
                raise InputError(f"row {r.label!r}", len(r.cells), f"{len(self.columns)} cells")
        for pn in self.panels:
            if not pn.columns or any(not 0 <= k < len(self.columns) for k in pn.columns):
                raise InputError(f"panel {pn.title!r}", pn.columns, f"column indices in 0..{len(self.columns) - 1}")

    def panel_tables(self) -> list[Table]:
        """One table per panel (its columns, every row; titled by the panel), or ``[self]`` without panels."""
        if not self.panels:
            return [self]
        return [Table(pn.title, tuple(self.columns[k] for k in pn.columns),
                      tuple(Row(r.label, tuple(r.cells[k] for k in pn.columns), r.group) for r in self.rows),
                      index_header=self.index_header) for pn in self.panels]

    @property
    def depth(self) -> int:
        return len(self.columns[0]) if self.columns else 1

    @property
    def groups(self) -> list[str]:
        return list(dict.fromkeys(r.group for r in self.rows))


def stars(p: float | None, alpha: float = 0.05) -> str:
    """Significance marks for ``p`` (empty when p is missing or not below ``alpha``)."""
    if p is None or not math.isfinite(p) or p >= alpha:
        return ""
    for level, mark in MARK_LEVELS:
        if p < level:
            return mark
    return ""


def format_p(p: float | None) -> str:
    if p is None or not math.isfinite(p):
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def format_num(x: float | None, digits: int = 2, signed: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return ("+" if x > 0 else "-") + "inf"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


# ------------------------------------------------------------------------------------------- builders

#: the panels of the paper's Tables 2 and 3 (Section 5 and Appendix D.3): three metrics each
PAPER_PANELS: tuple[tuple[str, ...], ...] = (("esg", "gini", "rmg"), ("var", "dw_esg", "vwci"))
#: the paper's column titles (metric and the framework it belongs to)
PAPER_METRIC_TITLES: dict[str, str] = {"esg": "ESG (Util)", "gini": "Gini (Egal)", "rmg": "RMG (Rawls)",
                                       "var": "Var (Liber)", "dw_esg": "DW-ESG (Priori)", "vwci": "VWCI (Care)",
                                       "gini_cnss": "Gini(CNSS)"}
#: the paper's row titles
PAPER_FRAMEWORK_TITLES: dict[str, str] = {"utilitarian": "Utilitarian", "egalitarian": "Egalitarian",
                                          "rawlsian": "Rawlsian", "prioritarian": "Prioritarian",
                                          "care": "Care Ethics", "libertarian": "Libertarian"}
#: the paper's letters of the two pairings: agent B (baseline) and agent C (adversary)
PAPER_OPPONENT_LETTERS: dict[str, str] = {"baseline": "B", "adversarial": "C"}
#: decimals per metric in Table 2 (the paper prints Var to 4, every other mean to 3)
PAPER_DIGITS: dict[str, int] = {"var": 4}
DEFAULT_DIGITS = 3
LAYOUTS = ("paper", "wide")
JOINT_MODES = ("panel", "columns", "none")
MARK_STYLES = ("paper", "levels")
UNDEFINED = "undef."


def _title(titles: Mapping[str, str] | None, key: str) -> str:
    return (titles or {}).get(key, key)


def _titles(given: Mapping[str, str] | None, paper: Mapping[str, str]) -> dict[str, str]:
    return {**paper, **(given or {})}


def _digits_of(digits: int | Mapping[str, int] | None) -> Any:
    """metric -> decimals: an int for every metric, a mapping over :data:`PAPER_DIGITS`, or the paper's."""
    if isinstance(digits, int) and not isinstance(digits, bool):
        return lambda m: digits
    if digits is not None and not isinstance(digits, Mapping):
        raise InputError("digits", digits, "an integer or a mapping metric -> integer")
    table = {**PAPER_DIGITS, **(digits or {})}
    return lambda m: table.get(m, DEFAULT_DIGITS)


def _joint_mode(joint: bool | str | None, st: StudyStats) -> str:
    if joint is None:
        return "panel" if any(c.joint_n or c.joint_n_missing for c in st.cells) else "none"
    if joint is True:
        return "panel"
    if joint is False:
        return "none"
    if joint not in JOINT_MODES:
        raise InputError("joint", joint, "one of " + ", ".join(JOINT_MODES) + " (or True / False)")
    return joint


def _check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise InputError("layout", layout, "one of " + ", ".join(LAYOUTS))


def panel_metrics(metrics: Sequence[str], panels: Sequence[Sequence[str]] = PAPER_PANELS) -> list[tuple[str, ...]]:
    """The metrics of a study in panels: each given panel's metrics that the study has (in the panel's
    order), then the study's other metrics three to a panel; empty panels dropped."""
    out = [tuple(m for m in grp if m in metrics) for grp in panels]
    listed = {m for grp in panels for m in grp}
    rest = [m for m in metrics if m not in listed]
    out += [tuple(rest[k:k + 3]) for k in range(0, len(rest), 3)]
    return [grp for grp in out if grp]


def value_text(x: float | None, digits: int, *, undefined: bool = False, signed: bool = False) -> str:
    """A number, or ``undef.`` (every value behind it was undefined) / ``n/a`` (nothing to show)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return UNDEFINED if undefined else "n/a"
    return format_num(x, digits, signed=signed)


def format_p_paper(p: float | None) -> str:
    """p as the paper's Table 3 prints it: three decimals without the leading zero (``.003``), ``<.001``."""
    if p is None or not math.isfinite(p):
        return "n/a"
    return "<.001" if p < 0.001 else f"{p:.3f}".removeprefix("0")


def _all_undefined(r: Any) -> bool:
    return r.n == 0 and r.n_missing > 0


def _mean_cell(c: Any, side: str, digits: int) -> Cell:
    """The mean of one side (``"A"``, ``"opponent"`` or ``"joint"``) of one statistics cell."""
    r = c.result
    if side == "joint":
        return Cell(c.joint_mean, value_text(c.joint_mean, digits, undefined=c.joint_n == 0 and c.joint_n_missing > 0),
                    title=f"n={c.joint_n}, undefined={c.joint_n_missing}; 95% CI [{format_num(c.joint_ci[0], digits)}, "
                          f"{format_num(c.joint_ci[1], digits)}]")
    tip = (f"n={r.n}, excluded={r.n_excluded}, undefined={r.n_missing}; "
           f"{r.test} p={format_p(r.p_decision)}; winner {r.winner}")
    mean, ci, who = (r.mean_a, r.ci_a, "A") if side == "A" else (r.mean_b, r.ci_b, "B")
    return Cell(mean, value_text(mean, digits, undefined=_all_undefined(r)), emphasis=r.winner == who,
                title=f"95% CI [{format_num(ci[0], digits)}, {format_num(ci[1], digits)}]; " + tip)


def undefined_note(st: StudyStats, metric_titles: Mapping[str, str] | None = None) -> str:
    """One line: per metric, how many pairs (and joint values) were dropped as undefined; empty if none."""
    parts = []
    for m in st.metrics:
        cells = [c for c in st.cells if c.metric == m]
        pairs = sum(c.result.n_missing for c in cells)
        joint = sum(c.joint_n_missing for c in cells)
        if pairs or joint:
            used = sum(c.result.n + c.result.n_missing for c in cells)
            parts.append(f"{_title(metric_titles, m)} {pairs} of {used} pairs"
                         + (f" (joint: {joint} values)" if joint else ""))
    if not parts:
        return ""
    return ("Undefined values dropped (e.g. the nursing Gini of an allocation that gives nobody nursing): "
            + "; ".join(parts) + f". {UNDEFINED}: every pair of the cell undefined; n/a: no feasible pair.")


def _significance_note(st: StudyStats) -> str:
    return (f"Bold: the side that wins the paired comparison (alpha {st.settings.get('alpha', 0.05)}"
            f"{', Holm-adjusted' if st.settings.get('correction', 'none') != 'none' else ''}).")


def table2(st: StudyStats, *, layout: str = "paper", digits: int | Mapping[str, int] | None = None,
           joint: bool | str | None = None, panels: Sequence[Sequence[str]] = PAPER_PANELS,
           metric_titles: Mapping[str, str] | None = None, framework_titles: Mapping[str, str] | None = None,
           opponent_titles: Mapping[str, str] | None = None,
           title: str = "Table 2: mean per framework, metric and side") -> Table:
    """Means of A, its opponent (and the joint recommendation) per framework x metric x pairing.

    ``layout="paper"``: the paper's panels (see the module docstring); ``"wide"``: one table, rows grouped
    by pairing. ``digits``: decimals (an int, or a mapping metric -> int over the paper's: Var 4, others 3).
    ``joint``: ``"panel"`` (a further panel), ``"columns"`` (a further column per pairing), ``"none"``;
    default: a panel when the study has joint recommendations. Titles default to the paper's (metrics
    ``ESG (Util)``..., frameworks ``Care Ethics``..., opponents ``B``/``C``)."""
    _check_layout(layout)
    jmode = _joint_mode(joint, st)
    dig = _digits_of(digits)
    mt = _titles(metric_titles, PAPER_METRIC_TITLES)
    ft = _titles(framework_titles, PAPER_FRAMEWORK_TITLES)
    ot = _titles(opponent_titles, PAPER_OPPONENT_LETTERS)
    arrows = ", ".join(f"{_title(mt, m)} {better_word(d)} is better"
                       for m, d in st.directions.items() if m in st.metrics)
    notes = [_significance_note(st), f"Directions: {arrows}.",
             "Means over cohorts whose two allocations are feasible; hover a cell for its 95% bootstrap interval."]
    if layout == "paper":
        notes.insert(1, "A vs " + ", A vs ".join(ot.get(o, o) for o in st.opponents) + ": Agent A aligned to the "
                     "row's framework against " + ", ".join(f"{ot.get(o, o)} ({o})" for o in st.opponents) + ".")
    und = undefined_note(st, mt)
    if und:
        notes.append(und)
    if layout == "wide":
        sides = ["A", "opponent"] + (["joint"] if jmode != "none" else [])
        columns = tuple((_title(mt, m), s) for m in st.metrics for s in sides)
        rows = [Row(_title(ft, fw), tuple(_mean_cell(st.cell(opp, fw, m), s, dig(m)) for m in st.metrics for s in sides),
                    group=f"A vs {_title(ot, opp)}") for opp in st.opponents for fw in st.frameworks]
        return Table(title, columns, tuple(rows), index_header="framework", notes=tuple(notes),
                     meta={"kind": "table2", "layout": "wide", "sides": sides, "dims": WIDE_DIMS})
    groups = panel_metrics(st.metrics, panels)
    spec: list[tuple[str, str, str]] = []          # (metric, opponent, side) per column
    cols: list[tuple[str, str, str]] = []
    panel_list: list[Panel] = []
    for grp in groups:
        start = len(spec)
        for m in grp:
            for o in st.opponents:
                for side in ("A", "opponent") + (("joint",) if jmode == "columns" else ()):
                    spec.append((m, o, side))
                    cols.append((_title(mt, m), f"A vs {_title(ot, o)}",
                                 {"A": "A", "opponent": _title(ot, o), "joint": "joint"}[side]))
        panel_list.append(Panel(", ".join(_title(mt, m) for m in grp), tuple(range(start, len(spec)))))
    if jmode == "panel":                    # six metrics a panel (two of the paper's): at most 13 columns
        flat = [m for grp in groups for m in grp]
        for k in range(0, len(flat), 6):
            start = len(spec)
            for m in flat[k:k + 6]:
                for o in st.opponents:
                    spec.append((m, o, "joint"))
                    cols.append((_title(mt, m), f"A vs {_title(ot, o)}", "joint"))
            panel_list.append(Panel("Joint recommendation" + (" (continued)" if k else ""),
                                    tuple(range(start, len(spec)))))
    rows = tuple(Row(_title(ft, fw), tuple(_mean_cell(st.cell(o, fw, m), side, dig(m)) for m, o, side in spec))
                 for fw in st.frameworks)
    return Table(title, tuple(cols), rows, index_header="Framework", notes=tuple(notes),
                 meta={"kind": "table2", "layout": "paper", "joint": jmode, "dims": PAPER_DIMS}, panels=tuple(panel_list))


def _p_cell(r: Any, p: float, text: str, mark: str, tip: str) -> Cell:
    return Cell(p, UNDEFINED if _all_undefined(r) else text, mark=mark, title=tip)


def table3(st: StudyStats, *, layout: str = "paper", effect: str = "cohens_d", digits: int = 2,
           marks: str = "paper", signed: bool = True, show_test: bool = False,
           panels: Sequence[Sequence[str]] = PAPER_PANELS,
           metric_titles: Mapping[str, str] | None = None, framework_titles: Mapping[str, str] | None = None,
           opponent_titles: Mapping[str, str] | None = None,
           title: str = "Table 3: paired tests per framework and metric") -> Table:
    """p-value (marks) and effect size (``"cohens_d"`` pooled or ``"d_z"``) per framework x metric x pairing.

    ``layout="paper"``: the paper's two panels, per metric ``A vs B: p, d`` and ``A vs C: p, d``; the p
    is the deciding one (Holm-adjusted when the statistics were corrected; raw p in the tooltip and in
    the statistics' JSON); ``marks="paper"`` puts ``*`` on p below alpha, ``"levels"`` ``*``/``**``/``***``;
    ``signed=False`` prints |d| (the paper's d values are all positive); ``show_test`` adds ``(t)``/``(W)``.
    ``layout="wide"``: rows grouped by pairing, the test letter beside p, and when corrected both the raw
    and the Holm-adjusted p as columns."""
    _check_layout(layout)
    if effect not in ("cohens_d", "d_z"):
        raise InputError("effect", effect, "cohens_d or d_z")
    if marks not in MARK_STYLES:
        raise InputError("marks", marks, "one of " + ", ".join(MARK_STYLES))
    eff_name = "d" if effect == "cohens_d" else "d_z"
    corrected = st.settings.get("correction", "none") != "none"
    mt = _titles(metric_titles, PAPER_METRIC_TITLES)
    ft = _titles(framework_titles, PAPER_FRAMEWORK_TITLES)
    ot = _titles(opponent_titles, PAPER_OPPONENT_LETTERS)

    def tip_of(r: Any) -> str:
        raw = f"raw p={format_p(r.p)}" + (f", Holm p={format_p(r.p_adjusted)}" if r.p_adjusted is not None else "")
        return (f"{r.test} (requested {r.test_requested}); {raw}; n={r.n}, excluded={r.n_excluded}, "
                f"undefined={r.n_missing}; Shapiro-Wilk p={format_p(r.normality_p)}; d={format_num(r.cohens_d, 3)}, "
                f"d_z={format_num(r.d_z, 3)}; winner {r.winner}")

    def mark_of(r: Any) -> str:
        p = r.p_decision
        if marks == "levels":
            return stars(p, r.alpha)
        return "*" if p is not None and math.isfinite(p) and p < r.alpha else ""

    def effect_cell(r: Any, mark: str, tip: str) -> Cell:
        e = getattr(r, effect)
        if not signed and e is not None and not math.isnan(e):
            e = abs(e)
        return Cell(e, UNDEFINED if _all_undefined(r) else format_num(e, digits, signed=signed),
                    emphasis=bool(mark), title=tip)

    counts: dict[str, int] = {}
    for c in st.cells:
        counts[c.result.test] = counts.get(c.result.test, 0) + 1
    corr = st.settings.get("correction", "none")
    tests_line = ("Tests: " + ", ".join(f"{TEST_NAMES.get(t, t)} in {n} cell{'s' if n > 1 else ''}"
                                        for t, n in counts.items())
                  + (" (chosen per cell by Shapiro-Wilk on the differences)." if st.settings.get("test", "auto") == "auto"
                     else f" (forced: {st.settings.get('test')})."))
    mark_line = "* p < alpha" if marks == "paper" else "* p < 0.05, ** p < 0.01, *** p < 0.001 (and below alpha)"
    notes = [mark_line + (f" (Holm-adjusted over the family '{st.settings.get('family', 'all')}')" if corr != "none"
                          else " (uncorrected)") + f"; alpha {st.settings.get('alpha', 0.05)}.",
             tests_line,
             ("d: Cohen's d with the pooled SD of both sides" if effect == "cohens_d" else
              "d_z: mean paired difference / SD of the differences")
             + (", A minus opponent (sign is not direction)." if signed else ", magnitude (|A minus opponent|).")]
    und = undefined_note(st, mt)
    if und:
        notes.append(und)

    if layout == "wide":
        heads = ("p", "p Holm", eff_name) if corrected else ("p", eff_name)
        columns = tuple((_title(mt, m), h) for m in st.metrics for h in heads)
        rows = []
        for opp in st.opponents:
            for fw in st.frameworks:
                cells = []
                for m in st.metrics:
                    r = st.cell(opp, fw, m).result
                    mark, tip = mark_of(r), tip_of(r)
                    letter = TEST_LETTERS.get(r.test, r.test)
                    if corrected:
                        cells.append(_p_cell(r, r.p, f"{format_p(r.p)} ({letter})", "", tip))
                        cells.append(_p_cell(r, r.p_decision, format_p(r.p_decision), mark, tip))
                    else:
                        cells.append(_p_cell(r, r.p_decision, f"{format_p(r.p_decision)} ({letter})", mark, tip))
                    cells.append(effect_cell(r, mark, tip))
                rows.append(Row(_title(ft, fw), tuple(cells), group=f"A vs {_title(ot, opp)}"))
        return Table(title, columns, tuple(rows), index_header="framework", notes=tuple(notes),
                     meta={"kind": "table3", "layout": "wide", "effect": effect, "dims": WIDE_DIMS})

    p_head = "p Holm" if corrected else "p"
    groups = panel_metrics(st.metrics, panels)
    spec: list[tuple[str, str, str]] = []
    cols: list[tuple[str, str, str]] = []
    panel_list: list[Panel] = []
    for grp in groups:
        start = len(spec)
        for m in grp:
            for o in st.opponents:
                for what, head in (("p", p_head), ("effect", eff_name)):
                    spec.append((m, o, what))
                    cols.append((_title(mt, m), f"A vs {_title(ot, o)}", head))
        panel_list.append(Panel(", ".join(_title(mt, m) for m in grp), tuple(range(start, len(spec)))))
    rows = []
    for fw in st.frameworks:
        cells = []
        for m, o, what in spec:
            r = st.cell(o, fw, m).result
            mark, tip = mark_of(r), tip_of(r)
            if what == "p":
                letter = f" ({TEST_LETTERS.get(r.test, r.test)})" if show_test else ""
                cells.append(_p_cell(r, r.p_decision, format_p_paper(r.p_decision) + letter, mark, tip))
            else:
                cells.append(effect_cell(r, mark, tip))
        rows.append(Row(_title(ft, fw), tuple(cells)))
    return Table(title, tuple(cols), tuple(rows), index_header="Framework", notes=tuple(notes),
                 meta={"kind": "table3", "layout": "paper", "effect": effect, "dims": PAPER_DIMS}, panels=tuple(panel_list))


# ------------------------------------------------------------------------------------------- renderers

def _spans(labels: Sequence[str]) -> list[tuple[str, int]]:
    """Runs of equal consecutive labels: [(label, length), ...]."""
    out: list[tuple[str, int]] = []
    for lab in labels:
        if out and out[-1][0] == lab:
            out[-1] = (lab, out[-1][1] + 1)
        else:
            out.append((lab, 1))
    return out


def _md_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*")


def _md_row(r: Row) -> str:
    cells = []
    for c in r.cells:
        s = _md_escape(c.text) + _md_escape(c.mark)
        cells.append(f"**{s}**" if c.emphasis else s)
    return "| " + " | ".join([_md_escape(r.label)] + cells) + " |"


def _md_body(t: Table) -> list[str]:
    lines = []
    grouped = len(t.groups) > 1 or (len(t.groups) == 1 and t.groups[0] != "")   # a table may have no rows
    for g in t.groups:
        if grouped:
            lines.append(f"| **{_md_escape(g)}** |" + " |" * len(t.columns))
        lines += [_md_row(r) for r in t.rows if r.group == g]
    return lines


def _md_stacked_head(t: Table) -> list[str]:
    """A multi-level header as GitHub Markdown allows it (one header row): the top level in the header
    row, each lower level as a row under it; a label is written once, at the start of its span."""
    out = []
    for level in range(t.depth):
        labels = [c[level] for c in t.columns]
        if level < t.depth - 1:
            shown = []
            for lab, k in _spans(labels):
                shown += [lab] + [""] * (k - 1)
        else:
            shown = labels
        first = t.index_header if level == t.depth - 1 else ""
        row = "| " + " | ".join(_md_escape(x) for x in [first, *shown]) + " |"
        out.append(row)
        if level == 0:
            out.append("|" + "---|" + "---:|" * len(t.columns))
    return out


def to_markdown(t: Table) -> str:
    """GitHub-flavoured Markdown: header levels joined by a space; groups as bold rows; marks escaped.

    A table with panels: one Markdown table per panel under its italic title, the header levels
    stacked (the top level in the header row, the lower levels as the first rows)."""
    lines = [f"**{_md_escape(t.title)}**", ""]
    if t.panels:
        for k, sub in enumerate(t.panel_tables()):
            lines += ([""] if k else []) + [f"*{_md_escape(sub.title)}*", ""] + _md_stacked_head(sub) + _md_body(sub)
    else:
        head = [t.index_header] + [" ".join(c) for c in t.columns]
        lines += ["| " + " | ".join(_md_escape(h) for h in head) + " |", "|" + "---|" + "---:|" * len(t.columns)]
        lines += _md_body(t)
    if t.notes:
        lines += [""] + [_md_escape(n) for n in t.notes]
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
                  "<": r"\textless{}", ">": r"\textgreater{}"}


def latex_escape(s: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in s)


def _latex_tabular(t: Table) -> list[str]:
    n = len(t.columns)
    out = [rf"\begin{{tabular}}{{l{'r' * n}}}", r"\toprule"]
    for level in range(t.depth):
        labels = [c[level] for c in t.columns]
        spans = _spans(labels) if level < t.depth - 1 else [(lab, 1) for lab in labels]
        first = latex_escape(t.index_header) if level == t.depth - 1 else ""
        parts, rules, col = [first], [], 2
        for lab, k in spans:
            parts.append(rf"\multicolumn{{{k}}}{{c}}{{{latex_escape(lab)}}}" if k > 1 else latex_escape(lab))
            if k > 1:
                rules.append(rf"\cmidrule(lr){{{col}-{col + k - 1}}}")
            col += k
        out.append(" & ".join(parts) + r" \\")
        if rules:
            out.append(" ".join(rules))
    out.append(r"\midrule")
    grouped = len(t.groups) > 1 or (len(t.groups) == 1 and t.groups[0] != "")   # a table may have no rows
    for gi, g in enumerate(t.groups):
        if grouped:
            if gi:
                out.append(r"\midrule")
            out.append(rf"\multicolumn{{{n + 1}}}{{l}}{{\textit{{{latex_escape(g)}}}}} \\")
        for r in (r for r in t.rows if r.group == g):
            cells = []
            for c in r.cells:
                s = latex_escape(c.text) + (rf"$^{{{c.mark}}}$" if c.mark else "")
                cells.append(rf"\textbf{{{s}}}" if c.emphasis else s)
            out.append(" & ".join([latex_escape(r.label)] + cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    return out


def to_latex(t: Table, *, label: str = "") -> str:
    """A booktabs ``table`` environment; grouped header levels as ``\\multicolumn`` with ``\\cmidrule``.
    A table with panels: one ``tabular`` per panel, each under its italic title, in the one float."""
    out = [r"\begin{table}[t]", r"\centering", rf"\caption{{{latex_escape(t.title)}}}"]
    if label:
        out.append(rf"\label{{{label}}}")
    if t.panels:
        for k, sub in enumerate(t.panel_tables()):
            out += ([r"\par\medskip"] if k else []) + [rf"\textit{{{latex_escape(sub.title)}}}\par\smallskip"]
            out += _latex_tabular(sub)
    else:
        out += _latex_tabular(t)
    if t.notes:
        out.append(r"\par\smallskip{\footnotesize " + " ".join(latex_escape(x) for x in t.notes) + "}")
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def to_csv(t: Table) -> str:
    """Machine-readable: one line per row with group and label; raw values at full precision; a
    ``<column> mark`` column beside every column that carries significance marks. Panels are a layout
    of the same columns: the CSV has every column, header levels joined with ``:``."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    marked = [any(r.cells[k].mark for r in t.rows) for k in range(len(t.columns))]
    head = ["group", t.index_header or "row"]
    for c, mk in zip(t.columns, marked):
        name = ":".join(c)
        head += [name] + ([f"{name} mark"] if mk else [])
    w.writerow(head)
    for r in t.rows:
        line: list[Any] = [r.group, r.label]
        for c, mk in zip(r.cells, marked):
            v = c.value
            line.append("" if v is None or (isinstance(v, float) and math.isnan(v)) else
                        (repr(float(v)) if isinstance(v, (int, float)) else v))
            if mk:
                line.append(c.mark)
        w.writerow(line)
    return buf.getvalue()


PAPER_DIMS = {"columns": ("metric", "opponent", ""), "rows": "framework", "groups": "opponent"}
"""What Table 2 and 3's header levels, row labels and row groups are (the HTML report's filters)."""
WIDE_DIMS = {"columns": ("metric", ""), "rows": "framework", "groups": "opponent"}


def _dims(t: Table) -> dict[str, Any]:
    d = t.meta.get("dims") if isinstance(t.meta, Mapping) else None
    return dict(d) if isinstance(d, Mapping) else {}


def table_dim_values(t: Table) -> dict[str, list[str]]:
    """``{dimension: [label, ...]}`` of a table whose ``meta["dims"]`` names its header levels (``columns``:
    one name per level, ``""`` for none), row labels (``rows``) and row groups (``groups``); empty without."""
    d = _dims(t)
    out: dict[str, list[str]] = {}

    def add(dim: str, v: str) -> None:
        if dim and v:
            out.setdefault(dim, [])
            if v not in out[dim]:
                out[dim].append(v)
    for level, dim in enumerate(d.get("columns", ())[:t.depth]):
        for c in t.columns:
            add(dim, c[level])
    for r in t.rows:
        add(d.get("rows", ""), r.label)
        add(d.get("groups", ""), r.group)
    return out


_NUMBER = re.compile(r"^\s*([<>]?[-+\u2212]?[\d.,]+(e[-+]?\d+)?%?|undef\.|)\s*$", re.I)   # a number, "<0.001", "undef.", ""


_TDS: dict[Cell, str] = {}     # a cell's <td> by the cell (equal cells, e.g. 0.00 in many proposals: one <td>)


def _td_of(c: Cell) -> str:
    e = html.escape
    text_cell = (c.value is None or isinstance(c.value, str)) and not _NUMBER.match(c.text)
    classes = (["win"] if c.emphasis else []) + (["txt"] if text_cell else []) + \
        (["long"] if text_cell and len(c.text) > 24 else [])
    cls = f' class="{" ".join(classes)}"' if classes else ""
    tip = f' title="{e(c.title)}"' if c.title else ""
    mark = f"<sup>{e(c.mark)}</sup>" if c.mark else ""
    return f"<td{cls}{tip}>{e(c.text)}{mark}</td>"


def _td(c: Cell) -> str:
    """A cell's ``<td>``, remembered: equal cells (same value, text, marks) render the same; a cell whose
    value cannot be hashed is rendered each time."""
    try:
        hit = _TDS.get(c)
    except TypeError:
        return _td_of(c)
    if hit is None:
        if len(_TDS) > 200_000:
            _TDS.clear()
        hit = _TDS[c] = _td_of(c)
    return hit


def _html_table(t: Table, table_id: str, caption: str, dims: Mapping[str, Any] | None = None) -> list[str]:
    e = html.escape
    dims = dims or {}
    col_dims = tuple(dims.get("columns", ()))[:t.depth]

    def fattr(dim: str, v: str) -> str:
        return f' data-f-{re.sub("[^a-z0-9]", "", dim.lower())}="{e(v)}"' if dim and v else ""
    idattr = f' id="{e(table_id)}"' if table_id else ""
    dattr = ' data-dims="1"' if dims else ""
    out = [f'<table class="fa"{idattr}{dattr}>', f"<caption>{e(caption)}</caption>", "<thead>"]
    for level in range(t.depth):
        labels = [c[level] for c in t.columns]
        leaf = level == t.depth - 1
        spans = _spans(labels) if not leaf else [(lab, 1) for lab in labels]
        first = (f'<th rowspan="{t.depth}" scope="col" class="ix" tabindex="0">{e(t.index_header)}</th>' if level == 0 else "")
        ths, start = [], 0
        for lab, k in spans:
            if leaf:
                fa = "".join(fattr(dim, t.columns[start][lv]) for lv, dim in enumerate(col_dims))
                ths.append(f'<th scope="col" class="leaf" tabindex="0" data-col="{start}"{fa}>{e(lab)}</th>')
            else:
                ths.append(f'<th colspan="{k}" scope="colgroup" class="span" data-c0="{start}" data-n="{k}">{e(lab)}</th>'
                           if k > 1 else f'<th scope="col" class="span" data-c0="{start}" data-n="1">{e(lab)}</th>')
            start += k
        out.append(f"<tr>{first}{''.join(ths)}</tr>")
    out.append("</thead>")
    groups = t.groups
    grouped = len(groups) > 1 or (len(groups) == 1 and groups[0] != "")   # a table may have no rows
    for g in groups:
        out.append("<tbody>")
        gattr = fattr(dims.get("groups", ""), g)
        if grouped:
            out.append(f'<tr class="group"{gattr}><th colspan="{len(t.columns) + 1}" scope="rowgroup">{e(g)}</th></tr>')
        for r in (t.rows if len(groups) == 1 else (r for r in t.rows if r.group == g)):
            tds = [_td(c) for c in r.cells]
            out.append(f'<tr{fattr(dims.get("rows", ""), r.label)}{gattr}><th scope="row">{e(r.label)}</th>{"".join(tds)}</tr>')
        out.append("</tbody>")
    out.append("</table>")
    return out


def to_html(t: Table, *, table_id: str = "") -> str:
    """An HTML ``<table>`` (no styles inline; the report's stylesheet styles ``table.fa``). A table with
    panels: one ``<table>`` per panel (ids ``<table_id>-1``, ``-2``, ...; the first caption carries the
    title), so a report shows the paper's 13-column blocks rather than one wide table."""
    e = html.escape
    dims = _dims(t)
    if t.panels:
        out = []
        for k, sub in enumerate(t.panel_tables(), 1):
            cap = f"{t.title} — {sub.title}" if k == 1 else sub.title
            out += _html_table(sub, f"{table_id}-{k}" if table_id else "", cap, dims)
    else:
        out = _html_table(t, table_id, t.title, dims)
    if t.notes:
        out.append('<p class="notes">' + "<br>".join(e(n) for n in t.notes) + "</p>")
    return "\n".join(out)


RENDERERS: Registry[Any] = Registry("table format", field="format")
RENDERERS.add("markdown", to_markdown, title="Markdown", suffix=".md")
RENDERERS.add("latex", to_latex, title="LaTeX (booktabs)", suffix=".tex")
RENDERERS.add("csv", to_csv, title="CSV", suffix=".csv")
RENDERERS.add("html", to_html, title="HTML table", suffix=".html")
FORMATS: tuple[str, ...] = RENDERERS.names()


def render(t: Table, fmt: str) -> str:
    """``t`` in one of :data:`FORMATS` (an unknown format is an InputError listing the choices)."""
    return RENDERERS.get(fmt)(t)


PANEL_CHARS = 175
"""The width of one panel of a wide table (:func:`fit_panels`; the council tables), in characters of its
headers and cells (the row labels included): a panel fits the report's page at 1,400 px (13 px type) and a printed page. CSV writes every
column in one table; Markdown, LaTeX and HTML one block per panel."""


def fit_panels(cols: Sequence[tuple[str, ...]], rows: Sequence[Any], groups: Sequence[tuple[str, Any]],
               budget: int = PANEL_CHARS) -> tuple[Panel, ...]:
    """Panels of a table's columns: each ``(title, column indices)`` group cut into as few blocks as fit
    ``budget`` characters with the row labels (each column as wide as :func:`column_chars`), the blocks of
    about equal width; a block after a group's first titled "... (continued)"."""
    room = max(budget - max((len(r.label) for r in rows), default=0) - 3, 10)

    def cut(idx: list[int], width: dict[int, int], limit: int) -> list[list[int]]:
        blocks: list[list[int]] = [[]]
        used = 0
        for k in idx:
            if blocks[-1] and used + width[k] > limit:
                blocks.append([])
                used = 0
            blocks[-1].append(k)
            used += width[k]
        return blocks

    out = []
    for title, idx in groups:
        idx = list(idx)
        if not idx:
            continue
        width = {k: column_chars(cols, rows, k) for k in idx}
        n = len(cut(idx, width, room))
        limit = -(-sum(width.values()) // n)            # the narrowest blocks that are still n of them
        while len(blocks := cut(idx, width, limit)) > n:
            limit += 1
        out += [Panel(title + (" (continued)" if j else ""), tuple(b)) for j, b in enumerate(blocks)]
    return tuple(out)


def column_chars(cols: Sequence[tuple[str, ...]], rows: Sequence[Any], k: int) -> int:
    """Column ``k``'s width in characters: its longest cell (with its marks), its leaf header or a header above
    it that spans it alone (a header spanning several columns is shared), plus 3 for padding."""
    levels = len(cols[k])
    own = [cols[k][-1]] + [cols[k][lv] for lv in range(levels - 1)
                           if (k == 0 or cols[k - 1][:lv + 1] != cols[k][:lv + 1])
                           and (k + 1 == len(cols) or cols[k + 1][:lv + 1] != cols[k][:lv + 1])]
    cells = [len(r.cells[k].text) + len(r.cells[k].mark or "") for r in rows]
    return max(1, *(len(h) for h in own), *cells) + 3
