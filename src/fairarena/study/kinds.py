"""The registry of study kinds: what each kind of study does, in one place.

A study's ``kind`` (a design field) names one entry of :data:`KINDS`. Each entry gives the four steps of a
study, each a ``"module:function"`` resolved on first use (reading a design imports no runner, statistics
or report code):

- ``expand(cfg) -> tasks``: every debate of the design, keyed (:mod:`fairarena.study.design`);
- ``execute(task, opts, model_for, transcript) -> dict``: one task run into its transcript, the record's
  outcome fields; ``failed``: the outcome fields of a task that raised (its record's empty shape);
- ``preflight(cfg, tasks)``: build the first task's agents before any work or write;
- ``mechanisms(cfg) -> list``: the rules the runner applies to each task (post-processing);
- ``design(cfg)``: the kind's design (:mod:`fairarena.study.designs`), the fields it reads of a validated
  design and its answers (model specs, seats per debate, size factors, its whole-design check);
- ``plan(cfg, tasks, lives)``: ``study plan``'s stand-in debates; ``frame(records)``: the flat results table;
- ``analyse(root, **options) -> analysis``, ``tables(analysis) -> {name: Table}``, ``files(analysis) ->
  {file name: data}`` (the JSON written beside the tables), ``report(root, **options) -> Report``: the
  finished study's statistics, tables and report;
- ``derive(record, transcript bytes) -> value``: what the analysis will want of one finished debate's
  transcript, computed by the worker that ran it while the transcript is in memory; ``after_run(root,
  records, {key: value})``: the runner's last step, which keeps those values where the analysis finds
  them (both optional; a failure in either costs the analysis a transcript read, never the run).

The generic layers (:func:`fairarena.study.design.expand`, :mod:`fairarena.study.analysis`, the store) ask
the registry for the design's kind instead of testing the kind themselves. A new kind is one entry here.

>>> sorted(KINDS)
['council', 'duel']
>>> study_kind("duel").description.startswith("Agent A")
True
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from fairarena.errors import InputError


def _resolve(ref: str) -> Callable[..., Any]:
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class StudyKind:
    """One kind of study: its description and its steps (``"module:function"`` references)."""

    name: str
    description: str
    expand_ref: str
    execute_ref: str
    preflight_ref: str
    mechanisms_ref: str
    analyse_ref: str
    tables_ref: str
    report_ref: str
    files_ref: str
    analysis_type_ref: str
    failed: Mapping[str, Any] = field(default_factory=dict)
    """The outcome fields of a record whose task raised (the kind's record shape, empty)."""
    frame_ref: str = ""
    """``frame(records) -> pandas.DataFrame``: the flat results table (:func:`fairarena.study.store.results_frame`)."""
    design_ref: str = ""
    """The kind's design class (:mod:`fairarena.study.designs`): ``design(cfg)`` is the validated design's view."""
    plan_ref: str = ""
    """``plan(cfg, tasks, lives) -> runs``: ``study plan``'s stand-in debates (:mod:`fairarena.study.plan`)."""
    derive_ref: str = ""
    """``derive(record, transcript) -> value or None``: per debate, in the worker (see the module notes)."""
    after_run_ref: str = ""
    """``after_run(root, records, derived)``: the run's last step, with every value ``derive`` gave."""

    def derive(self, record: dict[str, Any], transcript: bytes) -> Any:
        return _resolve(self.derive_ref)(record, transcript) if self.derive_ref else None

    def after_run(self, root: str | Path, records: Any, derived: Mapping[str, Any]) -> None:
        if self.after_run_ref:
            _resolve(self.after_run_ref)(root, records, derived)

    def expand(self, cfg: Any) -> list[Any]:
        return _resolve(self.expand_ref)(cfg)

    def execute(self, task: Any, opts: Any, model_for: Callable[[str], Any], transcript: str | Path) -> dict[str, Any]:
        return _resolve(self.execute_ref)(task, opts, model_for, transcript)

    def failed_fields(self) -> dict[str, Any]:
        """A fresh copy of :attr:`failed` (its lists and dicts are the record's own)."""
        return {k: type(v)() if isinstance(v, (list, dict)) else v for k, v in self.failed.items()}

    def preflight(self, cfg: Any, tasks: Any) -> None:
        _resolve(self.preflight_ref)(cfg, tasks)

    def mechanisms(self, cfg: Any) -> list[str]:
        return list(_resolve(self.mechanisms_ref)(cfg))

    def design(self, cfg: Any) -> Any:
        return _resolve(self.design_ref)(cfg)

    def plan(self, cfg: Any, tasks: Any, lives: Any) -> list[Any]:
        return list(_resolve(self.plan_ref)(cfg, tasks, lives))

    def frame(self, records: Any) -> Any:
        return _resolve(self.frame_ref)(records)

    def analyse(self, root: str | Path, **kw: Any) -> Any:
        return _resolve(self.analyse_ref)(root, **kw)

    def tables(self, analysis: Any) -> dict[str, Any]:
        return _resolve(self.tables_ref)(analysis)

    def report(self, root: str | Path, **kw: Any) -> Any:
        return _resolve(self.report_ref)(root, **kw)

    def files(self, analysis: Any) -> dict[str, Any]:
        """The JSON files written beside the tables (``study tables``): ``{file name: data}``."""
        return dict(_resolve(self.files_ref)(analysis))

    def owns(self, analysis: Any) -> bool:
        """Is ``analysis`` this kind's analysis (its ``analyse``'s type)?"""
        return isinstance(analysis, _resolve(self.analysis_type_ref))


KINDS: dict[str, StudyKind] = {
    "duel": StudyKind(
        "duel", "Agent A (each profile) against each opponent, the triage-debate paper's design; on another "
                "domain its participants two by two",
        expand_ref="fairarena.study.design:expand_duel",
        execute_ref="fairarena.study.kinds:_execute_duel",
        preflight_ref="fairarena.study.kinds:_preflight_duel",
        mechanisms_ref="fairarena.study.kinds:_duel_mechanisms",
        analyse_ref="fairarena.study.analysis:analyse_duel",
        tables_ref="fairarena.study.analysis:duel_tables",
        report_ref="fairarena.study.analysis:build_duel_report",
        files_ref="fairarena.study.analysis:duel_files",
        analysis_type_ref="fairarena.study.analysis:StudyAnalysis",
        failed={"rounds": [], "final": {}, "feasible": {}, "metrics": {}},
        frame_ref="fairarena.study.store:_duel_frame",
        design_ref="fairarena.study.designs:DuelDesign",
        plan_ref="fairarena.study.plan:_duel_runs",
        derive_ref="fairarena.study.analysis:derive_duel",
        after_run_ref="fairarena.study.analysis:keep_derived"),
    "council": StudyKind(
        "council", "every member in one debate per instance; the same instance decided by every mechanism",
        expand_ref="fairarena.study.design:expand_council",
        execute_ref="fairarena.study.council:execute_council",
        preflight_ref="fairarena.study.council:preflight",
        mechanisms_ref="fairarena.study.kinds:_council_mechanisms",
        analyse_ref="fairarena.study.council_analysis:analyse_council",
        tables_ref="fairarena.study.council_analysis:council_tables",
        report_ref="fairarena.study.council_analysis:build_council_report",
        files_ref="fairarena.study.kinds:_council_files",
        analysis_type_ref="fairarena.study.council_analysis:CouncilAnalysis",
        failed={"members": [], "rows": []},   # a council record always names its members (records.py)
        frame_ref="fairarena.study.store:_council_frame",
        design_ref="fairarena.study.designs:CouncilDesign",
        plan_ref="fairarena.study.plan:_council_runs"),
}
"""Every study kind by name, in the order ``study init`` and the docs list them."""


def study_kind(name: str) -> StudyKind:
    """The registered kind ``name`` (InputError naming ``study.kind`` otherwise)."""
    try:
        return KINDS[name]
    except KeyError:
        raise InputError("study.kind", name, f"one of {', '.join(KINDS)}") from None


def kind_of_task(task: Any) -> StudyKind:
    """The kind of one task (a :class:`~fairarena.study.design.CouncilTask` says ``kind``; a duel's
    :class:`~fairarena.study.design.DebateTask` has no such field)."""
    return study_kind(getattr(task, "kind", "duel"))


def kind_of_task_dict(task: Mapping[str, Any]) -> StudyKind:
    """The kind of a task as a record holds it (a council task says ``kind``)."""
    return study_kind(str(task.get("kind", "duel")))


def kind_of_folder(root: str | Path) -> StudyKind:
    """The kind of the study in folder ``root`` (its recorded design). Not a study folder: the duel kind,
    whose analysis refuses the folder with its one-line message."""
    from fairarena.study.store import read_study

    if not (Path(root) / "study.json").is_file():
        return KINDS["duel"]
    design = read_study(root).get("design") or {}
    return study_kind(design.get("kind", "duel") if isinstance(design, Mapping) else "duel")


def kind_of_analysis(analysis: Any) -> StudyKind:
    """The kind whose ``analyse`` gave ``analysis``."""
    for kind in KINDS.values():
        if kind.owns(analysis):
            return kind
    raise TypeError(f"not a study analysis: {type(analysis).__name__}")


# ------------------------------------------------------------------------------------------------
# The duel's run steps (the store's functions; the council's live in fairarena.study.council)
# ------------------------------------------------------------------------------------------------

def _execute_duel(task: Any, opts: Any, model_for: Callable[[str], Any], transcript: str | Path) -> dict[str, Any]:
    if getattr(task, "domain", None) is not None:   # a duel of a domain's participants
        from fairarena.study.duel import execute_participant_duel

        return execute_participant_duel(task, opts, str(transcript))
    from fairarena.study.store import _execute_duel as run

    return run(task, opts, str(transcript))


def _preflight_duel(cfg: Any, tasks: Any) -> None:
    if not tasks:
        return
    if getattr(tasks[0], "domain", None) is not None:
        from fairarena.study.duel import preflight_participant_duel

        preflight_participant_duel(cfg, tasks)
        return
    from fairarena.arena import build_agent
    from fairarena.study.design import cohort_of

    t = tasks[0]
    cohort = cohort_of(t.cohort_seed, t.capacity)
    for name, prof, spec in (("A", t.agent_a, t.model_a), ("B", t.agent_b, t.model_b)):
        # a language model is not built here (a GGUF load, a client); the scripted stand-in checks the
        # profile and the retrieval set-up the same way
        build_agent(name, prof, spec if spec.startswith("scripted") else "scripted", cohort, rag=t.rag)


def _duel_mechanisms(cfg: Any) -> list[str]:
    return list(cfg.mechanisms)


def _council_mechanisms(cfg: Any) -> list[str]:
    return list(cfg.council_rules())


def _council_files(an: Any) -> dict[str, Any]:
    return {"council.json": an.to_dict()}


__all__ = ["KINDS", "StudyKind", "kind_of_analysis", "kind_of_folder", "kind_of_task", "kind_of_task_dict",
           "study_kind"]
