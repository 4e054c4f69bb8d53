"""The negotiator's per-process cache of exact answers: same transcripts with and without it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fairarena.arena import DebateConfig, build_agent, run_debate
from fairarena.arena.negotiator import SHARED, SharedAnswers, problem_digest
from fairarena.triage import sample_cohort


@pytest.fixture(autouse=True)
def _fresh():
    SHARED.clear()
    yield
    SHARED.clear()


def _debate(c, fw, opp):
    res = run_debate(c, build_agent("A", f"aligned:{fw}", "scripted", c), build_agent("B", opp, "scripted", c),
                     DebateConfig(rounds=3))
    assert res.status == "ok", res.error
    return [(t.agent, t.phase, t.round, t.proposal) for t in res.turns], res.final


def test_debates_on_one_cohort_reuse_answers_and_say_the_same():
    c = sample_cohort(3, "standard")
    designs = [("care", "baseline"), ("care", "adversarial"), ("rawlsian", "adversarial")]
    cold = []
    for d in designs:
        SHARED.clear()                      # every debate solved from scratch
        cold.append(_debate(c, *d))
    SHARED.clear()
    warm = [_debate(c, *d) for d in designs]   # later debates reuse openings and steps of earlier ones
    assert SHARED.hits > 0
    assert warm == cold
    again = [_debate(c, *d) for d in designs]  # everything answered from the cache
    assert again == cold


def test_problem_digest_tells_problems_apart():
    p = sample_cohort(3, "standard").to_problem()
    assert problem_digest(p) == problem_digest(sample_cohort(3, "standard").to_problem())
    assert problem_digest(p) != problem_digest(sample_cohort(4, "standard").to_problem())
    cap = p.capacity.copy()
    cap[0] += 1
    assert problem_digest(p) != problem_digest(dataclasses.replace(p, capacity=cap))
    assert problem_digest(p) != problem_digest(dataclasses.replace(p, cnss="fractional" if p.cnss != "fractional" else "indicator"))


def test_shared_answers_is_a_bounded_lru_of_copies():
    s = SharedAnswers(size=2)
    a, b, c = np.zeros(2), np.ones(2), np.full(2, 2.0)
    s.put(("a",), a)
    s.put(("b",), b)
    got = s.get(("a",))          # "a" becomes the most recent
    got[:] = 7.0                 # a caller changing its copy changes nothing stored
    a[:] = 9.0
    s.put(("c",), c)             # evicts "b", the least recent
    assert s.get(("b",)) is None
    assert np.array_equal(s.get(("a",)), np.zeros(2)) and np.array_equal(s.get(("c",)), c)
    assert (s.hits, s.misses) == (3, 1)
