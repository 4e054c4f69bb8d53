"""Reading a damaged study folder costs no more than reading a healthy one (issue 23, Speed). Prints
figures; not a unit test.

    .venv/bin/python benchmarks/bench_study_damage.py [--cohorts 50] [--repeat 3] [--keep DIR]

Builds the scripted paper preset (``--cohorts`` 50: 600 debates) with ``fairarena study run --backend
processes --workers 2`` (or reuses ``--keep DIR/st``), then times, on a fresh copy of the folder for every
repetition (the first read of a damaged folder is the one that pays: it rebuilds ``results.jsonl``), the
readers every command goes through:

- ``study_status(root)`` (``fairarena study status``), ``load_results(root)`` (``study stats``, ``tables``,
  ``report``; a damaged record makes it refuse the folder, which is timed too);
- ``fairarena study stats DIR --json`` as a subprocess (start-up included), once per case;

for a healthy folder, a garbage line at the end of ``results.jsonl``, ``results.jsonl`` deleted, one record
reduced to ``{"status": "ok"}``, one record and transcript stored under another debate's key, and a
truncated ``study.json``. Best of ``--repeat``; the load average is printed (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def build(root: Path, cohorts: int) -> None:
    from fairarena.study.design import preset, to_toml

    toml = root.parent / "paper.toml"
    toml.write_text(to_toml(preset("paper", cohorts=cohorts)))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "fairarena.cli", "study", "run", str(toml), "--out", str(root),
                    "--backend", "processes", "--workers", "2", "--json"], check=True, capture_output=True)
    print(f"built {root}: {len(list(root.glob('debates/*/*.json')))} debates in {time.perf_counter() - t0:.1f} s "
          f"({load()})")


def damage(root: Path, case: str) -> None:
    records = sorted(root.glob("debates/*/*.json"))
    if case == "garbage line in results.jsonl":
        with open(root / "results.jsonl", "a") as fh:
            fh.write("{garbage\n")
    elif case == "results.jsonl deleted":
        (root / "results.jsonl").unlink()
    elif case == 'a record {"status": "ok"}':
        records[len(records) // 2].write_text('{"status": "ok"}')
    elif case == "a misplaced record + transcript":
        src, dst = records[0], records[len(records) // 2]
        shutil.copyfile(src, dst)
        shutil.copyfile(src.with_suffix(".jsonl"), dst.with_suffix(".jsonl"))
    elif case == "truncated study.json":
        text = (root / "study.json").read_text()
        (root / "study.json").write_text(text[: len(text) // 2])


CASES = ["healthy", "garbage line in results.jsonl", "results.jsonl deleted", 'a record {"status": "ok"}',
         "a misplaced record + transcript", "truncated study.json"]


def timed(fn) -> tuple[float, str]:
    t0 = time.perf_counter()
    try:
        fn()
        what = "read"
    except Exception as exc:  # the refusal of a damaged folder is what is timed then
        what = f"refused ({type(exc).__name__})"
    return time.perf_counter() - t0, what


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cohorts", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, default=None)
    args = ap.parse_args()
    from fairarena.study.store import load_results, study_status

    work = Path(tempfile.mkdtemp(prefix="bench-damage-"))
    base = (args.keep or work) / "st"
    if not (base / "study.json").exists():
        base.parent.mkdir(parents=True, exist_ok=True)
        build(base, args.cohorts)
    print(f"{'case':36} {'study_status':>14} {'load_results':>14}   {'study stats (CLI)':>18}")
    for case in CASES:
        best = {"status": float("inf"), "load": float("inf")}
        notes = {}
        for i in range(args.repeat):
            for which, fn in (("status", study_status), ("load", load_results)):
                root = work / f"copy-{i}-{which}"
                shutil.copytree(base, root)
                damage(root, case)
                dt, notes[which] = timed(lambda: fn(root))
                best[which] = min(best[which], dt)
                shutil.rmtree(root)
        root = work / "copy-cli"
        shutil.copytree(base, root)
        damage(root, case)
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "fairarena.cli", "study", "stats", str(root), "--json"],
                           capture_output=True, text=True)
        cli = time.perf_counter() - t0
        shutil.rmtree(root)
        print(f"{case:36} {best['status'] * 1e3:11.0f} ms {best['load'] * 1e3:11.0f} ms   {cli:8.2f} s exit {r.returncode}"
              f"   ({notes['load']}; {load()})")
    if args.keep is None:
        shutil.rmtree(work)
    print(json.dumps({"python": sys.version.split()[0], "cpus": os.cpu_count()}))


if __name__ == "__main__":
    main()
