"""The learning section of ``fairarena demo``: PF, EF and UF learners on the Dots instance."""

from __future__ import annotations

from pathlib import Path

# T >= 20,000: on Dots the PF learner's estimated favourite sets resolve around t = 10,000 (its
# last mistake); a shorter run would show PF regret still growing linearly next to a theorem that
# promises sublinear regret.
DEMO_T, DEMO_SEEDS = 20_000, 4
FULL_T, FULL_SEEDS = 100_000, 20


def learn_demo(out: Path, full: bool = False) -> None:
    from rich.table import Table

    from fairarena.cli_common import console
    from fairarena.learners.env import MultiAgentBandit
    from fairarena.learners.figures import FIGURE3_NOTIONS
    from fairarena.learners.instances import dots_rewards
    from fairarena.learners.simulate import simulate_many
    from fairarena.learners.store import save_run

    T, seeds = (FULL_T, FULL_SEEDS) if full else (DEMO_T, DEMO_SEEDS)
    env = MultiAgentBandit(dots_rewards(), "beta:0.1", name="dots")
    learners = ["pf", "ef", "uf"]
    results = simulate_many(learners, env, T, seeds, n_jobs=1 if not full else 2)
    paths = save_run(Path(out) / "learn", env, results,
                     {"command": "demo", "learners": learners, "T": T, "seeds": seeds, "rewards": "beta:0.1"})
    t = Table(title=f"Dots (50 voters, 4 arms), Beta rewards std 0.1, T = {T}, {seeds} seeds",
              title_justify="left")
    for col in ("learner", "final policy (mean)", *(x.upper() for x in FIGURE3_NOTIONS), "own regret",
                "log-log slope", "last PF mistake"):
        t.add_column(col)
    for name, r in results.items():
        s = r.summary()
        reg = s["regret"][s["target"]]
        t.add_row(name, " ".join(f"{x:.2f}" for x in s["final_policy"]),
                  *(f"{s['final_scores'][k]:.3f}" for k in FIGURE3_NOTIONS),
                  f"{s['target']}: {reg:.1f}", f"{s['regret_slope']:.2f}",
                  "-" if s["last_mistake"] is None else f"t = {s['last_mistake']:,}")
    console.print(t)
    pf = results["pf"].last_mistake_round()
    console.print(f"PF regret counts rounds with a wrong estimated favourite set: the last one is round {pf:,} "
                  f"of {T:,}, so the PF regret is flat (slope 0) from there on.")
    console.print(f"Figure 3: {paths['figure3.png']}  (run `fairarena learn --learner all` for T = 1e5)")
