"""Demo sections for ``fairarena demo``: the sweep (reduced grid; ``full=True`` runs ``paper``) and
the PrefLib Dots example."""

from __future__ import annotations

from pathlib import Path

from fairarena.cli_common import console


def sweep_demo(out: Path, full: bool = False) -> None:
    from fairarena.provenance import run_record
    from fairarena.report.sweep_figures import table_markdown
    from fairarena.sweep.config import preset
    from fairarena.sweep.run import run_sweep
    from fairarena.sweep.store import write_sweep

    cfg = preset("paper" if full else "small")
    res = run_sweep(cfg)
    record = run_record(cfg.model_dump(), cfg.seed, command="demo sweep")
    target = Path(out) / "sweep"
    write_sweep(target, res.frame, {**res.summary, "versions": record["versions"]}, record)
    console.print(f"Table 1 on the [bold]{cfg.name}[/] grid: {res.summary['n_settings']:,} settings in "
                  f"{res.summary['seconds']:.1f} s (mean ± std of each optimal policy's scores)")
    console.print(table_markdown(res.summary["table"]), highlight=False, markup=False)
    console.print(f"wrote {target}/ (settings.parquet, summary.json, table1.md/.tex, figure1.png/.svg)")


def dots_demo(out: Path, full: bool = False) -> None:
    from fairarena.provenance import run_record
    from fairarena.report.sweep_figures import POLICY_TITLES
    from fairarena.sweep.preflib_example import PACKAGED_DOTS, preflib_example, write_preflib

    res = preflib_example(PACKAGED_DOTS, voters=50, seed=42)
    target = Path(out) / "preflib-dots"
    write_preflib(target, res, run_record({"file": PACKAGED_DOTS.name, "voters": 50}, 42, command="demo preflib"))
    console.print(f"PrefLib Mechanical Turk Dots ({res['title']}): 50 of {res['file_voters']} voters, seed 42, "
                  "rank rewards 0.9 / 0.63 / 0.37 / 0.1")
    for name, r in res["policies"].items():
        console.print(f"  {POLICY_TITLES.get(name, name):8s} p = [" + ", ".join(f"{x:.2f}" for x in r["policy"])
                      + f"]  PF {r['pf']:.3f}  EF {r['ef']:.3f}  UF {r['uf']:.3f}", highlight=False)
    console.print(f"wrote {target}/ (preflib.json, table2.md, figure2.png/.svg)")
