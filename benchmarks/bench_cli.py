"""CLI start-up: ``fairarena --help`` and ``fairarena notions`` as whole processes.

Targets (issue 11.5, a 2-core machine): ``--help`` at most 0.3 s, ``notions`` at most 0.6 s (median
wall time of several runs). Each run is a fresh interpreter doing what the ``fairarena`` console
script does (``from fairarena.cli import main; main()``); the bare interpreter start-up
(``python -c pass``) is measured in the same run as the baseline, so a loaded machine shows up as a
larger baseline rather than as a false regression.

    .venv/bin/python benchmarks/bench_cli.py                 # this checkout
    .venv/bin/python benchmarks/bench_cli.py --src OTHER/src # another source tree (before/after)
    .venv/bin/python benchmarks/bench_cli.py --runs 15

Exit code 1 when a median misses its target (``--no-check`` to only report).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ENTRY = "import sys; sys.argv[0] = 'fairarena'; from fairarena.cli import main; main()"
CASES = (("fairarena --help", ["--help"], 0.3), ("fairarena notions", ["notions"], 0.6))


def _time(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--src", default=None, help="Put this source tree first on PYTHONPATH.")
    ap.add_argument("--no-check", action="store_true")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.src:
        env["PYTHONPATH"] = args.src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # one unmeasured run of each: bytecode compiled and files in the page cache (as after install)
    for _, argv, _ in CASES:
        _time([sys.executable, "-c", ENTRY, *argv], env)
    base = [_time([sys.executable, "-c", "pass"], env) for _ in range(args.runs)]
    load = os.getloadavg()[0]
    print(f"python start-up (baseline): median {statistics.median(base):.3f} s; load {load:.2f}")
    ok = True
    for label, argv, target in CASES:
        times = [_time([sys.executable, "-c", ENTRY, *argv], env) for _ in range(args.runs)]
        med = statistics.median(times)
        hit = med <= target
        ok &= hit
        print(f"{label:20s} median {med:.3f} s (min {min(times):.3f}, max {max(times):.3f}, {args.runs} runs; "
              f"{med / statistics.median(base):.1f}x bare python) target {target:.1f} s: {'ok' if hit else 'MISSED'}")
    return 0 if ok or args.no_check else 1


if __name__ == "__main__":
    sys.exit(main())
