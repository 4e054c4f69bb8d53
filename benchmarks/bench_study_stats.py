"""``fairarena study stats`` on a 2,000-debate study (issue 23; target: under 5 s). Prints figures; not a unit test.

    .venv/bin/python benchmarks/bench_study_stats.py [--dir DIR] [--repeat 3] [--cohorts 167] [--before SRC]

The study is the scripted paper preset (6 aligned profiles x 2 opponents per cohort) with ``cohorts = 167``
instead of 50: 2,004 debates, every one run for real (``fairarena study init --preset paper``, the
``cohorts`` line edited, ``fairarena study run ... --backend processes --workers 2 --json``; 76 s on the
2-core reference machine). Nothing is synthetic. ``--dir`` reuses a finished folder.

Figures, each the best of ``--repeat`` whole processes as a user runs them, with the load average:

* ``fairarena study stats DIR --json`` and ``fairarena study stats DIR`` (the tables): wall and CPU
  (user + sys of the child, from ``resource.getrusage``), with the folder's caches of what the transcripts
  give (``traces.json``, ``copies.json``) up to date, as ``study run`` leaves them (its workers derive them):
  the first analysis after a run as every later one;
* ``study stats --json`` without caches: both removed first (every transcript read: a folder written by an
  older fairarena, or with its caches deleted);
* the baseline in the same run: ``fairarena study status DIR --json`` (start-up + reading every record);
* with ``--before SRC`` (another tree's ``src`` folder, e.g. ``git archive REV src | tar -x -C /tmp/old``),
  ``study stats --json`` of that code too, alternating with this checkout's run by run, and whether both
  print the same statistics (everything but the timings).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "fairarena.cli", "study"]


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def measure(cmd: list[str], env: dict[str, str] | None = None, stdout: Any = subprocess.DEVNULL) -> tuple[float, float]:
    """(wall, CPU) seconds of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=stdout, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(cmd: list[str], repeat: int, before: Any = None) -> str:
    runs = []
    for _ in range(repeat):
        if before is not None:
            before()
        runs.append(measure(cmd))
    wall = min(w for w, _ in runs)
    cpu = min(c for _, c in runs)
    return f"best wall {wall:.2f} s, best CPU {cpu:.2f} s (walls {', '.join(f'{w:.2f}' for w, _ in runs)}; {load()})"


def build(root: Path, tmp: Path, cohorts: int) -> None:
    toml = tmp / "paper.toml"
    subprocess.run([*CLI, "init", "--preset", "paper", "--out", str(toml)], check=True)
    text, n = re.subn(r"(?m)^cohorts = \d+$", f"cohorts = {cohorts}", toml.read_text())
    assert n == 1, "the paper preset's 'cohorts = ' line moved"
    toml.write_text(text)
    w, c = measure([*CLI, "run", str(toml), "--out", str(root), "--backend", "processes", "--workers", "2",
                    "--json"])
    print(f"built {root}: {cohorts} cohorts, {12 * cohorts} debates, {w:.1f} s wall, {c:.1f} s CPU ({load()})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", type=Path, help="a finished study folder (default: build one in a temporary folder)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cohorts", type=int, default=167, help="cohorts of the paper preset (12 debates each)")
    ap.add_argument("--before", type=Path, help="another tree's src folder: its study stats --json, alternating")
    a = ap.parse_args()
    root = a.dir
    if root is None:
        tmp = Path(tempfile.mkdtemp(prefix="fa-bench-stats-"))
        root = tmp / "study"
        build(root, tmp, a.cohorts)
    n = sum(1 for _ in open(root / "results.jsonl", encoding="utf-8"))
    print(f"study folder {root}: {n} records")
    measure([*CLI, "stats", str(root), "--json"])          # warm the page cache and the trace cache
    print("`study status --json` (baseline):", best([*CLI, "status", str(root), "--json"], a.repeat))
    print("`study stats --json`:", best([*CLI, "stats", str(root), "--json"], a.repeat), "target < 5 s")
    print("`study stats` (tables):", best([*CLI, "stats", str(root)], a.repeat))

    def forget() -> None:
        for name in ("traces.json", "copies.json"):
            (root / name).unlink(missing_ok=True)
    print("`study stats --json` without caches (no traces.json, copies.json):",
          best([*CLI, "stats", str(root), "--json"], a.repeat, forget))
    if a.before is not None:
        compare(root, a.before.resolve(), a.repeat)


def _strip(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _strip(v) for k, v in doc.items() if k != "seconds"}
    if isinstance(doc, list):
        return [_strip(x) for x in doc]
    return doc


def compare(root: Path, before: Path, repeat: int) -> None:
    import json

    env_before = {**os.environ, "PYTHONPATH": str(before)}
    runs: dict[str, list[tuple[float, float]]] = {"before": [], "this": []}
    docs = {}
    for _ in range(repeat):
        for name, env in (("before", env_before), ("this", None)):
            with tempfile.TemporaryFile("w+") as fh:
                runs[name].append(measure([*CLI, "stats", str(root), "--json"], env=env, stdout=fh))
                fh.seek(0)
                docs[name] = _strip(json.load(fh))
    for name, r in runs.items():
        print(f"`study stats --json` {name}: best wall {min(w for w, _ in r):.2f} s, best CPU "
              f"{min(c for _, c in r):.2f} s (CPU {', '.join(f'{c:.2f}' for _, c in r)}; {load()})")
    print("same statistics:", docs["before"] == docs["this"])


if __name__ == "__main__":
    main()
