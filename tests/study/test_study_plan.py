"""``fairarena study plan``: the calls it predicts are the calls a run makes; tokens, time and cost follow
from them by the stated arithmetic; bad options are one line, exit 2, before any work."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fairarena.study.design import expand, to_toml
from fairarena.study.plan import JUSTIFICATION_TOKENS, format_plan, plan_study
from fairarena.study.store import load_results, run_study

from .conftest import tiny_design


def test_planned_calls_are_the_calls_a_run_makes(zero_server, tmp_path):
    url = zero_server.base_url
    cfg = tiny_design(model_a=f"openai:m@{url}", model_b=f"openai:m@{url}", rag="off")
    n = zero_server.requests
    plan = plan_study(cfg, tokens_per_s=1000.0, price_prompt=2.0, price_completion=4.0)
    assert zero_server.requests == n                                   # no model call
    assert plan["debates"] == len(expand(cfg)) == 10                   # 8 and the 2 baseline-vs-baseline controls
    run_study(cfg, to_toml(cfg), tmp_path / "st")
    recs = load_results(tmp_path / "st")
    assert plan["calls"] == sum(r["usage"][w]["calls"] for r in recs for w in "ab") == 60
    assert all(p["status"] == "ok" for p in plan["patterns"])
    live = (plan["calls"] - plan["cached_calls"]) / plan["calls"]
    assert plan["time_s"]["high"] == pytest.approx(round((plan["prompt_tokens"] + 60 * cfg.max_tokens) * live / 1000, 1))
    assert plan["cost"]["high"] == pytest.approx(round((plan["prompt_tokens"] * 2 + 60 * cfg.max_tokens * 4) * live / 1e6, 4))
    assert all(p["completion_tokens_per_debate"]["low"] > 6 * JUSTIFICATION_TOKENS for p in plan["patterns"])
    assert plan["per_call"]["prompt_tokens"] > 300                     # the cohort table and the rules are in it


def test_plan_cli_json_and_bad_options(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('base = "tiny"\n')
    r = subprocess.run([sys.executable, "-m", "fairarena.cli", "study", "plan", str(p), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["calls"] == 48
    for bad, field in ((["--tokens-per-s", "0"], "tokens-per-s"), (["--price-prompt", "-1"], "price-prompt"),
                       (["--probe"], "probe")):
        r = subprocess.run([sys.executable, "-m", "fairarena.cli", "study", "plan", str(p), *bad],
                           capture_output=True, text=True, timeout=120)
        err = r.stderr.strip()
        assert r.returncode == 2 and field in err and len(err.splitlines()) == 1 and "Traceback" not in err


def _calls(recs):
    return sum(u["calls"] for r in recs for u in r["usage"].values())


def test_council_plan_counts_every_members_turns_and_the_run_makes_them(zero_server, tmp_path):
    from fairarena.study.design import preset

    url = zero_server.base_url
    cfg = preset("council-small", cohorts=1, rounds=1, closing=["joint-draft", "nash"], mechanisms=["utilitarian"],
                 model_a=f"openai:m@{url}", model_b=f"openai:m@{url}", rag="off")
    n = zero_server.requests
    plan = plan_study(cfg, tokens_per_s=500.0, price_prompt=1.0, price_completion=3.0)
    assert zero_server.requests == n                                   # no model call
    assert plan["kind"] == "council" and plan["debates"] == 2 and plan["members"] == cfg.members
    by = {p["closing"]: p for p in plan["patterns"]}
    # joint-draft: 6 members x (1 round + a final) + the draft and 5 decisions; nash: 6 x (1 round + a final)
    assert by["joint-draft"]["calls_per_debate"] == 18 and by["nash"]["calls_per_debate"] == 12
    assert by["nash"]["cached_calls_per_debate"] == 12                # its round and finals are joint-draft's
    assert plan["calls"] == 30 and plan["cached_calls"] == 12
    run_study(cfg, to_toml(cfg), tmp_path / "st")
    recs = load_results(tmp_path / "st")
    assert [r["status"] for r in recs] == ["ok", "ok"] and _calls(recs) == plan["calls"]
    comp = plan["completion_tokens"]
    assert comp["high"] == 30 * cfg.max_tokens
    assert plan["time_s"]["high"] == pytest.approx(round((plan["prompt_tokens"] + comp["high"]) * 18 / 30 / 500, 1))
    assert plan["cost"]["low"] == pytest.approx(round((plan["prompt_tokens"] + comp["low"] * 3) * 18 / 30 / 1e6, 4))
    assert "council debates (6 members each)" in format_plan(plan)[0]


def test_scripted_council_plan_equals_the_runs_calls(tmp_path):
    from fairarena.study.design import preset

    cfg = preset("council-small", cohorts=1, rounds=2, mechanisms=["utilitarian"])
    plan = plan_study(cfg)
    run_study(cfg, to_toml(cfg), tmp_path / "st")
    assert plan["calls"] == _calls(load_results(tmp_path / "st")) == 6 * 4   # 2 rounds, final, draft/decision


def test_tourism_council_plan(zero_server, tmp_path):
    from fairarena.study.design import preset

    zero_server.reply = json.dumps({"allocation": {}, "justification": "none", "critique": "none", "accept": True})
    url = zero_server.base_url
    cfg = preset("tourism-small", cohorts=1, rounds=1, mechanisms=["nash"], model_a=f"openai:m@{url}")
    plan = plan_study(cfg)
    (p,) = plan["patterns"]
    # a round and a final each and the draft, each invalid (the empty flows break tourism's flow rules) and asked
    # twice more (max_repairs 2), then 3 decisions
    assert p["status"] == "ok" and plan["calls"] == (4 * 2 + 1) * 3 + 3
    assert p["completion_tokens_per_debate"]["low"] < p["completion_tokens_per_debate"]["high"]
    run_study(cfg, to_toml(cfg), tmp_path / "st")
    assert _calls(load_results(tmp_path / "st")) == plan["calls"]
    scripted = plan_study(preset("tourism-small", cohorts=1))          # the domain's own loop asks no model
    assert scripted["calls"] == scripted["prompt_tokens"] == 0 and scripted["patterns"][0]["note"]
