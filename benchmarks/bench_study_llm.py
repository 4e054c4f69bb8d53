"""A small study against a real local model: throughput at per-server concurrency 1 and 2.

    .venv/bin/python benchmarks/bench_study_llm.py [--cohorts 1] [--max-tokens 64] [--concurrency 1,2]

SmolLM2-135M-Instruct (the bundled GGUF) behind ``python -m llama_cpp.server`` through the ``openai``
backend, Agent A the language model aligned to one framework, Agent B the scripted negotiator
(baseline and adversarial: 2 debates per cohort), 1 round, no repair turns, threads backend. For each
concurrency the same study runs into a fresh folder (its own response cache, so nothing is replayed).
Figures: wall seconds, the language model's completion tokens (from the records' usage; the scripted
side's own text is not counted) per wall second, and debates per hour. The machine's load average is printed beside them. Not a unit test.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cohorts", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--concurrency", default="1,2")
    ap.add_argument("--framework", default="rawlsian")
    args = ap.parse_args()

    from fairarena.study.design import load_study, preset, to_toml
    from fairarena.study.store import load_results, run_study
    from fairarena.llm.llamacpp_backend import bundled_gguf
    from fairarena.llm.server import llama_server

    gguf = bundled_gguf("smollm2")
    t0 = time.perf_counter()
    with llama_server(gguf, n_ctx=4096) as url:
        print(f"server up in {time.perf_counter() - t0:.1f} s ({load()})", flush=True)
        for conc in [int(c) for c in args.concurrency.split(",")]:
            cfg = preset("tiny", cohorts=args.cohorts, agent_a=[f"aligned:{args.framework}"],
                         model_a=f"openai:smollm2@{url}", rag="off", max_repairs=0, max_tokens=args.max_tokens,
                         concurrency={url: conc})
            with tempfile.TemporaryDirectory() as tmp:
                study = Path(tmp) / "study.toml"
                study.write_text(to_toml(cfg))
                cfg, text = load_study(study)
                la = load()
                t1 = time.perf_counter()
                s = run_study(cfg, text, Path(tmp) / "st", backend="threads")
                wall = time.perf_counter() - t1
                rows = load_results(Path(tmp) / "st")
            # only the language model's sides (the scripted negotiator's usage counts its own text)
            live = [(r, side) for r in rows for side in ("a", "b")
                    if not str(r["task"][f"model_{side}"]).startswith("scripted")]
            comp = sum(int((r.get("usage") or {}).get(side, {}).get("completion_tokens", 0) or 0) for r, side in live)
            calls = sum(int((r.get("usage") or {}).get(side, {}).get("calls", 0) or 0) for r, side in live)
            print(json.dumps({
                "concurrency": conc, "debates": s.total, "ok": s.ok, "failed": s.failed, "wall_s": round(wall, 1),
                "model_calls": calls, "completion_tokens": comp,
                "completion_tokens_per_wall_s": round(comp / wall, 2),
                "debates_per_hour": round(3600 * s.total / wall, 1),
                "load_before": la, "load_after": load()}), flush=True)


if __name__ == "__main__":
    main()
