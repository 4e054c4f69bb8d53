"""Demo section for ``fairarena demo``: a short scripted triage-debate study run end to end
(``small`` preset, 5 cohorts: 60 debates; ``full=True`` runs the paper preset's 600), then its
statistics, Tables 2 and 3 and the offline HTML report."""

from __future__ import annotations

import time
from pathlib import Path

from fairarena.cli_common import console


def study_demo(out: Path, full: bool = False) -> None:
    from fairarena.study.design import expand, preset, to_toml
    from fairarena.study.analysis import analyse_study, build_study_report, study_tables
    from fairarena.study.store import run_study
    from fairarena.fsutil import atomic_write_text
    from fairarena.report import to_markdown, write_html, write_tables

    cfg = preset("paper") if full else preset("small", cohorts=5)
    target = out / "study"
    toml = target.with_suffix(".toml")
    atomic_write_text(toml, to_toml(cfg))
    t0 = time.perf_counter()
    s = run_study(cfg, to_toml(cfg), target, backend="processes", force=True)
    t1 = time.perf_counter()
    console.print(f"study '{cfg.name}': {len(expand(cfg))} scripted debates ({s.ok} ok, {s.failed} failed) in "
                  f"{t1 - t0:.1f} s", highlight=False, soft_wrap=True)
    an = analyse_study(target)
    tables = study_tables(an)
    from dataclasses import replace

    from fairarena.report import table2

    few = replace(an.stats, metrics=tuple(m for m in ("esg", "rmg", "gini") if m in an.stats.metrics))
    console.print(to_markdown(table2(few, joint=True, title="Table 2 (ESG, RMG, Gini; every metric in the "
                                     "files and the report)")), highlight=False, markup=False, soft_wrap=True)
    for r in an.emergence["joint_beats_both"]:
        if r["opponent"] == "all" and r["metric"] in ("esg", "rmg", "gini"):
            console.print(f"joint beats both agents' openings on {r['metric']} in {r['vs_round1']:.0%} of debates, "
                          f"both finals in {r['vs_final']:.0%}", highlight=False, soft_wrap=True)
    write_tables(tables, out / "study_tables")
    report = write_html(build_study_report(target), out / "study_report.html")
    console.print(f"wrote {target}/ (the study folder; resume or extend it with "
                  f"`fairarena study run {toml} --out {target}`), {out / 'study_tables'}/ (Tables 2 and 3: .md, .tex, .csv)",
                  highlight=False, soft_wrap=True)
    console.print(f"[bold]study report:[/] {report.resolve()}  (open it in a browser; it works offline)",
                  highlight=False, soft_wrap=True)


def council_studies_demo(out: Path, full: bool = False) -> None:
    """Every council preset with a small form (the council study on the default domain's cohorts, a domain's
    own such as the tourism study on seeded destinations), each run end to end (``<name>-small``: 3 instances
    each; ``full=True``: the 50-instance presets), with a short summary per rule and the debate (the domain's
    first two metrics), and each study's HTML report."""
    from rich.table import Table

    from fairarena.study.design import expand, preset, presets, to_toml
    from fairarena.study.council import DEBATE
    from fairarena.study.council_analysis import analyse_council, build_council_report, directions
    from fairarena.study.store import run_study
    from fairarena.report import write_html

    table = presets()
    for name in [n for n, d in table.items() if d.get("kind") == "council" and f"{n}-small" in table]:
        cfg = preset(name if full else f"{name}-small")
        focus = tuple(directions(cfg))[:2]
        target = out / f"study-{name}"
        t0 = time.perf_counter()
        s = run_study(cfg, to_toml(cfg), target, backend="processes", force=True)
        an = analyse_council(target)
        t = Table(title=f"{name} study '{cfg.name}': {len(expand(cfg))} instances ({s.ok} ok) in "
                        f"{time.perf_counter() - t0:.1f} s; means over instances")
        for col in ("rule", *focus, "worst-off utility", "Gini of utilities"):
            t.add_column(col, justify="left" if col == "rule" else "right", no_wrap=col == "rule")
        for r in an.summary:
            t.add_row(f"[bold]{r['rule']}[/]" if r["rule"] == DEBATE else r["rule"],
                      *(f"{r[k]:.3f}" for k in (*focus, "min_utility", "gini_utilities")))
        console.print(t)
        report = write_html(build_council_report(target), out / f"study-{name}_report.html")
        console.print(f"wrote {target}/ and [bold]{report.resolve()}[/] (every metric and member, paired tests, "
                      "per instance)", highlight=False, soft_wrap=True)
