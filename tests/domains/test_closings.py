"""The arena's aggregation closings on a plug-in domain that has no ``closing_profile`` (the seats domain of
docs/domains.md): the debaters that speak for its participants vote with the participants' own ``value``
(:func:`fairarena.aggregation.council.finals_profile`). Before, no debater had an allocation objective, so
no aggregation rule could close such a debate ("0 participant(s) with a valid final and an objective")."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.aggregation.candidates import per_agent_range
from fairarena.aggregation.council import finals_profile
from fairarena.aggregation.rules import RULES
from fairarena.arena import DebateConfig, run_debate
from fairarena.conformance import optimum_agents


def _debate(seats_module, closing, agents=None):
    """A 2-round debate on the seats example closed by ``closing``: the kit's optimum agents (one per
    participant), or the profile strings ``agents``."""
    dom = seats_module.SEATS
    inst = dom.sample(0)
    agents = list(agents) if agents is not None else optimum_agents(dom, inst)
    return dom, inst, run_debate(inst, *agents, config=DebateConfig(rounds=2, closing=closing), domain=dom)


@pytest.mark.parametrize("rule", [n for n in RULES if RULES.entry(n).kind == "candidates"])
def test_every_candidate_set_rule_closes_a_debate_of_a_domain_without_closing_profile(seats_module, rule):
    dom, inst, res = _debate(seats_module, rule)
    joint = res.final["joint"]
    assert res.status == "ok" and res.feasible["joint"], joint.get("note")
    assert joint["note"].startswith(f"{rule} over the valid finals; voters district (district), families "
                                    "(families), equity (equity)")
    # the joint is one of the finals (a candidate; a lottery closes on its seeded draw): whole seats
    finals = [f["allocation"] for n, f in res.final.items() if n != "joint"]
    assert joint["allocation"] in finals


def test_the_voters_utilities_are_the_participants_values_normalised_over_the_finals(seats_module):
    dom = seats_module.SEATS
    inst = dom.sample(0)
    ps = dom.participants(inst)
    finals = {p.name: np.asarray(dom.optimum(inst, p), dtype=float) for p in ps}
    debaters = {a.name: a.profile for a in optimum_agents(dom, inst)}
    prof, notes = finals_profile(dom, inst, debaters, finals)
    assert notes == [] and [a.name for a in prof.agents] == [p.name for p in ps]
    V = np.array([[dom.value(inst, p, finals[c]) for c in prof.candidates] for p in ps])
    assert np.allclose(prof.U, per_agent_range(V)) and np.array_equal(prof.X, np.stack(list(finals.values())))


def test_a_feasible_set_rule_is_refused_in_one_note_and_a_profile_string_debater_votes(seats_module):
    _, _, res = _debate(seats_module, "utilitarian-feasible")
    assert not res.feasible["joint"]
    assert res.final["joint"]["note"] == ("rule utilitarian-feasible (feasible) needs allocation objectives; the seats "
                                          "domain scores participants by its own utilities, so only candidate-set "
                                          "rules close it")
    _, _, res = _debate(seats_module, "nash", ("aligned:district", "aligned:equity"))
    assert res.feasible["joint"] and "voters A (district), B (equity)" in res.final["joint"]["note"]
