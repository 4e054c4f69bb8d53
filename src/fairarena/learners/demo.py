"""The learning section of ``fairarena demo``: PF, EF and UF learners on the Dots instance."""

from __future__ import annotations

from pathlib import Path


def learn_demo(out: Path, full: bool = False) -> None:
    from rich.table import Table

    from fairarena.cli_common import console
    from fairarena.learners.env import MultiAgentBandit
    from fairarena.learners.instances import dots_rewards
    from fairarena.learners.simulate import simulate_many
    from fairarena.learners.store import save_run

    T, seeds = (100_000, 20) if full else (5_000, 4)
    env = MultiAgentBandit(dots_rewards(), "beta:0.1", name="dots")
    learners = ["pf", "ef", "uf"]
    results = simulate_many(learners, env, T, seeds, n_jobs=2 if full else 1)
    paths = save_run(Path(out) / "learn", env, results,
                     {"command": "demo", "learners": learners, "T": T, "seeds": seeds, "rewards": "beta:0.1"})
    t = Table(title=f"Dots (50 voters, 4 arms), Beta rewards std 0.1, T = {T}, {seeds} seeds",
              title_justify="left")
    for col in ("learner", "final policy (mean)", "PF", "EF", "UF", "own regret", "log-log slope"):
        t.add_column(col)
    for name, r in results.items():
        s = r.summary()
        reg = s["regret"][s["target"]]
        t.add_row(name, " ".join(f"{x:.2f}" for x in s["final_policy"]),
                  *(f"{s['final_scores'][k]:.3f}" for k in ("pf", "ef", "uf")),
                  f"{s['target']}: {reg:.1f}", f"{s['regret_slope']:.2f}")
    console.print(t)
    console.print(f"Figure 3: {paths['figure3.png']}  (run `fairarena learn --learner all` for T = 1e5)")
