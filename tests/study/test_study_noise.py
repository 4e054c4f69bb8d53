"""A study folder's repeated samples, nulls and transcript analyses, end to end: `study stats/tables/report`
show them, and a study of FAKE copying agents run through the study runner comes out as no effect."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys

import pytest

from fairarena.llm.scripted import register_script

CLI = [sys.executable, "-m", "fairarena.cli", "study"]
_OTHER = re.compile(r"agent \w+ \(other agent\): \w+; allocation ")
_DRAFT = re.compile(r"Draft by agent \w+: allocation ")


def _needed(params):
    body = params.schema["properties"]["allocation"]["properties"]
    return {pid: list(spec["properties"]) for pid, spec in body.items()}


def _last_json(text, pattern):
    hits = list(pattern.finditer(text))
    if not hits:
        return None, ""
    end = hits[-1].end()
    mapping, stop = json.JSONDecoder().raw_decode(text, end)
    rest = text[stop:]
    m = re.match(r"; justification: (.*?)(?:; critique:|\n|$)", rest) or re.search(r"\nJustification: (.*)", rest)
    return mapping, (m.group(1).strip() if m else "")


def fake_copying_agent(messages, params):
    """FAKE agent (no model): opens by giving one patient — picked by a hash of its prompt, so by its
    alignment, at random — one unit of every resource that patient needs; afterwards it copies the other
    agent's last allocation and justification word for word, and accepts any draft."""
    needed = _needed(params)
    user = messages[-1]["content"]
    draft, draft_text = _last_json(user, _DRAFT)
    other, other_text = _last_json(user, _OTHER)
    if draft is not None:
        mapping, text = draft, draft_text
    elif other is not None:
        mapping, text = other, other_text
    else:
        ids = sorted(needed)
        pick = ids[int(hashlib.sha256((messages[0]["content"] + user).encode()).hexdigest(), 16) % len(ids)]
        mapping, text = {pick: {r: 1 for r in needed[pick]}}, f"I give {pick} one unit of every resource needed."
    alloc = {pid: {r: (mapping.get(pid) or {}).get(r, 0) for r in res} for pid, res in needed.items()}
    reply = {"allocation": alloc, "justification": text or "as you said", "critique": "none"}
    if "accept" in params.schema["properties"]:
        reply = {"accept": True, **reply}
    return reply


register_script("fake-copying-agent", fake_copying_agent, replace=True)


@pytest.fixture(scope="module")
def copying_study(tmp_path_factory):
    from fairarena.study.design import preset, to_toml
    from fairarena.study.store import run_study

    cfg = preset("tiny", model_a="scripted:fake-copying-agent", model_b="scripted:fake-copying-agent",
                 baseline_control=True, cohorts=4, rounds=2)
    root = tmp_path_factory.mktemp("copying") / "study"
    run_study(cfg, to_toml(cfg), root)
    return root


def test_a_study_of_copying_agents_shows_no_effect(copying_study):
    from fairarena.study.analysis import analyse_study

    an = analyse_study(copying_study, n_resamples=200, bias=False)
    assert an.status["ok"] == an.status["total"] == 4 * 2 * 2 + 4
    ex = an.extras
    assert ex["control_debates"] == 4 and ex["copies"]["copying"] is True
    assert ex["copies"]["from_round2"]["B"]["text_copied"] == 1.0
    figs = ex["noise"]["figures"]
    assert figs and all(f["beats_null"] is False for f in figs)
    # the alignment changed which patient A's opening served: a bias figure exists, from noise
    bias = [f for f in figs if f["figure"] == "framework bias"]
    assert any(f["value"] > 0 for f in bias)
    out = an.to_dict()
    assert out["transcripts"]["copies"]["copying"] is True and out["samples"]["per_cell"] == 1


@pytest.fixture(scope="module")
def sampled_study(tmp_path_factory):
    from fairarena.study.design import preset, to_toml
    from fairarena.study.store import run_study

    cfg = preset("tiny", baseline_control=True, samples=2)
    root = tmp_path_factory.mktemp("sampled") / "study"
    run_study(cfg, to_toml(cfg), root)
    return root


def test_stats_json_tables_and_report_carry_the_new_analyses(sampled_study, tmp_path):
    r = subprocess.run([*CLI, "stats", str(sampled_study), "--json"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["samples"]["per_cell"] == 2 and len(out["samples"]["cells"]) == 2 * 2 * 7
    cell = out["samples"]["cells"][0]
    assert cell["n_cohorts"] == 2 and cell["n_debates"] == 4 and cell["cohort_test"]["n"] == 2
    assert out["noise"]["control_debates"] == 2 * 2                  # one per cohort and sample
    assert {f["null"] for f in out["noise"]["figures"]} >= {"baseline control", "label permutation"}
    assert set(out["transcripts"]) == {"copies", "convergence", "contestation", "bias_confusion"}
    assert out["transcripts"]["bias_confusion"] is None              # scripted: not computed by default
    txt = subprocess.run([*CLI, "stats", str(sampled_study)], capture_output=True, text=True, timeout=600)
    assert "Against noise:" in txt.stdout and "Effects against noise" in txt.stdout
    assert "Repeated samples" in txt.stdout and "nan" not in txt.stdout.lower()
    dest = tmp_path / "tables"
    r = subprocess.run([*CLI, "tables", str(sampled_study), "--out", str(dest)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    names = {p.name for p in dest.iterdir()}
    assert {"nulls.md", "samples.csv", "copies.tex", "convergence.md", "contestation.md", "noise.json"} <= names
    html = tmp_path / "r.html"
    r = subprocess.run([*CLI, "report", str(sampled_study), "--out", str(html), "--details", "1"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    page = html.read_text()
    assert "Effects against noise" in page and "Transcript analyses" in page and "Copy rates" in page


def test_the_bias_table_puts_the_scripted_utilitarian_opening_at_its_own_framework(sampled_study):
    from fairarena.study.analysis import analyse_study

    conf = analyse_study(sampled_study, n_resamples=200, bias=True).extras["bias_confusion"]
    rows = {r["proposer"]: r for r in conf["tables"]["r1"]}
    util = rows["aligned:utilitarian"]                                 # its opening is the ESG optimum itself
    assert util["n"] == 2 * 2 * 2 and util["counts"]["utilitarian"] == 8
    # the egalitarian negotiator opens at its own welfare's maximiser (docs/arena.md), not necessarily the
    # Gini optimum; every proposal is counted once, ties shared
    assert sum(rows["aligned:egalitarian"]["counts"].values()) == pytest.approx(8)
    assert (sampled_study / "optima.json").is_file()


def test_the_summary_says_when_too_few_cohorts_can_never_beat_the_null():
    from fairarena.study.noise import noise_summary

    def extras(k, n_figs):
        fig = {"beats_null": False, "null": "baseline control", "n_cohorts": k}
        return {"noise": {"figures": [fig] * n_figs, "settings": {"alpha": 0.05, "correction": "holm"}},
                "copies": {"copying": False}}

    few = noise_summary(extras(5, 1))                     # 2 / 2^5 = 0.0625 >= 0.05
    assert "0 of 1 figures beat their null" in few and "smallest p" in few and "0.0625" in few
    assert "smallest p" in noise_summary(extras(8, 40))   # 2 / 256 = 0.0078, but Holm over 40 asks for 0.00125
    assert "smallest p" not in noise_summary(extras(12, 40))
