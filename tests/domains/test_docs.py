"""docs/domains.md: the school-seat domain and the examples that use it run as written."""

from __future__ import annotations

import re
import sys

from fairarena.domains import check

from .conftest import DOC, doc_blocks, write_seats


def test_the_seats_section_runs_as_written(tmp_path, monkeypatch):
    blocks = doc_blocks()
    assert len(blocks) == 3   # the domain file, the check, the debate
    write_seats(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace: dict = {}
    try:
        for block in blocks[1:]:
            exec(compile(block, str(DOC), "exec"), namespace)    # noqa: S102 - the document's own examples
    finally:
        sys.modules.pop("seats", None)
    assert namespace["report"].ok
    joint = namespace["res"].final["joint"]["allocation"]
    seats = {s: sum(1 for a in joint.values() if a.get(s)) for s in ("North", "South")}
    assert namespace["res"].status == "ok" and seats["North"] <= 2 and seats["South"] <= 1
    assert all(sum(a.values()) <= 1 for a in joint.values())


def test_the_shown_check_output_is_what_the_kit_prints(seats_module):
    text = DOC.read_text(encoding="utf-8")
    shown = text[text.index("$ PYTHONPATH=. fairarena domain check seats:SEATS"):]
    shown = shown[: shown.index("```")]
    rows = re.findall(r"^(\S+)\s+(pass|fail|skip)\s+[\d.]+\s+(.*)$", shown, flags=re.M)
    report = check(seats_module.SEATS)
    assert [(n, s) for n, s, _ in rows] == [(r.name, r.status) for r in report.results]
    for (_, _, detail), r in zip(rows, report.results):   # the document cuts long details at "..."
        assert r.detail.startswith(detail.removesuffix("...").rstrip().rstrip(",")), (detail, r.detail)
    assert shown.strip().splitlines()[-1] == report.table().splitlines()[-1]
