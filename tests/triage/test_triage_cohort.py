"""Cohort sampling (seeded, archetypes, unique profiles), JSON round trip, validation errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from fairarena.errors import InputError
from fairarena.triage import (
    ARCHETYPES,
    CAPACITY_VARIANTS,
    RESOURCES,
    Cohort,
    load_cohort,
    parse_cohort,
    sample_cohort,
    save_cohort,
)


def test_sampling_is_seeded_and_shuffled():
    a, b, c = sample_cohort(5), sample_cohort(5), sample_cohort(6)
    assert a == b
    assert a != c
    orders = {tuple(p.archetype for p in sample_cohort(s).patients) for s in range(10)}
    assert len(orders) > 1  # slot -> id mapping is shuffled
    fixed = sample_cohort(5, shuffle_slots=False)
    assert [p.archetype for p in fixed.patients] == [x.key for x in ARCHETYPES]
    assert [p.id for p in a.patients] == [f"P{k}" for k in range(1, 9)]


@pytest.mark.parametrize("seed", range(20))
def test_every_cohort_has_all_tensions_and_valid_draws(seed):
    cohort = sample_cohort(seed, "tight")
    by_key = {p.archetype: p for p in cohort.patients}
    assert set(by_key) == {a.key for a in ARCHETYPES}
    profiles = {(p.age, p.gender, p.race, p.ses, p.citizenship) for p in cohort.patients}
    assert len(profiles) == 8  # the paper's diversity constraint
    for a in ARCHETYPES:
        p = by_key[a.key]
        assert p.slot == a.slot
        assert a.admits(p.model_dump(), refugee_ses=True)
        assert a.age[0] <= p.age <= a.age[1]
        assert a.survival[0] <= p.survival <= a.survival[1]
        variant = next(v for v in a.conditions if v.condition == p.condition)
        assert p.urgency == variant.urgency
        assert set(p.needs) == set(variant.needs)
        for r, (lo, hi) in variant.needs.items():
            assert lo <= p.needs[r] <= hi
    for key in ("chronic_illness", "rare_disease", "paediatric"):  # the non-citizen slots
        assert by_key[key].citizenship in ("asylum seeker", "undocumented", "temporary visa", "refugee")
        assert (by_key[key].ses == "refugee") == (by_key[key].citizenship == "refugee")
    assert all(by_key[k].citizenship == "citizen" for k in by_key
               if k not in ("chronic_illness", "rare_disease", "paediatric"))
    assert cohort.capacity == CAPACITY_VARIANTS["tight"]


def test_capacity_variants_are_ordered_and_scarce():
    t, s, h = (CAPACITY_VARIANTS[k] for k in ("tight", "standard", "high"))
    assert t == {"ICU": 2, "Ventilator": 1, "MedA": 45, "MedB": 35, "Nursing": 60, "Surgery": 2}
    for r in RESOURCES:
        assert t[r] <= s[r] <= h[r]
    demand = np.mean([sample_cohort(k).to_problem().need.sum(axis=0) for k in range(30)], axis=0)
    assert demand[RESOURCES.index("Nursing")] > s["Nursing"]  # nursing is scarce at "standard"
    # the paper's slots: every cohort needs 5 ICU beds, 2 ventilators and 3 surgery slots
    assert [demand[RESOURCES.index(r)] for r in ("ICU", "Ventilator", "Surgery")] == [5, 2, 3]
    assert demand[RESOURCES.index("ICU")] > s["ICU"] and demand[RESOURCES.index("Surgery")] > s["Surgery"]


def test_json_round_trip(tmp_path):
    cohort = sample_cohort(9, "high")
    path = save_cohort(cohort, tmp_path / "c.json")
    back = load_cohort(path)
    assert back == cohort
    assert json.loads(path.read_text())["capacity"]["ICU"] == 5  # integers stay integers
    assert Cohort.model_validate_json(cohort.to_json()) == cohort
    p1, p2 = cohort.to_problem(), back.to_problem()
    assert np.array_equal(p1.need, p2.need) and np.array_equal(p1.disadvantage, p2.disadvantage)


def _base():
    return json.loads(sample_cohort(1).to_json())


def _err(data) -> InputError:
    with pytest.raises(InputError) as exc:
        parse_cohort(data)
    return exc.value


def test_validation_names_the_field():
    d = _base(); d["patients"][3]["survival"] = 1.5
    assert _err(d).field == "patients[3].survival"
    d = _base(); d["patients"][2]["survival"] = math.nan
    assert _err(d).field == "patients[2].survival"
    d = _base(); d["patients"][1]["needs"]["Oxygen"] = 3
    assert _err(d).field == "patients[1].needs.Oxygen"
    d = _base(); d["patients"][0]["needs"]["Nursing"] = -1
    assert _err(d).field == "patients[0].needs.Nursing"
    d = _base(); d["patients"][0]["needs"]["ICU"] = 0.5
    assert _err(d).field == "patients[0].needs.ICU"
    d = _base(); d["patients"][5]["id"] = d["patients"][4]["id"]
    e = _err(d)
    assert e.field == "patients[5].id" and "duplicate" in str(e)
    d = _base(); del d["capacity"]["MedB"]
    assert _err(d).field == "capacity.MedB"
    d = _base(); del d["capacity"]
    assert _err(d).field == "capacity"
    d = _base(); d["capacity"]["Nursing"] = -5
    assert _err(d).field == "capacity.Nursing"
    d = _base(); d["capacity"]["Beds"] = 5
    assert _err(d).field == "capacity.Beds"
    d = _base(); d["patients"][0]["disadvantage_weight"] = 2.0
    assert _err(d).field == "patients[1].disadvantage_weight"
    d = _base(); d["patients"][0]["urgency"] = "urgent"
    assert _err(d).field == "patients[0].urgency"
    d = _base(); del d["patients"][4]["race"]
    e = _err(d)
    assert e.field == "patients[4].race" and "missing" in str(e) and "Table 7" in str(e)


def test_bad_json_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"patients": [')
    with pytest.raises(InputError, match="valid JSON"):
        load_cohort(path)


def test_unknown_capacity_variant():
    with pytest.raises(InputError) as exc:
        sample_cohort(0, "lavish")
    assert exc.value.field == "capacity"
