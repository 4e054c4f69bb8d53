"""The PrefLib real-data example (the paper's Mechanical Turk Dots figure): sample voters from a
PrefLib ``.soc``/``.soi`` file, map ranks to rewards, compute every notion's optimal policy and its
PF / EF / UF scores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fairarena.fsutil import atomic_dir, atomic_write_json, atomic_write_text

PACKAGED_DOTS = Path(__file__).resolve().parent.parent / "data" / "preflib" / "00024-00000003.soc"


def preflib_example(file: str | Path, voters: int = 50, seed: int = 42, values: Any = None,
                    opts: Any = None) -> dict[str, Any]:
    """``{"rewards": [[...]], "policies": {name: {"policy", "pf", "ef", "uf", ...}}, ...}``."""
    from fairarena.bandit.notions import NOTIONS, evaluate_batch, make_options, optimal_policies, score_keys
    from fairarena.preferences.preflib import load_preflib, preflib_rewards, sample_voters

    prof = load_preflib(file)
    orders = sample_voters(prof, voters, seed)
    mu = preflib_rewards(orders, prof.n_alternatives, values)
    o = make_options(opts)
    pols = optimal_policies(mu[None], list(NOTIONS), o)
    ev = evaluate_batch(mu[None], pols, o)
    out: dict[str, Any] = {
        "rewards": mu.tolist(),
        "policies": {name: {"policy": pols[name][0].tolist(),
                            **{k: float(ev[name][k][0]) for k in ("pf", "ef", "uf")},
                            "values": {k: float(ev[name][k + "_value"][0])
                                       for k in score_keys()}}
                     for name in pols},
        "file": str(file), "title": prof.title, "alternatives": list(prof.alternatives),
        "voters": int(voters), "seed": int(seed), "file_voters": prof.n_voters,
        "rank_rewards": (np.linspace(0.9, 0.1, prof.n_alternatives) if values is None
                         else np.asarray(values, float)).tolist(),
    }
    return out


def write_preflib(out_dir: str | Path, result: dict[str, Any], record: dict[str, Any]) -> None:
    from fairarena.report.sweep_figures import grouped_bars, table_markdown

    groups = {name: {k: (r[k], 0.0) for k in ("pf", "ef", "uf")} for name, r in result["policies"].items()}
    with atomic_dir(out_dir) as tmp:
        atomic_write_json(tmp / "preflib.json", result)
        atomic_write_json(tmp / "run.json", record)
        table = {name: {k: [r[k], 0.0] for k in ("pf", "ef", "uf")} for name, r in result["policies"].items()}
        md = table_markdown(table, digits=3).replace(" ± 0.000", "")
        pol = "\n".join(f"- {name}: p = [" + ", ".join(f"{x:.3f}" for x in r["policy"]) + "]"
                        for name, r in result["policies"].items())
        atomic_write_text(tmp / "table2.md", md + "\n" + pol + "\n")
        grouped_bars(tmp / "figure2", groups,
                     f"{result['title']}: {result['voters']} voters (seed {result['seed']}), scores of each policy")
