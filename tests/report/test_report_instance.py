"""A debate's instance and transcript as report blocks (no browser): the domain's rendering's Markdown tables
become tables cell for cell, the problem's arrays are the domain's own, a proposal table holds the proposal,
and the compressed body inflates to the blocks' HTML."""

from __future__ import annotations

import base64
import gzip
import html
import re

import pytest

from fairarena.report import Item, Report, Section, Table, Text, render_html
from fairarena.report.html import DrillDown
from fairarena.study.analysis import _markdown_blocks, instance_blocks, transcript_blocks


def test_markdown_tables_become_tables_cell_for_cell():
    text = ("Intro line:\n| id | a | b |\n|---|---:|---|\n| x | 1 | two words |\n| y | 3 |\n"
            "After the table.\n\nSecond paragraph.")
    blocks = _markdown_blocks(text, "items")
    assert [type(b).__name__ for b in blocks] == ["Table", "Text", "Text"]
    t = blocks[0]
    assert t.title == "Intro line" and t.index_header == "id" and t.columns == (("a",), ("b",))
    assert [(r.label, [c.text for c in r.cells]) for r in t.rows] == [("x", ["1", "two words"]), ("y", ["3", ""])]
    assert blocks[1].text == "After the table." and blocks[2].text == "Second paragraph."


def test_a_triage_instance_is_the_domains_cohort_and_problem():
    from fairarena.domains import resolve

    dom = resolve("triage")
    inst = dom.sample(0)
    header = {"type": "header", "domain": "triage", "cohort": dom.to_dict(inst)}
    cache: dict = {}
    blocks = instance_blocks(header, cache)
    assert instance_blocks(header, cache) is blocks                  # one cohort: built once
    patients, problem = [b for b in blocks if isinstance(b, Table)]
    prob = dom.problem(inst)
    assert [r.label for r in patients.rows] == list(prob.ids)
    assert patients.title.startswith("Patients")
    # the problem table: capacity and each patient's need per resource, as the problem holds them
    for j, row in enumerate(problem.rows):
        assert row.label.split(" ")[0] == prob.resources[j]
        assert row.cells[0].value == pytest.approx(float(prob.capacity[j]))
        assert [c.value for c in row.cells[1:]] == pytest.approx([float(prob.need[i][j]) for i in range(prob.n)])
    assert any("Capacities" in b.text for b in blocks if isinstance(b, Text))


def test_an_instance_that_cannot_be_rebuilt_says_so():
    (b,) = instance_blocks({"domain": "no-such-domain", "cohort": {}})
    assert isinstance(b, Text) and "could not be rebuilt through domain 'no-such-domain'" in b.text
    (b,) = instance_blocks({"domain": "triage"})
    assert b.text == "The transcript records no instance."


def test_proposal_tables_hold_the_proposal_and_repeated_ones_are_shared():
    alloc = {"P1": {"ICU": 1, "MedA": 2.5}, "P2": {"MedA": 0.125}}
    entries = [{"type": "header", "domain": "triage"},
               {"type": "turn", "agent": "A", "phase": "round", "round": 1, "proposal": {"allocation": alloc,
                "justification": "because"}, "metrics": {"esg": 1.5}, "valid": True},
               {"type": "closing", "rule": "joint-draft", "allocation": alloc, "metrics": {"esg": 1.5}, "feasible": True}]
    cache: dict = {}
    blocks = transcript_blocks(entries, cache)
    tables = [b for b in blocks if isinstance(b, Table)]
    assert [t.title for t in tables] == ["A round 1: proposal", "joint recommendation (joint-draft)"]
    t = tables[0]
    assert t.index_header == "patient" and t.columns == (("ICU",), ("MedA",))
    assert [(r.label, [c.text for c in r.cells]) for r in t.rows] == [("P1", ["1.00", "2.50"]), ("P2", ["", "0.12"])]
    assert transcript_blocks(entries, cache)[0] is tables[0]          # the same proposal: one table object
    assert any(isinstance(b, Text) and b.text == "justification: because" for b in blocks)


def test_a_compressed_body_inflates_to_the_blocks_html_and_states_its_size():
    lazy = (Text("<b>escaped</b>"), Table("t", (("a",),), ()))
    items = [Item("one", lazy=lazy, tags={"cohort": "10"}, values={"joint esg": 1.5}),
             Item("two", lazy=lazy, tags={"cohort": "9"})]
    page = render_html(Report("r", [Section("D", [DrillDown(items, filters=("cohort",))])]))
    zs = re.findall(r'data-z="([^"]+)"', page)
    assert len(zs) == 2 and zs[0] == zs[1]
    body = gzip.decompress(base64.b64decode(zs[0])).decode()
    assert "&lt;b&gt;escaped&lt;/b&gt;" in body and "<b>escaped" not in body
    assert body.count("<table") == 1 and ' id="' not in body              # no ids: a body may be shown twice
    m = re.search(r'class="dd-size">2 bodies embedded gzip-compressed: ([\d.]+) kB \(uncompressed ([\d.]+) kB\)', page)
    assert m and float(m.group(1)) == pytest.approx(2 * len(zs[0]) / 1e3, abs=0.05)
    assert float(m.group(2)) == pytest.approx(2 * len(body.encode()) / 1e3, abs=0.05)
    # the cohort filter lists values in numeric order; the sort offers the item's numbers
    assert page.index('<option value="9">') < page.index('<option value="10">')
    assert 'data-v-jointesg="1.5"' in page and '<option value="-jointesg">joint esg descending</option>' in page
    assert html.escape("default-src 'none'") in page or "default-src 'none'" in page


def test_proposal_tables_with_shared_cells_render_as_without():
    """Cells shared across a report's proposal tables (by type and value) give the same HTML as fresh
    cells; -0.0 (equal to 0.0) keeps its own text, 1 and 1.0 their own cells."""
    from fairarena.report.tables import to_html
    from fairarena.study.analysis import _allocation_tables

    allocs = [{"P1": {"beds": 0.0, "icu": 1}, "P2": {"beds": -0.0, "icu": 1.0}},
              {"P1": {"beds": 2.5, "icu": float("nan")}, "P2": {"beds": 0.0, "icu": None}},
              {"P1": {"beds": -0.0, "icu": 1}, "P2": {"beds": 1e-12, "icu": 2}}]
    memo: dict = {}
    for a in allocs:
        shared = _allocation_tables(a, "t", "patient", memo)
        fresh = _allocation_tables(a, "t", "patient")
        assert [to_html(t) for t in shared] == [to_html(t) for t in fresh]
    html = to_html(_allocation_tables(allocs[0], "t", "patient", memo)[0])
    assert html.count("<td>0.00</td>") == 1 and html.count("<td>-0.00</td>") == 1 and html.count("<td>1.00</td>") == 2
    assert memo[(int, 1)].value is 1 and type(memo[(float, 1.0)].value) is float
