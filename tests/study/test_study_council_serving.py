"""A council study's records say how each debate was served (``serving``: the server-reported prompt reuse
and each server's concurrency), as a duel study's records do; scripted councils carry no ``serving``."""

from __future__ import annotations

import json

import pytest

from fairarena.arena.transcript import iter_turns, read_transcript
from fairarena.study.design import preset, to_toml
from fairarena.study.store import load_results, run_study

REUSED = 10   # prompt tokens every reply says the server reused from its prefix cache


@pytest.fixture
def reusing_server(zero_server, monkeypatch):
    """The loopback server, its every reply reporting REUSED cached prompt tokens (as
    ``usage.prompt_tokens_details.cached_tokens`` would)."""
    import fairarena.llm.openai_backend as ob

    monkeypatch.setattr(ob, "_cached_tokens", lambda obj, usage: REUSED)
    return zero_server


def _served(root, record):
    """(calls the server answered, their prompt tokens) from the debate's transcript."""
    turns = [t for t in iter_turns(read_transcript(root / record["transcript"])) if not t.get("cached")]
    return len(turns), sum(t["usage"]["prompt_tokens"] for t in turns)


@pytest.mark.parametrize("design", ["triage", "tourism"])
def test_language_model_council_records_carry_serving(reusing_server, tmp_path, design):
    url = reusing_server.base_url
    if design == "tourism":   # the tourism debate's turns come from its transcript (the task returns none)
        reusing_server.reply = json.dumps({"allocation": {}, "justification": "none", "critique": "none",
                                           "accept": True})
        cfg = preset("tourism-small", cohorts=1, rounds=1, mechanisms=["nash"], model_a=f"openai:m@{url}",
                     concurrency={url: 3})
    else:
        cfg = preset("council-small", cohorts=1, rounds=1, mechanisms=["utilitarian"], model_a=f"openai:m@{url}",
                     model_b=f"openai:m@{url}", rag="off", concurrency={url: 3})
    root = tmp_path / "st"
    run_study(cfg, to_toml(cfg), root, backend="threads")
    (r,) = load_results(root)
    # (the empty flows break tourism's flow rules, which the arena applies: every proposal is invalid, so each of
    # the 9 proposing turns -- 4 rounds, 4 finals, the draft -- is asked twice more (max_repairs 2), and the 3
    # decisions are not repaired: 9 x 3 + 3 calls; the debate ends without a valid joint)
    assert r["status"] == "ok" if design == "triage" else r["error"].startswith("joint decision infeasible")
    calls, prompt = _served(root, r)
    assert calls == (9 * 3 + 3 if design == "tourism" else 18)
    # the server-reported reuse over the debate's calls, the server key and its concurrency (as a duel's record)
    assert r["serving"] == {"prompt_reuse": round(REUSED * calls / prompt, 4), "cached_prompt_tokens": REUSED * calls,
                            "prompt_tokens": prompt, "servers": {url: {"limit": 3, "current": 3, "lowest": 3}}}


def test_scripted_council_records_carry_no_serving(tmp_path):
    for cfg in (preset("council-small", cohorts=1, rounds=1, mechanisms=["utilitarian"]),
                preset("tourism-small", cohorts=1, rounds=1, mechanisms=["nash"])):
        root = tmp_path / cfg.name
        run_study(cfg, to_toml(cfg), root)
        assert all("serving" not in r for r in load_results(root))


def test_tourism_language_model_council_uses_the_tasks_model_settings(zero_server, tmp_path):
    """The study's max_tokens, temperature and max_repairs reach a tourism council's debate, as a triage
    council's: they are in the task's key and record, so they must be what ran (they were the arena's
    defaults, 900 / 0.0 / 2, whatever the design said)."""
    url = zero_server.base_url
    zero_server.reply = json.dumps({"allocation": {}, "justification": "none", "critique": "none", "accept": True})
    cfg = preset("tourism-small", cohorts=1, rounds=1, mechanisms=["nash"], model_a=f"openai:m@{url}",
                 max_tokens=77, temperature=0.3, max_repairs=1)
    root = tmp_path / "st"
    run_study(cfg, to_toml(cfg), root, backend="threads")
    (r,) = load_results(root)
    header = read_transcript(root / r["transcript"])[0]
    assert (header["config"]["max_tokens"], header["config"]["temperature"], header["config"]["max_repairs"]) == \
        (77, 0.3, 1)
    assert zero_server.sampling == {(77, 0.3)}      # what every request asked the server for
