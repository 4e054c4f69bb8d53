"""A finished duel study's repeated-samples statistics, noise nulls and transcript-only analyses.

The glue between a study folder and the pure functions of :mod:`fairarena.stats.samples`,
:mod:`fairarena.stats.noise` and :mod:`fairarena.stats.transcripts`: which debates count, the control
debates' traces, each cohort's framework optima (for the bias confusion table), the copy rates read from
every transcript. :func:`study_extras` returns them all as one JSON-ready mapping that
:mod:`fairarena.experiments.study_analysis` adds to ``study stats``, ``study tables`` and the report.

The selection is the statistics' (first capacity variant and closing of the design, design seed
``seeds[0]``) with every sample of that seed: repeat ``j`` of a debate has its own seed
(:func:`fairarena.experiments.study.sample_seed`), so the records are matched through it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

OPTIMA = "optima.json"              # per-cohort framework optima (metrics), keyed by the cohort's digest
TRANSCRIPT_ROWS = "copies.json"     # per-debate copy rates, valid while the transcripts are the same
SCRIPTED = "scripted:negotiator"


def selected(root: str | Path, rows: Sequence[Mapping[str, Any]], *, control: bool = False) -> list[dict[str, Any]]:
    """The ok records the repeated-samples statistics use: framework-aligned debates (``control=False``) or
    the baseline-vs-baseline controls (``control=True``) of the design's first capacity, closing and seed,
    every sample."""
    from fairarena.experiments.study import sample_seed
    from fairarena.experiments.study_store import study_tasks

    cfg, _ = study_tasks(root)
    cap, closing, seed = cfg.capacity[0], cfg.closing[0], cfg.seeds[0]
    out = []
    for r in rows:
        t = r["task"]
        if r["status"] != "ok" or t["capacity"] != cap or t["closing"] != closing:
            continue
        if t["seed"] != sample_seed(seed, int(t.get("sample") or 0)):
            continue
        is_control = bool(t.get("control")) or (t["framework"] is None and t["agent_a"] == "baseline"
                                                 and t["agent_b"] == "baseline")
        if control and is_control or not control and not is_control and t["framework"] is not None:
            out.append(dict(r))
    return out


def finals_frame(recs: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> Any:
    """The long-form frame of :func:`fairarena.stats.samples.samples_frame` from study records."""
    from fairarena.stats.samples import samples_frame

    def pick(r: Mapping[str, Any], who: str) -> dict[str, float] | None:
        d = (r.get("metrics") or {}).get(who)
        return None if d is None else {k: d[k] for k in metrics if k in d}

    return samples_frame([{"cohort": r["task"]["cohort"], "framework": r["task"]["framework"],
                           "opponent": r["task"]["agent_b"], "sample": int(r["task"].get("sample") or 0),
                           "a": pick(r, "a") or {}, "opp": pick(r, "b") or {},
                           "a_feasible": bool((r.get("feasible") or {}).get("a")),
                           "opp_feasible": bool((r.get("feasible") or {}).get("b"))} for r in recs], metrics)


def _digest(recs: Sequence[Mapping[str, Any]]) -> str:
    return hashlib.sha256("".join(f"{r['key']}:{r.get('transcript_sha256')};" for r in recs).encode()).hexdigest()


def _cached(path: Path, digest: str, compute: Any) -> Any:
    from fairarena.fsutil import atomic_write_text

    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("digest") == digest:
                return data["value"]
        except (ValueError, KeyError, TypeError):
            pass
    value = compute()
    try:
        atomic_write_text(path, json.dumps({"digest": digest, "value": value}, separators=(",", ":")))
    except OSError:
        pass                                          # a read-only study folder: no cache
    return value


def copy_rows(root: str | Path, recs: Sequence[Mapping[str, Any]]) -> list[list[dict[str, Any]]]:
    """:func:`fairarena.stats.transcripts.copy_rates` of every debate's transcript (cached in
    ``DIR/copies.json`` while the transcripts are the same)."""
    from fairarena.experiments.study_store import read_transcript
    from fairarena.stats.transcripts import copy_rates, debate_turns

    root = Path(root)
    return _cached(root / TRANSCRIPT_ROWS, _digest(recs),
                   lambda: [copy_rates(debate_turns(read_transcript(root, r))) for r in recs])


def cohort_optima(root: str | Path, recs: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """``{cohort: {framework: metrics of its optimal allocation}}`` for every cohort of ``recs``: the
    cohort as the debates saw it (the transcript header's, not a fresh sample), the six frameworks of the
    registry (exact MILPs, about 0.3-1.5 s a cohort); cached in ``DIR/optima.json`` under a digest of
    the cohorts."""
    from fairarena.allocation.frameworks import framework_optima
    from fairarena.allocation.metrics import METRIC_KEYS, compute_metrics
    from fairarena.experiments.study_store import read_transcript
    from fairarena.triage import parse_cohort

    root = Path(root)
    first: dict[str, Mapping[str, Any]] = {}
    for r in recs:
        first.setdefault(str(r["task"]["cohort"]), r)
    cohorts = {}
    for c, r in sorted(first.items()):
        header = next((e for e in read_transcript(root, r) if e.get("type") == "header"), {})
        if header.get("cohort"):
            cohorts[c] = header["cohort"]
    digest = hashlib.sha256(json.dumps(cohorts, sort_keys=True).encode()).hexdigest()

    def compute() -> dict[str, Any]:
        out = {}
        for c, data in cohorts.items():
            p = parse_cohort(data).to_problem()
            out[c] = {f: {k: float(compute_metrics(p, x)[k]) for k in METRIC_KEYS}
                      for f, x in framework_optima(p).items()}
        return out

    return _cached(root / OPTIMA, digest, compute)


def uses_models(recs: Sequence[Mapping[str, Any]]) -> bool:
    """Does any debate use an agent model other than the scripted negotiator?"""
    return any(r["task"].get(k) not in (None, SCRIPTED) for r in recs for k in ("model_a", "model_b"))


def study_extras(root: str | Path, rows: Sequence[Mapping[str, Any]], traces: Sequence[Mapping[str, Any]],
                 directions: Mapping[str, str], *, test: str = "auto", n_resamples: int | None = None,
                 holm: bool = True, bias: bool | None = None) -> dict[str, Any]:
    """Repeated samples, nulls and transcript analyses of a duel study (JSON-ready):

    ``samples`` (:func:`~fairarena.stats.samples.samples_table` rows), ``noise``
    (:func:`~fairarena.stats.noise.noise_report`), ``copies``, ``convergence``, ``contestation`` and
    ``bias_confusion`` (None unless ``bias``; default: when a debate used a language model, since the
    scripted negotiator opens at the optima by construction and the optima cost a MILP per framework and
    cohort). ``traces``: the framework-aligned debates' traces (:func:`study_analysis.load_traces`).
    ``holm``: correct the null tests over the report (default on). Traces of repeats (samples > 0) that
    ``traces`` lacks are read here."""
    from fairarena.experiments.study_analysis import trace_of
    from fairarena.experiments.study_store import read_transcript
    from fairarena.stats import DEFAULT_RESAMPLES
    from fairarena.stats.noise import noise_report
    from fairarena.stats.samples import samples_table
    from fairarena.stats.transcripts import bias_confusion, contestation, convergence, copy_summary

    root = Path(root)
    recs = selected(root, rows)
    ctrl_recs = selected(root, rows, control=True)
    control = [trace_of(r, read_transcript(root, r)) for r in ctrl_recs]
    have = {t["key"] for t in traces}
    traces = [*traces, *(trace_of(r, read_transcript(root, r)) for r in recs if r["key"] not in have)]  # samples > 0
    frame = finals_frame(recs, list(directions))
    copies = copy_summary(copy_rows(root, [*recs, *ctrl_recs]))
    do_bias = uses_models(recs) if bias is None else bias
    confusion = bias_confusion([*traces, *control], cohort_optima(root, recs)) if do_bias and recs else None
    noise = noise_report(traces, control, directions, finals=frame,
                         bias_hits=confusion["hits"] if confusion else None, copies=copies,
                         correction="holm" if holm else "none")
    samples = samples_table(frame, directions, test=test,
                            n_resamples=DEFAULT_RESAMPLES if n_resamples is None else n_resamples) if len(frame) else []
    if confusion is not None:
        confusion = {k: v for k, v in confusion.items() if k != "hits"}
    return {"samples": samples, "noise": noise, "copies": copies, "convergence": convergence(traces)["by_stage"],
            "contestation": {k: v for k, v in contestation(traces).items() if k != "per_debate"},
            "bias_confusion": confusion, "control_debates": len(control),
            "samples_per_cell": int(frame.groupby(["cohort", "framework", "opponent"]).size().max()) if len(frame) else 0}


__all__ = ["OPTIMA", "SCRIPTED", "TRANSCRIPT_ROWS", "cohort_optima", "copy_rows", "finals_frame", "selected",
           "study_extras", "uses_models"]
