"""A finished study folder turned into statistics, tables, the emergence analysis and the HTML report.

Each function validates the folder first (:func:`check_finished`: a study folder whose every debate has
an ``ok`` record; ``allow_partial`` analyses what finished), then calls the pure code of
:mod:`fairarena.stats` (paired tests, emergence measures) and :mod:`fairarena.report` (tables, HTML).
The ``study stats/tables/report`` commands are one call each into this module.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairarena.fsutil import loads_json
from fairarena.study.store import check_finished, read_transcript  # noqa: F401 (re-exported)
from fairarena.study.traces import trace_of  # noqa: F401  (re-exported: a public name here)

DEBATE_DETAILS: int | None = None   # debates with a full transcript in the report's drill-down (None: every one)


@dataclass(frozen=True)
class StudyAnalysis:
    stats: Any                      # fairarena.stats.StudyStats
    emergence: dict[str, Any]
    status: dict[str, Any]
    seconds: float
    mechanisms: dict[str, Any] | None = None    # deliberation vs mechanisms (None: the design lists none)
    extras: dict[str, Any] | None = None        # repeated samples, nulls, transcript analyses (study_noise)

    def to_dict(self) -> dict[str, Any]:
        out = {"status": self.status, "statistics": self.stats.to_dict(), "emergence": self.emergence,
               "seconds": round(self.seconds, 3)}
        if self.mechanisms is not None:
            out["mechanisms"] = self.mechanisms
        if self.extras is not None:
            ex = self.extras
            out["samples"] = {"per_cell": ex["samples_per_cell"], "cells": ex["samples"]}
            out["noise"] = {**ex["noise"], "control_debates": ex["control_debates"]}
            out["transcripts"] = {k: ex[k] for k in ("copies", "convergence", "contestation", "bias_confusion")}
        return out


def _selected(root: Path, capacity: str | None, seed: int | None, closing: str | None,
              rows: Sequence[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The ok records of framework-aligned debates of one capacity, seed and closing (as the statistics)."""
    from fairarena.study.store import load_results, study_tasks

    cfg, _ = study_tasks(root)
    capacity = cfg.capacity[0] if capacity is None else capacity
    seed = cfg.seeds[0] if seed is None else seed
    closing = cfg.closing[0] if closing is None else closing
    return [r for r in (load_results(root) if rows is None else rows) if r["status"] == "ok" and r["task"]["framework"] is not None
            and r["task"]["capacity"] == capacity and r["task"]["seed"] == seed and r["task"]["closing"] == closing]


TRACES = "traces.json"       # cache of the traces in the study folder (valid while the transcripts are the same)


def _traces_digest(recs: Sequence[Mapping[str, Any]]) -> str:
    """The key of ``traces.json``: the selected keys and their transcripts' SHA-256."""
    import hashlib

    return hashlib.sha256("".join(f"{r['key']}:{r.get('transcript_sha256')};" for r in recs).encode()).hexdigest()


def _cached_traces(root: Path, digest: str) -> list[dict[str, Any]] | None:
    """The traces in ``DIR/traces.json`` when it was written for ``digest`` (else None)."""
    path = root / TRACES
    if path.is_file():
        try:
            data = loads_json(path.read_bytes())
            if data.get("digest") == digest:
                return list(data["traces"])
        except (ValueError, KeyError, TypeError):
            pass                                  # unreadable cache: recompute
    return None


def _save_traces(root: Path, digest: str, traces: list[dict[str, Any]]) -> None:
    from fairarena.fsutil import atomic_write_text

    try:
        atomic_write_text(root / TRACES, json.dumps({"digest": digest, "traces": traces}, separators=(",", ":")))
    except OSError:
        pass                                      # a read-only study folder: no cache


def load_traces(root: str | Path, *, capacity: str | None = None, seed: int | None = None,
                closing: str | None = None, cache: bool = True,
                rows: Sequence[dict[str, Any]] | None = None, seen: dict[str, Any] | None = None,
                jobs: int | None = 1) -> list[dict[str, Any]]:
    """The traces of the selected debates. Reading every transcript costs about 0.4 ms a debate (mostly
    JSON decoding of the prompts), so the traces are kept in ``DIR/traces.json`` under a digest of the
    selected keys and their transcripts' SHA-256: a later call with the same transcripts reads that
    file; any other change recomputes it. ``seen``: a dict that receives the copy measures
    (:func:`fairarena.stats.transcripts.copy_rates`) of each transcript read here, by key (they then read
    no transcript again: :func:`fairarena.study.noise.copy_rows`). ``jobs``: 2 (None: where
    :func:`fairarena.report.background.can_fork`) reads the second half of the transcripts in a forked
    child (:class:`fairarena.report.background.Background`: the same traces, sooner on a second core)."""
    root = Path(root)
    recs = _selected(root, capacity, seed, closing, rows)
    digest = _traces_digest(recs)
    if cache:
        hit = _cached_traces(root, digest)
        if hit is not None:
            return hit
    from fairarena.report.background import Background, use_child

    half = len(recs) // 2 if len(recs) >= SPLIT_AT and use_child(jobs) else len(recs)
    later = recs[half:]
    with Background(lambda: _transcript_pass(root, later, {}), jobs=jobs if later else 1,
                    check=lambda v: isinstance(v, tuple) and len(v) == 2 and len(v[0]) == len(later)) as child:
        traces = _transcript_pass(root, recs[:half], seen)[0]
        if later:
            more, copies = child.result()
            traces += more
            if seen is not None:
                seen.update(copies)
    if cache:
        _save_traces(root, digest, traces)
    return traces


SPLIT_AT = 200
"""A fresh analysis of at least this many debates reads its transcripts in two processes where it may."""


def _transcript_pass(root: Path, recs: Sequence[Mapping[str, Any]], seen: dict[str, Any] | None
                     ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The traces of ``recs`` and (into ``seen``, which is returned) their copy measures, each transcript
    read once."""
    seen = {} if seen is None else seen
    return [trace_of(r, _read_noting(root, r, seen)) for r in recs], seen


def _read_noting(root: Path, rec: Mapping[str, Any], seen: dict[str, Any] | None) -> list[dict[str, Any]]:
    """:func:`read_transcript`, its copy measures noted in ``seen`` (see :func:`load_traces`)."""
    entries = read_transcript(root, rec)
    if seen is not None:
        from fairarena.stats.transcripts import copy_rates, debate_turns

        seen[rec["key"]] = copy_rates(debate_turns(entries))
    return entries


def derive_duel(record: Mapping[str, Any], transcript: bytes) -> dict[str, Any]:
    """What the analysis wants of one finished debate's transcript -- its trace (:func:`trace_of`) and its
    copy measures (:func:`fairarena.stats.transcripts.copy_rates`) -- computed by the worker that ran it
    while the transcript is in memory (the duel kind's ``derive``). :func:`keep_derived` then writes them
    to the analysis' caches, so a study's first analysis reads no transcript."""
    from fairarena.arena.transcript import parse_transcript
    from fairarena.stats.transcripts import copy_rates, debate_turns

    events = parse_transcript(transcript)
    return {"trace": trace_of(record, events), "copies": copy_rates(debate_turns(events))}


def keep_derived(root: str | Path, rows: Sequence[dict[str, Any]], derived: Mapping[str, Any]) -> None:
    """The duel kind's ``after_run``: ``traces.json`` and ``copies.json`` for the study's records ``rows``,
    as :func:`load_traces` and :func:`fairarena.study.noise.copy_rows` would write them, from the values
    the workers derived (:func:`derive_duel`) and, for debates finished before this run, from their
    transcripts. A cache already up to date is left as it is."""
    from fairarena.study.noise import copy_rows, selected

    root = Path(root)
    seen = {k: v["copies"] for k, v in derived.items()}
    recs = _selected(root, None, None, None, rows)
    digest = _traces_digest(recs)
    if _cached_traces(root, digest) is None:
        traces = [derived[r["key"]]["trace"] if r["key"] in derived else trace_of(r, _read_noting(root, r, seen))
                  for r in recs]
        _save_traces(root, digest, traces)
    copy_rows(root, [*selected(root, rows), *selected(root, rows, control=True)], seen)


def _owners() -> dict[str, str]:
    from fairarena.allocation.frameworks import FRAMEWORKS

    out = {}
    for f in FRAMEWORKS:
        e = FRAMEWORKS.get(f)
        out[e.metric] = f
        if e.paper_metric:
            out.setdefault(e.paper_metric, f)      # gini: the paper's egalitarian metric
    return out


def analyse_study(root: str | Path, *, test: str = "auto", holm: bool = False, allow_partial: bool = False,
                  n_resamples: int | None = None, bias: bool | None = None, jobs: int | None = 1) -> Any:
    """The paired statistics of every opponent x framework x metric cell, the emergence measures and
    their nulls, the repeated-samples statistics and the transcript analyses (a :class:`StudyAnalysis`;
    ``bias``: compute the nearest-framework table, by default only when a debate used a language model,
    :func:`fairarena.study.noise.study_extras`); of a council study, its
    :class:`fairarena.study.council.CouncilAnalysis`. ``jobs``: a duel study's fresh transcript pass in one
    process (1, the default) or two (:func:`load_traces`; None: as ``fairarena study stats`` chooses)."""
    from fairarena.study.kinds import kind_of_folder

    kind = kind_of_folder(root)
    kw: dict[str, Any] = dict(test=test, holm=holm, allow_partial=allow_partial, n_resamples=n_resamples)
    if kind.name == "duel":   # the duel's own options (a council's analysis has no transcript analyses)
        kw.update(bias=bias, jobs=jobs)
    return kind.analyse(root, **kw)


def analyse_duel(root: str | Path, *, test: str = "auto", holm: bool = False, allow_partial: bool = False,
                 n_resamples: int | None = None, bias: bool | None = None, jobs: int | None = 1) -> StudyAnalysis:
    """A duel study's :class:`StudyAnalysis` (:func:`analyse_study`)."""
    return _analyse_duel(root, test=test, holm=holm, allow_partial=allow_partial, n_resamples=n_resamples,
                         bias=bias, jobs=jobs)[0]


def _analyse_duel(root: str | Path, *, test: str = "auto", holm: bool = False, allow_partial: bool = False,
                  n_resamples: int | None = None, bias: bool | None = None,
                  prepare: Any = None, jobs: int | None = 1) -> tuple[StudyAnalysis, list[dict[str, Any]]]:
    """:func:`analyse_duel` and the records it read (the report uses them rather than reading them again).
    ``prepare``: called with the records, the design and its tasks once they are read and checked, before the
    traces are loaded (the report's single pass over the transcripts, :func:`_one_pass`)."""
    from fairarena.study.instances import metric_directions
    from fairarena.study.mechanisms import allocation_directions
    from fairarena.study.store import comparison_records, study_tasks
    from fairarena.stats import DEFAULT_RESAMPLES, check_options, compare_table
    from fairarena.stats.emergence import emergence

    check_options(test, 0.05, "wilcox")                     # bad --test before any work
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    status = check_finished(root, allow_partial=allow_partial, keep=rows)   # every record read once, here
    cfg, tasks = study_tasks(root)
    seen: dict[str, Any] = {}          # the copy measures of transcripts read on the way, by key (read each once)
    if prepare is not None:
        prepare(rows, cfg, tasks, seen)
    pairs = _participant_duel(cfg)
    if pairs:                           # another domain's duel: cells by who debated whom, its metrics
        directions = metric_directions(cfg.domain, getattr(cfg, "problem", None) or None)
        recs = participant_records(tasks, rows, directions)
    else:
        directions = allocation_directions()
        recs = comparison_records(root, rows=rows)
    st = compare_table(recs, directions, test=test, correction="holm" if holm else "none",
                       n_resamples=DEFAULT_RESAMPLES if n_resamples is None else n_resamples, observed_only=pairs)
    means = {(c.opponent, c.framework, c.metric): c.result.mean_a for c in st.cells}
    traces = load_traces(root, rows=rows, seen=seen, jobs=jobs)
    em = emergence(traces, directions, means, _owners())
    from fairarena.study.noise import study_extras

    extras = study_extras(root, rows, traces, directions, test=test, n_resamples=n_resamples, bias=bias, seen=seen)
    mech = None
    if cfg.mechanisms:
        from fairarena.study.mechanisms import compare_mechanisms

        mech = compare_mechanisms(root, _selected(Path(root), None, None, None, rows), cfg.mechanisms, directions,
                                  opponents=st.opponents, frameworks=st.frameworks, test=test,
                                  correction="holm" if holm else "none",
                                  n_resamples=DEFAULT_RESAMPLES if n_resamples is None else n_resamples)
    return StudyAnalysis(st, em, status, time.perf_counter() - t0, mech, extras), rows


def _participant_duel(cfg: Any) -> bool:
    """A duel of a domain other than the default one: its participants debate two by two (Agent A aligned
    to no framework), so its cells are (B, A) pairs of participants, not opponent x framework."""
    from fairarena.study.instances import default_domain

    return (getattr(cfg, "domain", None) or default_domain()) != default_domain()


def _first_variant_rows(tasks: Sequence[Any], rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ok debates of the first task's instance variant (capacity) and closing rule (the design's first):
    what a participant duel's statistics and report are about."""
    if not tasks:
        return []
    first = tasks[0]
    return [r for r in rows if r["status"] == "ok" and r["task"]["capacity"] == first.capacity
            and r["task"]["closing"] == first.closing]


def participant_records(tasks: Sequence[Any], rows: Sequence[dict[str, Any]],
                        directions: Mapping[str, str]) -> list[dict[str, Any]]:
    """The paired statistics' input of a participant duel (:func:`_participant_duel`): one mapping per debate
    of :func:`_first_variant_rows`, its ``framework`` Agent A's participant and ``opponent`` Agent B's,
    ``a``/``opp``/``joint`` the final metrics named in ``directions`` (the domain's; a missing or non-numeric
    value is NaN). The pairing unit (``cohort``) is the debate's (cohort, seed): a problem file has one
    instance, its seeds are its repeated debates."""
    def pick(d: Mapping[str, Any] | None) -> dict[str, float] | None:
        if d is None:
            return None
        return {k: (float(d[k]) if isinstance(d.get(k), (int, float)) and not isinstance(d.get(k), bool)
                    else math.nan) for k in directions}

    out = []
    for r in _first_variant_rows(tasks, rows):
        t = r["task"]
        m = r.get("metrics") or {}
        feas = r.get("feasible") or {}
        out.append({"cohort": (t["cohort"], t["seed"]), "framework": t["agent_a"], "opponent": t["agent_b"],
                    "a": pick(m.get("a")), "opp": pick(m.get("b")), "a_feasible": bool(feas.get("a")),
                    "opp_feasible": bool(feas.get("b")), "joint": pick(m.get("joint")),
                    "joint_feasible": bool(feas.get("joint"))})
    return out


def study_tables(an: Any) -> dict[str, Any]:
    """The tables of an analysis: Tables 2 and 3 (and deliberation vs mechanisms, the figures against their
    nulls, repeated samples, copy rates, convergence, contestation, framework bias) of a duel study; the
    council table and debate vs rules of a council study."""
    from fairarena.study.kinds import kind_of_analysis

    return kind_of_analysis(an).tables(an)


def duel_tables(an: StudyAnalysis) -> dict[str, Any]:
    """A duel study's tables (:func:`study_tables`)."""
    from fairarena.report import table2, table3

    if _pairs_only(an.stats):
        out = pair_tables(an.stats)
    else:
        out = {"table2": table2(an.stats, joint=True), "table3": table3(an.stats)}
    if an.mechanisms is not None:
        out["deliberation_vs_mechanisms"] = mechanisms_table(an.mechanisms)
    from fairarena.study.noise import extras_tables

    out.update(extras_tables(an.extras))
    return out


def _pairs_only(st: Any) -> bool:
    """Statistics of the debated pairs only (a participant duel's), not of every opponent x framework."""
    return len(st.cells) != len(st.opponents) * len(st.frameworks) * len(st.metrics)


def pair_tables(st: Any) -> dict[str, Any]:
    """Tables 2 and 3 of a participant duel: one row per pair that debated (the wide layout of
    :func:`fairarena.report.table2` / :func:`~fairarena.report.table3`, row = Agent A's participant, grouped
    by ``A vs`` B's), metrics titled and directed as the domain's."""
    from dataclasses import replace

    from fairarena.report import Table, table2, table3

    pairs = list(dict.fromkeys((c.opponent, c.framework) for c in st.cells))
    out = {}
    for name, make in (("table2", lambda s: table2(s, layout="wide", joint=True,
                                                   title="Table 2: mean per pair, metric and side")),
                       ("table3", lambda s: table3(s, layout="wide", title="Table 3: paired tests per pair and metric"))):
        parts = [make(replace(st, opponents=(o,), frameworks=(f,))) for o, f in pairs]
        first = parts[0] if parts else make(st)
        out[name] = Table(first.title, first.columns, tuple(r for t in parts for r in t.rows),
                          index_header="A (first speaker)", notes=first.notes, meta=dict(first.meta))
    return out


def mechanisms_table(mech: Mapping[str, Any], digits: int = 3) -> Any:
    """Deliberation vs mechanisms: per mechanism, stage, opponent and framework, the mean paired difference
    joint - mechanism of every metric with its p (raw, or Holm-adjusted when corrected), the pairs used,
    and the model calls and tokens per debate."""
    from fairarena.report import Cell, Row, Table, format_num, format_p

    rows_in = mech["rows"]
    metrics = list(dict.fromkeys(r["metric"] for r in rows_in))
    groups: dict[tuple[str, str, str, str], dict[str, Mapping[str, Any]]] = {}
    for r in rows_in:
        groups.setdefault((r["mechanism"], r["stage"], r["opponent"], r["framework"]), {})[r["metric"]] = r
    cols = [("", "n")] + [c for m in metrics for c in ((m, "joint - mech"), (m, "p"))] + \
           [("spent", "calls/debate"), ("spent", "tokens/debate")]
    rows = []
    for (mname, stage, opp, fw), cells in groups.items():
        first = next(iter(cells.values()))
        out = [Cell(first["n"], str(first["n"]))]
        for m in metrics:
            c = cells.get(m)
            p = None if c is None else (c["p_adjusted"] if c["p_adjusted"] is not None else c["p"])
            better = c is not None and c["winner"] == "joint"
            out += [Cell(None if c is None else c["mean_diff"],
                         "" if c is None else format_num(c["mean_diff"], digits, signed=True), emphasis=better),
                    Cell(p, format_p(p))]
        out += [Cell(first["calls_per_debate"], format_num(first["calls_per_debate"], 1)),
                Cell(first["tokens_per_debate"], format_num(first["tokens_per_debate"], 0))]
        rows.append(Row(f"{mname} ({stage}) vs {opp}, {fw}", tuple(out)))
    return Table("Deliberation vs mechanisms: joint recommendation minus each mechanism's decision (paired by cohort)",
                 tuple(cols), tuple(rows), index_header="mechanism (proposals) vs opponent, framework",
                 notes=("Positive differences favour the joint on metrics where higher is better (ESG, RMG, DW-ESG, "
                        "VWCI), negative ones on the others; bold: the joint is significantly better.",
                        "n: cohorts with both a feasible joint and a feasible mechanism decision (a debate against an "
                        "adversarial opponent has one voter, so no mechanism decision).",
                        "calls and tokens: model calls and prompt + completion tokens the debates spent (0 tokens for "
                        "scripted agents)."))


def write_study_tables(root: str | Path, out: str | Path, *, test: str = "auto", holm: bool = False,
                       allow_partial: bool = False, jobs: int | None = 1) -> list[Path]:
    """Tables 2 and 3 as Markdown, LaTeX and CSV in ``out`` (plus the emergence measures as JSON); of a
    council study, its two tables (plus the analysis as ``council.json``).

    The files are written as a set (:func:`fairarena.study.fileset.write_file_set`): every one is rendered
    first, then all replace the folder's files together; a failure leaves the previous set as it was."""
    import json

    from fairarena.fsutil import json_default
    from fairarena.report.tables import RENDERERS, render
    from fairarena.study.fileset import write_file_set
    from fairarena.study.kinds import kind_of_analysis

    an = analyse_study(root, test=test, holm=holm, allow_partial=allow_partial, jobs=jobs)
    texts: dict[str, str] = {}
    for name, t in study_tables(an).items():
        for f in ("markdown", "latex", "csv"):
            texts[f"{name}{RENDERERS.entry(f).suffix}"] = render(t, f)
    for name, data in kind_of_analysis(an).files(an).items():
        texts[name] = json.dumps(data, indent=2, sort_keys=False, default=json_default) + "\n"
    return write_file_set(out, texts)


def duel_files(an: StudyAnalysis) -> dict[str, Any]:
    """The JSON files written beside a duel study's tables: the emergence measures, the noise analyses."""
    out: dict[str, Any] = {"emergence.json": an.emergence}
    if an.extras is not None:
        out["noise.json"] = an.extras
    return out


# ------------------------------------------------------------------------------------------------ report

STAGE_COLOURS = {"A": "#1f77b4", "B": "#ff7f0e", "joint": "#2ca02c"}


FW_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")


def trajectory_figure(em: Mapping[str, Any], metrics: Sequence[str], opponents: Sequence[str],
                      frameworks: Sequence[str]) -> Any:
    """Mean of each metric (rows) over stages (r1.., final, joint) per opponent (columns): one colour per
    framework A is aligned to, A solid, its opponent dashed, the joint recommendation a star."""
    from matplotlib.figure import Figure

    from fairarena.stats.emergence import stage_order

    stages = sorted({r["stage"] for r in em["trajectories"]}, key=stage_order)
    pos = {s: k for k, s in enumerate(stages)}
    fig = Figure(figsize=(3.6 * len(opponents) + 1.6, 2.1 * len(metrics) + 0.4), layout="constrained")
    axes = fig.subplots(len(metrics), len(opponents), sharex=True, squeeze=False)
    series: dict[tuple[str, str, str, str], dict[str, float]] = {}
    for r in em["trajectories"]:
        series.setdefault((r["metric"], r["opponent"], r["framework"], r["agent"]), {})[r["stage"]] = r["mean"]
    for i, m in enumerate(metrics):
        for j, opp in enumerate(opponents):
            ax = axes[i][j]
            for k, fw in enumerate(frameworks):
                colour = FW_COLOURS[k % len(FW_COLOURS)]
                for ag, style in (("A", "-"), ("B", "--")):
                    pts = series.get((m, opp, fw, ag), {})
                    xs = sorted((pos[s] for s in pts), key=int)
                    ax.plot(xs, [pts[stages[x]] for x in xs], style, color=colour, lw=1.2, marker=".", ms=3,
                            label=fw if ag == "A" else None)
                jp = series.get((m, opp, fw, "joint"), {})
                if "joint" in jp:
                    ax.plot([pos["joint"]], [jp["joint"]], "*", color=colour, ms=6)
            ax.set_xticks(range(len(stages)), stages, fontsize=7)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
            if i == 0:
                ax.set_title(f"A vs {opp}", fontsize=8)
            if j == 0:
                ax.set_ylabel(m, fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", fontsize=7, frameon=False, title="A aligned to (solid: A, dashed: "
               "opponent, star: joint)", title_fontsize=6)
    return fig


def patching_figure(em: Mapping[str, Any]) -> Any:
    """Mean CNSS gain of the worst-served patients of B's opening, per attribute value, for A's final and
    the joint."""
    from matplotlib.figure import Figure

    from fairarena.stats.emergence import ATTRIBUTES

    rows = em["patching"]["by_attribute"]
    fig = Figure(figsize=(2.6 * len(ATTRIBUTES) + 0.6, 3.0), layout="constrained")
    axes = fig.subplots(1, len(ATTRIBUTES), sharey=True, squeeze=False)[0]
    for ax, att in zip(axes, ATTRIBUTES):
        vals = sorted({r["value"] for r in rows if r["attribute"] == att})
        for k, (stage, colour) in enumerate((("final", STAGE_COLOURS["A"]), ("joint", STAGE_COLOURS["joint"]))):
            g = {r["value"]: r["gain"] for r in rows if r["attribute"] == att and r["stage"] == stage}
            ax.bar([x + (k - 0.5) * 0.4 for x in range(len(vals))], [g.get(v, math.nan) for v in vals], 0.4,
                   color=colour, label="A final" if stage == "final" else "joint")
        ax.set_xticks(range(len(vals)), [v[:14] for v in vals], rotation=45, ha="right", fontsize=6)
        ax.set_title(att, fontsize=8)
        ax.axhline(0, color="black", lw=0.6)
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("CNSS gain over B's opening", fontsize=7)
    axes[0].legend(fontsize=6, frameon=False)
    return fig


def feasibility_figure(em: Mapping[str, Any]) -> Any:
    from matplotlib.figure import Figure

    from fairarena.stats.emergence import stage_order

    rows = em["feasibility"]
    stages = sorted({r["stage"] for r in rows}, key=stage_order)
    fig = Figure(figsize=(5.5, 2.8), layout="constrained")
    ax = fig.subplots()
    for k, ag in enumerate(("A", "B")):
        d = {r["stage"]: r for r in rows if r["agent"] == ag}
        ax.bar([x + (k - 0.5) * 0.38 for x in range(len(stages))],
               [d[s]["infeasible"] / d[s]["proposals"] if s in d and d[s]["proposals"] else 0 for s in stages],
               0.38, color=STAGE_COLOURS[ag], label=f"{'A' if ag == 'A' else 'opponent'} infeasible share")
        ax.plot(range(len(stages)), [d[s]["repairs"] / d[s]["proposals"] if s in d and d[s]["proposals"] else 0
                                     for s in stages], marker="x", color=STAGE_COLOURS[ag], ls="--",
                label=f"{'A' if ag == 'A' else 'opponent'} repairs per proposal")
    ax.set_xticks(range(len(stages)), stages, fontsize=7)
    ax.set_ylim(bottom=0)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=6, frameon=False)
    return fig


def _emergence_tables(an: StudyAnalysis) -> list[Any]:
    from fairarena.report import Cell, Row, Table, format_num

    em = an.emergence
    jb = [r for r in em["joint_beats_both"] if r["opponent"] == "all"]
    t1 = Table("Joint beats both: share of debates whose joint recommendation is strictly better than both",
               (("vs round-1 proposals",), ("vs finals",), ("debates",)),
               tuple(Row(r["metric"], (Cell(r["vs_round1"], format_num(r["vs_round1"], 2)),
                                       Cell(r["vs_final"], format_num(r["vs_final"], 2)),
                                       Cell(r["n_final"], str(r["n_final"])))) for r in jb), index_header="metric")
    fb = [r for r in em["framework_bias"] if r["opponent"] == "all"] or em["framework_bias"]
    t2 = Table("Intrinsic framework bias: alignment under which A's final scores best",
               (("best alignment",), ("its mean",), ("metric's framework",), ("its mean",)),
               tuple(Row(r["metric"], (Cell(r["best"], r["best"], emphasis=r["owner"] is not None and not r["owner_best"]),
                                       Cell(r["best_mean"], format_num(r["best_mean"], 3)),
                                       Cell(r["owner"], str(r["owner"])),
                                       Cell(r["owner_mean"], format_num(r["owner_mean"], 3)))) for r in fb),
               index_header="metric", notes=("Bold: the metric's own framework is not the best alignment.",))
    pt = em["patching"]
    t3 = Table("Patching: mean CNSS gain of the patients the opponent's round-1 proposal serves worst",
               tuple((s,) for s in pt["stages"]),
               (Row("all debates", tuple(Cell(pt["overall"][s], format_num(pt["overall"][s], 3)) for s in pt["stages"])),),
               index_header="")
    mo = em["moderation"]
    t4 = Table("Moderation: opponent's mean |CNSS change| from its opening", (("stage",), ("debates",), ("movement",)),
               tuple(Row(r["opponent"], (Cell(r["stage"], r["stage"]), Cell(r["n"], str(r["n"])),
                                         Cell(r["movement"], format_num(r["movement"], 3)))) for r in mo),
               index_header="opponent")
    fe = em["feasibility"]
    t5 = Table("Feasibility per stage", (("proposals",), ("infeasible",), ("repairs",), ("violations by resource",)),
               tuple(Row(f"{r['agent']} {r['stage']}", (Cell(r["proposals"], str(r["proposals"])),
                                                        Cell(r["infeasible"], str(r["infeasible"])),
                                                        Cell(r["repairs"], str(r["repairs"])),
                                                        Cell(None, ", ".join(f"{k} {v}" for k, v in r["violations"].items()) or "none")))
                     for r in fe), index_header="agent, stage")
    return [t1, t2, t3, t4, t5]


def _markdown_blocks(text: str, title: str) -> list[Any]:
    """A domain's rendering (``render(instance)``, the text agents read) as report blocks: each Markdown
    table (``| a | b |`` lines) a :class:`Table`, the other lines text."""
    from fairarena.report import Cell, Row, Table, Text

    blocks: list[Any] = []
    para: list[str] = []
    lines = text.splitlines() + [""]
    k = 0
    while k < len(lines):
        ln = lines[k].strip()
        if ln.startswith("|") and k + 1 < len(lines) and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[k + 1].strip()):
            head = [c.strip() for c in ln.strip("|").split("|")]
            rows = []
            k += 2
            while k < len(lines) and lines[k].strip().startswith("|"):
                cells = [c.strip() for c in lines[k].strip().strip("|").split("|")]
                cells = (cells + [""] * len(head))[:len(head)]
                rows.append(Row(cells[0], tuple(Cell(None, c) for c in cells[1:])))
                k += 1
            caption = " ".join(para).rstrip(":") or title
            para = []
            blocks.append(Table(caption, tuple((h,) for h in head[1:]), tuple(rows), index_header=head[0]))
            continue
        if ln:
            para.append(ln)
        elif para:
            blocks.append(Text(" ".join(para)))
            para = []
        k += 1
    return blocks


def instance_blocks(header: Mapping[str, Any], cache: dict[str, list[Any]] | None = None) -> list[Any]:
    """The instance a debate was run on, from its transcript's header (``domain`` and the instance's
    ``to_dict``: ``instance``, or ``cohort`` for triage), through the domain protocol
    (:func:`fairarena.domains.resolve`: no domain package imported here): the domain's rendering (its
    tables as tables: the patients of a triage cohort) and the problem's arrays (capacity and each item's
    need per resource). ``cache``: per instance, shared by the debates of one cohort. A header without an
    instance, or a domain that cannot rebuild it, gives one line saying so."""
    from fairarena.report import Row, Table, Text

    data = header.get("instance", header.get("cohort"))
    name = header.get("domain") or _default_domain()
    if data is None:
        return [Text("The transcript records no instance.")]
    key = json.dumps([name, data], sort_keys=True, default=str)
    if cache is not None and key in cache:
        return cache[key]
    try:
        from fairarena.domains import resolve

        dom = resolve(name)
        inst = dom.from_dict(data)
        blocks = _markdown_blocks(dom.render(inst), f"{getattr(dom, 'item', 'item')}s")
        prob = dom.problem(inst)
        ids, res = [str(i) for i in prob.ids], [str(r) for r in prob.resources]
        need = getattr(prob, "need", None)
        flags = list(getattr(prob, "indivisible", None) if getattr(prob, "indivisible", None) is not None else ())
        indiv = ({r for r, f in zip(res, flags) if bool(f)} if len(flags) == len(res)
                 and all(not isinstance(f, str) for f in flags) else set(map(str, flags)))
        cols = [("capacity",)] + ([(i,) for i in ids] if need is not None else [])
        rows = []
        for j, r in enumerate(res):
            cells = [_amount(float(prob.capacity[j]))]
            if need is not None:
                cells += [_amount(float(need[i][j])) for i in range(len(ids))]
            rows.append(Row(r + (" (whole units)" if r in indiv else ""), tuple(cells)))
        blocks.append(Table(f"Problem: capacity and each {getattr(dom, 'item', 'item')}'s need per resource",
                            tuple(cols), tuple(rows), index_header="resource"))
    except Exception as exc:         # a report is still written: the instance view says what failed
        blocks = [Text(f"The instance could not be rebuilt through domain {name!r}: {type(exc).__name__}: {exc}")]
    if cache is not None:
        cache[key] = blocks
    return blocks


def _default_domain() -> str:
    """The domain of a transcript that names none: the registry's default (never a name written here)."""
    from fairarena.study.instances import default_domain

    return default_domain()


def _amount(x: float) -> Any:
    """A capacity or need: whole amounts without decimals, others with two."""
    from fairarena.report import Cell, format_num

    return Cell(x, str(int(x)) if math.isfinite(x) and x == int(x) else format_num(x, 2))


def _item_name(domain: Any) -> str:
    """What one row of a domain's allocation is called ("patient"), through the domain protocol."""
    try:
        from fairarena.domains import resolve

        return str(getattr(resolve(domain or _default_domain()), "item", "item"))
    except Exception:          # an unknown domain: the proposal table still shows
        return "item"


def transcript_blocks(entries: Sequence[Mapping[str, Any]], cache: dict[str, Any] | None = None) -> list[Any]:
    """A transcript's turns (each proposal as a table, its metrics, validity, violations, retrieved chunks,
    justification and critique) and its closing, as report blocks. A proposal with more resources than
    items is shown with the resources as rows. ``cache``: the same proposal under the same heading (e.g. A's
    round 1 against each opponent) is one table object, which the renderer renders once."""
    from fairarena.report import KeyValues, Text, format_num

    header = next((e for e in entries if e.get("type") == "header"), {})
    item = _item_name(header.get("domain"))

    def tables(alloc: Mapping[str, Any], title: str) -> list[Any]:
        if cache is None:
            return _allocation_tables(alloc, title, item)
        key = f"alloc:{item}:{title}:{alloc!r}"     # the dict as written: its rows' order is the table's
        if key not in cache:
            cache[key] = _allocation_tables(alloc, title, item, cache.setdefault("\0cells", {}))
        return cache[key]

    blocks: list[Any] = []
    for e in entries:
        if e.get("type") == "turn":
            prop = e.get("proposal") or {}
            alloc = prop.get("allocation") if isinstance(prop, Mapping) else None
            head = f"{e.get('agent')} {e.get('phase')} {e.get('round')}" + (f" (repair {e['attempt']})" if e.get("attempt") else "")
            if isinstance(alloc, Mapping) and alloc:
                blocks += tables(alloc, f"{head}: proposal")
            m = e.get("metrics") or {}
            kv = {k: format_num(v, 3) for k, v in m.items() if isinstance(v, float)}
            kv.update({"valid": str(e.get("valid")), "violations": "; ".join(map(str, e.get("violations") or [])) or "none",
                       "retrieved chunks": ", ".join(str(c.get("id", c) if isinstance(c, Mapping) else c)
                                                     for c in e.get("retrieved") or []) or "none"})
            blocks.append(KeyValues(kv, title=f"{head}: metrics"))
            text = []
            if isinstance(prop, Mapping):
                for k in ("justification", "critique"):
                    if prop.get(k):
                        text.append(f"{k}: {prop[k]}")
            if text:
                blocks.append(Text("\n\n".join(text)))
        elif e.get("type") == "closing":
            alloc = e.get("allocation")
            if isinstance(alloc, Mapping) and alloc:
                blocks += tables(alloc, f"joint recommendation ({e.get('rule')})")
            blocks.append(KeyValues({"rule": e.get("rule"), "note": e.get("note"), "feasible": e.get("feasible"),
                                     **{k: format_num(v, 3) for k, v in (e.get("metrics") or {}).items()
                                        if isinstance(v, float)}}, title="joint recommendation"))
    return blocks


def _allocation_tables(alloc: Mapping[str, Any], title: str, item: str = "patient",
                       cells: dict[Any, Any] | None = None) -> list[Any]:
    """A proposal's table. ``cells``: finite amounts' cells by type and value, shared by the tables of a
    report (cells are immutable: the same table, built faster)."""
    from fairarena.report import Cell, Row, Table, format_num

    rows_of = {str(i): (v if isinstance(v, dict) else {}) for i, v in alloc.items()}
    res = list(dict.fromkeys(r for v in rows_of.values() for r in v))
    if not res:
        return []
    ids = list(rows_of)
    empty = Cell(None, "")

    memo = {} if cells is None else cells

    def val(v: Any) -> Any:       # format_num(v, 2) for finite numbers, inline: ~70,000 cells per 1,000 debates
        tv = type(v)
        if tv is int or (tv is float and v - v == 0.0):
            k = (tv, v) if v else (tv, v, f"{v:.2f}")       # -0.0 == 0.0, but shows as -0.00
            c = memo.get(k)
            if c is None:
                c = memo[k] = Cell(v, f"{v:.2f}")
            return c
        return Cell(v, format_num(v, 2)) if tv is float else empty
    if len(res) > max(12, len(ids)):      # e.g. visitor groups x 60 POI-slots: resources as rows
        rows = tuple(Row(r, tuple(val(rows_of[i].get(r)) for i in ids)) for r in res)
        return [Table(title, tuple((i,) for i in ids), rows, index_header="resource")]
    res = sorted(res)
    rows = tuple(Row(i, tuple(val(rows_of[i].get(r)) for r in res)) for i in ids)
    return [Table(title, tuple((r,) for r in res), rows, index_header=item)]


def _debate_item(root: Path, rec: Mapping[str, Any], detailed: bool = True,
                 cache: dict[str, Any] | None = None, packer: Any = None, bodies: Any = None,
                 pre: Mapping[str, Any] | None = None) -> Any:
    """One debate in the report's drill-down: its instance and full transcript, embedded compressed
    (rendered when opened). ``detailed=False``: the joint metrics only (the report's ``details`` limit).
    With a ``packer`` (:class:`fairarena.report.html.BodyPacker`) the body is rendered and compressed here
    (the item's ``packed``), or taken from ``bodies`` (a :class:`fairarena.report.bodycache.BodyCache`)
    when it holds this transcript's body: the transcript is then not read. ``pre``: bodies packed already
    (by :func:`_one_pass`), by key."""
    from fairarena.report import Item, KeyValues, Text, format_num

    t = rec["task"]
    mets = rec.get("metrics") or {}
    summary = (f"status {rec['status']}; final ESG A {format_num((mets.get('a') or {}).get('esg'))}, "
               f"opponent {format_num((mets.get('b') or {}).get('esg'))}, joint "
               f"{format_num((mets.get('joint') or {}).get('esg'))}")
    tags = {"framework": str(t["framework"]), "opponent": t["agent_b"], "cohort": str(t["cohort"])}
    values = {f"{who} {m}": v for m in ("esg", "rmg", "gini") for who, side in (("joint", "joint"), ("A", "a"), ("opponent", "b"))
              if isinstance(v := (mets.get(side) or {}).get(m), (int, float))}
    title = f"cohort {t['cohort']}: {t['agent_a']} vs {t['agent_b']} ({rec['key'][:10]})"
    if not detailed:
        return Item(title, (KeyValues({k: format_num(v, 3) for k, v in (mets.get("joint") or {}).items()
                                       if isinstance(v, float)}, title="joint metrics"),), summary=summary, tags=tags,
                    values=values)
    if pre is not None and rec["key"] in pre:
        return Item(title, (), summary=summary, tags=tags, values=values, packed=pre[rec["key"]])
    fp = None
    if packer is not None and bodies is not None:
        from fairarena.report.bodycache import transcript_fingerprint

        fp = transcript_fingerprint(root / rec["transcript"], rec.get("transcript_sha256"))
        hit = bodies.get(rec["key"], fp)
        if hit is not None:
            return Item(title, (), summary=summary, tags=tags, values=values, packed=hit)
    blocks = _body_blocks(read_transcript(root, rec), cache)
    if packer is None:
        return Item(title, (), summary=summary, tags=tags, values=values, lazy=tuple(blocks))
    packed = packer.pack(blocks)
    if bodies is not None:
        bodies.put(rec["key"], fp, packed)
    return Item(title, (), summary=summary, tags=tags, values=values, packed=packed)


def _body_blocks(entries: Sequence[Mapping[str, Any]], cache: dict[str, Any] | None) -> list[Any]:
    """A debate's drill-down body: its instance and its transcript."""
    from fairarena.report import Text

    header = next((e for e in entries if e.get("type") == "header"), {})
    return [Text("Instance"), *instance_blocks(header, cache), Text("Transcript"), *transcript_blocks(entries, cache)]


def _one_pass(root: Path, rows: Sequence[dict[str, Any]], detailed: set[str], cache: dict[str, Any],
              packer: Any, bodies: Any, seen: dict[str, Any] | None = None) -> dict[str, Any]:
    """On a freshly run study (``traces.json`` missing or stale), read each selected transcript once for both
    its trace and its report body (before, the traces and the bodies each read every transcript): write
    ``traces.json`` as :func:`load_traces` would (the analysis then reads it) and return the packed bodies
    of the ``detailed`` keys that ``bodies`` does not hold, by key (in the report's order, so the same
    bytes). Nothing is read when ``traces.json`` is valid. ``seen``: as :func:`load_traces`'s."""
    recs = _selected(root, None, None, None, rows)
    digest = _traces_digest(recs)
    if _cached_traces(root, digest) is not None:
        return {}
    # the bodies to build (a cached one: _debate_item takes it from the cache), with their fingerprints
    need = {r["key"]: fp for r, fp in _missing_bodies(root, [r for r in recs if r["key"] in detailed], bodies)}
    traces, out = [], {}
    for r in recs:
        entries = _read_noting(root, r, seen)
        traces.append(trace_of(r, entries))
        key = r["key"]
        if key in need and key not in out:
            out[key] = packed = packer.pack(_body_blocks(entries, cache))
            if bodies is not None:
                bodies.put(key, need[key], packed)
    _save_traces(root, digest, traces)
    return out


def _missing_bodies(root: Path, recs: Sequence[Mapping[str, Any]], bodies: Any) -> list[tuple[dict[str, Any], Any]]:
    """``(record, transcript fingerprint)`` of each debate of ``recs`` (once per key) whose body ``bodies``
    (a :class:`fairarena.report.bodycache.BodyCache`, or None) does not hold."""
    from fairarena.report.bodycache import transcript_fingerprint

    out, keys = [], set()
    for r in recs:
        if r["key"] in keys:
            continue
        keys.add(r["key"])
        fp = None
        if bodies is not None:
            fp = transcript_fingerprint(root / r["transcript"], r.get("transcript_sha256"))
            if bodies.get(r["key"], fp) is not None:
                continue
        out.append((r, fp))
    return out


def _pack_bodies(root: Path, recs: Sequence[Mapping[str, Any]], cache: dict[str, Any], packer: Any) -> dict[str, Any]:
    """The packed body of each debate of ``recs``, by key, built in this order (so the same bytes as
    :func:`_debate_item` builds them one by one); run in the report's second process."""
    return {r["key"]: packer.pack(_body_blocks(read_transcript(root, r), cache)) for r in recs}


def _side_values(recs: Sequence[Mapping[str, Any]], metric: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per debate, the metric of A's and the opponent's final and of the joint recommendation (for
    :func:`fairarena.report.joint_vs_sides_figure`), and of round 1 -> final -> joint per side (for
    :func:`fairarena.report.slopegraph_figure`)."""
    points, lines = [], []
    for r in recs:
        t, m = r["task"], r.get("metrics") or {}
        get = lambda side: (m.get(side) or {}).get(metric)   # noqa: E731
        points.append({"cohort": t["cohort"], "opponent": t["agent_b"], "a": get("a"), "b": get("b"),
                       "joint": get("joint")})
        first = ((r.get("rounds") or [{}])[0]) or {}
        for side, who in (("a", "A"), ("b", "opponent")):
            r1 = ((first.get(side) or {}).get("metrics") or {}).get(metric)
            lines.append({"framework": t["framework"], "opponent": t["agent_b"], "side": who,
                          "values": (r1 if r1 is not None else math.nan, get(side) if get(side) is not None else math.nan,
                                     get("joint") if get("joint") is not None else math.nan)})
    return points, lines


def build_study_report(root: str | Path, *, test: str = "auto", holm: bool = False, allow_partial: bool = False,
                       details: int | None = DEBATE_DETAILS, jobs: int | None = 1) -> Any:
    """The report of a finished study (a :class:`fairarena.report.Report`), by its kind's ``report``.
    ``jobs``: 1 (the default) builds it in this process; 2 also in a forked child
    (:mod:`fairarena.report.background`: the same bytes, sooner on a second core); None: 2 where
    :func:`fairarena.report.background.can_fork` (Linux, two or more CPUs), else 1 -- what ``fairarena
    study report`` does unless ``--jobs`` says otherwise."""
    from fairarena.study.kinds import kind_of_folder

    return kind_of_folder(root).report(root, test=test, holm=holm, allow_partial=allow_partial, details=details,
                                       jobs=jobs)


def _report_records(root: Path, rows: Sequence[dict[str, Any]], cfg: Any, tasks: Sequence[Any]) -> list[dict[str, Any]]:
    """The debates of a duel report's drill-down (and its side figures): those of the statistics."""
    if _participant_duel(cfg) and tasks:   # participants debate each other (no framework)
        return _first_variant_rows(tasks, rows)
    return _selected(root, None, None, None, rows)


def build_duel_report(root: str | Path, *, test: str = "auto", holm: bool = False, allow_partial: bool = False,
                      details: int | None = DEBATE_DETAILS, body_cache: bool = True, jobs: int | None = 1) -> Any:
    """A duel study's report (:func:`build_study_report`); see :func:`_build_duel_report`. Python's cyclic
    garbage collector is paused while it is built: building it allocates hundreds of thousands of decoded
    transcript objects and table cells, few of them in cycles, and the collector's repeated full passes over
    them cost about 1.2 s of 4 s in reading and rendering 2,004 transcripts (reference counting still frees
    everything; the collector runs again afterwards)."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        return _build_duel_report(root, test=test, holm=holm, allow_partial=allow_partial, details=details,
                                  body_cache=body_cache, jobs=jobs)
    finally:
        if was:
            gc.enable()


def _build_duel_report(root: str | Path, *, test: str = "auto", holm: bool = False, allow_partial: bool = False,
                       details: int | None = DEBATE_DETAILS, body_cache: bool = True, jobs: int | None = 1) -> Any:
    """A duel study's report (:func:`build_study_report`). Every debate (or the first ``details``) has its
    instance and full transcript in the drill-down, embedded gzip-compressed and rendered when opened.
    ``body_cache``: keep those compressed bodies in ``DIR/report_bodies.json``
    (:class:`fairarena.report.bodycache.BodyCache`: the same bytes, without reading the transcripts
    again; a damaged or stale file is ignored and rewritten).

    With a second process (``jobs``; :func:`fairarena.report.background.use_child`) the work is shared: a
    forked child builds the bodies missing from the cache from the moment the records are read, while this
    process runs the analysis; then another child draws the two densest figures (joint vs each side, the
    slopegraphs) while this process draws the others. Without, this process reads each transcript once for
    both its trace and its body on a fresh study (:func:`_one_pass`). The same bytes either way."""
    from fairarena.study.noise import extras_sections, noise_summary
    from fairarena.study.store import read_study
    from fairarena.report import (DrillDown, FigureBlock, KeyValues, Preformatted, Report, Section, Text,
                                  joint_vs_sides_figure, means_figure, slopegraph_figure, svg_of)

    from fairarena.report.background import Background, render_figures, use_child
    from fairarena.report.bodycache import FILE as BODIES, BodyCache
    from fairarena.report.html import BodyPacker

    root = Path(root)
    cache: dict[str, list[Any]] = {}
    bodies = BodyCache(root / BODIES) if body_cache else None
    packer = BodyPacker()
    pre: dict[str, Any] = {}              # packed bodies built ahead of the items, by key
    shown: list[dict[str, Any]] = []      # the drill-down's debates, chosen once the records are read
    two = use_child(jobs)
    children: list[Background] = []       # killed and reaped on the way out, whatever happens
    fps: dict[str, Any] = {}              # the transcript fingerprints of the bodies a child builds

    def prepare(rows: list[dict[str, Any]], cfg: Any, tasks: Sequence[Any], seen: dict[str, Any]) -> None:
        shown.extend(_report_records(root, rows, cfg, tasks))
        limit = len(shown) if details is None else details
        if not two:
            pre.update(_one_pass(root, rows, {r["key"] for r in shown[:limit]}, cache, packer, bodies, seen))
            return
        missing = _missing_bodies(root, shown[:limit], bodies)
        if missing:
            recs = [r for r, _ in missing]
            fps.update((r["key"], fp) for r, fp in missing)
            children.append(Background(lambda: _pack_bodies(root, recs, cache, packer), jobs=jobs,
                                       check=lambda v: isinstance(v, dict) and v.keys() == fps.keys()))

    try:
        an, rows = _analyse_duel(root, test=test, holm=holm, allow_partial=allow_partial, prepare=prepare)
        body_job = children[0] if children else None
        meta = read_study(root)
        toml = (root / "study.toml").read_text(encoding="utf-8") if (root / "study.toml").is_file() else ""
        tables = duel_tables(an)
        st, em = an.stats, an.emergence
        # the paper's three headline metrics where the domain has them, else the domain's first three
        focus = [m for m in ("esg", "rmg", "gini") if m in st.metrics] or list(st.metrics)[:3]
        recs = shown
        limit = len(recs) if details is None else details
        pts_by, lines_by = {}, {}
        for m in focus:
            pts_by[m], lines_by[m] = _side_values(recs, m)
        # the figures, by name: (builder, caption, alt)
        specs: dict[str, tuple[Any, str, str]] = {}
        if (em.get("patching") or {}).get("by_attribute"):
            specs["patching"] = (lambda: patching_figure(em), "Patching by protected attribute: mean CNSS gain of "
                                 "the worst-served patients of the opponent's opening.", "")
        if em.get("feasibility"):
            specs["feasibility"] = (lambda: feasibility_figure(em), "Feasibility per stage.", "")
        for m in focus:
            specs[f"means:{m}"] = (lambda m=m: means_figure(st, m), f"{m}: final means with 95% bootstrap CIs", "")
        if focus and st.opponents and em.get("trajectories"):
            specs["trajectory"] = (lambda: trajectory_figure(em, focus, st.opponents, st.frameworks),
                                   "Metric trajectories over rounds per framework and opponent (mean over debates "
                                   "of feasible proposals)", "")
        if focus:
            specs["joint"] = (lambda: joint_vs_sides_figure(pts_by, directions=st.directions, opponents=st.opponents),
                              "The joint recommendation against A's final and against the opponent's final, one "
                              "point per cohort and opponent (mean over frameworks); dotted: y = x.",
                              "joint vs A and joint vs opponent per cohort")
            specs["slopes"] = (lambda: slopegraph_figure(lines_by, directions=st.directions, frameworks=st.frameworks,
                                                         opponents=st.opponents),
                               "Each side from its round-1 proposal to its final and to the joint recommendation; "
                               "grey: one debate, coloured: the mean per framework.", "slopegraphs round 1, final, joint")
        away = [n for n in specs if n in ("joint", "slopes")] if two else []     # the densest: to a child
        children.append(fig_job := render_figures([specs[n][0] for n in away], jobs=jobs))
        svgs = {n: svg_of(specs[n][0]()) for n in specs if n not in away}     # the others: drawn here
        if body_job is not None:          # the bodies the child built: into the page and the cache
            pre.update(built := body_job.result())
            if bodies is not None:
                for key, pk in built.items():
                    bodies.put(key, fps[key], pk)
        items = [_debate_item(root, r, k < limit, cache, packer, bodies, pre) for k, r in enumerate(recs)]
        if bodies is not None:
            bodies.save()
        svgs.update(zip(away, fig_job.result()))
    finally:
        for child in children:
            child.close()

    def figs(*names: str) -> list[Any]:
        return [FigureBlock(svgs[n], caption=specs[n][1], alt=specs[n][2]) for n in names if n in specs]
    prov = meta.get("provenance") or {}
    sections = [
        Section("Study", [KeyValues({"folder": str(root), **{k: v for k, v in an.status.items() if k != "failed_keys"}},
                                    title="status"),
                          KeyValues({k: v for k, v in prov.items()}, title="provenance"),
                          Preformatted(toml, title="study.toml")]),
        Section("Tables", [tables["table2"], tables["table3"]]),
        *([Section("Deliberation vs mechanisms", [
            Text("Each debate's round-1 proposals and finals aggregated by the design's mechanisms (the arena "
                 "closing's objectives; docs/study.md), compared with the debate's joint recommendation."),
            tables["deliberation_vs_mechanisms"]])] if "deliberation_vs_mechanisms" in tables else []),
        Section("Emergence", [Text(noise_summary(an.extras)), *_emergence_tables(an),
                              *figs("patching", "feasibility")]),
        *extras_sections(an.extras, tables),
        Section("Figures", figs(*(f"means:{m}" for m in focus), "trajectory", "joint", "slopes")),
        Section("Debates", [Text(f"{len(items)} debates; "
                                 + ("each" if limit >= len(items) else f"the first {limit}")
                                 + " with its instance (the domain's tables and the problem's capacities and needs) "
                                 "and full transcript (proposals, justifications, critiques, retrieved chunks, repairs, "
                                 "metrics), embedded compressed and shown when the debate is opened"
                                 + ("." if limit >= len(items) else "; the others summarised.")),
                            DrillDown(items, title="Per debate", filters=("cohort", "opponent", "framework"))]),
    ]
    return Report(f"Study report: {meta.get('design', {}).get('name', root.name)}", sections,
                  subtitle=f"{an.status['ok']} debates ok of {an.status['total']}; statistics: test "
                           f"{test}{', Holm' if holm else ''}", footer="fairarena study report")


def write_study_report(root: str | Path, out: str | Path, **kw: Any) -> Path:
    from fairarena.report import write_html

    return write_html(build_study_report(root, **kw), out)


__all__ = ["DEBATE_DETAILS", "StudyAnalysis", "analyse_duel", "analyse_study", "build_duel_report",
           "build_study_report", "duel_files", "duel_tables", "check_finished",
           "load_traces", "read_transcript", "study_tables", "trace_of", "write_study_report", "write_study_tables"]
