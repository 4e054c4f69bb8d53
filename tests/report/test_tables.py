"""Tables: pinned renderings of a small table, Table 2/3 values equal the statistics, CSV round trip."""

from __future__ import annotations

import csv
import io
import math
from html.parser import HTMLParser

import numpy as np
import pytest

from fairarena.errors import InputError
from fairarena.report import (Cell, Row, Table, format_p, render, stars, table2, table3, to_csv, to_html, to_latex,
                              to_markdown, write_tables)
from fairarena.stats import DebateRecord, compare_table

METRICS = {"esg": "higher", "gini": "lower"}


def small_table():
    return Table("T & 1", (("esg", "A"), ("esg", "B"), ("gini_x", "A")),
                 (Row("util", (Cell(1.5, "1.50", emphasis=True), Cell(2.0, "2.00", mark="**"), Cell(0.25, "0.25")),
                      group="g1"),
                  Row("care|x", (Cell(None, "n/a"), Cell(3.0, "3.00"), Cell(math.nan, "n/a")), group="g2")),
                 index_header="framework", notes=("* p < 0.05",))


def test_markdown_pinned():
    assert to_markdown(small_table()) == (
        "**T & 1**\n\n"
        "| framework | esg A | esg B | gini_x A |\n"
        "|---|---:|---:|---:|\n"
        "| **g1** | | | |\n"
        "| util | **1.50** | 2.00\\*\\* | 0.25 |\n"
        "| **g2** | | | |\n"
        "| care\\|x | n/a | 3.00 | n/a |\n\n"
        "\\* p < 0.05\n")


def test_latex_pinned():
    assert to_latex(small_table(), label="tab:x") == (
        "\\begin{table}[t]\n\\centering\n\\caption{T \\& 1}\n\\label{tab:x}\n"
        "\\begin{tabular}{lrrr}\n\\toprule\n"
        " & \\multicolumn{2}{c}{esg} & gini\\_x \\\\\n"
        "\\cmidrule(lr){2-3}\n"
        "framework & A & B & A \\\\\n\\midrule\n"
        "\\multicolumn{4}{l}{\\textit{g1}} \\\\\n"
        "util & \\textbf{1.50} & 2.00$^{**}$ & 0.25 \\\\\n"
        "\\midrule\n\\multicolumn{4}{l}{\\textit{g2}} \\\\\n"
        "care|x & n/a & 3.00 & n/a \\\\\n"
        "\\bottomrule\n\\end{tabular}\n"
        "\\par\\smallskip{\\footnotesize * p \\textless{} 0.05}\n\\end{table}\n")


def test_csv_keeps_raw_values_and_marks():
    rows = list(csv.reader(io.StringIO(to_csv(small_table()))))
    assert rows[0] == ["group", "framework", "esg:A", "esg:B", "esg:B mark", "gini_x:A"]
    assert rows[1] == ["g1", "util", "1.5", "2.0", "**", "0.25"]
    assert rows[2] == ["g2", "care|x", "", "3.0", "", ""]


class _Cells(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: dict[str, int] = {}
        self.spans: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for k, v in attrs:
            if k == "colspan":
                self.spans.append(v)


def test_html_table_structure_and_escaping():
    t = small_table()
    h = to_html(t, table_id="x")
    p = _Cells()
    p.feed(h)
    assert p.tags["td"] == 6 and p.tags["sup"] == 1 and p.tags["caption"] == 1
    assert p.spans == ["2", "4", "4"]         # esg over two columns; the two group rows span all columns
    assert "T &amp; 1" in h and "care|x" in h and '<td class="win"' in h


def test_rows_must_match_columns():
    with pytest.raises(InputError):
        Table("t", (("a",), ("b",)), (Row("r", (Cell(1, "1"),)),))


@pytest.mark.parametrize("p, mark", [(0.2, ""), (0.05, ""), (0.049, "*"), (0.01, "*"), (0.0099, "**"),
                                     (0.001, "**"), (0.0009, "***"), (math.nan, ""), (None, "")])
def test_stars(p, mark):
    assert stars(p) == mark


def test_format_p():
    assert format_p(0.0004) == "<0.001" and format_p(0.0123) == "0.012" and format_p(math.nan) == "n/a"


def records(seed=0, n=15):
    rng = np.random.default_rng(seed)
    out = []
    for opp in ("baseline", "adversarial"):
        for k, fw in enumerate(("utilitarian", "egalitarian")):
            for c in range(n):
                b = {m: float(rng.normal(10, 1)) for m in METRICS}
                a = {m: v + 1.5 * (k - 0.5) + float(rng.normal(0, 0.5)) for m, v in b.items()}
                out.append(DebateRecord(c, fw, opp, a, b, joint={m: a[m] / 2 + b[m] / 2 for m in METRICS}))
    return out


def test_table2_values_are_the_cell_means_and_winners_are_bold():
    st = compare_table(records(), METRICS)
    t = table2(st)
    assert t.columns == (("esg", "A"), ("esg", "opponent"), ("esg", "joint"),
                         ("gini", "A"), ("gini", "opponent"), ("gini", "joint"))
    assert [r.group for r in t.rows] == ["A vs baseline"] * 2 + ["A vs adversarial"] * 2
    for row, (opp, fw) in zip(t.rows, [(o, f) for o in st.opponents for f in st.frameworks]):
        for k, m in enumerate(st.metrics):
            c = st.cell(opp, fw, m)
            a, b, j = row.cells[3 * k: 3 * k + 3]
            assert (a.value, b.value, j.value) == (c.result.mean_a, c.result.mean_b, c.joint_mean)
            assert a.emphasis == (c.result.winner == "A") and b.emphasis == (c.result.winner == "B")
    # the design makes A better on esg (higher) for egalitarian and worse for utilitarian: both bold somewhere
    assert any(c.emphasis for r in t.rows for c in r.cells[0:1]) and any(c.emphasis for r in t.rows for c in r.cells[1:2])


def test_table3_marks_follow_the_deciding_p():
    raw = compare_table(records(), METRICS)
    t = table3(raw)
    assert t.columns[:2] == (("esg", "p"), ("esg", "d"))
    for row, (opp, fw) in zip(t.rows, [(o, f) for o in raw.opponents for f in raw.frameworks]):
        for k, m in enumerate(raw.metrics):
            r = raw.cell(opp, fw, m).result
            pc, dc = row.cells[2 * k], row.cells[2 * k + 1]
            assert pc.value == r.p and pc.mark == stars(r.p) and dc.value == r.cohens_d
            assert pc.text.endswith("(t)" if r.test == "ttest" else "(W)")
    holm = compare_table(records(), METRICS, correction="holm")
    t = table3(holm, effect="d_z")
    assert t.columns[:3] == (("esg", "p"), ("esg", "p Holm"), ("esg", "d_z"))
    r = holm.cell("baseline", "utilitarian", "esg").result
    assert t.rows[0].cells[0].value == r.p and t.rows[0].cells[1].value == r.p_adjusted
    assert t.rows[0].cells[1].mark == stars(r.p_adjusted) and t.rows[0].cells[2].value == r.d_z
    assert any(c.mark for row in t.rows for c in row.cells)
    with pytest.raises(InputError):
        table3(raw, effect="hedges_g")


def test_write_tables_all_formats(tmp_path):
    st = compare_table(records(n=6), METRICS)
    paths = write_tables({"table2": table2(st), "table3": table3(st)}, tmp_path, formats=("markdown", "latex", "csv"))
    assert sorted(p.name for p in paths) == ["table2.csv", "table2.md", "table2.tex", "table3.csv", "table3.md",
                                             "table3.tex"]
    assert (tmp_path / "table3.md").read_text() == render(table3(st), "markdown")
    with pytest.raises(InputError) as e:
        write_tables({"t": table2(st)}, tmp_path / "new", formats=("markdown", "docx"))
    assert e.value.field == "format" and not (tmp_path / "new").exists()


def test_a_table_without_rows_renders_in_every_format():
    # e.g. an emergence table of a study whose debates all failed or had no feasible joint
    from fairarena.report.tables import Table, to_csv, to_html, to_latex, to_markdown

    t = Table(title="empty", columns=(("a",), ("b",)), rows=(), index_header="metric")
    assert "<th scope=\"col\">a</th>" in to_html(t) and to_html(t).endswith("</table>")
    assert to_markdown(t).splitlines()[-1] == "|---|---:|---:|"
    assert "\\bottomrule" in to_latex(t)
    assert to_csv(t).splitlines() == ["group,metric,a,b"]
