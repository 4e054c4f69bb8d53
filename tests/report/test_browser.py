"""The HTML report opened in a real headless browser (Debian's chromium driven by selenium + chromedriver).

Checks that tables and figures render with non-zero size, that the tabs and the drill-down filter work,
that the console has no errors (the report's Content-Security-Policy turns any external load into a
console error), and saves screenshots under ``out/``. Skips only when chromium or its driver is
absent and this is not CI; in CI (``CI=true``) a missing browser is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from fairarena.report import (DrillDown, FigureBlock, Item, KeyValues, Preformatted, Report, Section, Table, Text,
                              means_figure, render_html, table2, table3, write_html)
from fairarena.report.tables import Cell, Row
from fairarena.stats import DebateRecord, compare_table

OUT = Path(__file__).resolve().parents[2] / "out"
METRICS = {"esg": "max", "rmg": "max", "gini": "min"}
FRAMEWORKS = ("utilitarian", "rawlsian", "egalitarian")
OPPONENTS = ("baseline", "adversarial")


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def _browser():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    try:
        import selenium  # noqa: F401
    except ImportError:
        selenium_missing = True
    else:
        selenium_missing = False
    if chromium and driver and not selenium_missing:
        return chromium, driver
    why = ("selenium is not installed (pip install -e '.[test]')" if selenium_missing else
           "chromium / chromium-driver not installed (apt-get install -y chromium chromium-driver)")
    if _in_ci():
        pytest.fail(f"CI=true but {why}")
    pytest.skip(why)


def _chrome(chromium: str, chromedriver: str, profile: Path, size: str):
    """Headless chromium through selenium, offline (no background network), its console log kept."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              f"--user-data-dir={profile}", f"--window-size={size}"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=opts, service=Service(executable_path=chromedriver))


def study():
    rng = np.random.default_rng(4)
    recs = []
    for opp in OPPONENTS:
        for k, fw in enumerate(FRAMEWORKS):
            for c in range(20):
                b = {m: float(rng.normal(20, 3)) for m in METRICS}
                a = {m: v + (k - 1) * 1.5 + float(rng.normal(0, 1)) for m, v in b.items()}
                recs.append(DebateRecord(c, fw, opp, a, b, a_feasible=bool(rng.random() > 0.05),
                                         joint={m: (a[m] + b[m]) / 2 for m in METRICS}))
    return compare_table(recs, METRICS, correction="holm")


def build_report(st) -> Report:
    items = []
    for opp in OPPONENTS:
        for fw in FRAMEWORKS:
            alloc = Table(f"Round 1 proposals, cohort 0 ({fw} vs {opp})", (("ventilator",), ("ICU bed",), ("nurse h",)),
                          tuple(Row(f"patient {i}", tuple(Cell(float(v), f"{v:g}") for v in (i % 2, 1, 2.5 * i)))
                                for i in range(4)), index_header="patient")
            items.append(Item(f"{fw} vs {opp}, cohort 0", blocks=(
                alloc, Text(f"Agent A ({fw}) argues for need-weighted access.\n\nThe {opp} agent objects <b>not html</b>."),
                KeyValues({"retrieved chunks": ["c12", "c40"], "repairs": 0, "esg": 31.2}),
            ), summary="feasible, 3 rounds", tags={"opponent": opp, "framework": fw}))
    return Report("Triage-debate study: test report", [
        Section("Study", [KeyValues({"cohorts": 20, "seed": 42, "models": "scripted"}, title="design"),
                          Preformatted("[study]\ncohorts = 20\n", title="study.toml")]),
        Section("Tables", [table2(st), table3(st)]),
        Section("Figures", [FigureBlock(means_figure(st, "esg"), caption="ESG by framework"),
                            FigureBlock(means_figure(st, "gini"), caption="Gini by framework", alt="gini bars")]),
        Section("Debates", [DrillDown(items, title="Per debate", filters=("opponent", "framework"))]),
    ], subtitle="synthetic numbers", footer="fairarena test")


def test_report_is_self_contained_and_ids_unique(tmp_path):
    text = render_html(build_report(study()))
    assert not re.search(r'\b(src|href)="(https?:)?//', text)             # no external resource
    assert "<script src" not in text and "<link" not in text
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids))                                         # figures' ids prefixed
    # Table 2 in the paper's panels (ESG, Gini, RMG | joint) and Table 3 (one panel): 3 tables, + 6 debates
    assert text.count("<svg") == 2 and text.count("<table") == 3 + 6
    assert "&lt;b&gt;not html&lt;/b&gt;" in text                               # text is escaped
    p = write_html(build_report(study()), tmp_path / "r.html")
    assert p.read_text() == text                                            # deterministic output


def test_report_renders_in_headless_chromium():
    chromium, chromedriver = _browser()
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    OUT.mkdir(exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="fa-report-"))
    path = write_html(build_report(study()), workdir / "report.html")
    drv = _chrome(chromium, chromedriver, workdir / 'profile', "1400,900")
    try:
        drv.get(path.as_uri())
        js = drv.execute_script
        assert js("return document.documentElement.classList.contains('js')")     # the inline script ran
        assert js("return document.querySelectorAll('table.fa').length") == 9
        assert js("return document.querySelectorAll('figure svg').length") == 2
        tabs = drv.find_elements(By.CSS_SELECTOR, "nav.tabs button")
        assert [t.text for t in tabs] == ["Study", "Tables", "Figures", "Debates"]
        # only the first tab's section is visible
        assert js("return [...document.querySelectorAll('section.sec')].map(s => s.offsetParent !== null)") == \
            [True, False, False, False]

        tabs[1].click()
        sizes = js("return [...document.querySelectorAll('#tables table.fa')].map(t => "
                   "[t.getBoundingClientRect().width, t.getBoundingClientRect().height, t.rows.length])")
        assert len(sizes) == 3 and all(w > 300 and h > 100 for w, h, _ in sizes)
        assert [n for *_, n in sizes] == [3 + 3] * 3                    # 3 header rows, one row per framework
        # readable at 1,400 px: no table wider than the section that holds it (no horizontal scrolling)
        assert js("return [...document.querySelectorAll('#tables div.scroll')].every(d => d.scrollWidth <= d.clientWidth)")
        assert js("return document.querySelectorAll('#tables td.win').length") >= 1
        drv.save_screenshot(str(OUT / "report_tables.png"))

        tabs[2].click()
        svg = js("return [...document.querySelectorAll('#figures svg')].map(s => "
                 "[s.getBoundingClientRect().width, s.getBoundingClientRect().height, s.querySelectorAll('path').length])")
        assert len(svg) == 2 and all(w > 200 and h > 100 and n > 20 for w, h, n in svg)
        drv.save_screenshot(str(OUT / "report_figures.png"))

        tabs[3].click()
        count = drv.find_element(By.CSS_SELECTOR, ".dd-count")
        assert count.text == "6 of 6 shown"
        drv.find_element(By.CSS_SELECTOR, "input.dd-filter").send_keys("adversarial")
        assert count.text == "3 of 6 shown"
        Select(drv.find_element(By.CSS_SELECTOR, "select.dd-tag[data-tag=framework]")).select_by_value("rawlsian")
        assert count.text == "1 of 6 shown"
        drv.find_element(By.CSS_SELECTOR, "button.dd-open").click()
        opened = js("return [...document.querySelectorAll('details.item')].filter(d => d.open && !d.hidden)"
                    ".map(d => d.querySelector('table').getBoundingClientRect().height)")
        assert len(opened) == 1 and opened[0] > 50
        drv.save_screenshot(str(OUT / "report_debates.png"))

        errors = [e for e in drv.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
        assert errors == [], errors
    finally:
        drv.quit()
        shutil.rmtree(workdir, ignore_errors=True)
    assert (OUT / "report_tables.png").stat().st_size > 10_000


@pytest.mark.parametrize("ci, outcome", [("true", pytest.fail.Exception), ("", pytest.skip.Exception)])
def test_missing_browser_fails_in_ci_and_skips_elsewhere(monkeypatch, ci, outcome):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="chromium"):
        _browser()


def test_study_report_from_a_real_scripted_study_renders_in_headless_chromium(tmp_path):
    """`fairarena study report` on a real (tiny, scripted) study: Tables 2 and 3, the emergence tables and
    figures, the per-debate transcript drill-down; no console errors; screenshots in out/."""
    chromium, chromedriver = _browser()
    from selenium.webdriver.common.by import By

    from fairarena.study.design import preset, to_toml
    from fairarena.study.analysis import write_study_report
    from fairarena.study.store import run_study

    cfg = preset("tiny")
    run_study(cfg, to_toml(cfg), tmp_path / "study")
    path = write_study_report(tmp_path / "study", tmp_path / "report.html", details=3)
    OUT.mkdir(exist_ok=True)
    drv = _chrome(chromium, chromedriver, tmp_path / 'profile', "1400,900")
    try:
        drv.get(path.as_uri())
        js = drv.execute_script
        tabs = drv.find_elements(By.CSS_SELECTOR, "nav.tabs button")
        assert [t.text for t in tabs] == ["Study", "Tables", "Emergence", "Effects against noise",
                                          "Transcript analyses", "Figures", "Debates"]
        by = {t.text: t for t in tabs}
        assert "joint-draft" in drv.find_element(By.CSS_SELECTOR, "#study pre").text      # the study file
        tabs[1].click()
        sizes = js("return [...document.querySelectorAll('#tables table.fa')].map(t => "
                   "[t.getBoundingClientRect().width, t.getBoundingClientRect().height, t.rows.length])")
        # the paper's panels: Table 2 (ESG, Gini, RMG | Var, DW-ESG, VWCI | Gini(CNSS) | joint | joint, continued)
        # and Table 3 (three panels); 3 header rows and one row per framework (2) each
        assert len(sizes) == 5 + 3 and all(w > 100 and h > 60 and n == 3 + 2 for w, h, n in sizes)
        # readable at 1,400 px: no table wider than the section that holds it (no horizontal scrolling)
        assert js("return [...document.querySelectorAll('#tables div.scroll')].every(d => d.scrollWidth <= d.clientWidth)")
        drv.save_screenshot(str(OUT / "study_report_tables.png"))
        tabs[2].click()
        assert js("return document.querySelectorAll('#emergence table.fa').length") == 5
        svg = js("return [...document.querySelectorAll('#emergence svg, #figures svg')].map(s => "
                 "[s.getBoundingClientRect().width, s.querySelectorAll('path').length])")
        assert len(svg) == 2 + 3 + 1 + 2             # + joint vs sides and slopegraphs (a row per focus metric)
        assert all(n > 20 for _, n in svg)
        assert all(w > 200 for w, _ in svg[:2])                  # the visible tab's figures have a size
        drv.save_screenshot(str(OUT / "study_report_emergence.png"))
        for name in ("Effects against noise", "Transcript analyses"):   # each shows its tables
            by[name].click()
            assert js("return [...document.querySelectorAll('section.sec table.fa')]"
                      ".filter(t => t.getBoundingClientRect().height > 0).length") >= 1, name
        by["Figures"].click()
        drv.save_screenshot(str(OUT / "study_report_figures.png"))
        by["Debates"].click()
        assert drv.find_element(By.CSS_SELECTOR, ".dd-count").text == "8 of 8 shown"
        first = drv.find_element(By.CSS_SELECTOR, "details.item summary")
        first.click()
        from selenium.webdriver.support.ui import WebDriverWait    # the transcript is inflated when opened

        WebDriverWait(drv, 10).until(lambda d: js("return document.querySelector('details.item').dataset.loaded"))
        body = js("var d=document.querySelector('details.item'); return [d.open, d.querySelectorAll('table').length,"
                  " d.innerText]")
        assert body[0] and body[1] >= 4                          # round and final proposals of both agents
        assert "justification" in body[2] and "retrieved chunks" in body[2] and "joint recommendation" in body[2]
        drv.save_screenshot(str(OUT / "study_report_debates.png"))
        errors = [e for e in drv.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
        assert errors == [], errors
    finally:
        drv.quit()
    assert (OUT / "study_report_tables.png").stat().st_size > 10_000


def test_council_study_report_renders_in_headless_chromium(tmp_path):
    """`fairarena study report` on a real council study (tourism-small: 3 destinations): the council table
    with every rule and the debate, the utility heat map and metric panels with a size, the paired table,
    the per-instance drill-down; no console errors; screenshots in out/."""
    chromium, chromedriver = _browser()
    from selenium.webdriver.common.by import By

    from fairarena.study.design import preset, to_toml
    from fairarena.study.analysis import write_study_report
    from fairarena.study.store import run_study

    cfg = preset("tourism-small")
    run_study(cfg, to_toml(cfg), tmp_path / "study")
    path = write_study_report(tmp_path / "study", tmp_path / "report.html")
    n_rows = len(cfg.council_rules()) + 1
    OUT.mkdir(exist_ok=True)
    drv = _chrome(chromium, chromedriver, tmp_path / 'profile', "1400,1000")
    try:
        drv.get(path.as_uri())
        js = drv.execute_script
        tabs = drv.find_elements(By.CSS_SELECTOR, "nav.tabs button")
        assert [t.text for t in tabs] == ["Study", "Council", "Debate vs rules", "Instances"]
        tabs[1].click()
        table = js("var t=document.querySelector('#council table.fa'); var r=t.getBoundingClientRect();"
                   " return [r.width, r.height, [...t.querySelectorAll('tbody th')].map(x => x.innerText)]")
        assert table[0] > 300 and table[1] > 200
        labels = [x for x in table[2] if x]
        assert labels[-1] == "debate" and len(labels) >= n_rows         # every rule, the group rows, the debate
        svg = js("return [...document.querySelectorAll('#council svg')].map(s => "
                 "[s.getBoundingClientRect().width, s.querySelectorAll('path').length])")
        assert len(svg) == 2 and all(w > 300 and n > 50 for w, n in svg)   # heat map, metric panels
        drv.save_screenshot(str(OUT / "council_report_council.png"))
        tabs[2].click()
        rows = js("return [...document.querySelectorAll('#debate-vs-rules table.fa')].map(t => "
                  "t.querySelectorAll('tbody tr').length)")
        assert rows[0] == n_rows - 1 and set(rows) == {n_rows - 1}        # every rule in each panel
        tabs[3].click()
        assert drv.find_element(By.CSS_SELECTOR, ".dd-count").text == "3 of 3 shown"
        drv.find_element(By.CSS_SELECTOR, "details.item summary").click()
        body = js("var d=document.querySelector('details.item'); return [d.open, d.innerText]")
        assert body[0] and "residents" in body[1] and "debate" in body[1]
        errors = [e for e in drv.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
        assert errors == [], errors
    finally:
        drv.quit()
    assert (OUT / "council_report_council.png").stat().st_size > 10_000
