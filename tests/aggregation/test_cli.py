"""`fairarena aggregate ...` and `fairarena evaluate` through typer's CliRunner."""

import json

import pytest
from typer.testing import CliRunner

from fairarena.allocation.frameworks import FRAMEWORKS
from fairarena.allocation.problem import allocation_to_mapping
from fairarena.cli import app
from fairarena.triage.archetypes import sample_cohort

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("agg")
    cohort = sample_cohort(0, "standard")
    (d / "cohort.json").write_text(json.dumps(cohort.to_dict()))
    p = cohort.to_problem()
    agents = [{"name": n, "objective": f, "allocation": allocation_to_mapping(p, FRAMEWORKS.get(f).solve(p))}
              for n, f in zip("ABCD", ["utilitarian", "rawlsian", "prioritarian", "care"])]
    (d / "props.json").write_text(json.dumps({"agents": agents}))
    return d, agents


def run(*args):
    return runner.invoke(app, list(args))


def test_rules_json_lists_the_registry():
    from fairarena.aggregation.rules import RULES

    r = run("aggregate", "rules", "--json")
    assert r.exit_code == 0
    assert [x["name"] for x in json.loads(r.stdout)["rules"]] == list(RULES.names())


def test_run_json_shape_and_evaluation(files):
    d, _ = files
    r = run("aggregate", "run", "--problem", str(d / "cohort.json"), "--proposals", str(d / "props.json"),
            "--rule", "pf-lottery", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert set(out) == {"rule", "decision", "lottery", "evaluation", "metrics"}
    assert abs(sum(out["lottery"]["probabilities"].values()) - 1) < 1e-9
    assert out["lottery"]["draw"] in out["lottery"]["probabilities"]
    assert out["evaluation"]["decision_share"] == pytest.approx(1.0, abs=1e-7)
    assert out["metrics"]["drawn"]["feasible"] is True
    r2 = run("aggregate", "run", "--problem", str(d / "cohort.json"), "--proposals", str(d / "props.json"),
             "--rule", "nash-bargaining", "--json")
    out2 = json.loads(r2.stdout)
    assert out2["lottery"] is None and out2["metrics"]["feasible"] is True


def test_evaluate_matches_run(files, tmp_path):
    d, _ = files
    r = run("aggregate", "run", "--problem", str(d / "cohort.json"), "--proposals", str(d / "props.json"),
            "--rule", "leximin-feasible", "--json")
    (tmp_path / "dec.json").write_text(r.stdout)
    e = run("evaluate", "--problem", str(d / "cohort.json"), "--decision", str(tmp_path / "dec.json"),
            "--agents", str(d / "props.json"), "--json")
    assert e.exit_code == 0, e.output
    ev = json.loads(e.stdout)
    assert [s["utility"] for s in ev["stakeholders"]] == pytest.approx(
        list(json.loads(r.stdout)["decision"]["utilities"].values()), abs=1e-9)


@pytest.mark.parametrize("mutate,field", [
    (lambda a: {"agents": a[:1]}, "agents"),
    (lambda a: {"agents": [{**a[0], "objective": "hedonist"}, *a[1:]]}, "agents[0].objective"),
    (lambda a: {"agents": [{**a[0], "allocation": {"P99": {"ICU": 1}}}, *a[1:]]}, "agents[0].allocation.P99"),
    (lambda a: {"agents": [{**a[0], "allocation": {"P1": {"ICU": 9}}}, *a[1:]]}, "agents[0].allocation"),
])
def test_bad_input_exits_2_naming_the_field(files, tmp_path, mutate, field):
    d, agents = files
    (tmp_path / "bad.json").write_text(json.dumps(mutate(agents)))
    r = run("aggregate", "run", "--problem", str(d / "cohort.json"), "--proposals", str(tmp_path / "bad.json"),
            "--rule", "borda")
    assert r.exit_code == 2
    assert field in r.output and "Traceback" not in r.output


def test_unknown_rule_exits_2(files):
    d, _ = files
    r = run("aggregate", "run", "--problem", str(d / "cohort.json"), "--proposals", str(d / "props.json"),
            "--rule", "dictator")
    assert r.exit_code == 2 and "rule" in r.output


def test_audit_json_and_witnesses(tmp_path):
    r = run("aggregate", "audit", "--rule", "borda", "--profiles", "50", "--json", "--witness", str(tmp_path / "w"))
    assert "feasible" not in json.loads(r.stdout)
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["table"]["borda"]["iia"]["violations"] > 0
    w = tmp_path / "w" / "borda__iia.json"
    r2 = run("aggregate", "run", "--proposals", str(w), "--rule", "borda", "--json")
    assert r2.exit_code == 0, r2.output
    assert run("aggregate", "audit", "--rule", "nope").exit_code == 2
    assert run("aggregate", "audit", "--instances", "-1").exit_code == 2
