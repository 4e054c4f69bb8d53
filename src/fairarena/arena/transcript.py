"""The debate transcript: a typed record written as JSONL, one event per line, as it happens.

Line 1 is the ``header`` (provenance: config, seed, model specs, package versions, git revision, and
the full cohort, so the transcript alone reproduces every metric). Then one ``turn`` per model
call — prompt messages, raw reply, parsed proposal, violations, repair attempt, retrieved chunk
ids, token usage, latency, and the proposal's six metrics — then ``closing`` and a ``footer``
(status ``ok``, ``failed`` or ``interrupted`` with the reason). Each line is flushed when written: a crash or a failed
model call leaves every earlier event on disk. API keys never enter a transcript (they are not in
model specs, prompts or replies).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from fairarena.errors import InputError
from fairarena.fsutil import json_default

SCHEMA_VERSION = 1


@dataclass
class Turn:
    agent: str                    # "A" | "B"
    profile: str
    phase: str                    # round | final | draft | decide | revise
    round: int
    attempt: int                  # 0 = first answer, 1..M = repair turns
    messages: list[dict[str, str]]
    raw: str | None
    proposal: dict[str, Any] | None
    violations: list[str]
    valid: bool
    metrics: dict[str, Any] | None
    retrieved: list[dict[str, Any]] = field(default_factory=list)
    rag_note: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    latency_s: float = 0.0
    cached: bool = False
    error: str | None = None
    raw_chars: int | None = None  # length of the reply when ``raw`` was cut to DebateConfig.reply_chars
    budget: dict[str, Any] | None = None  # what prompt budgeting shortened (None: the prompt fitted as built)
    type: str = "turn"


@dataclass
class Closing:
    rule: str
    allocation: dict[str, Any] | None
    metrics: dict[str, Any] | None
    feasible: bool
    violations: list[str]
    note: str = ""
    type: str = "closing"
    details: dict[str, Any] | None = None   # the closing rule's structured record (aggregation, dialectical)


class TranscriptWriter:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] | None = open(self.path, "w", encoding="utf-8")

    def write(self, event: Any) -> None:
        if self._fh is None:
            return
        if hasattr(event, "__dataclass_fields__"):
            # the fields one level deep: json.dumps walks the nested lists and dicts itself, so the deep
            # copy asdict makes (~9 ms a scripted debate) is only needed when a value nests a dataclass
            obj = {f: getattr(event, f) for f in event.__dataclass_fields__}
        else:
            obj = dict(event)
        if obj.get("type") == "closing" and obj.get("details", 0) is None:
            del obj["details"]   # a rule without a structured record: the closing line as before
        try:
            line = json.dumps(obj, default=json_default, ensure_ascii=False)
        except TypeError:    # a nested dataclass: the deep conversion (same keys and order)
            obj = asdict(event) if hasattr(event, "__dataclass_fields__") else obj
            if obj.get("type") == "closing" and obj.get("details", 0) is None:
                del obj["details"]
            line = json.dumps(obj, default=json_default, ensure_ascii=False)
        self._fh.write(line + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """A prompt as one string, each message as ``<|role|>`` then its content (a stand-in for a chat
    template: a server's prefix cache matches the templated prompt, which preserves shared prefixes)."""
    return "".join(f"<|{m.get('role')}|>\n{m.get('content')}\n" for m in messages)


def shared_prefix(a: str, b: str) -> int:
    """Characters ``a`` and ``b`` share at their start (``len(os.path.commonprefix([a, b]))``, which walks
    the strings a character at a time in Python: a bisection over slice comparisons, done in C)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n   # a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def _get(turn: Any, key: str) -> Any:
    return turn.get(key) if isinstance(turn, dict) else getattr(turn, key, None)


def prompt_reuse(turns: Iterable[Any]) -> dict[str, Any]:
    """How much of each prompt a server's prefix cache can reuse, over one debate's turns (``Turn``
    objects or transcript ``turn`` events; calls that failed before a reply count too).

    * ``server``: what the server reported — the sum of ``usage.cached_tokens`` over the sum of
      ``usage.prompt_tokens`` of the calls that report it (llama.cpp's ``timings.cache_n``, OpenAI's and
      vLLM's ``prompt_tokens_details.cached_tokens``); ``None`` when no call reports it. Calls answered
      from the local response cache are left out (no server saw them).
    * ``same_agent`` / ``previous_call``: the client-side measure, in characters of :func:`prompt_text`:
      the share of all prompt characters that are a prefix of the same agent's previous prompt (what a
      server slot holding that agent's conversation reuses) or of the previous call's prompt (one slot
      serving every call in turn); ``calls_short_prefix``: calls that share less than half of the same
      agent's previous prompt (each agent's first call not counted), ``calls_compared`` the calls that
      had a previous prompt of their agent.
    """
    last: dict[str, str] = {}
    prev: str | None = None
    total = same = previous = short = compared = calls = 0
    reported = cached = 0
    for t in turns:
        text = prompt_text(_get(t, "messages") or [])
        agent = str(_get(t, "agent"))
        calls += 1
        total += len(text)
        if agent in last:
            k = shared_prefix(last[agent], text)
            same += k
            compared += 1
            short += k < len(last[agent]) / 2
        if prev is not None:
            previous += shared_prefix(prev, text)
        last[agent], prev = text, text
        usage = _get(t, "usage") or {}
        if not _get(t, "cached") and isinstance(usage.get("cached_tokens"), int):
            reported += int(usage.get("prompt_tokens") or 0)
            cached += usage["cached_tokens"]
    return {"calls": calls, "prompt_chars": total,
            "same_agent": round(same / total, 4) if total else None,
            "previous_call": round(previous / total, 4) if total else None,
            "calls_short_prefix": short, "calls_compared": compared,
            "server": round(cached / reported, 4) if reported else None,
            "server_cached_tokens": cached if reported else None,
            "server_prompt_tokens": reported if reported else None}


def read_transcript(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The events of the transcript file ``path`` (:func:`parse_transcript`)."""
    with open(path, "rb") as fh:
        return parse_transcript(fh.read(), str(path))


def parse_transcript(data: bytes, name: str = "<transcript>") -> list[dict[str, Any]]:
    """The events of a transcript's bytes (one JSON object per line, a header first); anything else is an
    :class:`InputError` naming ``name`` (and the line)."""
    from fairarena.fsutil import loads_json

    events = []
    for k, line in enumerate(data.split(b"\n"), start=1):
        if line.strip():
            try:
                events.append(loads_json(line))
            except ValueError:            # bad JSON or bytes that are not UTF-8
                raise InputError("transcript", f"{name}:{k}", "one JSON object per line") from None
    if not events or not isinstance(events[0], dict) or events[0].get("type") != "header":
        raise InputError("transcript", name, "a fairarena transcript starting with a header line")
    return events


FINISHED = "ok"


def transcript_status(events: list[dict[str, Any]]) -> tuple[str, str | None]:
    """``(status, reason)`` from the footer: ``ok``, ``failed``, ``interrupted``, or ``unfinished`` when the
    transcript has no footer (the process died). Only ``ok`` is a finished debate."""
    foot = events[-1] if events and events[-1].get("type") == "footer" else None
    if foot is None:
        return "unfinished", "no footer: the writing process stopped before the debate ended"
    status = str(foot.get("status"))
    return status, foot.get("reason") or foot.get("error")


def iter_turns(events: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    return (e for e in events if e.get("type") == "turn")


def recompute_metrics(events: list[dict[str, Any]], *, finished_only: bool = True) -> list[dict[str, Any]]:
    """Re-score every recorded proposal (and the joint final) from the transcript alone.

    Returns one entry per scored event: ``{"event": index, "recorded": {...}, "recomputed": {...}}``.
    A transcript whose footer is not ``ok`` is refused (:class:`InputError`) unless ``finished_only=False``.
    """
    from fairarena.arena.domain import DEFAULT_DOMAIN, DOMAINS
    from fairarena.arena.parsing import validate_mapping
    from fairarena.arena.scoring import score_with

    status, reason = transcript_status(events)
    if finished_only and status != FINISHED:
        raise InputError("transcript", f"status {status}" + (f" ({reason})" if reason else ""),
                         "a finished debate (footer status ok); pass finished_only=False to re-score a partial one")
    domain = DOMAINS.get(events[0].get("domain", DEFAULT_DOMAIN))   # a transcript that names none: the default
    key = getattr(domain, "instance_key", "instance")
    instance = domain.from_dict(events[0][key] if key in events[0] else events[0].get("instance", events[0].get("cohort")))
    problem = domain.problem(instance)
    out = []
    for k, e in enumerate(events):
        mapping = None
        if e.get("type") == "turn" and e.get("metrics") is not None:
            mapping = (e.get("proposal") or {}).get("allocation")
        elif e.get("type") == "closing" and e.get("metrics") is not None:
            mapping = e.get("allocation")
        if mapping is None:
            continue
        x, _ = validate_mapping(problem, mapping)
        assert x is not None
        out.append({"event": k, "recorded": e["metrics"], "recomputed": score_with(domain, instance, problem, x)})
    return out
