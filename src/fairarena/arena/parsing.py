"""Proposal schema, robust parsing of model replies, and strict validation.

Parsing is forgiving about *form*: a JSON object inside code fences or surrounded by prose, single
trailing commas, or a markdown table ``| Patient | ICU | Ventilator | ... |`` with the justification
and critique in prose. It is strict about *meaning*: an unknown patient or resource, a non-numeric,
negative or non-finite amount, a capacity overshoot or a fractional indivisible resource is a
violation, spelled out exactly ("MedA total 50 exceeds capacity 45"). Nothing is silently fixed:
the allocation recorded is the one the agent proposed (unknown entries are reported and left out
of the array, because the array has no row or column for them).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from fairarena.allocation.problem import AllocationProblem, check_feasibility
from fairarena.arena.prompts import excerpt

SHOWN_CHARS = 40  # what a violation quotes of a key or value the model wrote (one line, cut)


def shown(value: Any, n: int = SHOWN_CHARS) -> str:
    """A key or value the model wrote, as a violation quotes it: one line, at most ``n`` characters (an
    unknown id can be megabytes long or hold line breaks; the violation must stay one short line)."""
    return excerpt(value, n)

# The published schema (generic form). ``proposal_schema(problem)`` specialises it to one cohort.
PROPOSAL_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "fairarena proposal",
    "type": "object",
    "properties": {
        "allocation": {
            "type": "object",
            "description": "{PATIENT_ID: {RESOURCE: amount}}; missing entries mean 0",
            "additionalProperties": {"type": "object", "additionalProperties": {"type": "number", "minimum": 0}},
        },
        "justification": {"type": "string"},
        "critique": {"type": "string", "description": "critique of the other agent's last proposal"},
    },
    "required": ["allocation", "justification", "critique"],
}

DECISION_SCHEMA_EXTRA = {"accept": {"type": "boolean", "description": "true to accept the draft unchanged"}}


def amount_schema(problem: AllocationProblem, r: int) -> dict[str, Any]:
    """An amount of resource ``r``: a non-negative integer for an indivisible resource, else a number."""
    return {"type": "integer" if problem.indivisible[r] else "number", "minimum": 0}


def reply_schema(key: str, body: dict[str, Any], *, text_limit: int = 600, decision: bool = False) -> dict[str, Any]:
    """One reply: ``{key: body, "justification", "critique"}`` (plus ``"accept"`` first for a decision
    turn), every field required, nothing else allowed. Each proposal format supplies its ``key`` and body."""
    props: dict[str, Any] = {key: body, "justification": {"type": "string", "maxLength": text_limit},
                             "critique": {"type": "string", "maxLength": text_limit}}
    required = [key, "justification", "critique"]
    if decision:
        props = {**DECISION_SCHEMA_EXTRA, **props}
        required = ["accept"] + required
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def proposal_schema(problem: AllocationProblem, *, text_limit: int = 600, decision: bool = False) -> dict[str, Any]:
    """The schema for one cohort: every patient id, and for each its needed resources
    (integers for indivisible ones). Used for schema-constrained decoding."""
    patients = {}
    for i, pid in enumerate(problem.ids):
        props = {res: amount_schema(problem, r) for r, res in enumerate(problem.resources) if problem.needed[i, r]}
        patients[pid] = {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}
    body = {"type": "object", "properties": patients, "required": list(problem.ids), "additionalProperties": False}
    return reply_schema("allocation", body, text_limit=text_limit, decision=decision)


@dataclass
class ParsedProposal:
    """What a reply means. ``allocation`` is None when no allocation could be read at all."""

    allocation: np.ndarray | None
    mapping: dict[str, dict[str, Any]] = field(default_factory=dict)
    justification: str = ""
    critique: str = ""
    accept: bool | None = None
    form: str = "none"           # json | fenced-json | embedded-json | table | salvaged-json | none
    violations: list[str] = field(default_factory=list)
    proposal_format: str = "allocation"   # fairarena.arena.formats.PROPOSAL_FORMATS
    stated: Any = None                    # what the agent said, when the format realises it (priorities)
    notes: list[str] = field(default_factory=list)   # adjustments of the realisation rule (not violations)

    @property
    def valid(self) -> bool:
        return self.allocation is not None and not self.violations

    def to_dict(self) -> dict[str, Any]:
        out = {"allocation": self.mapping, "justification": self.justification, "critique": self.critique,
               "accept": self.accept, "form": self.form, "violations": list(self.violations), "valid": self.valid}
        if self.proposal_format != "allocation":   # the free-form record stays as it was
            out.update(proposal_format=self.proposal_format, stated=self.stated, notes=list(self.notes))
        return out


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def _balanced_objects(text: str) -> list[str]:
    """Top-level ``{...}`` substrings (string-aware brace matching)."""
    out, depth, start, in_str, esc = [], 0, -1, False, False
    for k, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"' and depth > 0:
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = k
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                out.append(text[start:k + 1])
    return out


def _loads(s: str) -> Any:
    # strict=False: raw newlines/tabs inside strings (common in model output) are accepted
    try:
        return json.loads(s, strict=False)
    except ValueError:
        return json.loads(_TRAILING_COMMA.sub(r"\1", s), strict=False)


def extract_json(text: str, key: str = "allocation") -> tuple[Any, str]:
    """(object, form) for the first JSON object with a ``key`` key (or any object); (None, 'none')."""
    stripped = text.strip()
    candidates: list[tuple[str, str]] = [(stripped, "json")]
    candidates += [(m.group(1).strip(), "fenced-json") for m in _FENCE.finditer(text)]
    candidates += [(s, "embedded-json") for s in _balanced_objects(text)]
    fallback: tuple[Any, str] = (None, "none")
    for cand, form in candidates:
        try:
            obj = _loads(cand)
        except ValueError:
            continue
        if isinstance(obj, dict):
            if key in obj:
                return obj, form
            if fallback[0] is None:
                fallback = (obj, form)
    return fallback


_ROW = re.compile(r"^\s*\|(.+)\|\s*$")


def parse_table(text: str) -> dict[str, dict[str, str]] | None:
    """A markdown table whose header starts with Patient/ID and names resources."""
    rows = [m.group(1) for line in text.splitlines() if (m := _ROW.match(line))]
    if len(rows) < 2:
        return None
    cells = [[c.strip().strip("*") for c in r.split("|")] for r in rows]
    header = cells[0]
    if not header or header[0].lower() not in ("patient", "id", "patient id", "patient_id"):
        return None
    out: dict[str, dict[str, str]] = {}
    for row in cells[1:]:
        if all(set(c) <= set("-: ") for c in row):
            continue  # separator line
        pid = row[0]
        out[pid] = {h: v for h, v in zip(header[1:], row[1:]) if v not in ("", "-", "—")}
    return out or None


def _prose_field(text: str, name: str) -> str:
    m = re.search(rf"{name}\s*[:\-]\s*(.+?)(?:\n\s*\n|\n\s*\w+\s*:|$)", text, re.I | re.S)
    return m.group(1).strip() if m else ""


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        s = value.strip().replace(",", "")
        s = re.sub(r"\s*(units?|hours?|h|beds?|slots?)$", "", s, flags=re.I)
        try:
            return float(s)
        except ValueError:
            return None
    return None


number = _number
balanced_objects = _balanced_objects


def fmt(v: float) -> str:
    """A number as written in violations and notes (integers without a decimal point)."""
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def validate_mapping(problem: AllocationProblem, mapping: Any) -> tuple[np.ndarray | None, list[str]]:
    """Every problem with ``mapping`` as violation strings; the array of what could be placed."""
    if not isinstance(mapping, Mapping):
        return None, [f"allocation is {type(mapping).__name__}, not an object {{PATIENT_ID: {{RESOURCE: amount}}}}"]
    pindex = {pid: i for i, pid in enumerate(problem.ids)}
    rindex = {res: r for r, res in enumerate(problem.resources)}
    rlower = {res.lower(): res for res in problem.resources}
    x = problem.zeros()
    problems: list[str] = []
    for pid, row in mapping.items():
        if str(pid) not in pindex:
            problems.append(f"unknown patient {shown(pid)} (patients are {', '.join(problem.ids)})")
            continue
        if not isinstance(row, Mapping):
            problems.append(f"allocation for {pid} is not an object {{RESOURCE: amount}}")
            continue
        for res, amount in row.items():
            name = rlower.get(str(res).lower())
            if name is None:
                problems.append(f"unknown resource {shown(res)} for {pid} (resources are {', '.join(problem.resources)})")
                continue
            v = _number(amount)
            if v is None or not math.isfinite(v):
                problems.append(f"{name} for {pid} is {shown(repr(amount))}, not a finite number")
                continue
            x[pindex[str(pid)], rindex[name]] = v
    problems += check_feasibility(problem, x)  # negatives, fractional indivisible, capacity overshoot
    return x, problems


def parse_proposal(text: str, problem: AllocationProblem) -> ParsedProposal:
    obj, form = extract_json(text)
    if isinstance(obj, dict) and "allocation" in obj:
        alloc, violations = validate_mapping(problem, obj["allocation"])
        accept = obj.get("accept")
        return ParsedProposal(alloc, dict(obj["allocation"]) if isinstance(obj["allocation"], Mapping) else {},
                              str(obj.get("justification", "") or ""), str(obj.get("critique", "") or ""),
                              accept if isinstance(accept, bool) else None, form, violations)
    table = parse_table(text)
    if table is not None:
        alloc, violations = validate_mapping(problem, table)
        return ParsedProposal(alloc, table, _prose_field(text, "justification"), _prose_field(text, "critique"),
                              None, "table", violations)
    accept = obj.get("accept") if isinstance(obj, dict) else None
    what = "a JSON object without an \"allocation\" key" if isinstance(obj, dict) else "no JSON object and no table"
    return ParsedProposal(None, {}, "", "", accept if isinstance(accept, bool) else None, form,
                          [f"no allocation found: the reply contains {what}"])
