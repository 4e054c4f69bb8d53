"""Prompts put their stable part first, byte-identical from an agent's turn to its next (issue 20, What 3).

Before: every prompt began "Round t of R..." (or "Phase: ..."), so an agent's next prompt shared no more
than its system message with the previous one, and a server's prefix cache reused nothing of the instance
table or the references.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairarena.allocation.problem import allocation_to_mapping
from fairarena.arena import Agent, DebateConfig, build_agent, parse_agent, run_debate
from fairarena.arena.prompts import HISTORY_HEAD, stable_prefix
from fairarena.arena.transcript import prompt_reuse, prompt_text, shared_prefix
from fairarena.llm import ScriptedChatModel
from fairarena.rag.store import RetrievedChunk
from fairarena.triage import sample_cohort


def _history_end(content: str) -> int:
    """Where the history block of a user message ends (history lines are single lines; blocks are
    separated by a blank line). The opening round's placeholder line is not part of it."""
    start = content.index(HISTORY_HEAD)
    end = content.find("\n\n", start)
    end = len(content) if end < 0 else end
    return start + len(HISTORY_HEAD) if content[start:end].endswith("(none yet: this is the opening round)") else end


def _debate(names=("A", "B"), closing="joint-draft", proposal_format="allocation", rounds=3):
    cohort = sample_cohort(3, "standard")
    agents = []
    for k, name in enumerate(names):
        a = build_agent(name, ["aligned:care", "baseline", "aligned:rawlsian"][k % 3], "scripted", cohort, rag="off")
        if k == 0:   # a fixed retriever: the same references every turn
            chunks = [RetrievedChunk(f"care/d{i}.md#0", "care", f"Reference {i}: attend to the most dependent.", 0.9)
                      for i in range(3)]
            a.retriever = lambda q, k, chunks=chunks: chunks[:k]
        agents.append(a)
    return run_debate(cohort, agents, DebateConfig(rounds=rounds, closing=closing, proposal_format=proposal_format))


@pytest.mark.parametrize("kw", [{}, {"closing": "dialectical"}, {"names": ("A", "B", "C")},
                                {"proposal_format": "priorities"}])
def test_each_prompt_starts_with_the_previous_prompts_stable_part_and_history(kw):
    res = _debate(**kw)
    assert res.status == "ok"
    checked = 0
    for name in {t.agent for t in res.turns}:
        mine = [t.messages for t in res.turns if t.agent == name and t.attempt == 0]
        for before, after in zip(mine, mine[1:]):
            stable = prompt_text(stable_prefix(before))
            assert prompt_text(after).startswith(stable)          # byte-identical stable part
            assert len(stable) > len(before[0]["content"]) + 1000  # ... which holds the instance table
            # and the history of the earlier turn is still there, unchanged, right after it
            head = before[1]["content"][: _history_end(before[1]["content"])]
            assert after[0] == before[0] and after[1]["content"].startswith(head)
            checked += 1
    assert checked >= 2 * 3


def test_the_stable_part_holds_the_instance_and_references_and_the_request_comes_last():
    res = _debate()
    first = next(t for t in res.turns if t.agent == "A").messages
    user = first[1]["content"]
    stable = stable_prefix(first)[1]["content"]
    assert "| id | age |" in stable and '<reference id="care/d0.md#0">' in stable
    assert "Round" not in stable and "Phase:" not in stable
    assert user.rstrip().endswith('"critique": "..."}.')   # the reply format closes the prompt
    assert "Round 1 of 3." in user[_history_end(user):]


def test_prompt_reuse_measures_the_shared_prefix_per_agent():
    res = _debate()
    reuse = prompt_reuse(res.turns)
    assert reuse["calls"] == len(res.turns) and reuse["server"] is None   # the scripted model reports none
    assert reuse["calls_short_prefix"] == 0 and reuse["calls_compared"] == len(res.turns) - 2
    assert reuse["same_agent"] > 0.5       # before: 0.107 (the system message only); now 0.66


def test_prompt_reuse_reports_what_the_server_reused():
    def turn(agent, content, usage, cached=False):
        return {"agent": agent, "messages": [{"role": "user", "content": content}], "usage": usage, "cached": cached}

    turns = [turn("A", "abc", {"prompt_tokens": 100, "cached_tokens": 0}),
             turn("B", "xyz", {"prompt_tokens": 120}),                           # no report: left out
             turn("A", "abcd", {"prompt_tokens": 110, "cached_tokens": 99}),
             turn("A", "abcd", {"prompt_tokens": 110, "cached_tokens": 110}, cached=True)]   # local cache hit
    r = prompt_reuse(turns)
    assert r["server"] == round(99 / 210, 4) and r["server_cached_tokens"] == 99 and r["server_prompt_tokens"] == 210
    # flattened "<|user|>\nabc\n" (13 characters) and "<|user|>\nabcd\n" (14) share 12; A's third prompt is its
    # second (14); B's only prompt has nothing to share: (12 + 14) / (13 + 13 + 14 + 14)
    assert r["prompt_chars"] == 54 and r["same_agent"] == round(26 / 54, 4)
    assert r["calls_compared"] == 2 and r["calls_short_prefix"] == 0


def test_a_debate_reports_the_servers_reuse_per_agent():
    from dataclasses import replace

    cohort = sample_cohort(3, "standard")
    p = cohort.to_problem()

    class Reporting(ScriptedChatModel):
        """A fake server's report: the prompt prefix it saw in this agent's previous call, as cached tokens
        at 4 characters a token."""

        last = ""

        def chat(self, messages, **kw):
            resp = super().chat(messages, **kw)
            text = prompt_text(messages)
            shared, self.last = shared_prefix(self.last, text), text
            return replace(resp, usage=replace(resp.usage, prompt_tokens=len(text) // 4, cached_tokens=shared // 4))

    def reply(messages, params):
        return {"allocation": allocation_to_mapping(p, p.zeros()), "justification": "j", "critique": "c"}

    agents = [Agent(n, parse_agent("baseline"), Reporting(reply, name=n), f"scripted:{n}") for n in "AB"]
    res = run_debate(cohort, agents, DebateConfig(rounds=2, closing="mean-repair"))
    assert all("cached_tokens" in t.usage for t in res.turns)      # recorded in each turn
    for key in ("a", "b"):
        u = res.usage[key]
        mine = [t for t in res.turns if t.agent == key.upper()]
        assert u["cached_prompt_tokens"] == sum(t.usage["cached_tokens"] for t in mine)
        assert u["prompt_reuse"] == round(u["cached_prompt_tokens"] / sum(t.usage["prompt_tokens"] for t in mine), 4)
        assert 0.5 < u["prompt_reuse"] < 1      # the first call of each agent reuses nothing
    plain = _debate(rounds=1)
    assert "prompt_reuse" not in plain.usage["a"]   # a model that reports nothing: the usage as before


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab|\n é", max_size=40), st.text(alphabet="ab|\n é", max_size=40),
       st.text(alphabet="ab|\n é", max_size=40))
def test_shared_prefix_equals_the_character_walk(common, a, b):
    import os

    for x, y in ((common + a, common + b), (common, common + b), (common + a, common)):
        assert shared_prefix(x, y) == len(os.path.commonprefix([x, y]))
