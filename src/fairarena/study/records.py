"""The study's record format: one JSON record per task, ``DIR/debates/<kk>/<key>.json`` and a line of
``DIR/results.jsonl``. Two shapes, told apart by ``record["task"].get("kind")``: a duel record (two agents,
A and B, one debate) and a council record (every member in one debate, beside every rule's decision).

The typed description below is the schema docs/study.md ("Record schema") writes out. Required keys are
those every record has, failed or not; ``NotRequired`` ones appear only when they apply. Nested values that
depend on the domain (its metric names, its allocation's shape) are typed as mappings.
:func:`check_record` validates one record against it (an unknown top-level key is an error: a new field
must be added here and to the docs).
"""

from __future__ import annotations

from typing import Any, Literal, Mapping, Optional, Union

from typing_extensions import NotRequired, TypedDict

__all__ = ["DuelTask", "CouncilTask", "Worker", "Timing", "Usage", "AgentRound", "Final", "DuelRecord",
           "RuleRow", "CouncilDebate", "CouncilRecord", "StudyRecord", "check_record", "record_kind"]

Status = Literal["ok", "failed"]


class DuelTask(TypedDict):
    """:class:`fairarena.study.design.DebateTask` as a dict."""

    index: int
    key: str
    cohort: int
    cohort_seed: int
    capacity: str
    agent_a: str
    agent_b: str
    opponent_role: str
    framework: Optional[str]
    model_a: str
    model_b: str
    rounds: int
    closing: str
    seed: int
    temperature: float
    max_repairs: int
    max_tokens: int
    rag: str
    proposal_format: str
    control: bool
    sample: int
    domain: NotRequired[str]                # a duel of a domain's participants (fairarena.study.duel) only:
    problem: NotRequired[Optional[str]]     # its problem file, or None
    options: NotRequired[Mapping[str, Any]]  # the domain's sample options


class CouncilTask(TypedDict):
    """:class:`fairarena.study.design.CouncilTask` as a dict."""

    index: int
    key: str
    cohort: int
    cohort_seed: int
    capacity: str
    domain: str
    members: list[str]
    model: str
    rounds: int
    closing: str
    seed: int
    temperature: float
    max_repairs: int
    max_tokens: int
    rag: str
    pois: Optional[int]
    k: Optional[int]
    kind: Literal["council"]
    sample: int
    problem: NotRequired[str]     # a problem file's path (domain "file"; its digest is in the key)


class Worker(TypedDict):
    pid: int
    host: str
    finished: str


class Timing(TypedDict):
    wall_s: float
    model_s: NotRequired[float]
    overhead_s: NotRequired[float]
    mechanisms_s: NotRequired[float]


class Usage(TypedDict, total=False):
    calls: int
    cached_calls: int
    repair_turns: int
    prompt_tokens: int
    completion_tokens: int
    model_latency_s: float
    completion_tokens_per_s: Optional[float]
    budgeted_prompts: int
    cached_prompt_tokens: int     # the prompt tokens the server said it reused (only when it said so)
    prompt_reuse: float           # cached_prompt_tokens / prompt_tokens over those calls


class AgentRound(TypedDict, total=False):
    valid: bool
    feasible: bool
    repairs: int
    violations: list[Any]
    metrics: Optional[Mapping[str, Any]]   # None: the proposal was not valid (nothing to score)


class Final(TypedDict, total=False):
    allocation: Any
    valid: bool
    violations: list[Any]
    repairs: int
    justification: Optional[str]
    rule: str
    note: Optional[str]
    details: Mapping[str, Any]


class _Common(TypedDict):
    key: str
    status: Status
    error: Optional[str]
    usage: Mapping[str, Usage]
    timing: Timing
    transcript: str
    transcript_sha256: str
    worker: Worker
    traceback: NotRequired[str]
    serving: NotRequired[Mapping[str, Any]]


class DuelRecord(_Common):
    task: DuelTask
    rounds: list[Mapping[str, Union[int, AgentRound]]]
    final: Mapping[str, Final]
    feasible: Mapping[str, bool]
    metrics: Mapping[str, Optional[Mapping[str, Any]]]   # None: that final was not valid
    rag_notes: NotRequired[Mapping[str, Optional[str]]]
    mechanisms: NotRequired[Mapping[str, Any]]


class RuleRow(TypedDict, total=False):
    rule: str
    kind: str
    family: str
    metrics: Optional[Mapping[str, float]]
    utilities: Optional[Mapping[str, float]]
    worst_off: Optional[str]
    min_utility: Optional[float]
    gini_utilities: Optional[float]
    feasible: bool
    note: str
    chosen: Optional[str]   # tourism


class CouncilDebate(TypedDict, total=False):
    rounds: int
    feasible: Mapping[str, bool]
    final: Mapping[str, Any]
    agreed: bool
    closing: Optional[str]


class CouncilRecord(_Common):
    task: CouncilTask
    members: list[str]
    rows: list[Mapping[str, Any]]
    debate: NotRequired[CouncilDebate]


StudyRecord = Union[DuelRecord, CouncilRecord]


def record_kind(record: Mapping[str, Any]) -> str:
    """``"council"`` or ``"duel"``: the shape of a record."""
    return "council" if (record.get("task") or {}).get("kind") == "council" else "duel"


_ADAPTERS: dict[str, Any] = {}


def check_record(record: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming the first field of ``record`` that does not match its schema (unknown
    top-level or task keys included)."""
    from pydantic import ConfigDict, TypeAdapter, ValidationError

    kind = record_kind(record)
    if kind not in _ADAPTERS:
        for t in (DuelRecord, CouncilRecord, DuelTask, CouncilTask):
            t.__pydantic_config__ = ConfigDict(extra="forbid", strict=True)  # type: ignore[attr-defined]
        _ADAPTERS[kind] = TypeAdapter(CouncilRecord if kind == "council" else DuelRecord)
    try:
        _ADAPTERS[kind].validate_python(dict(record))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise ValueError(f"{kind} record {record.get('key')}: {where}: {err['msg']}") from None
    if kind == "duel":
        _check_duel_metrics(record)


def _check_duel_metrics(record: Mapping[str, Any]) -> None:
    """A duel's metrics (final and per round) are numbers (or flags, lists and mappings such as ``cnss`` and
    ``violations``), never text: a string where a metric should be is an error naming it."""
    where: list[tuple[str, Any]] = [(f"metrics.{who}", m) for who, m in record["metrics"].items()]
    for i, rd in enumerate(record["rounds"]):
        for who, s in rd.items():
            if isinstance(s, Mapping) and "metrics" in s:
                where.append((f"rounds.{i}.{who}.metrics", s["metrics"]))
    for path, m in where:
        if m is None:
            continue
        if not isinstance(m, Mapping):
            raise ValueError(f"duel record {record.get('key')}: {path}: a mapping of metrics, not {type(m).__name__}")
        for name, v in m.items():
            if isinstance(v, str):
                raise ValueError(f"duel record {record.get('key')}: {path}.{name}: a number, not the text {v[:20]!r}")
