"""Tables: pinned renderings of a small table, Table 2/3 values equal the statistics, CSV round trip."""

from __future__ import annotations

import csv
import io
import math
from html.parser import HTMLParser

import numpy as np
import pytest

from fairarena.errors import InputError
from fairarena.report import (Cell, Row, Table, format_p, format_p_paper, render, stars, table2, table3, to_csv,
                              to_html, to_latex, to_markdown, write_tables)
from fairarena.stats import DebateRecord, compare_table

METRICS = {"esg": "max", "gini": "min"}


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
    # the paper's layout: per metric A, B (A vs baseline) and A, C (A vs adversary); the joint a panel
    assert t.columns[:4] == (("ESG (Util)", "A vs B", "A"), ("ESG (Util)", "A vs B", "B"),
                             ("ESG (Util)", "A vs C", "A"), ("ESG (Util)", "A vs C", "C"))
    assert [pn.title for pn in t.panels] == ["ESG (Util), Gini (Egal)", "Joint recommendation"]
    assert [r.label for r in t.rows] == ["Utilitarian", "Egalitarian"] and {r.group for r in t.rows} == {""}
    for row, fw in zip(t.rows, st.frameworks):
        for k, m in enumerate(st.metrics):
            for j, opp in enumerate(st.opponents):
                c = st.cell(opp, fw, m)
                a, b = row.cells[4 * k + 2 * j: 4 * k + 2 * j + 2]
                assert (a.value, b.value) == (c.result.mean_a, c.result.mean_b)
                assert a.emphasis == (c.result.winner == "A") and b.emphasis == (c.result.winner == "B")
                assert row.cells[8 + 2 * k + j].value == c.joint_mean
    # the design makes A better on esg (higher) for egalitarian and worse for utilitarian: both bold somewhere
    assert any(c.emphasis for r in t.rows for c in r.cells[0:1]) and any(c.emphasis for r in t.rows for c in r.cells[1:2])
    wide = table2(st, layout="wide", metric_titles={"esg": "esg", "gini": "gini"},
                  opponent_titles={"baseline": "baseline", "adversarial": "adversarial"})
    assert wide.columns == (("esg", "A"), ("esg", "opponent"), ("esg", "joint"),
                            ("gini", "A"), ("gini", "opponent"), ("gini", "joint"))
    assert [r.group for r in wide.rows] == ["A vs baseline"] * 2 + ["A vs adversarial"] * 2 and not wide.panels
    cols = table2(st, joint="columns").columns
    assert cols[:3] == (("ESG (Util)", "A vs B", "A"), ("ESG (Util)", "A vs B", "B"), ("ESG (Util)", "A vs B", "joint"))
    for bad in ({"layout": "tall"}, {"joint": "row"}, {"digits": "3"}):
        with pytest.raises(InputError):
            table2(st, **bad)


# the paper's Table 2 (Section 5), rows Utilitarian and Egalitarian: per metric A, B | A, C
PAPER_T2 = {
    "utilitarian": {"esg": (5.170, 5.052, 5.115, 4.772), "gini": (0.268, 0.313, 0.286, 0.388),
                    "rmg": (0.504, 0.418, 0.462, 0.233), "var": (0.0363, 0.0436, 0.0418, 0.0656),
                    "dw_esg": (0.642, 0.611, 0.620, 0.516), "vwci": (0.905, 0.841, 0.840, 0.531)},
    "egalitarian": {"esg": (5.107, 4.949, 5.035, 4.599), "gini": (0.264, 0.311, 0.288, 0.409),
                    "rmg": (0.673, 0.573, 0.615, 0.283), "var": (0.0224, 0.0346, 0.0302, 0.0656),
                    "dw_esg": (0.638, 0.599, 0.608, 0.479), "vwci": (0.946, 0.754, 0.851, 0.334)},
}
PAPER_DIRS = {"esg": "max", "gini": "min", "rmg": "max", "var": "min", "dw_esg": "max", "vwci": "max"}


def paper_stats(n=6):
    """Every cohort carries the paper's mean, so each cell's mean is the paper's number."""
    out = []
    for fw, vals in PAPER_T2.items():
        for j, opp in enumerate(("baseline", "adversarial")):
            for c in range(n):
                out.append(DebateRecord(c, fw, opp, {m: v[2 * j] for m, v in vals.items()},
                                        {m: v[2 * j + 1] for m, v in vals.items()},
                                        joint={m: v[2 * j] for m, v in vals.items()}))
    return compare_table(out, PAPER_DIRS, n_resamples=50)


def test_table2_reproduces_the_papers_layout_and_digits():
    t = table2(paper_stats())
    assert [pn.title for pn in t.panels] == ["ESG (Util), Gini (Egal), RMG (Rawls)",
                                             "Var (Liber), DW-ESG (Priori), VWCI (Care)", "Joint recommendation"]
    assert all(len(pn.columns) == 12 for pn in t.panels)          # 13 columns with the frameworks: as the paper
    for row, (fw, vals) in zip(t.rows, PAPER_T2.items()):
        for pn, metrics in zip(t.panels, (("esg", "gini", "rmg"), ("var", "dw_esg", "vwci"))):
            got = [row.cells[k].text for k in pn.columns]
            want = [f"{v:.4f}" if m == "var" else f"{v:.3f}" for m in metrics for v in vals[m]]
            assert got == want
    md = to_markdown(t)
    assert "| Framework | A | B | A | C | A | B | A | C | A | B | A | C |" in md
    assert "|  | A vs B |  | A vs C |  | A vs B |" in md and "0.0363" in md and "\n*Joint recommendation*\n" in md
    tex = to_latex(t)
    assert tex.count("\\begin{tabular}") == 3 and "\\multicolumn{4}{c}{Var (Liber)}" in tex
    # the HTML: one table per panel, none wider than the paper's 13 columns
    h = to_html(t, table_id="t2")
    assert h.count("<table") == 3 and 'id="t2-3"' in h
    for block in h.split("<table")[1:]:
        body_row = block.split("<tbody>")[1].split("</tr>")[0]
        assert body_row.count("<td") + body_row.count("<th") == 13
    rows = list(csv.reader(io.StringIO(to_csv(t))))
    assert len(rows[0]) == 2 + 24 + 12 and rows[0][2] == "ESG (Util):A vs B:A"
    assert float(rows[1][2]) == pytest.approx(5.17)                   # full precision, not the printed text


def test_table3_in_the_papers_layout():
    st = paper_stats()
    t = table3(st)
    assert [pn.title for pn in t.panels] == ["ESG (Util), Gini (Egal), RMG (Rawls)",
                                             "Var (Liber), DW-ESG (Priori), VWCI (Care)"]
    assert t.columns[:4] == (("ESG (Util)", "A vs B", "p"), ("ESG (Util)", "A vs B", "d"),
                             ("ESG (Util)", "A vs C", "p"), ("ESG (Util)", "A vs C", "d"))
    # constant non-zero differences: Wilcoxon (normality not testable), significant at n = 6
    r = st.cell("baseline", "utilitarian", "esg").result
    p = t.rows[0].cells[0]
    assert p.value == r.p and p.text == format_p_paper(r.p) and p.text.startswith(".") and p.mark == "*"
    assert t.rows[0].cells[1].value == r.cohens_d
    assert "| Framework | p | d | p | d |" in to_markdown(t)
    assert "(W)" in table3(st, show_test=True).rows[0].cells[0].text
    mags = table3(st, signed=False)
    assert all(c.value >= 0 for row in mags.rows for c in row.cells[1::2] if c.value is not None)


def test_table3_marks_follow_the_deciding_p():
    raw = compare_table(records(), METRICS)
    t = table3(raw, layout="wide", marks="levels")
    assert t.columns[:2] == (("ESG (Util)", "p"), ("ESG (Util)", "d"))
    for row, (opp, fw) in zip(t.rows, [(o, f) for o in raw.opponents for f in raw.frameworks]):
        for k, m in enumerate(raw.metrics):
            r = raw.cell(opp, fw, m).result
            pc, dc = row.cells[2 * k], row.cells[2 * k + 1]
            assert pc.value == r.p and pc.mark == stars(r.p) and dc.value == r.cohens_d
            assert pc.text.endswith("(t)" if r.test == "ttest" else "(W)")
    paper = table3(raw)                                     # the paper's single star
    assert {c.mark for row in paper.rows for c in row.cells} <= {"", "*"}
    holm = compare_table(records(), METRICS, correction="holm")
    t = table3(holm, effect="d_z", layout="wide", marks="levels")
    assert t.columns[:3] == (("ESG (Util)", "p"), ("ESG (Util)", "p Holm"), ("ESG (Util)", "d_z"))
    r = holm.cell("baseline", "utilitarian", "esg").result
    assert t.rows[0].cells[0].value == r.p and t.rows[0].cells[1].value == r.p_adjusted
    assert t.rows[0].cells[1].mark == stars(r.p_adjusted) and t.rows[0].cells[2].value == r.d_z
    assert any(c.mark for row in t.rows for c in row.cells)
    tp = table3(holm)
    assert tp.columns[0] == ("ESG (Util)", "A vs B", "p Holm") and tp.rows[0].cells[0].value == r.p_adjusted
    for bad in ({"effect": "hedges_g"}, {"marks": "stars"}, {"layout": "long"}):
        with pytest.raises(InputError):
            table3(raw, **bad)


def test_format_p_paper():
    assert [format_p_paper(p) for p in (0.0004, 0.003, 0.0216, 1.0, math.nan, None)] == \
        ["<.001", ".003", ".022", "1.000", "n/a", "n/a"]


def test_undefined_values_print_undef_and_are_counted():
    # nursing Gini undefined (NaN) for A in every baseline/utilitarian cohort and for two opponents' finals
    recs = []
    for opp in ("baseline", "adversarial"):
        for fw in ("utilitarian", "egalitarian"):
            for c in range(8):
                a = {"esg": 5.0 + c, "gini": math.nan if (opp, fw) == ("baseline", "utilitarian") else 0.2 + c / 50}
                b = {"esg": 4.0 + c, "gini": math.nan if c < 2 else 0.3}
                j = {"esg": 4.5, "gini": math.nan if c == 0 else 0.25}
                recs.append(DebateRecord(c, fw, opp, a, b, joint=j, opp_feasible=(opp, fw) != ("adversarial", "egalitarian")))
    st = compare_table(recs, METRICS, n_resamples=50)
    undef = st.cell("baseline", "utilitarian", "gini")
    assert (undef.result.n, undef.result.n_missing, undef.result.test) == (0, 8, "none")
    some = st.cell("baseline", "egalitarian", "gini")
    assert (some.result.n, some.result.n_missing, some.joint_n, some.joint_n_missing) == (6, 2, 7, 1)
    none = st.cell("adversarial", "egalitarian", "gini")                # no feasible pair at all
    assert (none.result.n, none.result.n_excluded, none.result.n_missing) == (0, 8, 0)
    for t in (table2(st), table3(st), table2(st, layout="wide"), table3(st, layout="wide")):
        texts = {(r.label, k): c.text for r in t.rows for k, c in enumerate(r.cells)}
        assert not any("nan" in x.lower() for x in texts.values())
        for fmt in ("markdown", "latex", "csv", "html"):
            assert "nan" not in render(t, fmt).lower().replace("nannot", "")
        assert any("Gini (Egal) 12 of 24 pairs (joint: 4 values)" in n for n in t.notes), t.notes
    t2 = table2(st)
    row = t2.rows[0]                                                    # utilitarian
    assert [row.cells[k].text for k in (4, 5)] == ["undef.", "undef."]   # gini, A vs B: A, B
    t3 = table3(st)
    assert t3.rows[1].cells[6].text == "n/a" and t3.rows[0].cells[4].text == "undef."


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
    assert '<th scope="col" class="leaf" tabindex="0" data-col="0">a</th>' in to_html(t) and to_html(t).endswith("</table>")
    assert to_markdown(t).splitlines()[-1] == "|---|---:|---:|"
    assert "\\bottomrule" in to_latex(t)
    assert to_csv(t).splitlines() == ["group,metric,a,b"]
