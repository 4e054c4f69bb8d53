"""The conformance kit: the shipped domains pass it, and a broken domain fails the check that names its
defect (and only that one, where the defect touches nothing else)."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.domains import CHECKS, DOMAINS, check, instance_digest
from fairarena.conformance.kit import UNSUPPORTED
from fairarena.errors import InputError


def statuses(report):
    return {r.name: r.status for r in report.results}


# -- the shipped domains ----------------------------------------------------------------------------------

def test_triage_passes_every_check_studies_included():
    r = check("triage")
    assert r.ok, r.table()
    assert statuses(r) == {n: "pass" for n in CHECKS}
    assert r.result("metrics").detail.startswith("7 metrics (4 max, 3 min), 6 objectives signed as their directions")
    assert "6 its own scripted agents, 2 rounds: ok" in r.result("debate").detail
    assert "4 debates on 2 instances ok" in r.result("duel-study").detail
    assert "2 debates on 2 instances ok" in r.result("council-study").detail


def test_tourism_passes_every_check_its_duel_study_included():
    r = check("tourism")
    assert r.ok, r.table()
    assert statuses(r) == {n: "pass" for n in CHECKS}
    # four stakeholders two by two on two destinations, through the generic arena
    assert r.result("duel-study").detail.startswith("12 debates on 2 instances ok")
    # twelve metrics, seven linear on valid flows, each equal to the metric on the four stakeholders' optima
    assert r.result("metrics").detail.startswith("12 metrics (3 max, 9 min), 4 objectives signed as their "
                                                 "directions; 7 linear form(s), 28 evaluation(s) equal")
    assert "the domain's own rules refuse it: group family places 0 of" in r.result("feasibility").detail


def test_tourism_lists_passes_without_studies():
    r = check("tourism-lists", studies=False)
    assert r.ok, r.table()
    assert statuses(r) == {**{n: "pass" for n in CHECKS}, "duel-study": "skip", "council-study": "skip"}
    assert r.result("council-study").detail == "studies not asked for"


def test_an_instance_digest_is_the_digest_a_study_keys_hold():
    from fairarena.study.design import instance_digest as study_digest

    triage, tourism = DOMAINS.get("triage"), DOMAINS.get("tourism")
    assert instance_digest(triage, triage.sample(3)) == study_digest("triage", 3, "standard")
    assert instance_digest(tourism, tourism.sample(2)) == study_digest("tourism", 2, "flows", 40)


def test_only_the_checks_asked_for_run_and_bad_options_are_refused_first():
    r = check("triage", checks="round-trip,seed-determinism")
    assert [x.name for x in r.results] == ["round-trip", "seed-determinism"] and r.ok
    with pytest.raises(InputError, match="checks = 'rounds': one of protocol"):
        check("triage", checks=["rounds"])
    with pytest.raises(InputError, match="seed = -1"):
        check("triage", seed=-1)
    with pytest.raises(InputError, match="domain = 'nosuch'"):
        check("nosuch")


# -- broken domains (the seats domain of docs/domains.md, each with one defect) ----------------------------

def test_the_docs_seats_domain_passes(seats_module):
    r = check(seats_module.SEATS)
    assert r.ok, r.table()
    # a domain object with no study members of its own: registered by name while its studies run, its
    # participants two by two in duels and all together in a council, played by the kit's optimum agents
    assert statuses(r) == {n: "pass" for n in CHECKS}
    assert r.result("duel-study").detail.startswith("6 debates on 2 instances ok")
    assert r.result("council-study").detail.startswith("2 debates on 2 instances ok")
    assert "3 optimum agents (the kit's default)" in r.result("debate").detail
    assert "seats" not in DOMAINS   # registered only while its transcript was re-scored


def _variant(seats_module, name, **methods):
    cls = type(name, (seats_module.Seats,), {"name": name, **methods})
    return cls()


def test_non_deterministic_sampling_fails_seed_determinism_only(seats_module):
    base = seats_module.Seats.sample
    dom = _variant(seats_module, "seats-nondet",
                   sample=lambda self, seed: base(self, int(np.random.default_rng().integers(2**31))))
    r = check(dom, studies=False)
    assert r.failed == ["seed-determinism"], r.table()
    assert "sample(0) gave two different instances" in r.result("seed-determinism").detail


def test_a_load_that_loses_a_field_fails_the_round_trip_only(seats_module):
    base = seats_module.Seats.from_dict

    def from_dict(self, data):   # the distances lose their decimals
        out = base(self, data)
        for s in out["students"]:
            s["km"] = {k: round(v) for k, v in s["km"].items()}
        return out

    r = check(_variant(seats_module, "seats-lossy", from_dict=from_dict), studies=False)
    # the debate's transcript records the domain's own metrics (which read the distances), so re-scoring it
    # from the lossy instance its header loads back differs too: the debate check fails with the round trip
    assert r.failed == ["round-trip", "debate"], r.table()
    assert r.result("debate").detail.startswith("the transcript re-scores 0 of ")
    assert r.result("round-trip").detail == "from_dict changes its data (keys students), its digest, its rendering"


def test_a_direction_against_the_objectives_fails_the_metrics_check(seats_module):
    base = seats_module.Seats.metrics

    def metrics(self):
        from dataclasses import replace
        return [replace(m, direction="max") if m.key == "km" else m for m in base(self)]

    r = check(_variant(seats_module, "seats-direction", metrics=metrics), studies=False)
    assert r.failed == ["metrics"], r.table()
    assert r.result("metrics").detail == ("participant families weighs km (direction max) by -0.2: the sign says "
                                          "less is better, the direction the opposite")


def test_a_wrong_linear_form_fails_the_metrics_check(seats_module):
    base = seats_module.Seats._linear
    dom = _variant(seats_module, "seats-linear",
                   _linear=lambda self, key: (lambda inst: (base(self, key)(inst)[0], 0.5)) if key == "km" else base(self, key))
    r = check(dom, studies=False, checks="metrics")
    assert r.failed == ["metrics"] and "the linear form of km gives" in r.result("metrics").detail


def test_an_over_capacity_optimum_fails_feasibility(seats_module):
    base = seats_module.Seats.optimum

    def optimum(self, instance, participant):
        x = base(self, instance, participant)
        x[:, 0] = 1            # every student at North (2 seats)
        x[:, 1] = 0
        return x

    r = check(_variant(seats_module, "seats-overfull", optimum=optimum), studies=False)
    assert "feasibility" in r.failed and {"round-trip", "seed-determinism", "presentation"}.isdisjoint(r.failed)
    assert r.result("feasibility").detail.startswith("the optimum of district is not valid: North total 5 exceeds "
                                                     "capacity 2")


def test_a_rendering_without_the_item_ids_fails_presentation(seats_module):
    dom = _variant(seats_module, "seats-anonymous", render=lambda self, inst: "Five students, two schools.")
    r = check(dom, studies=False, checks="presentation")
    assert r.failed == ["presentation"]
    assert "does not name 5 of 5 student(s) agents must allocate to: S1; S2; S3 (and 2 more)" in r.results[0].detail


def test_a_missing_member_fails_the_protocol_and_skips_the_rest(seats_module):
    dom = _variant(seats_module, "seats-partial", evaluate=None, optimum="not a method")
    r = check(dom)
    assert r.failed == ["protocol"] and r.result("protocol").detail == "missing or not callable: evaluate, optimum"
    assert all(x.status == "skip" and x.detail == "the protocol check failed" for x in r.results[1:])


def test_a_domain_registered_under_another_name_fails_the_protocol(seats_module):
    DOMAINS.add("seats-alias", seats_module.SEATS)
    try:
        r = check("seats-alias", checks="protocol")
    finally:
        DOMAINS.remove("seats-alias")
    assert r.failed == ["protocol"] and "registered as 'seats-alias' but named 'seats'" in r.results[0].detail


def test_an_exception_in_the_domain_is_a_failed_check_then_a_skip(seats_module):
    def participants(self, instance):
        raise RuntimeError("no participants today")

    r = check(_variant(seats_module, "seats-crash", participants=participants), studies=False)
    assert r.failed == ["feasibility"], r.table()
    assert r.result("feasibility").detail == "participants(instance) failed: RuntimeError: no participants today"
    assert {r.status(n) for n in ("metrics", "debate", "council")} == {"skip"}


@pytest.mark.parametrize("name, x, y", [("triage", "esg", "rmg"), ("tourism", "satisfaction", "crowding_residential"),
                                        ("tourism-lists", "satisfaction", "exposure_gini")])
def test_the_conflict_hook_audits_two_metrics_in_the_domains_directions(name, x, y):
    dom = DOMAINS.get(name)
    inst = dom.sample(0) if name == "triage" else dom.sample(0, pois=12)
    out = dom.conflict_frontier(inst, x, y, 5)
    specs = {m.key: m.direction for m in dom.metrics()}
    assert out["directions"] == {x: specs[x], y: specs[y]} and out["points"]
