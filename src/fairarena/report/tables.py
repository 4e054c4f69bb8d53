"""Tables of study statistics, rendered as Markdown, LaTeX (booktabs), CSV and HTML.

One small :class:`Table` model (grouped rows, multi-level column headers, cells carrying a value, its
display text, significance marks and emphasis) and four renderers; two builders make the triage-debate
paper's tables from :class:`fairarena.stats.StudyStats`:

* :func:`table2` — means per framework (rows, grouped by pairing) x metric x side (Agent A, its
  opponent, and the joint recommendation when the study has one); the significant winner is emphasised;
* :func:`table3` — p-value (with significance marks and the test that ran) and effect size per cell.

Significance marks: ``*`` p < 0.05, ``**`` p < 0.01, ``***`` p < 0.001, applied to the deciding p
(Holm-adjusted when the statistics were corrected, else raw), and only when that p is below the
study's alpha.
"""

from __future__ import annotations

import csv
import html
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fairarena.errors import InputError
from fairarena.registry import Registry
from fairarena.stats import StudyStats

MARK_LEVELS = ((0.001, "***"), (0.01, "**"), (0.05, "*"))
TEST_LETTERS = {"ttest": "t", "wilcoxon": "W", "none": "-"}


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
class Table:
    """Rows (optionally grouped) x columns; each column is a tuple of header levels, top first."""

    title: str
    columns: tuple[tuple[str, ...], ...]
    rows: tuple[Row, ...]
    index_header: str = ""
    notes: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        depth = {len(c) for c in self.columns}
        if len(depth) > 1:
            raise InputError("columns", self.columns, "header tuples of one depth")
        for r in self.rows:
            if len(r.cells) != len(self.columns):
                raise InputError(f"row {r.label!r}", len(r.cells), f"{len(self.columns)} cells")

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

def _title(titles: Mapping[str, str] | None, key: str) -> str:
    return (titles or {}).get(key, key)


def table2(st: StudyStats, *, digits: int = 2, joint: bool | None = None,
           metric_titles: Mapping[str, str] | None = None, framework_titles: Mapping[str, str] | None = None,
           opponent_titles: Mapping[str, str] | None = None, title: str = "Table 2: mean per framework, metric and side") -> Table:
    """Means of A, its opponent (and the joint recommendation) per framework x metric, grouped by pairing."""
    if joint is None:
        joint = any(c.joint_n for c in st.cells)
    sides = ["A", "opponent"] + (["joint"] if joint else [])
    columns = tuple((_title(metric_titles, m), s) for m in st.metrics for s in sides)
    rows = []
    for opp in st.opponents:
        for fw in st.frameworks:
            cells = []
            for m in st.metrics:
                c = st.cell(opp, fw, m)
                r = c.result
                tip = (f"n={r.n}, excluded={r.n_excluded}, missing={r.n_missing}; "
                       f"{r.test} p={format_p(r.p_decision)}; winner {r.winner}")
                cells.append(Cell(r.mean_a, format_num(r.mean_a, digits), emphasis=r.winner == "A",
                                  title=f"95% CI [{format_num(r.ci_a[0], digits)}, {format_num(r.ci_a[1], digits)}]; " + tip))
                cells.append(Cell(r.mean_b, format_num(r.mean_b, digits), emphasis=r.winner == "B",
                                  title=f"95% CI [{format_num(r.ci_b[0], digits)}, {format_num(r.ci_b[1], digits)}]; " + tip))
                if joint:
                    cells.append(Cell(c.joint_mean, format_num(c.joint_mean, digits),
                                      title=f"n={c.joint_n}; 95% CI [{format_num(c.joint_ci[0], digits)}, "
                                            f"{format_num(c.joint_ci[1], digits)}]"))
            rows.append(Row(_title(framework_titles, fw), tuple(cells), group=f"A vs {_title(opponent_titles, opp)}"))
    arrows = ", ".join(f"{_title(metric_titles, m)} {'higher' if d == 'higher' else 'lower'} is better"
                       for m, d in st.directions.items())
    notes = (f"Bold: the side that wins the paired comparison (alpha {st.settings.get('alpha', 0.05)}"
             f"{', Holm-adjusted' if st.settings.get('correction', 'none') != 'none' else ''}).",
             f"Directions: {arrows}.",
             "Means over cohorts whose two allocations are feasible; hover a cell for its 95% bootstrap interval.")
    return Table(title, columns, tuple(rows), index_header="framework", notes=notes,
                 meta={"kind": "table2", "sides": sides})


def table3(st: StudyStats, *, effect: str = "cohens_d", digits: int = 2,
           metric_titles: Mapping[str, str] | None = None, framework_titles: Mapping[str, str] | None = None,
           opponent_titles: Mapping[str, str] | None = None,
           title: str = "Table 3: paired tests per framework and metric") -> Table:
    """p-value (marks, test letter) and effect size (``"cohens_d"`` pooled or ``"d_z"``) per cell.

    When the statistics were corrected, both the raw p and the Holm-adjusted p are columns; the marks
    and the emphasised effect size follow the adjusted one."""
    if effect not in ("cohens_d", "d_z"):
        raise InputError("effect", effect, "cohens_d or d_z")
    eff_name = "d" if effect == "cohens_d" else "d_z"
    corrected = st.settings.get("correction", "none") != "none"
    heads = ("p", "p Holm", eff_name) if corrected else ("p", eff_name)
    columns = tuple((_title(metric_titles, m), h) for m in st.metrics for h in heads)
    rows = []
    for opp in st.opponents:
        for fw in st.frameworks:
            cells = []
            for m in st.metrics:
                r = st.cell(opp, fw, m).result
                p = r.p_decision
                mark = stars(p, r.alpha)
                letter = TEST_LETTERS.get(r.test, r.test)
                raw = f"raw p={format_p(r.p)}" + (f", Holm p={format_p(r.p_adjusted)}" if r.p_adjusted is not None else "")
                tip = (f"{r.test} (requested {r.test_requested}); {raw}; n={r.n}, excluded={r.n_excluded}; "
                       f"Shapiro-Wilk p={format_p(r.normality_p)}; d={format_num(r.cohens_d, 3)}, "
                       f"d_z={format_num(r.d_z, 3)}; winner {r.winner}")
                if corrected:
                    cells.append(Cell(r.p, f"{format_p(r.p)} ({letter})", title=tip))
                    cells.append(Cell(p, format_p(p), mark=mark, title=tip))
                else:
                    cells.append(Cell(p, f"{format_p(p)} ({letter})", mark=mark, title=tip))
                e = getattr(r, effect)
                cells.append(Cell(e, format_num(e, digits, signed=True), emphasis=bool(mark), title=tip))
            rows.append(Row(_title(framework_titles, fw), tuple(cells), group=f"A vs {_title(opponent_titles, opp)}"))
    corr = st.settings.get("correction", "none")
    notes = ("* p < 0.05, ** p < 0.01, *** p < 0.001" + (" (Holm-adjusted over the family "
             f"'{st.settings.get('family', 'all')}')" if corr != "none" else " (uncorrected)") + ".",
             "(t) paired t-test, (W) Wilcoxon signed-rank, chosen per cell by Shapiro-Wilk on the differences."
             if st.settings.get("test", "auto") == "auto" else f"Test forced: {st.settings.get('test')}.",
             ("d: Cohen's d with the pooled SD of both sides" if effect == "cohens_d" else
              "d_z: mean paired difference / SD of the differences") + ", A minus opponent (sign is not direction).")
    return Table(title, columns, tuple(rows), index_header="framework", notes=notes,
                 meta={"kind": "table3", "effect": effect})


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


def to_markdown(t: Table) -> str:
    """GitHub-flavoured Markdown: header levels joined by a space; groups as bold rows; marks escaped."""
    head = [t.index_header] + [" ".join(c) for c in t.columns]
    lines = [f"**{_md_escape(t.title)}**", "", "| " + " | ".join(_md_escape(h) for h in head) + " |",
             "|" + "---|" + "---:|" * len(t.columns)]
    grouped = len(t.groups) > 1 or (len(t.groups) == 1 and t.groups[0] != "")   # a table may have no rows
    for g in t.groups:
        if grouped:
            lines.append(f"| **{_md_escape(g)}** |" + " |" * len(t.columns))
        for r in (r for r in t.rows if r.group == g):
            cells = []
            for c in r.cells:
                s = _md_escape(c.text) + _md_escape(c.mark)
                cells.append(f"**{s}**" if c.emphasis else s)
            lines.append("| " + " | ".join([_md_escape(r.label)] + cells) + " |")
    if t.notes:
        lines += [""] + [_md_escape(n) for n in t.notes]
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
                  "<": r"\textless{}", ">": r"\textgreater{}"}


def latex_escape(s: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in s)


def to_latex(t: Table, *, label: str = "") -> str:
    """A booktabs ``table`` environment; grouped header levels as ``\\multicolumn`` with ``\\cmidrule``."""
    n = len(t.columns)
    out = [r"\begin{table}[t]", r"\centering", rf"\caption{{{latex_escape(t.title)}}}"]
    if label:
        out.append(rf"\label{{{label}}}")
    out += [rf"\begin{{tabular}}{{l{'r' * n}}}", r"\toprule"]
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
    if t.notes:
        out.append(r"\par\smallskip{\footnotesize " + " ".join(latex_escape(x) for x in t.notes) + "}")
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def to_csv(t: Table) -> str:
    """Machine-readable: one line per row with group and label; raw values at full precision; a
    ``<column> mark`` column beside every column that carries significance marks."""
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


def to_html(t: Table, *, table_id: str = "") -> str:
    """An HTML ``<table>`` (no styles inline; the report's stylesheet styles ``table.fa``)."""
    e = html.escape
    idattr = f' id="{e(table_id)}"' if table_id else ""
    out = [f'<table class="fa"{idattr}>', f"<caption>{e(t.title)}</caption>", "<thead>"]
    for level in range(t.depth):
        labels = [c[level] for c in t.columns]
        spans = _spans(labels) if level < t.depth - 1 else [(lab, 1) for lab in labels]
        first = (f'<th rowspan="{t.depth}" scope="col">{e(t.index_header)}</th>' if level == 0 else "")
        ths = "".join(f'<th colspan="{k}" scope="colgroup">{e(lab)}</th>' if k > 1 else f'<th scope="col">{e(lab)}</th>'
                      for lab, k in spans)
        out.append(f"<tr>{first}{ths}</tr>")
    out.append("</thead>")
    grouped = len(t.groups) > 1 or (len(t.groups) == 1 and t.groups[0] != "")   # a table may have no rows
    for g in t.groups:
        out.append("<tbody>")
        if grouped:
            out.append(f'<tr class="group"><th colspan="{len(t.columns) + 1}" scope="rowgroup">{e(g)}</th></tr>')
        for r in (r for r in t.rows if r.group == g):
            tds = []
            for c in r.cells:
                cls = ' class="win"' if c.emphasis else ""
                tip = f' title="{e(c.title)}"' if c.title else ""
                mark = f"<sup>{e(c.mark)}</sup>" if c.mark else ""
                tds.append(f"<td{cls}{tip}>{e(c.text)}{mark}</td>")
            out.append(f'<tr><th scope="row">{e(r.label)}</th>{"".join(tds)}</tr>')
        out.append("</tbody>")
    out.append("</table>")
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
