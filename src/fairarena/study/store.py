"""The study store: one folder per study, one file pair per finished debate, resume by key.

Layout of ``DIR`` (see docs/study.md)::

    study.toml                 the study file, verbatim (as given to the first run, or the last --force)
    study.json                 the validated design, its digest, task count, prompt version, provenance
    debates/<kk>/<key>.jsonl   the debate's transcript (kk = the key's first two hex characters)
    debates/<kk>/<key>.json    its result record: the task, status (ok | failed), error, per-round summaries,
                               finals, joint, metrics, usage, serving (prompt reuse, each server's
                               concurrency), timing, provenance — the "finished" marker; its fields:
                               docs/study.md "Record schema", fairarena.study.records
    results.jsonl              every result record, one per line, in task order (rebuilt from the files)
    runs.jsonl                 one line per run: backend, workers, counts, wall time, provenance
    .lock                      held (flock) by the one process writing this folder

Only the runner's parent process writes ``DIR``. A debate's transcript is renamed into place first and
its record second, both by an atomic ``os.replace``, so a debate is finished exactly when its record
exists: ``kill -9`` at any moment loses at most the debates in flight, and never leaves a record without
its transcript or a half-written file under a final name (temporary files are dot-named and removed by the
next run).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import hashlib
import json
import os
import socket
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from fairarena.errors import FairArenaError, InputError, interrupt_of
from fairarena.fsutil import atomic_write_bytes, atomic_write_json, atomic_write_text, json_default, loads_json
from fairarena.study.design import DebateTask, StudyConfig, cohort_of, expand, prompt_version
from fairarena.llm.wrappers import LimitedModel  # noqa: F401 - the server limit lives in the model layer now

STORE_FORMAT = 1
RESUME_VERIFY = True
"""A run (resume) hashes every finished debate's transcript against its record's ``transcript_sha256``
(docs/reliability.md "Study folders": the cost measured); ``study status`` does with ``--verify``/``--repair``,
``stats``/``tables``/``report`` never (they check each record's schema, key and task, at no extra read)."""
RESULTS = "results.jsonl"
NEGOTIATOR = "scripted:negotiator"   # the one model that needs no response cache (it is its own replay)


# ------------------------------------------------------------------------------------------------
# Paths and reading
# ------------------------------------------------------------------------------------------------

def record_path(root: Path, key: str) -> Path:
    return root / "debates" / key[:2] / f"{key}.json"


def read_transcript(root: str | Path, record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The events of a finished debate's transcript (``record["transcript"]`` under the study folder),
    read by the arena's own transcript reader."""
    from fairarena.arena.transcript import read_transcript as read_events

    return read_events(Path(root) / record["transcript"])


def transcript_path(root: Path, key: str) -> Path:
    return root / "debates" / key[:2] / f"{key}.jsonl"


def finished_keys(root: str | Path) -> set[str]:
    """Keys with a result record on disk (a directory listing; no file is opened)."""
    base = Path(root) / "debates"
    out: set[str] = set()
    if not base.is_dir():
        return out
    for sub in os.scandir(base):
        if sub.is_dir():
            for f in os.scandir(sub.path):
                n = f.name
                if n.endswith(".json") and not n.startswith("."):
                    out.add(n[:-5])
    return out


def read_record(root: str | Path, key: str) -> dict[str, Any] | None:
    """A debate's result record, or None when it is missing, unreadable or damaged (then it counts as not
    finished; :func:`inspect_record` says what is wrong)."""
    return inspect_record(root, key)[0]


def inspect_record(root: str | Path, key: str, task: DebateTask | None = None, *,
                   verify: bool = False) -> tuple[dict[str, Any] | None, str | None]:
    """``(record, None)`` for a sound record of ``key``; ``(None, None)`` when there is none; ``(None, what
    is wrong)`` when the file cannot be used: not JSON, not a record (:func:`fairarena.study.records.check_record`,
    metrics included), another debate's record (its ``key`` or its ``task``, against ``task`` when given),
    or with ``verify`` a transcript that is missing or does not match ``transcript_sha256``. The checks
    cost what reading the record costs (10 us); ``verify`` reads the transcript too."""
    root = Path(root)
    try:
        with open(record_path(root, key), "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    try:
        rec = loads_json(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, "empty (a power loss?)" if not raw.strip() else f"not valid JSON ({_json_why(exc)})"
    problem = record_problem(rec, key, task)
    if problem is None and verify:
        problem = transcript_problem(root, rec)
    return (rec, None) if problem is None else (None, problem)


def record_problem(rec: Any, key: str, task: DebateTask | None = None) -> str | None:
    """What is wrong with ``rec`` as the record of debate ``key`` (and ``task``), or None."""
    from fairarena.study.records import check_record

    if not isinstance(rec, dict):
        return f"not a record (a JSON {type(rec).__name__})"
    if "key" in rec and rec["key"] != key:   # no key at all: not a record (below), rather than misplaced
        return f"holds the record of debate {_short(rec.get('key'))}, not {key} (misplaced)"
    try:
        check_record(rec)
    except ValueError as exc:
        return f"not a valid record ({str(exc).split(': ', 1)[-1]})"
    if rec["task"].get("key") != key or (task is not None and rec["task"] != task.to_dict()):
        return f"its task is not debate {key}'s (misplaced)"
    return None


def transcript_problem(root: Path, rec: Mapping[str, Any]) -> str | None:
    """Is the record's transcript there, under its own key, with the bytes its ``transcript_sha256`` names?"""
    key = rec["key"]
    if rec["transcript"] != f"debates/{key[:2]}/{key}.jsonl":
        return f"names the transcript {rec['transcript']!r}, not its own"
    h = hashlib.sha256()
    try:
        with open(transcript_path(root, key), "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        return f"its transcript cannot be read ({exc.strerror})"
    if h.hexdigest() != rec["transcript_sha256"]:
        return "its transcript does not match its transcript_sha256 (replaced or damaged)"
    return None


def _json_why(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    return str(exc).split(":")[0]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class StudyDamageError(InputError):
    """A file of a study folder cannot be used: one line naming it, what is wrong and what to do (exit 2)."""

    def __init__(self, path: str | Path, problem: str, hint: str) -> None:
        FairArenaError.__init__(self, f"{path}: {problem}; {hint}")
        self.field, self.value, self.expected = "dir", str(path), f"{problem}; {hint}"


def _repair_hint(root: Path) -> str:
    return (f"`fairarena study status {root} --repair` moves it to {root / 'quarantine'} and the next "
            "`fairarena study run` redoes that debate")


def read_records(root: str | Path, keys: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """The sound records of ``keys`` (default: every record on disk); unreadable or damaged ones are left out."""
    root = Path(root)
    keys = sorted(finished_keys(root)) if keys is None else keys
    out: dict[str, dict[str, Any]] = {}
    for k in keys:
        rec = read_record(root, k)
        if rec is not None:
            out[k] = rec
    return out


def read_study(root: str | Path) -> dict[str, Any]:
    """``study.json``, checked: a JSON object with the design (a damaged one: one line naming it)."""
    p = Path(root) / "study.json"
    if not p.is_file():
        raise InputError("dir", str(root), "a study folder (no study.json: run `fairarena study run` first)")
    hint = (f"restore it, or rewrite it from the study file with `fairarena study run {Path(root) / 'study.toml'} "
            f"--out {root} --force` (finished debates whose keys still match are kept)")
    try:
        meta = json.loads(p.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise StudyDamageError(p, f"not valid JSON ({_json_why(exc)}; truncated?)", hint) from None
    if not isinstance(meta, dict):
        raise StudyDamageError(p, f"not a study manifest (a JSON {type(meta).__name__}, not an object)", hint)
    if not isinstance(meta.get("design"), dict):
        raise StudyDamageError(p, "not a study manifest (no 'design' object)", hint)
    return meta


def study_tasks(root: str | Path) -> tuple[StudyConfig, list[DebateTask]]:
    """The design recorded in a study folder and its tasks (recomputed: keys are content hashes)."""
    from fairarena.study.design import from_dict

    meta = read_study(root)
    design = json.dumps(meta["design"], sort_keys=True)
    hit = _TASKS.get(design)
    if hit is None:   # a few calls per command (status, statistics, traces): expand the design once
        cfg = from_dict(meta["design"], "study.json:design.")
        hit = _TASKS[design] = (cfg, tuple(expand(cfg)))
        while len(_TASKS) > 4:
            del _TASKS[next(iter(_TASKS))]
    return hit[0], list(hit[1])


_TASKS: dict[str, tuple[StudyConfig, tuple[DebateTask, ...]]] = {}


def rebuild_results(root: str | Path, tasks: Sequence[DebateTask] | None = None) -> list[dict[str, Any]]:
    """Rewrite ``results.jsonl`` from the per-debate records, in task order (records of keys that are not
    tasks of the current design, e.g. after ``--force`` with a new design, are left out). A damaged record
    (:func:`inspect_record`) is never counted: :class:`StudyDamageError` names it."""
    root = Path(root)
    if tasks is None:
        tasks = study_tasks(root)[1]
    have = finished_keys(root)
    rows = []
    for t in tasks:
        if t.key in have:
            rec, problem = inspect_record(root, t.key, t)
            if problem is not None:
                raise StudyDamageError(record_path(root, t.key), problem, _repair_hint(root))
            if rec is not None:
                rows.append(rec)
    atomic_write_text(root / RESULTS, "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
    return rows


def load_results(root: str | Path) -> list[dict[str, Any]]:
    """Every result record of the study in task order — from ``results.jsonl`` when it is up to date with
    the per-debate files (one listing to check) and every line is a sound record of a distinct debate, else
    rebuilt from the files first (``results.jsonl`` is derived: a damaged line costs a rebuild, not an
    error; a damaged record file is an error naming it)."""
    root = Path(root)
    rows = _read_results_file(root / RESULTS)
    if rows is not None:
        have = finished_keys(root)
        keys = {r["key"] for r in rows}
        if len(keys) == len(rows) and keys == have and all(_same_status(root, r) for r in rows if r["status"] != "ok"):
            return rows
    return rebuild_results(root)


def _read_results_file(p: Path) -> list[dict[str, Any]] | None:
    """The rows of ``results.jsonl``, or None when it is missing or any line is not a sound record."""
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    rows = []
    for line in text.splitlines():
        if line:
            try:
                r = loads_json(line)
            except ValueError:
                return None
            if not isinstance(r, dict) or record_problem(r, str(r.get("key"))) is not None:
                return None
            rows.append(r)
    return rows


def _results_current(root: Path, status: dict[str, str]) -> bool:
    """Does ``results.jsonl`` hold exactly the debates of ``status`` (key -> status), one line each?"""
    rows = _read_results_file(root / RESULTS)
    if rows is None:
        return False
    return len(rows) == len(status) and {r["key"]: r["status"] for r in rows} == status


def _same_status(root: Path, row: dict[str, Any]) -> bool:
    # a failed debate that was retried since results.jsonl was written has a new record
    rec = read_record(root, row["key"])
    return rec is not None and rec["status"] == row["status"]


def results_frame(root: str | Path) -> Any:
    """The results as a flat pandas DataFrame: one row per debate, the task's fields, status, and for
    ``a``, ``b`` and ``joint`` the final metrics (``final_a_esg``, ...) and feasibility; per-round metrics
    as ``round{t}_{a|b}_{metric}``. A council study: one row per debate and rule (:func:`_council_frame`)."""
    import pandas as pd

    from fairarena.study.kinds import kind_of_task_dict

    results = load_results(root)
    if results:
        return kind_of_task_dict(results[0]["task"]).frame(results)
    return _duel_frame(results)


def _duel_frame(results: Sequence[dict[str, Any]]) -> Any:
    """A duel study's results (:func:`results_frame`)."""
    import pandas as pd

    rows = []
    for r in results:
        row = {"key": r["key"], **r["task"], "status": r["status"], "error": r.get("error")}
        for who in ("a", "b", "joint"):
            row[f"feasible_{who}"] = (r.get("feasible") or {}).get(who)
            for m, v in ((r.get("metrics") or {}).get(who) or {}).items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    row[f"final_{who}_{m}"] = v
        for rd in r.get("rounds") or []:
            for who in ("a", "b"):
                s = rd.get(who)
                if s:
                    row[f"round{rd['round']}_{who}_feasible"] = s.get("feasible")
                    for m, v in (s.get("metrics") or {}).items():
                        row[f"round{rd['round']}_{who}_{m}"] = v
        rows.append(row)
    return pd.DataFrame(rows)


def _council_frame(results: Sequence[dict[str, Any]]) -> Any:
    """A council study's results: one row per record and rule (and the debate): the task's fields, status,
    ``rule``, ``row_kind``, ``feasible``, every metric (``metric_<name>``), every member's utility
    (``u_<member>``), ``worst_off``, ``min_utility`` and ``gini_utilities``."""
    import pandas as pd

    rows = []
    for r in results:
        base = {"key": r["key"], **{k: v for k, v in r["task"].items() if k != "members"},
                "members": ",".join(r["task"].get("members") or []), "status": r["status"], "error": r.get("error")}
        for row in r.get("rows") or []:
            out = {**base, "rule": row["rule"], "row_kind": row["kind"], "feasible": row.get("feasible"),
                   "worst_off": row.get("worst_off"), "min_utility": row.get("min_utility"),
                   "gini_utilities": row.get("gini_utilities")}
            out.update({f"metric_{k}": v for k, v in (row.get("metrics") or {}).items()})
            out.update({f"u_{k}": v for k, v in (row.get("utilities") or {}).items()})
            rows.append(out)
        if not r.get("rows"):
            rows.append(base)
    return pd.DataFrame(rows)


def comparison_records(root: str | Path, *, capacity: str | None = None, seed: int | None = None,
                       closing: str | None = None, rows: Sequence[dict[str, Any]] | None = None
                       ) -> list[dict[str, Any]]:
    """The long-form input of the paired statistics: one mapping per finished debate whose Agent A is
    aligned to a framework, with ``cohort``, ``framework``, ``opponent`` (B's profile), ``a`` and ``opp``
    (final metrics of A and of B), ``a_feasible``, ``opp_feasible``, ``joint`` and ``joint_feasible``.

    Pairing is by cohort within a (framework, opponent) cell, so a study with several capacity variants,
    seeds or closing rules is cut to one of each: the given one, else the design's first. Failed debates
    are left out (the statistics report how many cohorts each comparison has)."""
    from fairarena.allocation.welfare import METRIC_KEYS

    cfg, _ = study_tasks(root)
    capacity = cfg.capacity[0] if capacity is None else capacity
    seed = cfg.seeds[0] if seed is None else seed
    closing = cfg.closing[0] if closing is None else closing
    out = []
    for r in (load_results(root) if rows is None else rows):   # rows: load_results(root), already read
        t = r["task"]
        if (r["status"] != "ok" or t["framework"] is None or t["capacity"] != capacity or t["seed"] != seed
                or t["closing"] != closing):
            continue
        m = r.get("metrics") or {}
        feas = r.get("feasible") or {}

        def pick(who: str) -> dict[str, float] | None:
            d = m.get(who)
            return None if d is None else {k: float(d[k]) for k in METRIC_KEYS if k in d}

        out.append({"cohort": t["cohort"], "framework": t["framework"], "opponent": t["agent_b"],
                    "a": pick("a"), "opp": pick("b"), "a_feasible": bool(feas.get("a")),
                    "opp_feasible": bool(feas.get("b")), "joint": pick("joint"),
                    "joint_feasible": bool(feas.get("joint"))})
    return out


# ------------------------------------------------------------------------------------------------
# Status
# ------------------------------------------------------------------------------------------------

@dataclass
class StudyStatus:
    total: int
    ok: int
    failed: int
    pending: int                    # no sound record yet (damaged ones included: they are redone)
    stale: int                      # records of keys that are not tasks of the current design
    failed_keys: list[str] = field(default_factory=list)
    damaged: list[dict[str, str]] = field(default_factory=list)   # {"key", "file", "problem"}: never counted
    run: dict[str, Any] | None = None   # the last run's .run.json (``killed``/``stale`` when its holder died)

    def to_dict(self) -> dict[str, Any]:
        """The counts; ``damaged`` only when some record is, ``run`` only when the last run was killed or
        is stale (the keys of a sound folder's status are as before)."""
        out = {"total": self.total, "ok": self.ok, "failed": self.failed, "pending": self.pending,
               "stale": self.stale, "failed_keys": self.failed_keys}
        if self.damaged:
            out["damaged"] = self.damaged
        if self.run is not None and self.run.get("status") in ("killed", "stale"):
            out["run"] = self.run
        return out


def _status_of(root: Path, tasks: Sequence[DebateTask], *, verify: bool = False,
               keep: list[dict[str, Any]] | None = None) -> tuple[StudyStatus, dict[str, str]]:
    """Counts and each finished key's status. Every record read is checked (:func:`inspect_record`: JSON,
    schema, its own key and task; with ``verify`` its transcript's hash too); a damaged one is listed in
    ``damaged`` and counted as pending, never as finished. ``keep``: a list the sound records are appended
    to, in task order (what :func:`rebuild_results` would write)."""
    have = finished_keys(root)
    want = {t.key for t in tasks}
    status: dict[str, str] = {}
    damaged: list[dict[str, str]] = []
    for t in tasks:
        if t.key in have:
            rec, problem = inspect_record(root, t.key, t, verify=verify)
            if rec is not None:
                status[t.key] = rec["status"]
                if keep is not None:
                    keep.append(rec)
            elif problem is not None:
                damaged.append({"key": t.key, "file": str(record_path(root, t.key).relative_to(root)),
                                "problem": problem})
    failed = [t.key for t in tasks if status.get(t.key) == "failed"]
    ok = sum(1 for s in status.values() if s == "ok")
    from fairarena.fsutil import run_state

    return StudyStatus(len(tasks), ok, len(failed), len(tasks) - len(status), len(have - want), failed, damaged,
                       run_state(root)), status


def study_status(root: str | Path, *, verify: bool = False, keep: list[dict[str, Any]] | None = None) -> StudyStatus:
    """The folder's :class:`StudyStatus` (every record read and checked); ``keep``: see :func:`_status_of`."""
    root = Path(root)
    _, tasks = study_tasks(root)
    return _status_of(root, tasks, verify=verify, keep=keep)[0]


QUARANTINE = "quarantine"


def quarantine(root: Path, damaged: Sequence[Mapping[str, str]]) -> list[Path]:
    """Move each damaged record (and its transcript) into ``DIR/quarantine/`` with a line in
    ``quarantine/notes.jsonl`` saying why; the debate then has no record and the next run redoes it.
    Only call this while holding the folder's lock."""
    moved: list[Path] = []
    if not damaged:
        return moved
    qdir = root / QUARANTINE
    qdir.mkdir(exist_ok=True)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    notes = []
    for d in damaged:
        key = d["key"]
        for src in (record_path(root, key), transcript_path(root, key)):   # the record first: then unfinished
            if src.exists():
                dest = qdir / f"{key}.{stamp}{src.suffix}"
                os.replace(src, dest)
                moved.append(dest)
        notes.append({"key": key, "file": d["file"], "problem": d["problem"], "moved": _now()})
    with open(qdir / "notes.jsonl", "a", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(n) + "\n" for n in notes))
    return moved


def repair(root: str | Path, *, verify: bool = True) -> tuple[StudyStatus, list[dict[str, str]]]:
    """``study status --repair``: under the folder's lock, quarantine every damaged record (transcript hashes
    checked too) and return the status after it and what was moved."""
    from fairarena.fsutil import folder_lock as hold

    root = Path(root)
    _, tasks = study_tasks(root)
    with hold(root, "study status --repair"):
        before, _ = _status_of(root, tasks, verify=verify)
        quarantine(root, before.damaged)
        after, status = _status_of(root, tasks, verify=verify)
        if before.damaged or not _results_current(root, status):
            rebuild_results(root, tasks)
    return after, before.damaged


def check_finished(root: str | Path, *, allow_partial: bool = False,
                   keep: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The folder's status; an InputError unless it is a study folder whose debates all finished ``ok``
    (with ``allow_partial``: at least one did). A damaged record: :class:`StudyDamageError` naming it.
    ``keep``: a list that receives every record read, in task order -- the study's results as
    :func:`load_results` gives them, taken from the record files this check read anyway (an analysis
    then needs neither ``results.jsonl`` nor a second check of each record)."""
    root = Path(root)
    if not root.is_dir():
        raise InputError("dir", str(root), "a study folder (it does not exist)")
    st = study_status(root, keep=keep).to_dict()          # InputError when there is no study.json
    if st.get("damaged"):
        d = st["damaged"][0]
        more = f" (and {len(st['damaged']) - 1} more records)" if len(st["damaged"]) > 1 else ""
        raise StudyDamageError(root / d["file"], d["problem"] + more, _repair_hint(root))
    unfinished = st["pending"] + st["failed"]
    if st["ok"] == 0:
        raise InputError("dir", str(root), f"a study with finished debates (0 of {st['total']} ok: run "
                         "`fairarena study run` first)")
    if unfinished and not allow_partial:
        raise InputError("dir", str(root), f"a finished study ({st['ok']} of {st['total']} debates ok, "
                         f"{st['pending']} pending, {st['failed']} failed: finish it with `fairarena study run"
                         "` / --retry-failed, or pass --allow-partial)")
    return st


# ------------------------------------------------------------------------------------------------
# The lock (one writer per folder)
# ------------------------------------------------------------------------------------------------

@contextlib.contextmanager
def folder_lock(root: Path, command: str = "study run") -> Iterator[dict[str, Any]]:
    """Hold the folder's exclusive lock for the whole run.

    The same lock file and holder record as :func:`fairarena.fsutil.output_folder` (``DIR/.lock``,
    ``flock``, released by the kernel when the process dies), so a study folder and any other fairarena
    writer exclude each other; a second writer gets :class:`fairarena.fsutil.OutputBusyError` (exit 2)
    naming the holder. The study does not use ``output_folder``'s rerun policy: a study folder is always
    resumable, also after a run that finished (a rerun is a no-op resume, ``--retry-failed`` reruns the
    failed debates), and ``--force`` keeps the debates whose keys still match instead of emptying it.

    Yields a dict the body may fill with the final status (``status``, ``reason``) when the run returns
    normally but did not succeed (every debate failed: ``failed``, matching the exit code 1); a previous
    run that was killed is kept in ``runs.jsonl`` as ``killed`` (:func:`_note_killed_run`).
    """
    from fairarena.fsutil import check_out_dir
    from fairarena.fsutil import folder_lock as hold

    check_out_dir(root)
    with hold(root, command) as holder:
        _note_killed_run(root)
        manifest = {**holder, "status": "running"}
        atomic_write_json(root / ".run.json", manifest)
        state: dict[str, Any] = {}
        try:
            yield state
        except BaseException as exc:
            status = "interrupted" if interrupt_of(exc) is not None else "failed"
            atomic_write_json(root / ".run.json", {**manifest, "status": status, "finished": _now(),
                                                   "reason": f"{type(exc).__name__}: {exc}"[:500]})
            raise
        atomic_write_json(root / ".run.json", {**manifest, "status": "ok", "finished": _now(), **state})


def _note_killed_run(root: Path) -> None:
    """Holding the lock, a ``.run.json`` that still says ``running`` is a run that died without a word
    (``kill -9``, a crash, a power loss): keep it as a ``killed`` line of ``runs.jsonl`` before this run's
    manifest replaces it."""
    from fairarena.fsutil import read_run_manifest

    prev = read_run_manifest(root)
    if prev is not None and prev.get("status") == "running":
        line = {**prev, "status": "killed", "detected": _now()}
        with open(root / "runs.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, default=json_default) + "\n")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def clean_temporaries(root: Path) -> int:
    """Remove the dot-named temporary files an interrupted run left (never a final name); call it only
    while holding the folder's lock."""
    from fairarena.fsutil import remove_stale_temporaries

    n = len(remove_stale_temporaries(root))
    base = root / "debates"
    if base.is_dir():
        for sub in os.scandir(base):
            if sub.is_dir():
                for e in os.scandir(sub.path):
                    if e.name.startswith(".") and ".tmp" in e.name:
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(e.path)
                            n += 1
    return n


# ------------------------------------------------------------------------------------------------
# Executing one debate (in any process)
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunOptions:
    """What a worker needs besides the task (never changes a debate's outcome)."""

    cache: str | None = None
    offline: bool = False
    limits: tuple[tuple[str, Any], ...] = ()          # (model spec, its server's ConcurrencyPolicy or None)
    mechanisms: tuple[str, ...] = ()                  # aggregation rules applied to each finished debate
    replicas: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()   # (model spec, ((base URL, policy), ...))


_MODELS: dict[tuple[str, str | None, bool], Any] = {}
_MODELS_LOCK = threading.Lock()


def shared_model(spec: str, opts: RunOptions) -> Any:
    """One wrapped model per (spec, cache, offline) in this process: threads share its connection, its
    response cache and its concurrency limit."""
    from fairarena.llm import build_model

    k = (spec, opts.cache, opts.offline)
    with _MODELS_LOCK:
        if k not in _MODELS:
            replicas = dict(opts.replicas).get(spec)
            if replicas and not opts.offline:
                _MODELS[k] = _replicated(spec, replicas, opts.cache)
            else:
                # the limit is the model layer's (LimitedModel), shared by every spec on the same server
                _MODELS[k] = build_model(spec, cache=opts.cache, offline=opts.offline,
                                         concurrency=dict(opts.limits).get(spec))
        return _MODELS[k]


def _replicated(spec: str, replicas: Sequence[tuple[str, Any]], cache: str | None) -> Any:
    """``spec`` served by several base URLs: one retried, limited model per URL behind a
    :class:`fairarena.llm.concurrency.ReplicaRouter`, with the one response cache and usage meter above
    it (the cache ignores URLs, so a replica's answer serves them all)."""
    from fairarena.llm import build_model, parse_model_spec
    from fairarena.llm.concurrency import ReplicaRouter
    from fairarena.llm.spec import ModelSpec
    from fairarena.llm.wrappers import CachedModel, LimitedModel, UsageMeter

    ms = parse_model_spec(spec)
    pairs = []
    for url, policy in replicas:
        lm = build_model(ModelSpec(ms.backend, ms.model, url, ms.options), concurrency=policy).find(LimitedModel)
        pairs.append((lm, lm.server))
    inner: Any = ReplicaRouter(pairs)
    if cache is not None:
        inner = CachedModel(inner, cache)
    return UsageMeter(inner)


def live_stats() -> dict[str, Any]:
    """What this process's shared models did so far: calls (cached, failed), prompt and completion
    tokens, and each server's concurrency (:func:`fairarena.llm.wrappers.server_limits`) — for progress
    lines. Worker processes keep their own: with ``processes`` or ``dask`` these stay at zero."""
    from fairarena.llm.wrappers import UsageMeter, server_limits

    with _MODELS_LOCK:
        meters = [m.find(UsageMeter) for m in _MODELS.values() if hasattr(m, "find")]
    out = {"calls": 0, "cached_calls": 0, "failed_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    for m in meters:
        if m is not None:
            t = m.totals
            for f in out:
                out[f] += getattr(t, f)
    return {**out, "servers": server_limits()}


def execute_task(task: Any, opts: RunOptions) -> tuple[dict[str, Any], bytes]:
    """Run one task (a duel's debate, or a council task); return its result record and its transcript's
    bytes. Never raises for a task that fails (model errors after the wrappers' retries, or any
    exception): the record says ``failed``."""
    t0 = time.perf_counter()
    from fairarena.study.kinds import kind_of_task

    kind = kind_of_task(task)
    fd, tmp = tempfile.mkstemp(prefix=f".{task.key}.", suffix=".jsonl.tmp")
    os.close(fd)
    record: dict[str, Any] = {"key": task.key, "task": task.to_dict()}
    try:
        record.update(kind.execute(task, opts, lambda spec: shared_model(spec, opts), tmp))
    except Exception as exc:  # a bug or a bad environment in one debate must not stop the study
        empty = kind.failed_fields()
        record.update(status="failed", error=f"{type(exc).__name__}: {exc}",
                      traceback=traceback.format_exc(limit=8), usage={}, **empty,
                      timing={"wall_s": round(time.perf_counter() - t0, 6)})
    try:
        with open(tmp, "rb") as fh:
            data = fh.read()
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    record["transcript"] = f"debates/{task.key[:2]}/{task.key}.jsonl"
    record["transcript_sha256"] = hashlib.sha256(data).hexdigest()
    record["worker"] = {"pid": os.getpid(), "host": socket.gethostname(), "finished": _now()}
    return record, data


def _execute_duel(task: DebateTask, opts: RunOptions, transcript: str) -> dict[str, Any]:
    """One duel debate into ``transcript``: the record's outcome fields (raises on a failure the debate
    itself does not record)."""
    from fairarena.arena import build_agent, run_debate

    cohort = cohort_of(task.cohort_seed, task.capacity)
    models: dict[str, Any] = {}
    for spec in {task.model_a, task.model_b}:
        if spec != NEGOTIATOR:
            models[spec] = shared_model(spec, opts)
    common = dict(cache=opts.cache, offline=opts.offline, rag=task.rag, models=models)
    a = build_agent("A", task.agent_a, task.model_a, cohort, **common)
    b = build_agent("B", task.agent_b, task.model_b, cohort, **common)
    res = run_debate(cohort, a, b, task.debate_config(), transcript=transcript,
                     header={"command": "study", "task": task.to_dict()})
    out: dict[str, Any] = dict(status=res.status, error=res.error, rounds=res.rounds, final=res.final,
                               feasible=res.feasible, metrics=res.metrics, usage=res.usage, timing=res.timing,
                               rag_notes={"a": a.rag_note, "b": b.rag_note})
    serve = serving(res.turns, [task.model_a, task.model_b], opts)
    if serve is not None:
        out["serving"] = serve
    if opts.mechanisms and res.status == "ok":
        from fairarena.study.mechanisms import cohort_problem, debate_mechanisms, turn_events

        t1 = time.perf_counter()
        problem = cohort_problem(task.cohort_seed, task.capacity)
        out["mechanisms"] = debate_mechanisms(problem, res.agents, turn_events(res.turns), opts.mechanisms, task.seed)
        out["timing"] = {**(res.timing or {}), "mechanisms_s": round(time.perf_counter() - t1, 6)}
    return out


def serving(turns: Sequence[Any], specs: Sequence[str], opts: RunOptions) -> dict[str, Any] | None:
    """How one debate was served, for its record (None when no server played: scripted models):

    * ``prompt_reuse``: the share of the debate's prompt tokens the server reused from its prefix cache,
      over both agents (``cached_prompt_tokens / prompt_tokens`` of the calls whose reply reported it;
      None when none did) — :func:`fairarena.arena.transcript.prompt_reuse`'s ``server``;
    * ``servers``: per server key (the base URL, :func:`fairarena.llm.spec.server_key`; each replica's URL
      with ``replicas``) its concurrency when the debate finished (``limit``, ``current``, ``lowest``, and an
      adaptive limit's further counters) — :func:`fairarena.llm.wrappers.server_limits`."""
    from fairarena.arena.transcript import prompt_reuse
    from fairarena.llm.spec import server_key
    from fairarena.llm.wrappers import server_limits

    keys: list[str] = []
    for spec in dict.fromkeys(specs):
        replicas = dict(opts.replicas).get(spec)
        for k in ([u for u, _ in replicas] if replicas else [server_key(spec)]):
            if k is not None and k not in keys:
                keys.append(k)
    if not keys:
        return None
    reuse = prompt_reuse(turns)
    return {"prompt_reuse": reuse["server"], "cached_prompt_tokens": reuse["server_cached_tokens"],
            "prompt_tokens": reuse["server_prompt_tokens"], "servers": server_limits(keys)}


def commit_debate(root: Path, record: dict[str, Any], transcript: bytes) -> None:
    """Transcript first, record second: the record's presence means the debate is complete.

    Each file is written atomically (:func:`fairarena.fsutil.atomic_write_bytes`: a dot-named temporary
    beside it, then ``os.replace``) without an ``fsync`` (it cost 7 ms a file here, 8 s over a 600-debate
    study): a killed process loses nothing the kernel already has, which is what resume after ``kill -9``
    needs. After a power loss a record written just before may read back empty; :func:`_status_of` then
    counts it as not finished and the next run redoes that debate."""
    key = record["key"]
    atomic_write_bytes(transcript_path(root, key), transcript, durable=False)
    atomic_write_bytes(record_path(root, key), (json.dumps(record, default=json_default) + "\n").encode(),
                       durable=False)


# ------------------------------------------------------------------------------------------------
# Backends: fairarena.execution's vocabulary (serial, processes, threads, dask)
# ------------------------------------------------------------------------------------------------

def _run_one(task: DebateTask, opts: RunOptions) -> tuple[DebateTask, dict[str, Any], bytes, Any]:
    rec, data = execute_task(task, opts)
    return task, rec, data, _derive(task, rec, data)


def _derive(task: DebateTask, rec: dict[str, Any], data: bytes) -> Any:
    """The task's kind's ``derive`` of a finished debate (what the analysis will want of its transcript),
    in the worker; None when it has none or it fails (the analysis then reads the transcript)."""
    if rec.get("status") != "ok":
        return None
    try:
        from fairarena.study.kinds import kind_of_task

        return kind_of_task(task).derive(rec, data)
    except Exception:      # noqa: BLE001 - never a reason to lose a debate
        return None


def _run_chunk(chunk: Sequence[DebateTask], opts: RunOptions) -> list[tuple[DebateTask, dict[str, Any], bytes, Any]]:
    return [_run_one(task, opts) for task in chunk]


CHUNKED_BACKENDS = ("processes", "dask")
"""Backends that receive one unit per cohort (and capacity variant) for the scripted negotiator."""


def cohort_chunks(tasks: Sequence[DebateTask]) -> list[list[DebateTask]]:
    """The tasks grouped by cohort (seed and capacity variant), in order of first appearance, each
    group in task order. A group goes to one worker, whose negotiator then reuses the exact answers
    shared by the debates of that cohort (the opponents' openings, repeated concession steps)."""
    groups: dict[tuple[int, str], list[DebateTask]] = {}
    for t in tasks:
        groups.setdefault((t.cohort_seed, t.capacity), []).append(t)
    return list(groups.values())


def execute(tasks: Sequence[DebateTask], opts: RunOptions, *, backend: str = "serial", workers: int | None = None,
            address: str | None = None, chunked: bool = False,
            derived: dict[str, Any] | None = None) -> Iterator[tuple[DebateTask, dict[str, Any], bytes]]:
    """Yield ``(task, record, transcript)`` as debates finish, on any backend of :mod:`fairarena.execution`.
    Workers only compute; the caller writes. ``derived``: a dict that receives, by key, what each task's
    kind derived from its finished debate in the worker (:meth:`fairarena.study.kinds.StudyKind.derive`).

    ``chunked``: one backend task per cohort (:func:`cohort_chunks`) that runs its debates serially and
    returns them together; they are yielded one by one in task order when the chunk arrives. Keys,
    records and transcripts are the same either way (a debate never depends on what ran before it in
    its process: the negotiator's shared answers are exact)."""
    from fairarena.execution import iter_tasks

    tasks = list(tasks)

    def out(task: DebateTask, rec: dict[str, Any], data: bytes, value: Any) -> tuple[DebateTask, dict[str, Any], bytes]:
        if derived is not None and value is not None:
            derived[task.key] = value
        return task, rec, data
    if chunked:
        for _, outs in iter_tasks(functools.partial(_run_chunk, opts=opts), cohort_chunks(tasks),
                                  backend=backend, workers=workers, address=address):
            yield from (out(*o) for o in outs)
        return
    for _, o in iter_tasks(functools.partial(_run_one, opts=opts), tasks, backend=backend,
                           workers=workers, address=address):
        yield out(*o)


# ------------------------------------------------------------------------------------------------
# The run
# ------------------------------------------------------------------------------------------------

@dataclass
class RunSummary:
    total: int
    skipped: int          # finished before this run
    ran: int
    ok: int               # ok debates in the store after the run
    failed: int           # failed debates in the store after the run
    pending: int
    failed_now: list[dict[str, str]]   # debates that failed in this run: key and error
    seconds: float
    backend: str
    workers: int
    out: str
    quarantined: list[str] = field(default_factory=list)   # damaged records moved to quarantine/ and redone

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


Progress = Callable[[int, int, int, int], None]   # (done, failed, in flight, total to run)


class StudyRunError(FairArenaError):
    """The execution backend itself failed (a worker process died, the cluster went away). Every debate
    finished before it is on disk; rerunning the same command resumes."""


def _runner_change_only(design: Any, cfg: StudyConfig) -> bool:
    """Does the folder's recorded design differ from ``cfg`` only in :data:`RUNNER_FIELDS` (concurrency,
    replicas, samples), or by turning ``baseline_control`` on (a model study written before it was the
    default)? Such a change alters no debate: every finished one keeps its key."""
    from fairarena.study.design import RUNNER_FIELDS, from_dict

    if not isinstance(design, dict):
        return False
    try:
        old = from_dict(design, "study.json:design.").canonical()
    except InputError:
        return False
    new = cfg.canonical()
    if not old.get("baseline_control") and new.get("baseline_control"):
        old["baseline_control"] = True   # control debates added (a model study's default since): keys unchanged
    return {k: v for k, v in old.items() if k not in RUNNER_FIELDS} == \
        {k: v for k, v in new.items() if k not in RUNNER_FIELDS}


def prepare_store(root: Path, cfg: StudyConfig, text: str, *, force: bool, n_tasks: int) -> None:
    """Check (or create) ``study.json``: a folder made from a different design is refused unless ``force``
    or the two differ only in how the study runs or how many samples it has (adopted: the keys of every
    finished debate still match)."""
    from fairarena.provenance import run_record

    meta_path = root / "study.json"
    if meta_path.is_file():
        try:
            meta = read_study(root)
            digest = meta.get("study_digest")
        except StudyDamageError as exc:
            if not force:
                raise InputError("out", str(root), f"a folder of this study (its {exc}; or --force rewrites it, "
                                                   "keeping debates whose keys still match)") from None
            meta, digest = {}, None
        if digest == cfg.digest():
            if not (root / "study.toml").is_file():
                atomic_write_text(root / "study.toml", text)
            return
        if not force and not _runner_change_only(meta.get("design") if digest else None, cfg):
            raise InputError("out", str(root), f"a folder of this study (it holds study {str(digest)[:12]}, "
                                               f"this file is {cfg.digest()[:12]}; --force adopts the new design, "
                                               "keeping debates whose keys still match)")
    elif root.is_dir() and any(not e.name.startswith(".") and e.name != "study.toml" for e in os.scandir(root)):
        # study.toml alone: a first run killed between its two writes (study.json is written last)
        if not force:
            raise InputError("out", str(root), "an empty or new folder, or a study folder (--force to use it anyway)")
    atomic_write_text(root / "study.toml", text)
    atomic_write_json(meta_path, {
        "format": STORE_FORMAT, "study_digest": cfg.digest(), "name": cfg.name, "design": cfg.canonical(),
        "tasks": n_tasks, "prompt_version": prompt_version(),
        "provenance": run_record(cfg.canonical(), None, command="study run"),
    })


def run_study(cfg: StudyConfig, text: str, out: str | Path, *, backend: str = "serial", workers: int | None = None,
              address: str | None = None, retry_failed: bool = False, force: bool = False,
              cache: str | Path | None = None, offline: bool = False, limit: int | None = None,
              progress: Progress | None = None) -> RunSummary:
    """Run (or resume) a study into ``out``. Finished debates are skipped; failed ones are rerun only with
    ``retry_failed``. ``limit`` runs at most that many of the remaining debates (for trials)."""
    from fairarena.execution import check_workers, resolve_backend
    from fairarena.llm.spec import check_reachable, server_key
    from fairarena.llm.wrappers import check_cache_file, server_limits
    from fairarena.provenance import run_record
    from fairarena.study.kinds import study_kind

    t_start = time.perf_counter()
    root = Path(out)
    backend = resolve_backend(backend)
    check_workers(workers, backend, address)
    if address is not None and backend != "dask":
        raise InputError("address", address, "only with --backend dask")
    if root.exists() and not root.is_dir():
        raise InputError("out", str(root), "a folder (it is a file)")
    if limit is not None and limit < 0:
        raise InputError("limit", limit, "a non-negative integer")
    tasks = expand(cfg)
    specs = cfg.model_specs
    live = [s for s in specs if s != NEGOTIATOR]
    cache_path = Path(cache) if cache is not None else (root / "responses.sqlite" if live else None)
    if offline:
        if not live:
            raise InputError("offline", True, "a study with a model other than the scripted negotiator (it needs no cache)")
        if cache_path is None or not cache_path.is_file():
            raise InputError("cache", str(cache_path), "an existing response cache to replay offline")
    defaulted = workers is None
    if workers is None:
        workers = 1 if backend == "serial" else _default_workers(backend, cfg, specs)
    if backend == "serial":
        workers = 1
    if cache_path is not None:
        check_cache_file(cache_path)       # a folder or a file that is not SQLite: refused before any debate
    if not offline:
        check_reachable(live)              # a server nothing answers at: one line, before any write
    _preflight(cfg, tasks)
    with folder_lock(root) as run_state:
        prepare_store(root, cfg, text, force=force, n_tasks=len(tasks))
        clean_temporaries(root)
        # resume reads every record and hashes its transcript (RESUME_VERIFY): a damaged or misplaced
        # debate goes to quarantine/ (nothing is lost) and is redone, never counted
        before, status = _status_of(root, tasks, verify=RESUME_VERIFY)
        quarantined = quarantine(root, before.damaged)
        todo = [t for t in tasks if t.key not in status or (retry_failed and status[t.key] == "failed")]
        if limit is not None:
            todo = todo[:limit]
        if defaulted and backend == "threads" and workers < len(todo) <= LAST_WAVE * workers:
            workers = min(MAX_DEFAULT_THREADS, len(todo))   # no small last wave (see LAST_WAVE)
        opts = RunOptions(str(cache_path) if cache_path else None, offline,
                          tuple((s, cfg.server_policy(s)) for s in specs),
                          tuple(study_kind(cfg.kind).mechanisms(cfg)),
                          _replica_options(cfg, specs))
        failed_now: list[dict[str, str]] = []
        done = 0
        # CPU-bound scripted studies on worker processes: one unit per cohort keeps the negotiator's
        # shared answers within one process. Against model servers every debate stays its own task
        # (concurrency comes from debates in flight).
        chunked = backend in CHUNKED_BACKENDS and not live and len(todo) > 1
        if progress:
            progress(0, 0, min(workers, len(todo)), len(todo))
        derived: dict[str, Any] = {}
        try:
            for task, rec, data in execute(todo, opts, backend=backend, workers=workers, address=address,
                                           chunked=chunked, derived=derived):
                commit_debate(root, rec, data)
                done += 1
                if rec["status"] != "ok":
                    failed_now.append({"key": task.key, "error": str(rec.get("error"))})
                if progress:
                    progress(done, len(failed_now), min(workers, len(todo) - done), len(todo))
        except (FairArenaError, OSError):
            raise
        except Exception as exc:   # the backend, not a debate (those never raise out of execute_task)
            why = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")[:300]
            raise StudyRunError(f"the {backend} backend failed after {done} of {len(todo)} debates "
                                f"({type(exc).__name__}: {why}); finished debates are saved, rerun to resume") from exc
        if todo:
            after, _ = _status_of(root, tasks)
            _after_run(cfg, root, rebuild_results(root, tasks), derived)
        else:   # nothing ran (a resume of a finished study): the table only if a killed run left it stale
            after = before
            if not _results_current(root, status):
                rebuild_results(root, tasks)
        rerun = {t.key for t in todo}
        summary = RunSummary(len(tasks), sum(1 for k in status if k not in rerun), len(todo), after.ok, after.failed, after.pending,
                             failed_now, round(time.perf_counter() - t_start, 3), backend, workers, str(root),
                             [d["file"] for d in before.damaged] if quarantined else [])
        if summary.failed:   # the CLI exits 1: .run.json says so too
            run_state.update(status="failed", reason=f"{summary.failed} of {summary.total} debates failed")
        rec = run_record(None, None, command="study run", summary={k: v for k, v in summary.to_dict().items()
                                                                  if k != "failed_now"},
                         retry_failed=retry_failed, offline=offline, cache=str(cache_path) if cache_path else None,
                         address=address, limit=limit,
                         server_limits={} if offline else server_limits([server_key(s) for s in live]))
        rec.pop("config")
        rec.pop("seed")
        with open(root / "runs.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, default=json_default) + "\n")
    return summary


def _after_run(cfg: StudyConfig, root: Path, rows: list[dict[str, Any]], derived: Mapping[str, Any]) -> None:
    """The kind's ``after_run`` (a duel keeps the analysis' transcript caches up to date): never a reason
    for a run that finished its debates to fail (the analysis computes what is missing)."""
    from fairarena.study.kinds import study_kind

    try:
        study_kind(cfg.kind).after_run(root, rows, derived)
    except Exception:      # noqa: BLE001 - a cache
        pass


def _replica_options(cfg: StudyConfig, specs: Sequence[str]) -> tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]:
    """Per model spec with ``replicas``: each base URL with its policy (``concurrency`` by that URL, else the
    spec's own server's)."""
    from fairarena.llm.concurrency import ConcurrencyPolicy
    from fairarena.llm.spec import parse_model_spec

    out = []
    for s in specs:
        urls = cfg.replica_urls(s)
        base = parse_model_spec(s).base_url
        if base and base.rstrip("/") in cfg.replicas:
            own = cfg.server_policy(s)
            out.append((s, tuple((u, ConcurrencyPolicy.of(cfg.concurrency[u], f"study.concurrency[{u!r}]")
                                  if u in cfg.concurrency else own) for u in urls)))
    return tuple(out)


MAX_DEFAULT_THREADS = 1024
THREADS_PER_SLOT = 2.5   # default debates in flight per call the servers may have in flight
LAST_WAVE = 1.25
"""Threads, default workers: when the debates to run exceed the default by at most this factor, all of them
start at once. Debates started together advance together (a server serves its queued calls in turn), so
with 640 threads for 650 debates the last 10 could only start when the first ones finished, near the end,
and then ran their ten turns alone on an idle server (the runner benchmark's last tenth: 14-76 % of the
slots busy, against 78 % with the 650 at once: docs/performance.md)."""


def _default_workers(backend: str, cfg: StudyConfig, specs: list[str]) -> int:
    """Debates in flight by default. Threads against model servers: :data:`THREADS_PER_SLOT` (2.5) x the
    servers' ceilings added up (each replica counted; a debate makes one call at a time), at most
    :data:`MAX_DEFAULT_THREADS`. The debates beyond the ceilings wait for a slot; they are there so that
    when no debate is left to start, enough are still in flight to keep every slot busy while the last
    ones finish (with a quarter more than the ceilings, the runner benchmark's server left three quarters
    of its slots idle over the last tenth of the run: docs/performance.md)."""
    import math

    from fairarena.execution import default_workers

    cores = default_workers()
    if backend == "threads":
        servers: dict[str, int] = {}
        for s in specs:
            pol = cfg.server_policy(s)
            if pol is None:
                continue
            reps = dict(_replica_options(cfg, [s])).get(s)
            for url, p in (reps or ((str(s), pol),)):
                servers[url] = max(servers.get(url, 0), p.max)
        if not servers:
            return cores
        return min(MAX_DEFAULT_THREADS, max(2, math.ceil(THREADS_PER_SLOT * sum(servers.values()))))
    return cores


def _preflight(cfg: StudyConfig, tasks: Sequence[DebateTask]) -> None:
    """Build the first debate's agents before any work or write: a bad environment (e.g. ``rag = "on"``
    without the extra) fails once, with the usual one-line error, instead of in every debate."""
    if not tasks:
        return
    from fairarena.study.kinds import study_kind

    study_kind(cfg.kind).preflight(cfg, tasks)
