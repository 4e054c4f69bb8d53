"""Strict input types and bounds outside the study design: every case is one line naming the field and
the value, exit 2, before any work or write (the output folder is not created)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fairarena.cli import app
from fairarena.errors import InputError

runner = CliRunner()


def refused(tmp_path, *args, needles=()):
    """Run the command with ``--out`` in ``tmp_path``; check the one-line refusal and that nothing is written."""
    out = tmp_path / "out"
    r = runner.invoke(app, [str(a) for a in args] + ["--out", str(out)])
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr, r.exception)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in r.stderr, r.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    assert not out.exists()
    return lines[0]


@pytest.fixture(scope="module")
def destination(tmp_path_factory):
    from fairarena.tourism.destination import generate

    return generate(0, 12).to_dict()


def _write(tmp_path, name, data):
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return p


# -- debate --model '' -------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["", "   "])
def test_debate_refuses_an_empty_model_spec(tmp_path, spec):
    refused(tmp_path, "debate", "--model", spec, "--rounds", "1", needles=("model = ", "empty model spec"))


# -- learn --learner pf,,ef --------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["pf,,ef", "pf,", ",pf", "pf, ,ef"])
def test_learn_refuses_empty_learner_entries(tmp_path, value):
    refused(tmp_path, "learn", "--learner", value, "--T", "100", "--seeds", "1", "--no-figure",
            needles=(f"learner = {value!r}", "empty entry"))


# -- learn --grid and --jobs: bounded before the folder is taken --------------------------------------------

def test_learn_refuses_a_grid_past_its_bound(tmp_path):
    # --grid 10**9 allocated gigabytes (np.logspace of 10**9 points) before any check
    refused(tmp_path, "learn", "--learner", "pf", "--T", "1000", "--seeds", "1", "--no-figure",
            "--grid", "1000000000", needles=("grid = 1000000000", "at most 100,000"))


@pytest.mark.parametrize("backend", ["processes", "threads"])
def test_learn_refuses_too_many_jobs_naming_jobs(tmp_path, backend):
    # the backend's worker limit, named as the option the user typed, before the output folder exists
    refused(tmp_path, "learn", "--learner", "pf", "--T", "100", "--seeds", "1", "--no-figure",
            "--backend", backend, "--jobs", "1000000000", needles=("jobs = 1000000000", "at most"))


def test_learn_takes_the_largest_grid(tmp_path):
    r = runner.invoke(app, ["learn", "--learner", "pf", "--T", "200", "--seeds", "1", "--no-figure",
                            "--grid", "100000", "--json", "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.stderr


# -- tourism compare --rounds: the bound of tourism run ---------------------------------------------------

@pytest.mark.parametrize("rounds", ["-1", "51", "100000"])
@pytest.mark.parametrize("command", ["run", "compare"])
def test_tourism_rounds_bound_is_the_same_for_run_and_compare(tmp_path, destination, command, rounds):
    d = _write(tmp_path, "d.json", destination)
    refused(tmp_path, "tourism", command, "--destination", d, "--rounds", rounds,
            needles=(f"--rounds = {rounds}", "0..50"))


def test_tourism_compare_accepts_the_bounds(tmp_path, destination):
    d = _write(tmp_path, "d.json", destination)
    for rounds in ("0", "50"):
        r = runner.invoke(app, ["tourism", "compare", "--destination", str(d), "--rounds", rounds, "--json"])
        assert r.exit_code == 0, r.stderr


# -- destination files: no text or booleans for numbers ---------------------------------------------------

@pytest.mark.parametrize("field, value, needle", [
    ("capacity", "177", 'write 177, not "177"'),
    ("capacity", True, "not true/false"),
    ("capacity", 177.5, "integer"),
    ("popularity", "0.5", "not text"),
    ("price_level", False, "not true/false"),
    ("baseline_load", ["1", 2, 3], "not text"),
    ("accessible", "yes", "true or false"),
    ("accessible", 1, "true or false"),
])
def test_destination_reader_refuses_wrong_types(tmp_path, destination, field, value, needle):
    bad = json.loads(json.dumps(destination))
    bad["pois"][0][field] = value
    d = _write(tmp_path, "d.json", bad)
    where = f"--destination.pois[0].{field}" + ("[0]" if field == "baseline_load" else "")
    refused(tmp_path, "tourism", "run", "--destination", d, needles=(where, needle))


def test_destination_reader_refuses_a_text_group_size(tmp_path, destination):
    bad = json.loads(json.dumps(destination))
    bad["groups"][0]["size"] = "100"
    d = _write(tmp_path, "d.json", bad)
    refused(tmp_path, "tourism", "compare", "--destination", d, needles=("--destination.groups[0].size = '100'",))


def test_destination_reader_still_reads_its_own_files(tmp_path, destination):
    from fairarena.tourism.destination import load_destination

    assert load_destination(_write(tmp_path, "d.json", destination)).to_dict() == destination


def test_destination_csv_error_names_the_baseline_load_cell(tmp_path):
    """A baseline_load with the wrong number of values is named with its own cell (not the row's last one)."""
    from fairarena.tourism.destination import from_csv

    p = tmp_path / "pois.csv"
    p.write_text("id,category,neighbourhood,popularity,capacity,baseline_load,price_level,provider,distance_km,"
                 "transport,accessible\n"
                 "a,museum,centre,0.5,100,1;2,1,local,1.0,walk,true\n"
                 "b,park,centre,0.5,100,1,1,local,1.0,walk,true\n")
    with pytest.raises(InputError) as exc:
        from_csv(p)
    assert exc.value.field == "--from-csv line 2 baseline_load" and exc.value.value == "1;2"


# -- utilities: finite and at most MAX_MAGNITUDE -----------------------------------------------------------

def _profile(tmp_path, rows, **agent0):
    data = {"candidates": ["a", "b", "c"],
            "agents": [{"name": f"v{i}", "utilities": u} for i, u in enumerate(rows)]}
    data["agents"][0].update(agent0)
    return _write(tmp_path, "profile.json", data)


@pytest.mark.parametrize("value, needle", [
    (1e308, "magnitude at most 1e+12"),
    (-1e308, "magnitude at most 1e+12"),
    (1e13, "magnitude at most 1e+12"),
    (float("nan"), "finite"),
    (float("inf"), "finite"),
    ("0.5", "not text"),
    (True, "expected a number"),
])
def test_utility_profiles_refuse_unsafe_numbers(tmp_path, value, needle):
    p = _profile(tmp_path, [[1.0, value, 0.0], [0.0, 1.0, 2.0], [2.0, 0.0, 1.0]])
    r = runner.invoke(app, ["aggregate", "run", "--proposals", str(p), "--rule", "borda", "--json"])
    assert r.exit_code == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "agents[0].utilities[1] = " in lines[0] and needle in lines[0], r.stderr


def test_weights_are_bounded_too(tmp_path):
    p = _profile(tmp_path, [[1.0, 2.0, 0.0], [0.0, 1.0, 2.0], [2.0, 0.0, 1.0]], weight=1e300)
    r = runner.invoke(app, ["aggregate", "run", "--proposals", str(p), "--rule", "borda", "--json"])
    assert r.exit_code == 2 and "agents[0].weight = 1e+300" in r.stderr


def test_utilities_at_the_bound_are_read_and_scored(tmp_path):
    p = _profile(tmp_path, [[1e12, -1e12, 0.0], [0.0, 1e12, -1e12], [1.0, 2.0, 3.0]])
    r = runner.invoke(app, ["aggregate", "run", "--proposals", str(p), "--rule", "borda", "--json"])
    assert r.exit_code == 0 and r.stderr == "", r.stderr
    assert 0.0 < json.loads(r.stdout)["evaluation"]["gini_utilities"] < 1.0


# -- sweep grids: strict types ------------------------------------------------------------------------------

@pytest.mark.parametrize("body, field", [
    ('base = "tiny"\nN = ["3"]\n', "config.N.0"),
    ('base = "tiny"\nseed = true\n', "config.seed"),
    ('base = "tiny"\nphi = ["0.5"]\n', "config.phi.0"),
])
def test_sweep_config_types_are_strict(tmp_path, body, field):
    p = tmp_path / "grid.toml"
    p.write_text(body)
    refused(tmp_path, "sweep", "--config", p, "--backend", "serial", needles=(f"{field} = ",))


# -- the helpers themselves ----------------------------------------------------------------------------------

def test_check_int_and_magnitude():
    from fairarena.inputs import MAX_MAGNITUDE, check_int, check_magnitude

    assert check_int(5, "n", low=0, high=5) == 5
    for bad in (-1, 6, True, 2.0, "3"):
        with pytest.raises(InputError):
            check_int(bad, "n", low=0, high=5)
    assert check_magnitude(-MAX_MAGNITUDE, "u") == -MAX_MAGNITUDE
    with pytest.raises(InputError):
        check_magnitude(MAX_MAGNITUDE * 1.0000001, "u")
