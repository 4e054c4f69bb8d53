"""The study report, for people, in headless Chromium: a real scripted study of 64 debates.

Every tab is opened by clicking it and by its URL (``#tab``: a link to it, and changing the hash), its
screenshot saved under ``out/`` and checked for size and content (a blank or one-colour page has few
distinct colours); the console stays free of errors; the table filters (metric, framework, opponent) and
header sorting work; the debate drill-down filters by cohort and sorts by a metric; the transcript and
instance of a debate beyond the 60th open (embedded gzip-compressed, inflated by the page), no table wider
than the page. The council report shows its debate transcripts, and its tables fit the page in panels.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from report.test_browser import OUT, _browser, _chrome

TABS = ["Study", "Tables", "Emergence", "Effects against noise", "Transcript analyses", "Figures", "Debates"]


@pytest.fixture(scope="module")
def study64(tmp_path_factory):
    """A scripted 64-debate study (16 cohorts x 2 frameworks x 2 opponents) and its report."""
    from fairarena.study.analysis import write_study_report
    from fairarena.study.design import preset, to_toml
    from fairarena.study.store import run_study

    root = tmp_path_factory.mktemp("study64")
    cfg = preset("tiny")
    cfg = type(cfg)(**{**cfg.model_dump(), "cohorts": 16, "name": "browser"})
    run_study(cfg, to_toml(cfg), root / "study")
    return root / "study", write_study_report(root / "study", root / "report.html")


def _distinct_colours(png: Path) -> int:
    from PIL import Image

    with Image.open(png) as im:
        return len(im.convert("RGB").resize((350, 225)).getcolors(1 << 20) or [])


def _errors(drv) -> list:
    return [e for e in drv.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]


@pytest.fixture
def chrome(tmp_path):
    chromium, chromedriver = _browser()
    drv = _chrome(chromium, chromedriver, tmp_path / "profile", "1400,900")
    yield drv
    drv.quit()


def test_report_text_states_the_transcripts_and_their_size(study64):
    root, path = study64
    text = path.read_text()
    assert text.count('data-z="') == 64                                   # every debate, not the first 60
    assert "64 bodies embedded gzip-compressed:" in text and "64 debates; each with its instance" in text
    assert path.stat().st_size < 3_000_000
    assert "<script src" not in text and "default-src 'none'" in text      # the strict policy is kept


def test_each_tab_by_click_and_by_url_with_screenshots(study64, chrome):
    from selenium.webdriver.common.by import By

    root, path = study64
    drv, js = chrome, chrome.execute_script
    OUT.mkdir(exist_ok=True)
    drv.get(path.as_uri())
    tabs = drv.find_elements(By.CSS_SELECTOR, "nav.tabs button")
    assert [t.text for t in tabs] == TABS
    ids = [t.get_attribute("data-target") for t in tabs]
    for name, tab, sid in zip(TABS, tabs, ids):
        tab.click()
        assert js("return location.hash") == "#" + sid
        assert js("return [...document.querySelectorAll('section.sec')].filter(s => s.offsetParent !== null)"
                  ".map(s => s.id)") == [sid]
        shot = OUT / f"study_report_{sid}.png"
        drv.save_screenshot(str(shot))
        assert shot.stat().st_size > 15_000, name
        assert _distinct_colours(shot) > 20, name                          # not a blank page
        height = js(f"return document.getElementById('{sid}').getBoundingClientRect().height")
        assert height > 150, name
    # the URL's #tab: changing the hash switches (hashchange), opening a link to #tab shows it
    js("location.hash = '#figures'")
    assert js("return document.querySelector('section.sec.active').id") == "figures"
    js("history.back()")
    drv.implicitly_wait(0)
    assert js("return document.querySelector('section.sec.active').id") in ("debates", "figures")
    drv.get(path.as_uri() + "#tables")
    assert js("return document.querySelector('section.sec.active').id") == "tables"
    assert js("return document.querySelector('nav.tabs button[aria-selected=true]').dataset.target") == "tables"
    # shown from the top of the page (the title and the tabs), not scrolled to the section with its heading
    # under the sticky tabs (the browser's jump to #tables went 158 px down)
    assert js("return window.scrollY") == 0
    assert js("return document.querySelector('header.top').getBoundingClientRect().bottom") > 0
    js("window.scrollTo(0, 400); location.hash = '#study'")                  # the URL changed while reading
    assert js("return [document.querySelector('section.sec.active').id, window.scrollY]") == ["study", 0]
    drv.get(path.as_uri() + "#no-such-tab")                                    # unknown: the first tab
    assert js("return document.querySelector('section.sec.active').id") == "study"
    # the figures: joint vs A / vs the opponent per cohort, slopegraphs (3 metrics each), all with a size
    drv.get(path.as_uri() + "#figures")
    labels = js("return [...document.querySelectorAll('#figures svg[aria-label]')].map(s => "
                "[s.getAttribute('aria-label'), s.getBoundingClientRect().width, s.querySelectorAll('path').length])")
    assert sorted(lab for lab, *_ in labels) == ["joint vs A and joint vs opponent per cohort",
                                                 "slopegraphs round 1, final, joint"]
    assert all(w > 500 and n > 60 for _, w, n in labels)                  # 3 metric rows each
    assert _errors(drv) == []


def test_table2_is_readable_at_1400px_and_tables_filter_and_sort(study64, chrome):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    root, path = study64
    drv, js = chrome, chrome.execute_script
    drv.get(path.as_uri() + "#tables")
    # the paper's panels: no Table 2 block wider than the page (no scrollbar hides the Gini columns)
    assert js("return [...document.querySelectorAll('#tables div.scroll')].every(d => d.scrollWidth <= d.clientWidth)")
    assert js("return document.documentElement.scrollWidth") <= 1400
    gini = js("return [...document.querySelectorAll('#tables table.fa th.span')].filter(t => t.textContent === "
              "'Gini (Egal)')[0].getBoundingClientRect().right")
    assert 0 < gini < 1400
    visible = "return [...document.querySelectorAll('#tables table.fa')].filter(t => !t.hidden).length"
    n_all = js(visible)
    assert n_all == 8
    metric = Select(drv.find_element(By.CSS_SELECTOR, "#tables .tfilter select[data-dim=metric]"))
    metric.select_by_value("RMG (Rawls)")
    # Table 2's first panel (ESG, Gini, RMG) shows only RMG columns, its joint panel too, Table 3's first panel
    assert js(visible) == 3
    heads = js("return [...document.querySelectorAll('#tables table.fa:not([hidden]) thead tr:first-child th.span')]"
               ".filter(t => !t.hidden).map(t => [t.textContent, t.colSpan])")
    assert {h for h, _ in heads} == {"RMG (Rawls)"} and [k for _, k in heads] == [4, 2, 4]
    cells = js("return [...document.querySelectorAll('#tables table.fa:not([hidden]) tbody tr')].map(r => "
               "[...r.children].filter(c => !c.hidden).length)")
    assert cells == [5, 5, 3, 3, 5, 5]
    opp = Select(drv.find_element(By.CSS_SELECTOR, "#tables .tfilter select[data-dim=opponent]"))
    opp.select_by_value("A vs C")
    assert js("return [...document.querySelectorAll('#tables table.fa:not([hidden]) th.leaf')].filter(t => !t.hidden)"
              ".map(t => t.textContent)") == ["A", "C", "joint", "p", "d"]
    fw = Select(drv.find_element(By.CSS_SELECTOR, "#tables .tfilter select[data-dim=framework]"))
    fw.select_by_value("Egalitarian")
    assert js("return [...document.querySelectorAll('#tables table.fa:not([hidden]) tbody tr:not([hidden]) th')]"
              ".map(t => t.textContent)") == ["Egalitarian"] * 3
    for s in (metric, opp, fw):
        s.select_by_value("")
    assert js(visible) == n_all
    # sorting: click Table 2's first "A" column (ESG, A vs B) twice: ascending then descending by value
    col = "return [...document.querySelectorAll('#t1-1 tbody tr')].map(r => parseFloat(r.children[1].textContent))"
    th = drv.find_element(By.CSS_SELECTOR, "#t1-1 th.leaf[data-col='0']")
    before = js(col)
    th.click()
    assert js(col) == sorted(before) and th.get_attribute("aria-sort") == "ascending"
    th.click()
    assert js(col) == sorted(before, reverse=True) and th.get_attribute("aria-sort") == "descending"
    drv.find_element(By.CSS_SELECTOR, "#t1-1 th.ix").click()                      # by framework name
    assert js("return [...document.querySelectorAll('#t1-1 tbody th')].map(t => t.textContent)") == \
        ["Egalitarian", "Utilitarian"]
    drv.save_screenshot(str(OUT / "study_report_tables_sorted.png"))
    assert _errors(drv) == []


def test_a_debate_beyond_the_60th_opens_with_its_instance_and_transcript(study64, chrome):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    root, path = study64
    drv, js = chrome, chrome.execute_script
    drv.get(path.as_uri() + "#debates")
    count = drv.find_element(By.CSS_SELECTOR, "#debates .dd-count")
    assert count.text == "64 of 64 shown"
    Select(drv.find_element(By.CSS_SELECTOR, "#debates select.dd-tag[data-tag=cohort]")).select_by_value("15")
    assert count.text == "4 of 64 shown"
    shown = js("return [...document.querySelectorAll('#debates details.item')].map((d, i) => [i, d.hidden])"
               ".filter(x => !x[1]).map(x => x[0])")
    assert shown == [60, 61, 62, 63]                                  # cohort 15's debates: the 61st to 64th
    item = drv.find_elements(By.CSS_SELECTOR, "#debates details.item")[63]
    item.find_element(By.CSS_SELECTOR, "summary").click()
    WebDriverWait(drv, 10).until(lambda d: item.get_attribute("data-loaded") == "1")
    text = item.text
    assert "Patients" in text and "Capacities" in text and "capacity" in text     # the instance
    assert "P8" in text and "Nursing" in text
    assert "justification" in text and "joint recommendation" in text            # the transcript
    tables = js("return arguments[0].querySelectorAll('table.fa').length", item)
    assert tables >= 2 + 4                                            # patients, problem; 4+ proposals
    # every table of the debate is readable at 1,400 px: none wider than its block (the patients' table,
    # its needs column behind a scrollbar, was 40 px too wide: its short labels could not wrap)
    wide = js("return [...arguments[0].querySelectorAll('div.scroll')].filter(d => d.scrollWidth > d.clientWidth)"
              ".map(d => d.querySelector('caption').textContent)", item)
    assert wide == []
    drv.save_screenshot(str(OUT / "study_report_debate64.png"))
    # sort the debates by the joint ESG (descending): the shown items come in that order
    Select(drv.find_element(By.CSS_SELECTOR, "#debates select.dd-sort")).select_by_value("-jointesg")
    vals = js("return [...document.querySelectorAll('#debates details.item')].filter(d => !d.hidden)"
              ".map(d => parseFloat(d.dataset.vJointesg))")
    assert len(vals) == 4 and vals == sorted(vals, reverse=True)
    assert _errors(drv) == []


def test_headers_sort_from_the_keyboard_and_debates_filter_by_a_metric_range(study64, chrome):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    root, path = study64
    drv, js = chrome, chrome.execute_script
    drv.get(path.as_uri() + "#tables")
    # every sortable header is in the tab order; Enter and Space sort by it, as a click does
    assert js("return [...document.querySelectorAll('table.fa thead th.leaf, table.fa thead th.ix')]"
              ".every(t => t.tabIndex === 0)")
    col = "return [...document.querySelectorAll('#t1-1 tbody tr')].map(r => parseFloat(r.children[1].textContent))"
    th = drv.find_element(By.CSS_SELECTOR, "#t1-1 th.leaf[data-col='0']")
    before = js(col)
    js("arguments[0].focus()", th)
    assert js("return document.activeElement === arguments[0]", th)
    th.send_keys(Keys.ENTER)
    assert js(col) == sorted(before) and th.get_attribute("aria-sort") == "ascending"
    y = js("return window.scrollY")
    th.send_keys(Keys.SPACE)
    assert js(col) == sorted(before, reverse=True) and th.get_attribute("aria-sort") == "descending"
    assert js("return window.scrollY") == y                           # Space sorts, it does not scroll the page
    # the debates: keep those whose joint ESG lies in a range (the obvious count from the items' values)
    drv.get(path.as_uri() + "#debates")
    count = drv.find_element(By.CSS_SELECTOR, "#debates .dd-count")
    vals = js("return [...document.querySelectorAll('#debates details.item')].map(d => parseFloat(d.dataset.vJointesg))")
    lo, hi = sorted(vals)[10], sorted(vals)[40]
    Select(drv.find_element(By.CSS_SELECTOR, "#debates select.dd-mkey")).select_by_value("jointesg")
    assert count.text == "64 of 64 shown"                             # no bound yet: no filter
    drv.find_element(By.CSS_SELECTOR, "#debates input.dd-min").send_keys(repr(lo))
    assert count.text == f"{sum(v >= lo for v in vals)} of 64 shown"
    drv.find_element(By.CSS_SELECTOR, "#debates input.dd-max").send_keys(repr(hi))
    want = [i for i, v in enumerate(vals) if lo <= v <= hi]
    assert 0 < len(want) < 64 and count.text == f"{len(want)} of 64 shown"
    shown = js("return [...document.querySelectorAll('#debates details.item')].map((d, i) => [i, d.hidden])"
               ".filter(x => !x[1]).map(x => x[0])")
    assert shown == want
    Select(drv.find_element(By.CSS_SELECTOR, "#debates select.dd-tag[data-tag=cohort]")).select_by_value("15")
    assert count.text == f"{sum(lo <= v <= hi for v in vals[60:])} of 64 shown"   # with the cohort filter
    Select(drv.find_element(By.CSS_SELECTOR, "#debates select.dd-mkey")).select_by_value("")
    assert count.text == "4 of 64 shown"
    assert _errors(drv) == []


def test_council_report_has_the_debate_transcripts(tmp_path, chrome):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from fairarena.study.analysis import write_study_report
    from fairarena.study.design import preset, to_toml
    from fairarena.study.store import run_study

    cfg = preset("tourism-small")
    run_study(cfg, to_toml(cfg), tmp_path / "study")
    path = write_study_report(tmp_path / "study", tmp_path / "report.html")
    drv, js = chrome, chrome.execute_script
    # the council tables are readable at 1,400 px: in panels, none wider than its block (tourism's 14 metrics
    # made the council table 2,778 px and the debate-vs-rules table 2,317 px wide)
    overflow = ("return [...document.querySelectorAll('section.sec.active div.scroll')]"
                ".filter(d => d.scrollWidth > d.clientWidth).map(d => [d.scrollWidth, d.clientWidth])")
    for tab in ("council", "debate-vs-rules"):
        drv.get(path.as_uri() + "#" + tab)
        assert js("return document.querySelectorAll('section.sec.active table.fa').length") >= 2, tab
        assert js(overflow) == [], tab
    drv.get(path.as_uri() + "#instances")
    assert js("return document.querySelector('section.sec.active').id") == "instances"
    item = drv.find_element(By.CSS_SELECTOR, "#instances details.item")
    item.find_element(By.CSS_SELECTOR, "summary").click()
    WebDriverWait(drv, 10).until(lambda d: item.get_attribute("data-loaded") == "1")
    text = item.text
    assert "Points of interest" in text and "residents round 1" in text and "joint recommendation" in text
    assert js(overflow) == []                         # the instance's rows (14 metrics, 4 members) fit too
    # each rule's note whole in its own panel (it was cut at 80 characters in a squeezed last column)
    notes = js("var t=[...arguments[0].querySelectorAll('table.fa')].find(t => t.caption.textContent === "
               "\"the rule's note\"); return [...t.querySelectorAll('tbody td')].map(c => c.textContent)", item)
    assert len(notes) == len(cfg.council_rules()) + 1 and max(map(len, notes)) > 80
    OUT.mkdir(exist_ok=True)
    drv.save_screenshot(str(OUT / "council_report_instance.png"))
    assert _errors(drv) == []
    shutil.rmtree(tmp_path / "study", ignore_errors=True)
