"""How much of each debate prompt a server's prefix cache can reuse (issue 20, "prompt caching").
Prints figures; not a unit test, and no timing.

    .venv/bin/python benchmarks/prompt_prefix.py [--cohorts 5] [--rounds 3] [--references 5]

Scripted debates (aligned:care vs baseline, joint-draft closing) on standard cohorts 0..N-1, once
without retrieval and once with a fixed retriever for agent A (the same ``--references`` chunks each turn,
standing in for the RAG store, which needs the ``rag`` extra). For each call, the prompt is flattened
(:func:`fairarena.arena.transcript.prompt_text`) and compared with the same agent's previous prompt (what
a server slot holding that agent's conversation reuses) and with the previous call's prompt (one slot
serving every call in turn): the share of prompt characters that are a shared prefix, and the number
of calls that share less than half of their agent's previous prompt.
"""

from __future__ import annotations

import argparse

from fairarena.arena import DebateConfig, build_agent, run_debate
from fairarena.arena.transcript import prompt_reuse
from fairarena.rag.store import RetrievedChunk
from fairarena.triage import sample_cohort

REFERENCE = ("Care ethics attends to the particular needs of the most dependent patients; a just allocation keeps "
             "every vulnerable person in view and abandons nobody. ") * 4


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cohorts", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--references", type=int, default=5)
    args = ap.parse_args()
    print("| retrieval | calls | same agent: shared prefix | previous call: shared prefix | "
          "calls sharing < half of the agent's previous prompt |")
    print("|---|---|---|---|---|")
    for refs in (0, args.references):
        turns = []
        for seed in range(args.cohorts):
            cohort = sample_cohort(seed, "standard")
            a = build_agent("A", "aligned:care", "scripted", cohort, rag="off")
            if refs:
                chunks = [RetrievedChunk(f"care/doc{i}.md#0", "care", REFERENCE, 0.9 - i / 100) for i in range(refs)]
                a.retriever = lambda q, k, chunks=chunks: chunks[:k]
            b = build_agent("B", "baseline", "scripted", cohort, rag="off")
            res = run_debate(cohort, a, b, DebateConfig(rounds=args.rounds, seed=seed))
            turns.append(res.turns)
        stats = [prompt_reuse(t) for t in turns]
        calls = sum(s["calls"] for s in stats)
        chars = sum(s["prompt_chars"] for s in stats)
        same = sum(s["same_agent"] * s["prompt_chars"] for s in stats) / chars
        prev = sum(s["previous_call"] * s["prompt_chars"] for s in stats) / chars
        short = sum(s["calls_short_prefix"] for s in stats)
        compared = sum(s["calls_compared"] for s in stats)
        print(f"| {refs} chunks for A | {calls} | {same:.1%} | {prev:.1%} | {short} of {compared} |")


if __name__ == "__main__":
    main()
