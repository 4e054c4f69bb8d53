"""Speed of the analysis of a finished study (issue 13): ``stats`` and ``report`` over the scripted paper
preset (600 debates). Prints figures; not a unit test.

    .venv/bin/python benchmarks/bench_study_analysis.py [--dir DIR] [--repeat 2]

Without ``--dir`` the paper preset is run first into a temporary folder (``fairarena study run ...
--backend processes --workers 2``; minutes). Figures, each the best of ``--repeat`` runs, with the load:

* baseline in the same run: ``fairarena study status DIR --json`` (CLI start-up + reading every record);
* in-process ``analyse_study`` (every framework x metric cell for both pairings, 2,000 bootstrap resamples
  each, and the emergence measures): cold (no trace cache: every transcript read) and warm;
* ``fairarena study stats DIR --json`` and ``fairarena study report DIR --out FILE`` as a user runs them
  (targets: stats at most 2 s, report at most 10 s).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = [sys.executable, "-m", "fairarena.cli", "study"]


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def best(f, repeat: int) -> tuple[float, str]:
    ts = []
    for _ in range(repeat):
        ts.append(f())
    return min(ts), load()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", type=Path)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="fa-bench-analysis-"))
    root = a.dir
    if root is None:
        root = tmp / "paper"
        subprocess.run([*CLI, "init", "--preset", "paper", "--out", str(tmp / "paper.toml")], check=True)
        t = wall([*CLI, "run", str(tmp / "paper.toml"), "--out", str(root), "--backend", "processes",
                  "--workers", "2", "--json"])
        print(f"paper preset run: {t:.1f} s ({load()})")

    from fairarena.study.analysis import TRACES, analyse_study

    analyse_study(root)                      # imports (scipy, matplotlib-free) warm
    base, lb = best(lambda: wall([*CLI, "status", str(root), "--json"]), a.repeat)
    print(f"baseline `study status --json`: {base:.2f} s ({lb})")

    def cold() -> float:
        (root / TRACES).unlink(missing_ok=True)
        return analyse_study(root).seconds

    c, lc = best(cold, a.repeat)
    w, lw = best(lambda: analyse_study(root).seconds, a.repeat)
    print(f"analyse_study in-process: cold {c:.2f} s ({lc}); warm (trace cache) {w:.2f} s ({lw})")
    s, ls = best(lambda: wall([*CLI, "stats", str(root), "--json"]), a.repeat)
    print(f"`study stats --json`: {s:.2f} s ({ls}), {s / base:.2f}x the baseline; target <= 2 s")
    r, lr = best(lambda: wall([*CLI, "report", str(root), "--out", str(tmp / "report.html")]), a.repeat)
    size = (tmp / "report.html").stat().st_size / 1e6
    print(f"`study report`: {r:.2f} s ({lr}), {r / base:.2f}x the baseline, {size:.1f} MB; target <= 10 s")


if __name__ == "__main__":
    main()
