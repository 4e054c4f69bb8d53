"""A declared-file problem of 8 recipients x 6 resources debates as fast as a triage cohort (issue 21).

Times whole ``fairarena debate`` processes, alternating the two commands of each pair so that a noisy
machine slows both alike, and prints each one's median CPU and wall time and their ratio:

* the file problem ``benchmarks/data/clinic_8x6.toml`` (8 recipients, 3 indivisible and 3 divisible
  resources, made-up numbers) with two stakeholders of linear objectives, against the default triage
  debate (a sampled cohort of 8 patients x 6 resources, aligned:utilitarian vs baseline);
* the same file problem with the Gini stakeholder (``equal``: its optimum is the exact least-Gini
  allocation, a sequence of MILPs), against the triage egalitarian agent (the same exact computation).

Run:  python benchmarks/bench_problem_file.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROBLEM = HERE / "data" / "clinic_8x6.toml"


def _fairarena() -> list[str]:
    exe = shutil.which("fairarena", path=os.path.dirname(sys.executable)) or shutil.which("fairarena")
    return [exe] if exe else [sys.executable, "-c", "import sys; from fairarena.cli import main; sys.exit(main())"]


PAIRS = {
    "linear objectives": (["debate", "--problem", str(PROBLEM), "--agent", "aligned:risk", "--agent", "aligned:regions"],
                          ["debate", "--seed", "0"]),
    "a Gini objective": (["debate", "--problem", str(PROBLEM), "--agent", "aligned:risk", "--agent", "aligned:equal"],
                         ["debate", "--seed", "0", "--agent", "aligned:egalitarian", "--agent", "baseline"]),
}


def _time(cmd: list[str], cwd: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {r.stderr.strip().splitlines()[-1:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    fa = _fairarena()
    with tempfile.TemporaryDirectory() as cwd:
        for name, (file_cmd, triage_cmd) in PAIRS.items():
            _time(fa + file_cmd, cwd), _time(fa + triage_cmd, cwd)   # warm-up
            f_cpu, f_wall, t_cpu, t_wall, ratio = [], [], [], [], []
            for _ in range(args.repeat):
                c1, w1 = _time(fa + file_cmd, cwd)
                c2, w2 = _time(fa + triage_cmd, cwd)
                f_cpu.append(c1), f_wall.append(w1), t_cpu.append(c2), t_wall.append(w2), ratio.append(c1 / c2)
            med = statistics.median
            print(f"{name}: file problem {med(f_cpu):.2f} s CPU ({med(f_wall):.2f} s wall), triage cohort "
                  f"{med(t_cpu):.2f} s CPU ({med(t_wall):.2f} s wall); file/triage CPU {med(ratio):.2f} "
                  f"(range {min(ratio):.2f}-{max(ratio):.2f}), load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
