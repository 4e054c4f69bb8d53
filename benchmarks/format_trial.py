"""Single-turn trial of the two proposal formats with a real model (issue 20: the free-form allocation
format had not been tried with a real model). Prints one row per call; not a unit test.

    .venv/bin/python benchmarks/format_trial.py --model llamacpp:/tmp/qwen2.5-coder-0.5b.gguf?n_ctx=4096 \\
        [--cohorts 0 1] [--formats allocation priorities] [--max-tokens 450] [--text-limit 120]

For each standard cohort and format: agent A (aligned:rawlsian, retrieval off) answers the opening round of
a debate against a baseline agent B: the arena's real prompt, the format's schema for constrained
decoding, no repair turn. Reports whether the reply parsed to an allocation (``valid``: no violation),
whether that allocation is feasible (capacities, whole units), its violations, the parse form, completion
tokens, finish reason and seconds. Under ``priorities`` a parsed reply is feasible by construction (the
realisation rule); under ``allocation`` (the paper's free form) the schema fixes ids and integer units but
not the capacities, so a reply can overshoot.
"""

from __future__ import annotations

import argparse
import time

from fairarena.arena import DebateConfig, build_agent
from fairarena.arena.protocol import Debate
from fairarena.triage import sample_cohort


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--cohorts", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--formats", nargs="+", default=["allocation", "priorities"])
    ap.add_argument("--max-tokens", type=int, default=450)
    ap.add_argument("--text-limit", type=int, default=120)
    args = ap.parse_args()
    models: dict = {}
    print("| cohort | format | valid | feasible | violations | form | completion tokens | finish | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for seed in args.cohorts:
        cohort = sample_cohort(seed, "standard")
        for fmt in args.formats:
            a = build_agent("A", "aligned:rawlsian", args.model, cohort, rag="off", models=models, retries=1)
            b = build_agent("B", "baseline", args.model, cohort, rag="off", models=models, retries=1)
            cfg = DebateConfig(rounds=1, max_repairs=0, proposal_format=fmt, max_tokens=args.max_tokens,
                               text_limit=args.text_limit, seed=seed)
            debate = Debate(cohort, [a, b], cfg)
            t0 = time.perf_counter()
            step = debate.ask("A", "round", 1)
            wall = time.perf_counter() - t0
            turn = debate.turns[-1]
            feasible = bool(step.metrics and step.metrics.get("feasible")) and step.proposal.valid
            viol = "; ".join(step.proposal.violations[:3]) or "-"
            print(f"| {seed} | {fmt} | {step.proposal.valid} | {feasible} | {viol} | {step.proposal.form} | "
                  f"{turn.usage.get('completion_tokens')} | {turn.usage.get('finish_reason')} | {wall:.0f} |", flush=True)


if __name__ == "__main__":
    main()
