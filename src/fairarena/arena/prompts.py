"""Prompt rendering: the phase instructions, the history of proposals, quoted references, quoting rules.

Quoting (every piece of data that enters a prompt is encoded so that it cannot end its own quotation):

* retrieved text and any other text inside ``<reference>`` tags, excerpts of other agents'
  justifications and critiques, and compact allocations go through :func:`escape`: ``&``, ``<`` and
  ``>`` become ``&amp;``, ``&lt;`` and ``&gt;`` — a document containing ``</reference>`` or a forged
  ``<reference id=...>`` tag shows as text, never as a tag;
* instance fields shown in a markdown table go through :func:`cell`: escaped as above, every ``|``
  written ``&#124;`` and line breaks folded to spaces — a field cannot add a column or a row;
* attribute values (a reference id) go through :func:`attr` (also encodes ``"``).

The encodings are the HTML ones (a model reads them as the characters they stand for); the system
prompt says so.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

# Bump when any text an agent sees changes (prompts, rules, quoting): a different prompt is a different
# debate for caches and study keys.
PROMPT_VERSION = "arena-2"

PHASE_TASK = {
    "round": "Propose your allocation for this round, justify it, and critique the other agent's last proposal.",
    "final": "The rounds are over. Submit your FINAL allocation, with a justification and a critique of the other "
             "agent's last proposal.",
    "draft": "Draft the JOINT final recommendation for both agents: an allocation both of you can accept, with a "
             "justification. The other agent may accept it or amend it once.",
    "decide": "The other agent drafted the joint recommendation below. Set \"accept\" to true to accept it unchanged, "
              "or false and give your amended allocation (your amendment becomes the joint recommendation if valid).",
    "revise": "Revise your position: give an allocation closer to the other agent's latest one, keeping what your "
              "framework most needs. Your positions may stay different; they should become compatible.",
}

# The same instructions for three or more participants.
PHASE_TASK_MANY = {
    "round": "Propose your allocation for this round, justify it, and critique the other agents' latest proposals.",
    "final": "The rounds are over. Submit your FINAL allocation, with a justification and a critique of the other "
             "agents' latest proposals.",
    "draft": "Draft the JOINT final recommendation for all agents: an allocation all of you can accept, with a "
             "justification. Each other agent in turn may accept the current draft or amend it once.",
    "decide": "The current draft of the joint recommendation is below. Set \"accept\" to true to accept it unchanged, "
              "or false and give your amended allocation (your amendment becomes the current draft if valid).",
    "revise": "Revise your position: give an allocation closer to the other agents' latest ones, keeping what your "
              "framework most needs. Your positions may stay different; they should become compatible.",
}


def escape(text: Any) -> str:
    """``&``, ``<``, ``>`` as HTML entities: quoted text cannot open or close a tag."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def attr(text: Any) -> str:
    """An attribute value: :func:`escape` plus ``"``."""
    return escape(text).replace('"', "&quot;")


def cell(value: Any) -> str:
    """A markdown table cell: escaped, ``|`` encoded, all whitespace (line breaks too) folded to one space."""
    return " ".join(escape(value).replace("|", "&#124;").split())


def number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def excerpt(text: Any, n: int) -> str:
    """Whitespace-folded text cut to ``n`` characters (``...`` marks a cut)."""
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."


def compact_allocation(mapping: dict[str, Any]) -> str:
    """An allocation as one compact JSON line without zero entries (escaped for quoting)."""
    out = {pid: {r: v for r, v in row.items() if v} for pid, row in mapping.items()
           if isinstance(row, dict) and any(row.values())}
    return escape(json.dumps(out, separators=(",", ":"), ensure_ascii=False, default=str))


def quote_references(refs: Iterable[Any], chars: int | None) -> str:
    """Retrieved chunks inside ``<reference>`` tags, their text escaped (and cut to ``chars``)."""
    return "\n".join(f'<reference id="{attr(c.id)}">\n{escape(c.text if chars is None else excerpt(c.text, chars))}\n</reference>'
                     for c in refs)


def others_phrase(me: str, names: list[str]) -> str:
    others = [n for n in names if n != me]
    if len(others) == 1:
        return f"You are agent {me}; the other agent is {others[0]}."
    return f"You are agent {me}; the other agents are {', '.join(others)}."


def history_text(history: list[tuple[int, str, str, Any]], me: str, excerpt_chars: int,
                 summary: str | None = None) -> str:
    """Earlier proposals, one line each (``summary`` replaces the lines of rounds it summarises)."""
    if not history and summary is None:
        return "History: none yet (this is the opening round)."
    lines = ["History of proposals:"]
    if summary:
        lines.append(summary)
    for t, phase, who, step in history:
        p = step.proposal
        status = "valid" if p.valid else "INVALID (" + escape("; ".join(p.violations[:3])) + ")"
        tag = "you" if who == me else "other agent"
        lines.append(f"- {phase} {t}, agent {who} ({tag}): {status}; allocation {compact_allocation(p.mapping)}; "
                     f"justification: {escape(excerpt(p.justification, excerpt_chars))}; "
                     f"critique: {escape(excerpt(p.critique, excerpt_chars))}")
    return "\n".join(lines)


def reply_format(item_id: str, decide: bool) -> str:
    return (" Reply with one JSON object only: "
            f'{{"allocation": {{{item_id}: {{RESOURCE: amount}}}}, "justification": "...", "critique": "..."}}'
            + (' plus "accept": true|false.' if decide else "."))
