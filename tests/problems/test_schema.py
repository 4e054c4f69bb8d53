"""A problem file is validated completely before any work: each bad field is one line naming the file and the
field path with the value; the canonical form round-trips; TOML and JSON read alike."""

from __future__ import annotations

import json

import pytest

from fairarena.errors import InputError
from fairarena.problems.schema import parse_problem, read_problem

from .conftest import SEATS, VACCINES, cli, tiny_text


def _data() -> dict:
    import tomllib

    return tomllib.loads(tiny_text())


def _error(data: dict) -> str:
    with pytest.raises(InputError) as exc:
        parse_problem(data, "tiny.toml")
    return str(exc.value)


def test_the_examples_read_and_round_trip_through_their_canonical_form():
    for path in (SEATS, VACCINES):
        p = read_problem(path)
        again = parse_problem(json.loads(json.dumps(p.to_dict())), "again")
        assert again == p and again.to_dict() == p.to_dict()
    seats = read_problem(SEATS)
    assert [r.name for r in seats.resources] == ["STEM", "Arts"] and not any(r.divisible for r in seats.resources)
    assert len(seats.recipients) == 12 and [s.name for s in seats.stakeholders] == ["merit", "equity", "districts"]
    assert seats.stakeholder("merit").stages == ((("merit", 1.0),), (("placed", 1.0),))


def test_a_json_file_reads_as_the_toml_file(tmp_path):
    p = read_problem(SEATS)
    path = tmp_path / "seats.json"
    path.write_text(json.dumps(p.to_dict()), encoding="utf-8")
    assert read_problem(path) == p


def test_defaults_are_written_out():
    p = parse_problem(_data(), "tiny.toml")
    d = p.to_dict()
    assert d["presentation"]["item_id"] == "PUPIL_ID" and d["presentation"]["items"] == "pupils"
    assert d["resources"]["Seat"] == {"capacity": 2, "divisible": False, "minimum": 1, "unit": ""}
    assert d["metrics"]["placed"]["weights"] == 1
    assert d["stakeholders"][0]["objective"] == [{"merit": 1}] and d["stakeholders"][0]["kind"] == "stakeholder"


@pytest.mark.parametrize("edit, message", [
    # the list: a need for an unknown resource, a negative capacity, an objective outside the vocabulary,
    # a duplicate recipient id, a group with no members
    (lambda d: d["recipients"][2]["needs"].update(Nursing=1),
     "tiny.toml: recipients[2].needs.Nursing = 1: a need for a declared resource (Seat)"),
    (lambda d: d["resources"]["Seat"].update(capacity=-1),
     "tiny.toml: resources.Seat.capacity = -1: a non-negative capacity in whole units (indivisible) >= 0"),
    (lambda d: d["metrics"]["merit"].update(kind="utility"),
     "tiny.toml: metrics.merit.kind = 'utility': one of sum, min, group_min, gini, variance (the objective vocabulary)"),
    (lambda d: d["stakeholders"][1].update(objective=["teams", "happiness"]),
     "tiny.toml: stakeholders[1].objective[1] = 'happiness': a declared metric (merit, placed, teams, team_a, worst, "
     "inequality, spread)"),
    (lambda d: d["recipients"][3].update(id="r1"),
     "tiny.toml: recipients[3].id = 'r1': a unique id (recipients[0] has it too)"),
    (lambda d: d["metrics"]["team_a"]["weights"]["values"].update(C=2),
     "tiny.toml: metrics.team_a.weights.values.C = 2: a group with members (groups of team: A, B)"),
    (lambda d: d["metrics"]["teams"].update(groups=["A", "Z"]),
     "tiny.toml: metrics.teams.groups[1] = 'Z': a group with members (groups of team: A, B)"),
    # and more
    (lambda d: d["resources"]["Seat"].update(capacity=2.5),
     "tiny.toml: resources.Seat.capacity = 2.5: a non-negative capacity in whole units (indivisible), a whole number"),
    (lambda d: d["recipients"][0]["needs"].update(Seat=0.5),
     "tiny.toml: recipients[0].needs.Seat = 0.5: a non-negative amount in whole units (indivisible), a whole number"),
    (lambda d: d["recipients"][1].update(needs={}),
     "tiny.toml: recipients[1].needs = {}: a positive need for at least one resource"),
    (lambda d: d["recipients"][1].update(score="high"),
     "tiny.toml: recipients[1].score = 'high': a non-negative number (it weighs the recipients in metrics.merit.weights)"),
    (lambda d: d["recipients"][1].pop("team"),
     "tiny.toml: metrics.teams.group = 'team': an attribute every recipient has (recipients[1] (r2) has none)"),
    (lambda d: d["stakeholders"].pop(),
     "tiny.toml: stakeholders = 1: a list of at least two stakeholders ([[stakeholders]] tables)"),
    (lambda d: d["stakeholders"][1].update(name="merit"),
     "tiny.toml: stakeholders[1].name = 'merit': a unique name (stakeholders[0] has it too)"),
    (lambda d: d["stakeholders"][1].update(name="team one"),
     "tiny.toml: stakeholders[1].name = 'team one': a name of letters, digits, '-' or '_' (at most 32, starting "
     "with a letter)"),
    (lambda d: d["stakeholders"][1].update(objective=[{"merit": 1, "inequality": 1}]),
     "tiny.toml: stakeholders[1].objective[0] = ['merit', 'inequality']: gini and variance only alone in a stage"),
    (lambda d: d["stakeholders"][1].update(objective=["inequality", "merit"]),
     "tiny.toml: stakeholders[1].objective = ['inequality', 'merit']: no stage after a first gini stage"),
    (lambda d: d["stakeholders"][0].update(objective={"merit": -1}),
     "tiny.toml: stakeholders[0].objective.merit = -1: a positive weight"),
    (lambda d: d["resources"]["Seat"].update(size=3),
     "tiny.toml: resources.Seat.size = 3: a known field (capacity, divisible, minimum, unit)"),
    (lambda d: d.update(extra={}), "tiny.toml: extra = {}: a known field (problem, presentation, resources"),
    (lambda d: d["presentation"].update(show=["score", "age"]),
     "tiny.toml: presentation.show[1] = 'age': a recipient attribute (score, team)"),
    (lambda d: d["problem"].update(satisfaction="partial"),
     "tiny.toml: problem.satisfaction = 'partial': one of fractional, indicator"),
    (lambda d: d.pop("resources"), "tiny.toml: resources = None: a [resources] table (required)"),
])
def test_each_bad_field_is_one_line_naming_the_file_and_the_field(edit, message):
    data = _data()
    edit(data)
    text = _error(data)
    assert "\n" not in text and text.startswith(message), text


def test_the_commands_refuse_a_bad_file_with_exit_2_before_any_work(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(tiny_text().replace('needs = { Seat = 1 }', 'needs = { Sea = 1 }', 1), encoding="utf-8")
    out = tmp_path / "out"
    for args in (["debate", "--problem", str(bad), "--out", str(out)], ["aggregate", "council", "--problem", str(bad)],
                 ["audit", "conflict", "--problem", str(bad), "--x", "merit", "--y", "placed"]):
        proc = cli(*args)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and f"{bad}: recipients[0].needs.Sea = 1: a need for a declared resource" in lines[0]
    assert not out.exists()
    proc = cli("debate", "--problem", str(tmp_path / "missing.toml"))
    assert proc.returncode == 2 and "file not found" in proc.stderr
    broken = tmp_path / "broken.toml"
    broken.write_text("[problem\n", encoding="utf-8")
    proc = cli("aggregate", "council", "--problem", str(broken))
    assert proc.returncode == 2 and "a valid TOML problem file" in proc.stderr
