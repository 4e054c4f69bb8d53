"""Robust parsing (form) and strict validation (meaning) of proposals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fairarena.arena.parsing import PROPOSAL_SCHEMA, extract_json, parse_proposal, proposal_schema
from fairarena.triage import sample_cohort


@pytest.fixture(scope="module")
def problem():
    return sample_cohort(7, "tight", shuffle_slots=False).to_problem()


def _alloc(problem, amount_scale=0.0):
    """An allocation giving each patient nothing except 1 unit of their first needed divisible resource."""
    out = {}
    for i, pid in enumerate(problem.ids):
        out[pid] = {}
        for r, res in enumerate(problem.resources):
            if problem.needed[i, r] and not problem.indivisible[r]:
                out[pid][res] = 1
                break
    return out


def test_every_form_gives_the_same_allocation(problem):
    alloc = _alloc(problem)
    obj = {"allocation": alloc, "justification": "j", "critique": "c"}
    text = json.dumps(obj)
    forms = {
        "json": text,
        "fenced-json": f"Here is my proposal:\n```json\n{text}\n```\nThanks.",
        "embedded-json": f"I propose {text} because it is fair.",
    }
    arrays = []
    for form, t in forms.items():
        p = parse_proposal(t, problem)
        assert p.form == form and p.valid and p.justification == "j" and p.critique == "c"
        arrays.append(p.allocation)
    # trailing commas are tolerated
    p = parse_proposal(text[:-1] + ",}", problem)
    assert p.valid and np.array_equal(p.allocation, arrays[0])
    # markdown table with prose fields
    header = "| Patient | " + " | ".join(problem.resources) + " |"
    rows = [header, "|" + "---|" * (len(problem.resources) + 1)]
    for pid in problem.ids:
        rows.append(f"| {pid} | " + " | ".join(str(alloc[pid].get(r, 0)) for r in problem.resources) + " |")
    table = "\n".join(rows) + "\n\nJustification: fair enough.\n\nCritique: too greedy."
    t = parse_proposal(table, problem)
    assert t.form == "table" and t.valid and t.justification == "fair enough." and t.critique == "too greedy."
    assert all(np.array_equal(a, arrays[0]) for a in arrays + [t.allocation])


def test_violations_are_exact_and_all_reported(problem):
    pid = problem.ids[0]
    bad = {"allocation": {pid: {"MedA": 50, "ICU": 0.5, "Nursing": -2, "Oxygen": 1},
                          "P99": {"ICU": 1}, problem.ids[1]: {"MedB": "two"}},
           "justification": "", "critique": ""}
    p = parse_proposal(json.dumps(bad), problem)
    assert not p.valid and p.allocation is not None
    v = p.violations
    assert any(s.startswith("unknown patient P99") for s in v)
    assert any(s.startswith(f"unknown resource Oxygen for {pid}") for s in v)
    assert f"MedB for {problem.ids[1]} is 'two', not a finite number" in v
    assert f"Nursing for {pid} is negative (-2)" in v
    assert f"ICU for {pid} is 0.5, not an integer (indivisible resource)" in v
    assert "MedA total 50 exceeds capacity 45" in v
    # the proposal is recorded as proposed: nothing fixed
    assert p.allocation[0, problem.resources.index("MedA")] == 50


def test_numbers_as_strings_and_case_insensitive_resources(problem):
    pid = problem.ids[0]
    p = parse_proposal(json.dumps({"allocation": {pid: {"meda": "10 units", "nursing": "4"}},
                                   "justification": "", "critique": ""}), problem)
    assert p.valid
    assert p.allocation[0, problem.resources.index("MedA")] == 10 and p.allocation[0, problem.resources.index("Nursing")] == 4


@pytest.mark.parametrize("text", ["I cannot decide.", '{"proposal": 3}', "```json\n{broken\n```", ""])
def test_no_allocation_is_a_violation_not_a_crash(problem, text):
    p = parse_proposal(text, problem)
    assert p.allocation is None and not p.valid and p.violations[0].startswith("no allocation found")


def test_extract_prefers_object_with_allocation():
    obj, form = extract_json('first {"note": 1} then {"allocation": {}, "justification": "x"}')
    assert obj == {"allocation": {}, "justification": "x"} and form == "embedded-json"


def test_schemas_validate_good_and_reject_bad(problem):
    jsonschema = pytest.importorskip("jsonschema")
    good = {"allocation": {pid: {} for pid in problem.ids}, "justification": "j", "critique": "c"}
    jsonschema.validate(good, PROPOSAL_SCHEMA)
    s = proposal_schema(problem)
    full = {"allocation": {pid: {res: 0 for i2, res in enumerate(problem.resources) if problem.needed[i, i2]}
                           for i, pid in enumerate(problem.ids)}, "justification": "j", "critique": "c"}
    jsonschema.validate(full, s)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**full, "allocation": {**full["allocation"], "P99": {}}}, s)
    icu = problem.resources.index("ICU")
    i = int(np.flatnonzero(problem.needed[:, icu])[0])
    frac = json.loads(json.dumps(full))
    frac["allocation"][problem.ids[i]]["ICU"] = 0.5
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(frac, s)
    assert "accept" in proposal_schema(problem, decision=True)["required"]
