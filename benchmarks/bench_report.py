"""Size and speed of the HTML study report (issue 23): ``fairarena study report`` on finished scripted studies
(600 debates: the paper preset; 2,000: the same design with 167 cohorts, 2,004 debates), the file's size,
and opening it in headless Chromium. Prints figures; not a unit test.

    .venv/bin/python benchmarks/bench_report.py --dir600 DIR --dir2000 DIR [--repeat 2] [--sizes 2000]
        [--before SRC] [--no-browser]

A folder not given is run first (``fairarena study init --preset paper``, for 2,000 with ``cohorts = 167``;
``fairarena study run ... --backend processes --workers 2``: about a minute, and several for 2,000).
Figures, each the best of ``--repeat`` runs, with the load average (wall and CPU = user + sys: on a shared
machine the wall time is the CPU time times the contention):

* ``fairarena study report DIR --out FILE`` as a user runs it (wall time of the whole command; target < 10 s
  at 2,000 debates), beside ``fairarena study stats DIR --json`` (the same analysis without the report: the
  difference is the report's own cost, mostly reading and rendering every transcript). Four ways: no caches
  (no ``traces.json``, ``copies.json`` or ``report_bodies.json``, so every transcript is read twice: a folder
  written by an older fairarena, or with its caches deleted), cold (only the cache of compressed debate
  bodies, ``report_bodies.json``, removed: the folder as ``study run`` leaves it, whose workers derived the
  traces and copy measures, so the first report after a run), warm (every cache written by the run before),
  and cold with ``--jobs 1`` (one process: by default the report forks a second one on a machine with two or
  more CPUs); every file must be the same bytes (checked). CPU includes the forked children;
* with ``--before SRC`` (another tree's ``src``, e.g. an earlier commit's ``git archive``), the same command
  run with that code in the same session, alternating with this tree's runs (its report is not compared:
  the two versions' pages may differ);
* the file's size (target < 10 MB at 600 debates) and the embedded transcripts' compressed size;
* opening the file in headless Chromium (chromium + chromedriver through selenium): wall time of the page
  load (``driver.get`` returns at the load event) and the page's own ``domInteractive`` and
  ``loadEventEnd`` (Navigation Timing; target: interactive in < 3 s at 600 debates); then the time to open
  the last debate (its transcript inflated in the page) and to switch tabs by ``#hash``.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = [sys.executable, "-m", "fairarena.cli", "study"]


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def wall(cmd: list[str]) -> float:
    return timed(cmd)[0]


def timed(cmd: list[str], src: Path | None = None) -> tuple[float, float]:
    """Wall and CPU (user + sys of the child) seconds of a command (``src``: run with that ``src`` tree)."""
    env = None
    if src is not None:
        env = {**os.environ, "PYTHONPATH": str(src.resolve())}
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    t = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def run_study(tmp: Path, cohorts: int) -> Path:
    toml = tmp / f"paper{cohorts}.toml"
    subprocess.run([*CLI, "init", "--preset", "paper", "--out", str(toml)], check=True, stdout=subprocess.DEVNULL)
    text = toml.read_text()
    if cohorts != 50:
        text = re.sub(r"(?m)^cohorts = 50$", f"cohorts = {cohorts}", text)
        toml.write_text(text)
    root = tmp / f"study{cohorts}"
    t = wall([*CLI, "run", str(toml), "--out", str(root), "--backend", "processes", "--workers", "2", "--json"])
    print(f"study run, {cohorts} cohorts: {t:.1f} s ({load()})")
    return root


def open_in_chromium(path: Path) -> dict[str, float]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or "chromium"
    profile = tempfile.mkdtemp(prefix="fa-bench-chrome-")
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
              f"--user-data-dir={profile}", "--window-size=1400,900"):
        opts.add_argument(a)
    drv = webdriver.Chrome(options=opts, service=Service(executable_path=shutil.which("chromedriver")))
    try:
        drv.get("about:blank")
        t0 = time.perf_counter()
        drv.get(path.as_uri())
        get = time.perf_counter() - t0
        nav = drv.execute_script("var t=performance.getEntriesByType('navigation')[0]; "
                                 "return [t.domInteractive, t.loadEventEnd]")
        t0 = time.perf_counter()
        drv.execute_script("location.hash='#debates'")
        WebDriverWait(drv, 10).until(lambda d: d.execute_script(
            "return document.querySelector('section.sec.active').id === 'debates'"))
        tab = time.perf_counter() - t0
        items = drv.find_elements(By.CSS_SELECTOR, "#debates details.item")
        last = items[-1]
        t0 = time.perf_counter()
        drv.execute_script("arguments[0].open = true", last)
        WebDriverWait(drv, 10).until(lambda d: last.get_attribute("data-loaded") == "1")
        inflate = time.perf_counter() - t0
        errors = [e for e in drv.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
        return {"get": get, "interactive": nav[0] / 1000, "load": nav[1] / 1000, "tab": tab, "inflate": inflate,
                "items": len(items), "errors": len(errors)}
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir600", type=Path)
    ap.add_argument("--dir2000", type=Path)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--sizes", default="600,2000", help="which studies: 600, 2000 or both (600,2000)")
    ap.add_argument("--before", type=Path, help="another tree's src directory, timed in the same run")
    ap.add_argument("--no-browser", action="store_true", help="skip opening the report in Chromium")
    a = ap.parse_args()
    sizes = {int(x) for x in a.sizes.split(",")}
    tmp = Path(tempfile.mkdtemp(prefix="fa-bench-report-"))
    for n, root, cohorts in ((600, a.dir600, 50), (2000, a.dir2000, 167)):
        if n not in sizes:
            continue
        root = root or run_study(tmp, cohorts)
        out = tmp / f"report{n}.html"
        wall([*CLI, "stats", str(root), "--json"])            # the traces cache, as after `study stats`
        stats = min(timed([*CLI, "stats", str(root), "--json"]) for _ in range(a.repeat))
        cache = root / "report_bodies.json"
        report = [*CLI, "report", str(root), "--out", str(out)]
        fresh, cold, warm, one, before = [], [], [], [], []
        for _ in range(a.repeat):
            if a.before is not None:
                before.append(timed([*CLI, "report", str(root), "--out", str(tmp / "before.html")], a.before))
            for name in ("traces.json", "copies.json", "report_bodies.json"):
                (root / name).unlink(missing_ok=True)
            fresh.append(timed(report))
            first = out.read_bytes()
            cache.unlink(missing_ok=True)
            cold.append(timed(report))
            if out.read_bytes() != first:
                raise SystemExit("the cold report differs from the fresh one")
            warm.append(timed(report))
            if out.read_bytes() != first:
                raise SystemExit("the warm report differs from the cold one")
            cache.unlink(missing_ok=True)
            one.append(timed([*report, "--jobs", "1"]))
            if out.read_bytes() != first:
                raise SystemExit("the one-process report differs from the two-process one")
        text = out.read_text(encoding="utf-8")
        size = re.search(r'class="dd-size">([^<]*)', text)
        fmt = lambda ts: f"{min(ts)[0]:.2f} s wall, {min(t[1] for t in ts):.2f} s CPU"   # noqa: E731
        print(f"{n} debates: study report without caches {fmt(fresh)}, cold (as a run leaves the folder) "
              f"{fmt(cold)}, warm {fmt(warm)}, "
              f"cold in one process (--jobs 1) {fmt(one)}"
              + (f"; before ({a.before}) {fmt(before)}" if before else "")
              + f"; study stats {stats[0]:.2f} s wall, {stats[1]:.2f} s CPU (best of {a.repeat}; {load()}); "
              f"file {out.stat().st_size / 1e6:.2f} MB, cache {cache.stat().st_size / 1e6:.2f} MB; "
              f"{size.group(1) if size else 'no compressed bodies'}")
        if a.no_browser:
            continue
        best = None
        for _ in range(a.repeat):
            r = open_in_chromium(out)
            best = r if best is None or r["get"] < best["get"] else best
        assert best is not None
        print(f"{n} debates: chromium open {best['get']:.2f} s (domInteractive {best['interactive']:.2f} s, "
              f"load event {best['load']:.2f} s), #debates {best['tab'] * 1000:.0f} ms, last debate's transcript "
              f"inflated in {best['inflate'] * 1000:.0f} ms; {best['items']} debates, {best['errors']} console errors "
              f"({load()})")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
