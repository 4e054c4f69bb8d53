"""A finished council study turned into its summary, paired statistics, tables, figures and report.

What a council study runs and records is described in :mod:`fairarena.study.council` and
docs/study.md, "Council studies". Here: the mean of every metric and member utility per rule and for the
debate (the council table), the debate against each rule paired by instance
(:func:`fairarena.stats.compare_table`), the utility heat map, one panel per metric, and the report. A record
lacking a rule of the current design gets that rule's row computed from the instance
(:func:`fairarena.study.council.rule_rows`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairarena.study.council import DEBATE, rule_rows
from fairarena.study.mechanisms import spent

SUMMARY_METRICS = {"min_utility": "max", "gini_utilities": "min"}
"""Per-row evaluation summaries compared beside the domain's metrics."""


def directions(cfg: Any) -> dict[str, str]:
    """The domain's metrics -> ``"max"`` | ``"min"`` (which is better): its metric specs (a problem file's own
    metrics)."""
    from fairarena.study.instances import metric_directions

    return metric_directions(cfg.domain, cfg.problem or None)


def record_rows(record: Mapping[str, Any], rules: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``{rule or "debate": row}`` of one record for the design's rules: stored rows, the missing rules'
    computed from the instance."""
    have = {r["rule"]: r for r in record.get("rows") or []}
    missing = [r for r in rules if r not in have]
    if missing:
        have.update({r["rule"]: r for r in rule_rows(record["task"], missing)})
    out = {r: have[r] for r in rules}
    if DEBATE in have:
        out[DEBATE] = have[DEBATE]
    return out


@dataclass(frozen=True)
class CouncilAnalysis:
    """A council study's summary (mean per row label of every metric and member utility), the paired
    statistics of the debate against each rule, and the per-instance rows used."""

    name: str
    domain: str
    members: list[str]
    rules: list[str]
    directions: dict[str, str]
    summary: list[dict[str, Any]]
    stats: Any                                   # fairarena.stats.StudyStats (opponent "debate", framework = rule)
    instances: list[dict[str, Any]]              # per record: key, cohort, rows
    status: dict[str, Any]
    seconds: float
    spent: dict[str, float]                      # the debate's mean model calls and tokens per instance

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "council", "name": self.name, "domain": self.domain, "members": self.members,
                "rules": self.rules, "directions": self.directions, "summary": self.summary,
                "statistics": self.stats.to_dict(), "spent": self.spent, "status": self.status,
                "seconds": round(self.seconds, 3)}


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def _absent(row: Mapping[str, Any] | None) -> bool:
    """A row its instance cannot have (the domain says so with ``absent``), not an infeasible decision."""
    return bool(row is not None and row.get("absent"))


def analyse_council(root: str | Path, *, test: str = "auto", holm: bool = False, allow_partial: bool = False,
                    n_resamples: int | None = None) -> CouncilAnalysis:
    """The summary and paired statistics of a finished council study (module doc). A row's mean of a value is
    over the instances that have it: a NaN metric (a value the instance does not have, e.g. a distance to an
    outcome its file does not record) is
    left out of the mean (``n_values`` counts what is left) and its pairs count as missing; a row marked
    ``absent`` (one its instance cannot have) is neither infeasible nor a value, left out of the means and the
    pairs and counted as ``absent``."""
    from fairarena.study.store import check_finished, load_results, study_tasks
    from fairarena.stats import DEFAULT_RESAMPLES, check_options, compare_table

    check_options(test, 0.05, "wilcox")
    t0 = time.perf_counter()
    status = check_finished(root, allow_partial=allow_partial)
    cfg, _ = study_tasks(root)
    rules = cfg.council_rules()
    dirs = directions(cfg)
    from fairarena.study.design import council_variants

    variant = council_variants(cfg)[0]
    first = (variant, cfg.seeds[0], cfg.closing[0])
    recs = [r for r in load_results(root) if r["status"] == "ok"
            and (r["task"]["capacity"], r["task"]["seed"], r["task"]["closing"]) == first]
    members: list[str] = []
    instances = []
    for r in recs:
        rows = record_rows(r, rules)
        instances.append({"key": r["key"], "cohort": r["task"]["cohort"], "cohort_seed": r["task"]["cohort_seed"],
                          "rows": rows})
        for row in rows.values():
            for m in row.get("utilities") or {}:
                if m not in members:
                    members.append(m)
    all_dirs = {**dirs, **SUMMARY_METRICS, **{f"u:{m}": "max" for m in members}}

    def values(row: Mapping[str, Any] | None) -> dict[str, float] | None:
        if row is None or not row.get("feasible") or row.get("metrics") is None:
            return None
        out = {k: float(row["metrics"][k]) for k in dirs if row["metrics"].get(k) is not None}
        out.update({k: float(row[k]) for k in SUMMARY_METRICS if row.get(k) is not None})
        out.update({f"u:{m}": float(u) for m, u in (row.get("utilities") or {}).items()})
        return out

    labels = [*rules, DEBATE]
    summary = []
    for lab in labels:
        # a row the instance cannot have (``absent``: e.g. the city's outcome where the file records none) is
        # neither infeasible nor a value: left out of the means and the pairs, and counted apart
        present = [inst["rows"].get(lab) for inst in instances if not _absent(inst["rows"].get(lab))]
        vals = [values(row) for row in present]
        ok = [v for v in vals if v is not None]
        # each mean is over the instances that have the value (a NaN metric -- e.g. vs_city without the
        # city's outcome -- is left out, not turned into a NaN mean); ``n_values`` says over how many
        have = {k: [v[k] for v in ok if k in v and not math.isnan(v[k])] for k in all_dirs}
        summary.append({"rule": lab, "n": len(ok), "infeasible": len(vals) - len(ok),
                        "absent": len(instances) - len(present), **{k: _mean(xs) for k, xs in have.items()},
                        "n_values": {k: len(xs) for k, xs in have.items()}})
    pairs = []
    for inst in instances:
        deb = values(inst["rows"].get(DEBATE))
        for rule in rules:
            if _absent(inst["rows"].get(rule)):
                continue
            o = values(inst["rows"].get(rule))
            pairs.append({"cohort": inst["cohort"], "framework": rule, "opponent": DEBATE, "a": deb, "opp": o,
                          "a_feasible": deb is not None, "opp_feasible": o is not None})
    st = compare_table(pairs, {**dirs, **SUMMARY_METRICS}, test=test, correction="holm" if holm else "none",
                       n_resamples=DEFAULT_RESAMPLES if n_resamples is None else n_resamples,
                       opponents=[DEBATE], frameworks=rules)
    costs = [spent(r) for r in recs]
    used = {"calls_per_debate": _mean([c for c, _ in costs]), "tokens_per_debate": _mean([t for _, t in costs])}
    return CouncilAnalysis(cfg.name, cfg.domain, members, rules, all_dirs, summary, st, instances, status,
                           time.perf_counter() - t0, used)


# ------------------------------------------------------------------------------------------------ tables, figures

def council_tables(an: CouncilAnalysis, digits: int = 3) -> dict[str, Any]:
    """``council``: mean of every metric and member utility per rule and for the debate (Arrow's
    trade-off); ``debate_vs_rules``: the paired difference debate - rule of every metric, with stars."""
    from fairarena.report import Cell, Row, Table, fit_panels, format_num, format_p, stars

    metric_keys = [k for k in an.directions if not k.startswith("u:") and k not in SUMMARY_METRICS]
    cols = ([("", "n")] + [("metric (mean)", k) for k in metric_keys]
            + [("member utility (mean)", m) for m in an.members]
            + [("evaluation (mean)", "worst-off utility"), ("evaluation (mean)", "Gini of utilities")])
    best: dict[str, float] = {}
    for k in an.directions:
        xs = [r[k] for r in an.summary if not math.isnan(r[k])]
        if xs:
            best[k] = max(xs) if an.directions[k] == "max" else min(xs)
    rows = []
    for r in an.summary:
        cells = [Cell(r["n"], str(r["n"]) + (f" ({r['infeasible']} infeasible)" if r["infeasible"] else "")
                      + (f" ({r['absent']} not recorded)" if r.get("absent") else ""))]
        for k in [*metric_keys, *(f"u:{m}" for m in an.members), *SUMMARY_METRICS]:
            v = r[k]
            cells.append(Cell(v, format_num(v, digits), emphasis=not math.isnan(v) and abs(v - best.get(k, math.nan)) < 1e-12))
        rows.append(Row(r["rule"], tuple(cells), group="debate" if r["rule"] == DEBATE else "rules"))
    n_met = 1 + len(metric_keys)
    t1 = Table(f"Council ({an.domain}): every rule and the debate, means over instances",
               tuple(cols), tuple(rows), index_header="rule",
               panels=fit_panels(cols, rows, [("metrics (mean)", range(n_met)),
                                           ("member utilities and evaluation (mean)", range(n_met, len(cols)))]),
               notes=("Bold: the best row of a column. Lower is better for "
                      + (", ".join(k for k in [*metric_keys, *SUMMARY_METRICS] if an.directions[k] == "min") or "none")
                      + "; higher for the others. Member utilities are normalised per member (1 = its own ideal).",
                      *_partial_means(an, metric_keys)))
    st = an.stats
    dcols = [("", "n")] + [(m, "debate - rule") for m in st.metrics]
    drows = []
    for rule in st.frameworks:
        cells: list[Any] = []
        n = None
        for m in st.metrics:
            res = st.cell(DEBATE, rule, m).result
            n = res.n if n is None else n
            p = res.p_adjusted if res.p_adjusted is not None else res.p
            cells.append(Cell(res.mean_diff, format_num(res.mean_diff, digits, signed=True), mark=stars(p),
                              emphasis=res.winner == "A", title=f"p = {format_p(p)} ({res.test})"))
        drows.append(Row(rule, (Cell(n, str(n)), *cells)))
    t2 = Table("Debate vs each rule: mean paired difference debate - rule (paired by instance)", tuple(dcols),
               tuple(drows), index_header="rule",
               panels=fit_panels(dcols, drows, [("paired differences", range(len(dcols)))]),
               notes=("Stars: p < 0.05, 0.01, 0.001 (the study's paired test); bold: the debate is significantly "
                      "better on that metric.",
                      f"The debate spent {format_num(an.spent['calls_per_debate'], 1)} model calls and "
                      f"{format_num(an.spent['tokens_per_debate'], 0)} tokens per instance (scripted members: calls "
                      "only); the rules spend none."))
    return {"council": t1, "debate_vs_rules": t2}


def _partial_means(an: CouncilAnalysis, keys: Sequence[str]) -> list[str]:
    """A note per metric some rows lack on some instances (a NaN value): over how many instances its means are."""
    out = []
    for k in keys:
        short = [f"{r['rule']} {r['n_values'][k]} of {r['n']}" for r in an.summary
                 if k in (r.get("n_values") or {}) and r["n_values"][k] < r["n"]]
        if short:
            out.append(f"{k}: the mean over the instances that have a value ({', '.join(short)}; the others "
                       "record none).")
    return out


def utility_figure(an: CouncilAnalysis) -> Any:
    """Heat map: each member's mean normalised utility (columns) per rule and the debate (rows)."""
    from fairarena.report import utility_heatmap

    return utility_heatmap([[r.get(f"u:{m}", math.nan) for m in an.members] for r in an.summary],
                           [r["rule"] for r in an.summary], an.members,
                           label="mean normalised utility (1 = own ideal)")


def metrics_figure(an: CouncilAnalysis) -> Any:
    """One panel per metric: its mean per rule and for the debate (the debate's bar in black)."""
    from matplotlib.figure import Figure

    from fairarena.stats import better_word

    keys = [k for k in an.directions if not k.startswith("u:")]
    labels = [r["rule"] for r in an.summary]
    ncol = min(3, len(keys))
    nrow = math.ceil(len(keys) / ncol)
    fig = Figure(figsize=(4.2 * ncol, 2.4 * nrow + 0.4), layout="constrained")
    axes = fig.subplots(nrow, ncol, squeeze=False)
    for i, k in enumerate(keys):
        ax = axes[i // ncol][i % ncol]
        ax.bar(range(len(labels)), [r[k] for r in an.summary],
               color=["black" if lab == DEBATE else "#1f77b4" for lab in labels])
        ax.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=6)
        ax.set_title(f"{k} ({better_word(an.directions[k])} is better)", fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(axis="y", alpha=0.3)
    for j in range(len(keys), nrow * ncol):
        axes[j // ncol][j % ncol].set_visible(False)
    return fig


# ------------------------------------------------------------------------------------------------ report

def _instance_item(an: CouncilAnalysis, inst: Mapping[str, Any], digits: int = 3,
                   entries: Sequence[Mapping[str, Any]] | None = None, cache: dict[str, list[Any]] | None = None) -> Any:
    """One instance in the report's drill-down: the rows of every rule and the debate; with its debate's
    transcript ``entries``, the instance (the domain's tables, the problem's arrays) and the transcript too,
    embedded compressed (rendered when opened)."""
    from fairarena.report import Cell, Item, Panel, Row, Table, Text, fit_panels, format_num

    keys = [k for k in an.directions if not k.startswith("u:") and k not in SUMMARY_METRICS]
    rows = []
    for lab, row in inst["rows"].items():
        mets = row.get("metrics") or {}
        utils = row.get("utilities") or {}
        rows.append(Row(lab, tuple([Cell(None, "yes" if row.get("feasible") else "no")]
                                   + [Cell(mets.get(k), format_num(mets.get(k), digits)) for k in keys]
                                   + [Cell(utils.get(m), format_num(utils.get(m), digits)) for m in an.members]
                                   + [Cell(None, str(row.get("worst_off") or "")), Cell(None, _note(row.get("note")))])))
    cols = [("", "feasible")] + [("metric", k) for k in keys] + [("utility", m) for m in an.members] \
        + [("", "worst-off"), ("", "note")]
    n_met = 1 + len(keys)
    t = Table(f"instance {inst['cohort']} (seed {inst['cohort_seed']})", tuple(cols), tuple(rows),
              index_header="rule", panels=fit_panels(cols, rows, [("metrics", range(n_met)),
                                                               ("member utilities and the worst-off member",
                                                                range(n_met, len(cols) - 1))])
              + (Panel("the rule's note", (len(cols) - 1,)),))
    deb = inst["rows"].get(DEBATE) or {}
    summary = (f"debate: worst-off {deb.get('worst_off')} at {format_num(deb.get('min_utility'), 2)}"
               if deb.get("feasible") else "debate: no feasible joint decision")
    lazy: list[Any] = []
    if entries:
        from fairarena.study.analysis import instance_blocks, transcript_blocks

        header = next((e for e in entries if e.get("type") == "header"), {})
        lazy = [Text("Instance"), *instance_blocks(header, cache), Text("Debate transcript"),
                *transcript_blocks(entries, cache)]
    return Item(f"instance {inst['cohort']} ({inst['key'][:10]})", (t,), summary=summary,
                tags={"instance": str(inst["cohort"])}, lazy=tuple(lazy))


NOTE_CHARS = 240
"""A rule's note in the instance table is cut after this many characters (with an ellipsis): its description
and what happened on the instance (a tie, the proposals set aside as Pareto-dominated)."""


def _note(note: Any) -> str:
    text = str(note or "")
    return text if len(text) <= NOTE_CHARS else text[:NOTE_CHARS - 1] + "\u2026"


def build_council_report(root: str | Path, *, test: str = "auto", holm: bool = False, allow_partial: bool = False,
                         details: int | None = None, jobs: int | None = 1) -> Any:
    """The report of a finished council study (a :class:`fairarena.report.Report`). Every instance is in
    the drill-down with its rows, its instance and its debate's transcript (``details`` is the duel report's
    transcript count and ``jobs`` its second process; both unused here: its two figures are rendered in
    this process)."""
    from fairarena.study.store import load_results, read_study, read_transcript
    from fairarena.report import DrillDown, FigureBlock, KeyValues, Preformatted, Report, Section, Text

    root = Path(root)
    an = analyse_council(root, test=test, holm=holm, allow_partial=allow_partial)
    meta = read_study(root)
    toml = (root / "study.toml").read_text(encoding="utf-8") if (root / "study.toml").is_file() else ""
    tables = council_tables(an)
    by_key = {r["key"]: r for r in load_results(root) if r.get("status") == "ok"}
    cache: dict[str, list[Any]] = {}

    def entries(key: str) -> list[dict[str, Any]] | None:
        rec = by_key.get(key)
        if rec is None or not rec.get("transcript"):
            return None
        try:
            return list(read_transcript(root, rec))
        except (OSError, ValueError):   # the drill-down still shows the rows
            return None
    items = [_instance_item(an, inst, entries=entries(inst["key"]), cache=cache) for inst in an.instances]
    sections = [
        Section("Study", [KeyValues({"folder": str(root), **{k: v for k, v in an.status.items() if k != "failed_keys"}},
                                    title="status"),
                          KeyValues(dict(meta.get("provenance") or {}), title="provenance"),
                          Preformatted(toml, title="study.toml")]),
        Section("Council", [Text(f"{len(an.instances)} instances; members: {', '.join(an.members)}. Each rule "
                                 "aggregates the members' proposals; the debate row is the members' joint decision "
                                 "(docs/study.md, council studies)."),
                            tables["council"],
                            FigureBlock(utility_figure(an), caption="Each member's mean normalised utility per rule "
                                                                     "and for the debate (Arrow's trade-off)."),
                            FigureBlock(metrics_figure(an), caption="Every metric's mean per rule; the debate in black.")]),
        Section("Debate vs rules", [tables["debate_vs_rules"]]),
        Section("Instances", [Text(f"{len(items)} instances, each with every rule's row and the debate's; opened, "
                                   "the instance and the members' debate transcript (embedded compressed)."),
                              DrillDown(items, title="Per instance", filters=("instance",))]),
    ]
    return Report(f"Council study report: {meta.get('design', {}).get('name', root.name)}", sections,
                  subtitle=f"{an.status['ok']} debates ok of {an.status['total']}; statistics: test "
                           f"{test}{', Holm' if holm else ''}", footer="fairarena study report")


__all__ = ["CouncilAnalysis", "SUMMARY_METRICS", "analyse_council", "build_council_report", "council_tables",
           "directions", "metrics_figure", "record_rows", "utility_figure"]
