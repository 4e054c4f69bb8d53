"""The council: six framework agents on one cohort, every rule's decision scored side by side."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from fairarena.aggregation.council import council, council_profile
from fairarena.aggregation.rules import RULES, aggregate
from fairarena.allocation.frameworks import FRAMEWORKS
from fairarena.allocation.metrics import compute_metrics
from fairarena.cli import app
from fairarena.errors import InputError
from fairarena.evaluation.stakeholders import evaluate
from fairarena.triage.archetypes import sample_cohort

FAST = ["utilitarian", "borda", "schulze", "pf-lottery", "mean"]


@pytest.fixture(scope="module")
def res():
    p = sample_cohort(3, "standard").to_problem()
    x = FRAMEWORKS.get("rawlsian").solve(p)
    return council(3, rules=FAST, joint={"debate": x}), p, x


def test_one_agent_per_framework_proposing_its_optimum():
    p = sample_cohort(3, "standard").to_problem()
    prof = council_profile(p)
    assert [a.objective for a in prof.agents] == list(FRAMEWORKS)
    # each framework's optimum is its agent's ideal (utility 1), except the libertarian one: its solver
    # is not a minimiser of the variance of CNSS, the metric its agent is judged by (the paper's column);
    # and the egalitarian one: its optimum is the least Gini among the undominated allocations (no
    # levelling down), while its utility scale keeps Gini 0 as the ideal (1 - Gini / ((n - 1) / n))
    diag = dict(zip(FRAMEWORKS, np.diag(prof.U)))
    assert all(v == pytest.approx(1.0) for f, v in diag.items() if f not in ("libertarian", "egalitarian"))
    assert 0.0 <= diag["libertarian"] <= 1.0
    g = compute_metrics(p, prof.X[list(FRAMEWORKS).index("egalitarian")])["gini_cnss"]
    assert 0.0 < g and diag["egalitarian"] == pytest.approx(1.0 - g / ((p.n - 1) / p.n))


def test_rows_are_the_rules_decisions_scored_by_the_library(res):
    r, p, _ = res
    assert [row["rule"] for row in r.rows] == FAST + ["debate"]
    prof = council_profile(p)
    for row in r.rows[:-1]:
        d = aggregate(prof, row["rule"], seed=0)
        assert np.allclose(row["allocation"], d.allocation)
        assert np.allclose([row["utilities"][a] for a in r.agents], d.utilities, atol=1e-9)
        if d.lottery is None:
            m = compute_metrics(p, d.allocation)
        else:  # a lottery: the expected metric over its support (not the metric of the expected allocation)
            per = {c: compute_metrics(p, prof.X[prof.candidates.index(c)]) for c in d.lottery}
            m = {mk: sum(pr * per[c][mk] for c, pr in d.lottery.items()) for mk in r.metric_names.values()}
        for f, mk in r.metric_names.items():
            assert row["metrics"][mk] == pytest.approx(float(m[mk]))


def test_joint_decision_is_one_more_column_scored_alike(res):
    r, p, x = res
    row = r.rows[-1]
    assert row["kind"] == "joint"
    ev = evaluate(council_profile(p), allocation=x)
    assert row["utilities"] == {s["name"]: s["utility"] for s in ev["stakeholders"]}
    assert row["utilities"]["rawlsian"] == pytest.approx(1.0)  # the Rawlsian optimum is its own ideal
    flat = r.table()[-1]
    assert flat["rule"] == "debate" and flat["u:rawlsian"] == pytest.approx(1.0)


def test_bad_joint_and_rule_refused():
    p = sample_cohort(3, "standard").to_problem()
    with pytest.raises(InputError, match="joint.debate"):
        council(3, rules=["borda"], joint={"debate": np.full((p.n, p.n_resources), 99.0)})
    with pytest.raises(InputError):
        council(3, rules=["no-such-rule"])


def test_plot_written(res, tmp_path):
    r, _, _ = res
    out = r.plot(tmp_path / "c.png")
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_cli_council_json_and_files(tmp_path):
    runner = CliRunner()
    out = tmp_path / "c"
    res = runner.invoke(app, ["aggregate", "council", "--seed", "3", "--rule", "borda", "--rule", "median",
                              "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [row["rule"] for row in doc["rows"]] == ["borda", "median"]
    assert set(doc["rows"][0]["utilities"]) == set(FRAMEWORKS)
    assert {p.name for p in out.iterdir()} >= {"council.json", "council.csv", "council.png"}
    assert json.loads((out / "council.json").read_text())["rows"][0]["rule"] == "borda"
    for bad, field in ((["--capacity", "huge"], "--capacity"), (["--rule", "nope"], "rule"),
                       (["--seed", "-1"], "seed")):
        r = runner.invoke(app, ["aggregate", "council", *bad])
        assert r.exit_code == 2 and field in r.output
