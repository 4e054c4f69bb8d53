"""Writing a learning run: Parquet tables, a summary, the run record and Figure 3, atomically.

Layout of ``OUT``:

- ``curves.parquet``: learner, seed, t, ``regret_X`` and ``score_X`` for every registered notion X
  (:data:`fairarena.bandit.notions.NOTIONS`), p_0..p_{K-1} on the logarithmic grid of rounds;
- ``arms.parquet``: learner, seed, t, arm (every pull, 0-based arms);
- ``summary.json``: the ``--json`` document (rewards and per-learner summaries);
- ``run.json``: config, seeds, package versions, git revision (:func:`fairarena.provenance.run_record`);
- ``figure3.png``: :func:`fairarena.learners.figures.figure3`.

The whole directory is built under a temporary name and moved into place file by file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from fairarena.learners.env import MultiAgentBandit
from fairarena.learners.simulate import SimulationResult


def summary_document(env: MultiAgentBandit, results: Mapping[str, SimulationResult]) -> dict[str, Any]:
    """``{"rewards": [[...]], "learners": {NAME: {final_policy, final_scores, regret, regret_slope, seconds, ...}}}``."""
    return {"rewards": env.mu.tolist(), "learners": {name: r.summary() for name, r in results.items()}}


def save_run(out: str | Path, env: MultiAgentBandit, results: Mapping[str, SimulationResult],
             config: Mapping[str, Any], figure: bool = True) -> dict[str, Path]:
    import pandas as pd

    from fairarena.fsutil import atomic_dir, atomic_write_json
    from fairarena.provenance import run_record

    out = Path(out)
    doc = summary_document(env, results)
    first = next(iter(results.values()))
    record = run_record(dict(config), seed=first.seeds[0], seeds=first.seeds,
                        environment=env.config(), true_means=env.means.tolist(),
                        learners={name: {"params": r.params, "target": r.target, "extra": r.extra}
                                  for name, r in results.items()})
    with atomic_dir(out) as tmp:
        curves = pd.concat([r.curves_frame() for r in results.values()], ignore_index=True)
        curves.to_parquet(tmp / "curves.parquet", index=False)
        arms = pd.concat([r.arms_frame() for r in results.values()], ignore_index=True)
        arms["learner"] = arms["learner"].astype("category")
        arms.to_parquet(tmp / "arms.parquet", index=False)
        atomic_write_json(tmp / "summary.json", doc)
        atomic_write_json(tmp / "run.json", record)
        if figure:
            from fairarena.learners.figures import figure3

            figure3(results, tmp / "figure3.png", title=f"{env.name}: {env.family.label} rewards, "
                                                         f"T = {first.horizon}, {len(first.seeds)} seeds")
    names = ["curves.parquet", "arms.parquet", "summary.json", "run.json"] + (["figure3.png"] if figure else [])
    return {n: out / n for n in names}
