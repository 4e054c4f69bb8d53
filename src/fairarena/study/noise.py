"""A finished duel study's repeated-samples statistics, noise nulls and transcript-only analyses.

The glue between a study folder and the pure functions of :mod:`fairarena.stats.samples`,
:mod:`fairarena.stats.noise` and :mod:`fairarena.stats.transcripts`: which debates count, the control
debates' traces, each cohort's framework optima (for the bias confusion table), the copy rates read from
every transcript. :func:`study_extras` returns them all as one JSON-ready mapping that
:mod:`fairarena.study.analysis` adds to ``study stats``, ``study tables`` and the report.

The selection is the statistics' (first capacity variant and closing of the design, design seed
``seeds[0]``) with every sample of that seed: repeat ``j`` of a debate has its own seed
(:func:`fairarena.study.design.sample_seed`), so the records are matched through it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fairarena.fsutil import loads_json

OPTIMA = "optima.json"              # per-cohort framework optima (metrics), keyed by the cohort's digest
TRANSCRIPT_ROWS = "copies.json"     # per-debate copy rates, valid while the transcripts are the same
SCRIPTED = "scripted:negotiator"


def selected(root: str | Path, rows: Sequence[Mapping[str, Any]], *, control: bool = False) -> list[dict[str, Any]]:
    """The ok records the repeated-samples statistics use: framework-aligned debates (``control=False``) or
    the baseline-vs-baseline controls (``control=True``) of the design's first capacity, closing and seed,
    every sample."""
    from fairarena.study.design import sample_seed
    from fairarena.study.store import study_tasks

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
            data = loads_json(path.read_bytes())
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


def copy_rows(root: str | Path, recs: Sequence[Mapping[str, Any]],
              seen: Mapping[str, Any] | None = None) -> list[list[dict[str, Any]]]:
    """:func:`fairarena.stats.transcripts.copy_rates` of every debate's transcript (cached in
    ``DIR/copies.json`` while the transcripts are the same). ``seen``: the copy measures of transcripts
    read already, by key (the others are read here)."""
    from fairarena.study.store import read_transcript
    from fairarena.stats.transcripts import copy_rates, debate_turns

    root = Path(root)
    seen = seen or {}

    def rates(r: Mapping[str, Any]) -> list[dict[str, Any]]:
        hit = seen.get(r["key"])
        return hit if hit is not None else copy_rates(debate_turns(read_transcript(root, r)))
    return _cached(root / TRANSCRIPT_ROWS, _digest(recs), lambda: [rates(r) for r in recs])


def cohort_optima(root: str | Path, recs: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """``{cohort: {framework: metrics of its optimal allocation}}`` for every cohort of ``recs``: the
    cohort as the debates saw it (the transcript header's, not a fresh sample), the six frameworks of the
    registry (exact MILPs, about 0.3-1.5 s a cohort); cached in ``DIR/optima.json`` under a digest of
    the cohorts."""
    from fairarena.allocation.frameworks import framework_optima
    from fairarena.allocation.metrics import METRIC_KEYS, compute_metrics
    from fairarena.study.instances import default_domain, study_domain
    from fairarena.study.store import read_transcript

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
            dom = study_domain(default_domain())   # the profile duels' domain: its instance from the header
            p = dom.problem(dom.from_dict(data))
            out[c] = {f: {k: float(compute_metrics(p, x)[k]) for k in METRIC_KEYS}
                      for f, x in framework_optima(p).items()}
        return out

    return _cached(root / OPTIMA, digest, compute)


def uses_models(recs: Sequence[Mapping[str, Any]]) -> bool:
    """Does any debate use an agent model other than the scripted negotiator?"""
    return any(r["task"].get(k) not in (None, SCRIPTED) for r in recs for k in ("model_a", "model_b"))


def study_extras(root: str | Path, rows: Sequence[Mapping[str, Any]], traces: Sequence[Mapping[str, Any]],
                 directions: Mapping[str, str], *, test: str = "auto", n_resamples: int | None = None,
                 holm: bool = True, bias: bool | None = None, seen: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Repeated samples, nulls and transcript analyses of a duel study (JSON-ready):

    ``samples`` (:func:`~fairarena.stats.samples.samples_table` rows), ``noise``
    (:func:`~fairarena.stats.noise.noise_report`), ``copies``, ``convergence``, ``contestation`` and
    ``bias_confusion`` (None unless ``bias``; default: when a debate used a language model, since the
    scripted negotiator opens at the optima by construction and the optima cost a MILP per framework and
    cohort). ``traces``: the framework-aligned debates' traces (:func:`study_analysis.load_traces`).
    ``holm``: correct the null tests over the report (default on). Traces of repeats (samples > 0) that
    ``traces`` lacks are read here. ``seen``: copy measures of transcripts read already, by key (:func:`copy_rows`)."""
    from fairarena.study.traces import trace_of
    from fairarena.study.store import read_transcript
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
    copies = copy_summary(copy_rows(root, [*recs, *ctrl_recs], seen))
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


# ------------------------------------------------------------------------------------------------ tables

def _pct(x: float) -> str:
    from fairarena.report import format_num

    return "n/a" if x is None or x != x else format_num(100 * x, 0) + "%"


def nulls_table(noise: Mapping[str, Any], digits: int = 3) -> Any:
    """Every figure beside its null: value, null value, effect, interval, p (raw, Holm) and the verdict;
    bold: the figure beats its null."""
    from fairarena.report import Cell, Row, Table, format_num, format_p

    cols = (("value",), ("null",), ("null value",), ("effect",), ("95% CI",), ("cohorts",), ("p",), ("p (Holm)",),
            ("beats its null",))
    rows = []
    for f in noise["figures"]:
        verdict = {True: "yes", False: "no", None: "untested"}[f["beats_null"]]
        label = f"{f['figure']}: {f['metric']}" + ("" if f["opponent"] == "all" else f" vs {f['opponent']}")
        ci = f["ci"]
        rows.append(Row(label, (
            Cell(f["value"], format_num(f["value"], digits), emphasis=bool(f["beats_null"]),
                 title=f.get("detail") or ""),
            Cell(f["null"], f["null"]),
            Cell(f["null_value"], format_num(f["null_value"], digits)),
            Cell(f["effect"], format_num(f["effect"], digits, signed=True)),
            Cell(None, "n/a" if ci[0] != ci[0] else f"[{format_num(ci[0], digits)}, {format_num(ci[1], digits)}]"),
            Cell(f["n_cohorts"], str(f["n_cohorts"])),
            Cell(f["p"], format_p(f["p"])),
            Cell(f["p_adjusted"], format_p(f["p_adjusted"])),
            Cell(verdict, verdict, emphasis=bool(f["beats_null"])))))
    st = noise.get("settings") or {}
    notes = ("A figure beats its null when its p (Holm-adjusted over every figure of this table) is below "
             f"{st.get('alpha', 0.05)} and its effect has the claimed sign; 'no' marks a figure that does not, "
             "'untested' one without a null (the study has no baseline-vs-baseline control debates).",
             "Against the control: per cohort, the figure's mean over the study's debates minus its mean over that "
             "cohort's baseline-vs-baseline debates; effect = mean over cohorts; p from sign-flip permutations. "
             "Framework bias: spread of A's final means across alignments, p from permuting the alignment labels "
             "within cohorts (effect = variance of the alignment means).")
    return Table("Effects against noise: every figure beside its null", cols, tuple(rows), index_header="figure",
                 notes=notes)


def samples_result_table(rows_in: Sequence[Mapping[str, Any]], digits: int = 3) -> Any:
    """Repeated samples: per pairing, alignment and metric, the mean difference A - opponent over debates
    with its cluster-bootstrap interval, the paired test on per-cohort sample means, the mixed model and
    the variance shares."""
    from fairarena.report import Cell, Row, Table, format_num, format_p

    cols = (("", "cohorts"), ("", "debates"), ("A - opponent", "mean"), ("A - opponent", "cluster 95% CI"),
            ("cohort means", "p"), ("mixed model", "estimate"), ("mixed model", "p"),
            ("variance of A - opponent", "between cohorts"), ("variance of A - opponent", "between samples"),
            ("", "winner"))
    rows = []
    for r in rows_in:
        me, vd, ct = r["mixed"] or {}, r["variance_diff"], r["cohort_test"]
        lo, hi = r["cluster_ci"]
        rows.append(Row(f"{r['framework']} vs {r['opponent']}: {r['metric']}", (
            Cell(r["n_cohorts"], str(r["n_cohorts"])), Cell(r["n_debates"], str(r["n_debates"])),
            Cell(r["mean_diff"], format_num(r["mean_diff"], digits, signed=True)),
            Cell(None, "n/a" if lo != lo else f"[{format_num(lo, digits)}, {format_num(hi, digits)}]"),
            Cell(ct["p"], format_p(ct["p"])),
            Cell(me.get("estimate"), format_num(me.get("estimate"), digits, signed=True)),
            Cell(me.get("p"), format_p(me.get("p"))),
            Cell(vd["share_between"], _pct(vd["share_between"])), Cell(vd["share_within"], _pct(vd["share_within"])),
            Cell(r["winner"], r["winner"], emphasis=r["winner"] != "tie"))))
    return Table("Repeated samples: A minus opponent with the samples of a cohort kept together", cols, tuple(rows),
                 index_header="alignment vs opponent: metric",
                 notes=("cluster 95% CI: cohorts resampled with all their samples (2,000 resamples, seed 42). cohort "
                        "means p: the paper's paired test (Shapiro-Wilk, then t or Wilcoxon) on each cohort's mean "
                        "over its samples. mixed model: d = mu + u_cohort + e (REML), Wald p of mu. Variance shares: "
                        "one-way ANOVA estimates of the spread between cohorts and between samples of one cohort. "
                        "winner: by the mixed model at 0.05 (by the cohort-means test when no model could be fitted).",))


def copies_table(copies: Mapping[str, Any]) -> Any:
    """Copy rates per agent and stage."""
    from fairarena.report import Cell, Row, Table

    cols = (("turns",), ("cells equal to the other's last",), ("cells adopted",), ("justification copied",),
            ("justification from history",))
    rows = tuple(Row(f"{r['agent']} {r['stage']}", (Cell(r["turns"], str(r["turns"])),
                                                   *(Cell(r[k], _pct(r[k])) for k in ("cells_same", "cells_adopted",
                                                                                      "text_copied", "text_history"))))
                 for r in copies["per_stage"])
    flag = ("The agents copy each other: from round 2 on both agents' justifications are at least "
            f"{_pct(copies['level'])} word 3-grams of the other's last turn and they adopt its cells; read every "
            "figure of this report against its null." if copies["copying"] else
            "The agents do not copy each other wholesale (flag: both agents' justifications and cells at least "
            f"{_pct(copies['level'])} copied from round 2 on).")
    return Table("Copy rates: how much of each turn repeats the other agent's last turn", cols, rows,
                 index_header="agent, stage",
                 notes=("cells equal: share of the allocation's cells (patient x resource) equal to the other agent's "
                        "last turn; adopted: among the cells where the agent's own previous turn differed from the "
                        "other's, the share it moved onto the other's value; justification copied: share of its word "
                        "3-grams found in the other's last justification and critique (history: anywhere earlier).",
                        flag), meta={"copying": copies["copying"]})


def convergence_table(rows_in: Sequence[Mapping[str, Any]]) -> Any:
    from fairarena.report import Cell, Row, Table, format_num

    rows = tuple(Row(f"{r['opponent']} {r['stage']}", (Cell(r["n"], str(r["n"])),
                                                      Cell(r["distance"], format_num(r["distance"], 3)),
                                                      Cell(r["agree"], _pct(r["agree"]))))
                 for r in rows_in)
    return Table("Convergence: distance between the two agents' proposals per stage", (("debates",), ("mean |CNSS gap|",),
                 ("identical CNSS",)), rows, index_header="opponent, stage",
                 notes=("Per debate and stage, the mean over patients of |CNSS_A - CNSS_opponent| (both proposals "
                        "feasible); identical: share of debates where every patient's CNSS agrees.",))


def contestation_tables(con: Mapping[str, Any]) -> list[Any]:
    from fairarena.report import Cell, Row, Table, format_num

    rows = tuple(Row(f"{r['opponent']} {r['stage']}", (Cell(r["n"], str(r["n"])),
                                                      Cell(r.get("by_A"), format_num(r.get("by_A"), 3, signed=True)),
                                                      Cell(r.get("by_opponent"),
                                                           format_num(r.get("by_opponent"), 3, signed=True)),
                                                      Cell(r.get("joint"), format_num(r.get("joint"), 3, signed=True))))
                 for r in con["by_stage"])
    t1 = Table("Contestation vs override: access restored to the opponent's targets", (("debates",), ("by A",),
               ("by the opponent",), ("joint",)), rows, index_header="opponent, stage",
               notes=("Targets: the patients the opponent's round-1 proposal serves worst (debates whose opening "
                      "serves everyone alike are left out). Restored: mean CNSS of the targets in that proposal minus "
                      "in the opponent's opening.",))
    from fairarena.stats.transcripts import CLASSES

    t2 = Table("How the targets' access was restored", tuple((c,) for c in ("debates", *CLASSES)),
               tuple(Row(r["opponent"], (Cell(r["n"], str(r["n"])), *(Cell(r[c], str(r[c])) for c in CLASSES)))
                     for r in con["classes"]), index_header="opponent",
               notes=("override: the joint restores access, the opponent's final none; contestation: the opponent's "
                      "final restores part of what the joint does; conversion: all of it; none: the joint restores "
                      "nothing.",))
    return [t1, t2]


def confusion_tables(conf: Mapping[str, Any]) -> list[Any]:
    from fairarena.report import Cell, Row, Table, format_num

    out = []
    fws = conf["frameworks"]
    for stage, rows_in in conf["tables"].items():
        rows = []
        for r in rows_in:
            own = r["proposer"].removeprefix("aligned:") if r["proposer"].startswith("aligned:") else None
            rows.append(Row(r["proposer"], (Cell(r["n"], str(r["n"])),
                                            *(Cell(r["counts"][f], format_num(r["counts"][f], 1), emphasis=f == own)
                                              for f in fws))))
        out.append(Table(f"Intrinsic framework bias ({stage} proposals): nearest framework optimum",
                         (("proposals",), *((f,) for f in fws)), tuple(rows), index_header="proposer",
                         notes=("Each proposal counted under the framework whose optimal allocation is nearest in the "
                                "paper's six metrics (" + ", ".join(conf["metrics"]) + "), each min-max normalised per "
                                "cohort over the six optima and the proposals; ties shared. Bold: the proposer's own "
                                "framework.",)))
    return out


def extras_tables(extras: Mapping[str, Any] | None) -> dict[str, Any]:
    """The tables of :func:`study_extras`: ``nulls``, ``copies``, ``convergence``, ``contestation``,
    ``contestation_classes``, ``bias_<stage>`` (when computed) and ``samples`` (when a cell has more than
    one sample)."""
    if not extras:
        return {}
    out: dict[str, Any] = {"nulls": nulls_table(extras["noise"])}
    if extras.get("samples_per_cell", 0) > 1 and extras.get("samples"):
        out["samples"] = samples_result_table(extras["samples"])
    out["copies"] = copies_table(extras["copies"])
    out["convergence"] = convergence_table(extras["convergence"])
    out["contestation"], out["contestation_classes"] = contestation_tables(extras["contestation"])
    if extras.get("bias_confusion"):
        for stage, t in zip(extras["bias_confusion"]["tables"], confusion_tables(extras["bias_confusion"])):
            out[f"bias_{stage}"] = t
    return out


def noise_summary(extras: Mapping[str, Any] | None) -> str:
    """One sentence: how many figures beat their null, which do not, and whether the agents copy."""
    if not extras:
        return ""
    figs = extras["noise"]["figures"]
    yes = [f for f in figs if f["beats_null"] is True]
    no = [f for f in figs if f["beats_null"] is False]
    untested = len(figs) - len(yes) - len(no)
    out = (f"Against noise: {len(yes)} of {len(figs)} figures beat their null, {len(no)} do not"
           + (f", {untested} untested (no baseline-vs-baseline control debates: set baseline_control = true)"
              if untested else "") + " — see 'Effects against noise'.")
    tested = [f for f in figs if f["beats_null"] is not None and f["null"] == "baseline control"]
    if tested:
        k = max(f["n_cohorts"] for f in tested)
        m = sum(f["beats_null"] is not None for f in figs)
        floor = 2.0 / 2 ** k if k <= 13 else 0.0          # the exact sign-flip test's smallest two-sided p
        alpha = (extras["noise"].get("settings") or {}).get("alpha", 0.05)
        if floor * (m if (extras["noise"].get("settings") or {}).get("correction") == "holm" else 1) >= alpha:
            out += (f" With {k} cohorts the smallest p a control comparison can reach is {floor:.3g}"
                    + (f" (Holm over {m} figures asks for {alpha / m:.2g} or less)" if m > 1 else "")
                    + ": no such figure can beat its null; more cohorts are needed.")
    if extras["copies"]["copying"]:
        out += " The agents copy each other (copy rates in 'Transcript analyses'): read every figure as noise."
    return out


def extras_sections(extras: Mapping[str, Any] | None, tables: Mapping[str, Any]) -> list[Any]:
    """The report's sections of :func:`study_extras`: "Effects against noise" (the null table, the
    repeated-samples table) and "Transcript analyses" (copy rates, convergence, contestation, bias)."""
    from fairarena.report import Section, Text

    if not extras:
        return []
    noise = [Text(noise_summary(extras)), tables["nulls"]]
    if "samples" in tables:
        noise += [Text(f"{extras['samples_per_cell']} samples per cohort, framework and opponent at most: the "
                       "debates of one cohort are kept together."), tables["samples"]]
    trans = [tables["copies"], tables["convergence"], tables["contestation"], tables["contestation_classes"]]
    bias = [tables[k] for k in tables if k.startswith("bias_")]
    trans += bias or [Text("The nearest-framework table is computed when a debate used a language model (the "
                           "scripted negotiator opens at the optima by construction), or with "
                           "analyse_study(..., bias=True).")]
    return [Section("Effects against noise", noise), Section("Transcript analyses", trans)]


__all__ = ["OPTIMA", "SCRIPTED", "TRANSCRIPT_ROWS", "cohort_optima", "confusion_tables", "contestation_tables",
           "convergence_table", "copies_table", "copy_rows", "extras_sections", "extras_tables", "finals_frame",
           "noise_summary", "nulls_table",
           "samples_result_table", "selected", "study_extras", "uses_models"]
