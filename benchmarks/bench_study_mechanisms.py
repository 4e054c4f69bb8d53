"""Cost of a study's ``mechanisms`` (deliberation vs mechanisms). Prints figures; not a unit test.

    .venv/bin/python benchmarks/bench_study_mechanisms.py [--preset small] [--mechanisms nash,leximin,pf-lottery]
                                                          [--repeats 2]

* run time: the preset run serially into a fresh folder, without and with the mechanisms, alternating
  ``--repeats`` times in this process (best of each; the ratio is the overhead), plus the per-debate
  mechanism time the records carry (``timing.mechanisms_s``);
* ``study stats`` on the folder run without mechanisms, first with none listed and then with the
  mechanisms computed from the transcripts (what a study that adds the field afterwards pays).

The machine's load average is printed beside every figure.
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


def run_once(cfg, root: Path) -> float:
    from fairarena.study.design import to_toml
    from fairarena.study.store import run_study

    t0 = time.perf_counter()
    s = run_study(cfg, to_toml(cfg), root)
    assert s.ok == s.total, s
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="small")
    ap.add_argument("--mechanisms", default="nash,leximin,pf-lottery")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    from fairarena.study.design import preset
    from fairarena.study.mechanisms import record_mechanisms
    from fairarena.study.store import load_results

    mechs = [m for m in args.mechanisms.split(",") if m]
    plain, withm = preset(args.preset), preset(args.preset, mechanisms=mechs)
    tmp = Path(tempfile.mkdtemp(prefix="bench-mech-"))
    run_once(plain, tmp / "warm")                       # imports, solver start-up, cohort cache
    t_plain, t_mech = [], []
    for k in range(args.repeats):
        t_plain.append(run_once(plain, tmp / f"plain{k}"))
        t_mech.append(run_once(withm, tmp / f"mech{k}"))
    recs = load_results(tmp / "mech0")
    per = [r["timing"]["mechanisms_s"] for r in recs]
    print(f"{args.preset}: {len(recs)} debates, mechanisms {', '.join(mechs)} ({load()})")
    print(f"  study run without: best {min(t_plain):.2f} s of {[round(x, 2) for x in t_plain]}")
    print(f"  study run with:    best {min(t_mech):.2f} s of {[round(x, 2) for x in t_mech]}")
    print(f"  ratio with/without: {min(t_mech) / min(t_plain):.3f}")
    print(f"  mechanisms per debate (records): mean {1000 * sum(per) / len(per):.2f} ms, max {1000 * max(per):.2f} ms")
    root = tmp / "plain0"
    rows = load_results(root)
    t0 = time.perf_counter()
    out = [record_mechanisms(root, r, mechs) for r in rows if r["status"] == "ok"]
    t = time.perf_counter() - t0
    print(f"  computed afterwards from {len(out)} transcripts: {t:.2f} s ({1000 * t / len(out):.1f} ms a debate) ({load()})")
    print(json.dumps({"without_s": t_plain, "with_s": t_mech, "ratio": min(t_mech) / min(t_plain),
                      "from_transcripts_s": t}))


if __name__ == "__main__":
    main()
