"""Proposal formats: how an agent states its proposal, and how that statement becomes an allocation.

``allocation`` (the default, the paper's): the agent writes the allocation itself,
``{PATIENT_ID: {RESOURCE: amount}}``; it is checked strictly and nothing is fixed
(:func:`fairarena.arena.parsing.parse_proposal`).

``priorities``: the agent writes, per resource, an ordered list of patients, each a patient id or an
``[id, amount]`` pair, e.g. ``{"ICU": ["P3", ["P1", 1]], "Nursing": [["P2", 12.5], "P3"]}``. The
realisation rule (:func:`realise_priorities`) turns the list into a feasible allocation,
deterministically:

* walk each resource's list in order, with the remaining capacity starting at the resource's capacity;
* a listed patient gets ``min(amount, need, remaining)``, where ``amount`` is the stated amount or, when
  none is stated, the patient's need; for an indivisible resource that is rounded *down* to a whole
  unit (``floor(v + 1e-9)``, so 2.9999999999 counts as 3); the remaining capacity drops by what was given;
* a patient who is not listed gets 0; a patient listed again gets nothing more (the first mention
  counts, the repeat is noted); a patient who does not need the resource gets 0 (noted); an amount
  above the need is clipped to the need (noted).

Adjustments the rule makes are *notes*; they do not make the proposal invalid. What the rule cannot
give a meaning to is a *violation*, quoted back in the repair prompt like the free-form format's:
an unknown patient or resource, an entry that is neither an id nor an ``[id, amount]`` pair, a
negative or non-finite amount, a resource's value that is not a list. The realised allocation is
feasible by construction in every case (tested as a property); the transcript keeps what the agent
said (``stated``) beside what was realised (``allocation``).

Alternatives (not implemented): proportional scaling of stated amounts when they overshoot capacity,
or rounding to the nearest unit with a repair pass; walking the list in order keeps the agent's
priority order exactly, which is what the format states.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

import numpy as np

from fairarena.allocation.problem import AllocationProblem, allocation_to_mapping
from fairarena.arena import parsing
from fairarena.registry import Registry

UNIT_EPS = 1e-9  # tolerance of the round-down for indivisible resources


@dataclass(frozen=True)
class ProposalFormat:
    """One way of stating a proposal: its reply instruction, its decoding schema and its parser."""

    name: str
    parse: Callable[[str, AllocationProblem], "parsing.ParsedProposal"]
    schema: Callable[..., dict[str, Any]]
    reply_format: Callable[[str, bool], str]
    # (problem, allocation mapping) -> what an agent of this format says for that allocation
    speak: Callable[[AllocationProblem, Mapping[str, Mapping[str, Any]]], Any] | None = None
    # the system prompt restated for this format (None: unchanged)
    rules: Callable[[str], str] | None = None

    def system_rules(self, rules: str) -> str:
        return rules if self.rules is None else self.rules(rules)


PROPOSAL_FORMATS: Registry[ProposalFormat] = Registry("proposal format", field="proposal_format")


# -- the realisation rule ---------------------------------------------------------------------------------
def _entry(entry: Any) -> tuple[str | None, Any, str | None]:
    """(patient id, stated amount or None, error)."""
    if isinstance(entry, str):
        return entry.strip(), None, None
    if isinstance(entry, (list, tuple)) and len(entry) in (1, 2) and isinstance(entry[0], (str, int)) \
            and not isinstance(entry[0], bool):
        return str(entry[0]).strip(), (entry[1] if len(entry) == 2 else None), None
    if isinstance(entry, Mapping) and ("id" in entry or "patient" in entry):
        pid = entry.get("id", entry.get("patient"))
        return str(pid).strip(), entry.get("amount"), None
    return None, None, f"{parsing.shown(json.dumps(entry, default=str), 60)} is neither a patient id nor an [id, amount] pair"


def realise_priorities(problem: AllocationProblem, priorities: Any
                       ) -> tuple[np.ndarray, list[str], list[str]]:
    """(allocation, violations, notes) for ``{RESOURCE: [id | [id, amount], ...]}`` by the module's rule."""
    x = problem.zeros()
    violations: list[str] = []
    notes: list[str] = []
    if not isinstance(priorities, Mapping):
        return x, [f"priorities is {type(priorities).__name__}, not an object {{RESOURCE: [patient ids]}}"], notes
    pindex = {pid: i for i, pid in enumerate(problem.ids)}
    rlower = {res.lower(): r for r, res in enumerate(problem.resources)}
    done: set[int] = set()
    for key, items in priorities.items():
        r = rlower.get(str(key).strip().lower())
        if r is None:
            violations.append(f"unknown resource {parsing.shown(key)} (resources are {', '.join(problem.resources)})")
            continue
        res = problem.resources[r]
        if r in done:
            notes.append(f"{res} listed twice: the later list ignored")
            continue
        done.add(r)
        if isinstance(items, Mapping):   # {id: amount} read as ordered pairs
            items = [[k, v] for k, v in items.items()]
        if not isinstance(items, (list, tuple)):
            violations.append(f"{res} is {type(items).__name__}, not a list of patient ids or [id, amount] pairs")
            continue
        remaining = float(problem.capacity[r])
        seen: set[str] = set()
        for entry in items:
            pid, amount, err = _entry(entry)
            if err is not None:
                violations.append(f"{res}: {err}")
                continue
            assert pid is not None
            if pid not in pindex:
                violations.append(f"unknown patient {parsing.shown(pid)} in the {res} list (patients are {', '.join(problem.ids)})")
                continue
            if amount is not None:
                v = parsing.number(amount)
                if v is None or not math.isfinite(v) or v < 0:
                    violations.append(f"{res} amount for {pid} is {parsing.shown(repr(amount))}, not a non-negative number")
                    continue
                amount = v
            if pid in seen:
                notes.append(f"{pid} listed again for {res}: the later entry ignored")
                continue
            seen.add(pid)
            i = pindex[pid]
            need = float(problem.need[i, r])
            if need <= 0:
                notes.append(f"{pid} does not need {res}: given 0")
                continue
            want = need if amount is None else amount
            if want > need:
                notes.append(f"{res} for {pid}: {parsing.fmt(want)} clipped to the need {parsing.fmt(need)}")
                want = need
            give = min(want, max(remaining, 0.0))
            if problem.indivisible[r]:
                give = float(math.floor(give + UNIT_EPS))
            x[i, r] = give
            remaining -= give
    return x, violations, notes


def speak_priorities(problem: AllocationProblem, mapping: Mapping[str, Mapping[str, Any]]) -> dict[str, list[Any]]:
    """An allocation stated as priorities: per resource, every patient with a positive amount as an
    ``[id, amount]`` pair, in decreasing order of amount / need (ties in patient order). Realising it
    gives the allocation back whenever the allocation is feasible and within needs."""
    out: dict[str, list[Any]] = {}
    order = {pid: i for i, pid in enumerate(problem.ids)}
    for r, res in enumerate(problem.resources):
        rows = []
        for pid, row in mapping.items():
            if pid not in order or not isinstance(row, Mapping):
                continue
            v = parsing.number(row.get(res, 0))
            if v and v > 0:
                i = order[pid]
                need = float(problem.need[i, r])
                share = v / need if need > 0 else math.inf
                rows.append((-share, i, pid, int(round(v)) if problem.indivisible[r] else round(v, 6)))
        out[res] = [[pid, v] for _, _, pid, v in sorted(rows)]
    return out


# -- the two formats ----------------------------------------------------------------------------------------
def parse_priorities(text: str, problem: AllocationProblem) -> "parsing.ParsedProposal":
    obj, form = parsing.extract_json(text, key="priorities")
    accept = obj.get("accept") if isinstance(obj, dict) else None
    accept = accept if isinstance(accept, bool) else None
    if not (isinstance(obj, dict) and "priorities" in obj):
        cut = salvage_priorities(text)
        if cut is not None:   # a reply cut off (or broken) after a complete priorities object
            obj, form = cut, "salvaged-json"
    if not (isinstance(obj, dict) and "priorities" in obj):
        what = ("a JSON object without a \"priorities\" key" if isinstance(obj, dict)
                else "no JSON object")
        return parsing.ParsedProposal(None, {}, "", "", accept, form, [f"no priorities found: the reply contains {what}"],
                                      proposal_format="priorities")
    stated = obj["priorities"]
    x, violations, notes = realise_priorities(problem, stated)
    return parsing.ParsedProposal(x, allocation_to_mapping(problem, x), str(obj.get("justification", "") or ""),
                                  str(obj.get("critique", "") or ""), accept, form, violations,
                                  proposal_format="priorities", stated=stated, notes=notes)


_KEY = re.compile(r'"priorities"\s*:\s*\{')


def _partial_string(text: str, key: str) -> str:
    m = re.search(rf'"{key}"\s*:\s*"((?:[^"\\]|\\.)*)', text, re.S)
    return m.group(1) if m else ""


def salvage_priorities(text: str) -> dict[str, Any] | None:
    """``{"priorities": ...}`` from a reply whose whole object does not parse (typically cut off at the
    token limit while writing the justification): the first complete ``"priorities": {...}`` object,
    with whatever justification and critique text was written (possibly cut)."""
    m = _KEY.search(text)
    if m is None:
        return None
    objs = parsing.balanced_objects(text[m.end() - 1:])
    if not objs or not text[m.end() - 1:].startswith(objs[0]):
        return None
    try:
        prio = json.loads(objs[0], strict=False)
    except ValueError:
        return None
    return {"priorities": prio, "justification": _partial_string(text, "justification"),
            "critique": _partial_string(text, "critique")}


def priorities_schema(problem: AllocationProblem, *, text_limit: int = 600, decision: bool = False) -> dict[str, Any]:
    """Per resource, a list of ids of the patients who need it, or ``[id, amount]`` pairs."""
    lists = {}
    for r, res in enumerate(problem.resources):
        ids = [pid for i, pid in enumerate(problem.ids) if problem.needed[i, r]]
        item = {"anyOf": [{"enum": ids}, {"type": "array", "prefixItems": [{"enum": ids}, parsing.amount_schema(problem, r)],
                                          "minItems": 2, "maxItems": 2}]}
        lists[res] = {"type": "array", "items": item, "maxItems": max(len(ids), 1)}
    body = {"type": "object", "properties": lists, "required": list(problem.resources), "additionalProperties": False}
    return parsing.reply_schema("priorities", body, text_limit=text_limit, decision=decision)


def priorities_reply(item_id: str, decide: bool) -> str:
    return (" Reply with one JSON object only: "
            '{"priorities": {RESOURCE: [' + item_id + ', [' + item_id + ', amount], ...]}, '
            '"justification": "...", "critique": "..."}'
            + (' plus "accept": true|false.' if decide else ".")
            + " List, for each resource, the patients who should get it, most important first; a bare id asks for "
              "the patient's full need, [id, amount] for a part. The list is served in order until the capacity "
              "runs out (whole units for indivisible resources); patients not listed get none.")


_ANSWER = re.compile(r'Answer with one JSON object: \{"allocation".*?\}\.\s*', re.S)
PRIORITIES_ANSWER = ('Answer with one JSON object: {"priorities": {RESOURCE: [PATIENT_ID or [PATIENT_ID, amount], '
                     '...]}, "justification": str, "critique": str} (patients in order of priority). ')


def priorities_rules(rules: str) -> str:
    """A system prompt with the free-form answer sentence replaced by the priorities one (appended when
    the domain's rules have no such sentence)."""
    out, n = _ANSWER.subn(PRIORITIES_ANSWER, rules, count=1)
    return out if n else rules + " " + PRIORITIES_ANSWER.strip()


def allocation_reply(item_id: str, decide: bool) -> str:
    from fairarena.arena.prompts import reply_format
    return reply_format(item_id, decide)


PROPOSAL_FORMATS.add("allocation", ProposalFormat("allocation", parsing.parse_proposal, parsing.proposal_schema,
                                                  allocation_reply),
                     title="free-form allocation",
                     description="{PATIENT_ID: {RESOURCE: amount}}, checked strictly, nothing fixed (the paper's)")
PROPOSAL_FORMATS.add("priorities", ProposalFormat("priorities", parse_priorities, priorities_schema, priorities_reply,
                                                  speak_priorities, priorities_rules),
                     title="ordered priorities",
                     description="{RESOURCE: [id | [id, amount], ...]} served in order until capacity runs out "
                                 "(whole units, needs respected)")


def get_format(name: str) -> ProposalFormat:
    return PROPOSAL_FORMATS.get(name)


class SpokenModel:
    """A scripted negotiator's chat model speaking ``fmt``: its JSON reply's ``allocation`` is restated
    in the format (accept, justification, critique and note kept); every other attribute is the inner
    model's."""

    def __init__(self, inner: Any, fmt: ProposalFormat, problem: AllocationProblem) -> None:
        self.inner, self.fmt, self.problem = inner, fmt, problem

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)

    def chat(self, messages: Any, **kw: Any) -> Any:
        resp = self.inner.chat(messages, **kw)
        try:
            obj = json.loads(resp.text)
        except (TypeError, ValueError):
            return resp
        if not isinstance(obj, dict) or "allocation" not in obj or self.fmt.speak is None:
            return resp
        out = {k: v for k, v in obj.items() if k != "allocation"}
        stated = self.fmt.speak(self.problem, obj["allocation"])
        out = {**({"accept": out.pop("accept")} if "accept" in out else {}), self.fmt.name: stated, **out}
        return replace(resp, text=json.dumps(out))
