"""Each name one meaning: the aggregation's voters and the list-only ranking rules have their own names;
the earlier ones stay as aliases."""

from __future__ import annotations

import numpy as np


def test_voter_is_the_aggregation_agent_under_its_own_name():
    import fairarena.aggregation as A
    from fairarena.aggregation.rules import Agent, Profile, Voter

    assert Agent is Voter and A.Agent is Voter and A.Voter is Voter
    prof = Profile.from_utilities([Voter("x"), "y"], ["a", "b"], np.eye(2))
    assert all(type(v) is Voter for v in prof.agents) and prof.names == ["x", "y"]


def test_one_registry_of_kind_rule():
    from fairarena.aggregation.rules import RULES
    from fairarena.tourism.decisions import RANKING_RULES

    assert RULES.kind == "rule" and RANKING_RULES.kind == "ranking rule"
    assert RANKING_RULES.field == "rule"            # an unknown name is still reported as the rule field
    assert RANKING_RULES.unknown("nosuch").field == "rule"
