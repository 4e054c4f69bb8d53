"""The council of any domain (aggregation.council.domain_council, ``aggregate council --domain``): the
participants over their optima, reached only through the domain protocol. A three-person, one-seat domain
written here, whose utilities and decisions are known by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from fairarena.aggregation.council import candidate_profile, candidate_rules, domain_council
from fairarena.aggregation.rules import aggregate
from fairarena.allocation.problem import AllocationProblem
from fairarena.cli import app
from fairarena.domains.protocol import MetricSpec, Participant
from fairarena.errors import InputError

# participant -> weight of each person's seat (its value of an allocation x is weights . x[:, 0])
WEIGHTS = {"alpha": [2.0, 1.0, 0.0], "beta": [1.0, 2.0, 0.0], "gamma": [2.0, 0.0, 1.0]}


class OneSeat:
    """Three people, one indivisible seat; three participants who each want the seat for someone."""

    name = "one-seat"
    item = "person"
    item_id = "PERSON_ID"
    setting = "one seat for three people"

    def problem(self, instance):
        return AllocationProblem(ids=["P0", "P1", "P2"], resources=["seat"], capacity=[1], need=np.ones((3, 1)),
                                 indivisible=[True])

    def render(self, instance):
        return "P0, P1, P2; one seat"

    def rules(self, problem):
        return "one seat"

    def retrieval_query(self, instance, framework):
        return framework

    def to_dict(self, instance):
        return {"seed": instance}

    def from_dict(self, data):
        return data["seed"]

    def sample(self, seed):
        return int(seed)

    def metrics(self):
        return [MetricSpec("seated", "seated", "max"), MetricSpec("p0", "P0 seated", "max")]

    def evaluate(self, instance, x):
        x = np.asarray(x, dtype=float)
        return {"seated": float(x.sum()), "p0": float(x[0, 0])}

    def participants(self, instance):
        return [Participant(n, "stakeholder", {"seated": 1.0}) for n in WEIGHTS]

    def value(self, instance, participant, x):
        return float(np.dot(WEIGHTS[participant.name], np.asarray(x, dtype=float)[:, 0]))

    def optimum(self, instance, participant):
        x = np.zeros((3, 1))
        x[int(np.argmax(WEIGHTS[participant.name])), 0] = 1.0
        return x


ONE_SEAT = OneSeat()


def test_the_candidate_profile_is_each_participants_value_over_the_optima_normalised():
    prof = candidate_profile(ONE_SEAT, 0)
    assert prof.candidates == ["alpha", "beta", "gamma"] and [a.name for a in prof.agents] == list(WEIGHTS)
    # optima: alpha -> P0, beta -> P1, gamma -> P0; values alpha [2, 1, 2], beta [1, 2, 1], gamma [2, 0, 2]
    assert np.array_equal(prof.U, [[1, 0, 1], [0, 1, 0], [1, 0, 1]])
    assert prof.X[:, :, 0].tolist() == [[1, 0, 0], [0, 1, 0], [1, 0, 0]]


def test_the_domain_council_scores_each_rules_decision_with_the_domains_metrics():
    doc = domain_council(ONE_SEAT, 0, ["plurality", "borda", "pf-lottery"], seed=3)
    assert doc["domain"] == "one-seat" and doc["agents"] == list(WEIGHTS)
    assert doc["metrics"] == {"seated": {"label": "seated", "direction": "max"},
                              "p0": {"label": "P0 seated", "direction": "max"}}
    prof = candidate_profile(ONE_SEAT, 0)
    for row in doc["rows"]:
        d = aggregate(prof, row["rule"], seed=3)             # the same call, made directly
        assert row["winner"] == d.winner and row["draw"] == d.draw
        assert row["utilities"] == pytest.approx(dict(zip(WEIGHTS, d.utilities)))
        assert row["valid"] and row["metrics"]["seated"] == 1.0
        if d.lottery is None:
            assert row["lottery"] is None and row["metric_basis"] == "the chosen allocation"
        else:   # every support allocation is whole; metrics are expectations over the lottery
            assert {e["candidate"]: e["probability"] for e in row["lottery"]} == pytest.approx(d.lottery)
            p0 = sum(p for c, p in d.lottery.items() if c in ("alpha", "gamma"))
            assert row["metrics"]["p0"] == pytest.approx(p0)
            assert all(set(e["allocation"]) == {"P0", "P1", "P2"} for e in row["lottery"])
    # Borda: alpha and gamma (both seat P0) tie at the top for alpha and gamma, beta's candidate is last for
    # them: P0 is seated whatever the draw. Plurality: alpha's and gamma's votes split over their two tied
    # favourites (1/2 + 1/2 each), beta's goes to beta: a three-way tie, P0 seated with probability 2/3
    row = {r["rule"]: r for r in doc["rows"]}
    assert row["borda"]["allocation"]["P0"] == {"seat": 1} and row["borda"]["metrics"]["p0"] == 1.0
    assert {e["candidate"] for e in row["plurality"]["lottery"]} == {"alpha", "beta", "gamma"}
    assert row["plurality"]["metrics"]["p0"] == pytest.approx(2 / 3)


def test_only_candidate_rules_apply():
    assert "borda" in candidate_rules() and "utilitarian-feasible" not in candidate_rules()
    with pytest.raises(InputError, match=r"^--rule = 'mean': a candidate-set rule"):
        candidate_rules(["mean"])


@pytest.fixture
def registered():
    from fairarena.domains.registry import DOMAINS

    DOMAINS.add("one-seat-test", ONE_SEAT)
    yield "one-seat-test"
    DOMAINS.remove("one-seat-test")


def test_the_command_runs_any_registered_domain(registered, tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["aggregate", "council", "--domain", registered, "--rule", "plurality", "--json",
                            "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc == domain_council(ONE_SEAT, 0, ["plurality"], 0)
    assert json.loads((tmp_path / "out" / "council.json").read_text()) == doc
    r = runner.invoke(app, ["aggregate", "council", "--domain", registered])
    assert r.exit_code == 0 and "council on a one-seat instance" in r.stdout


@pytest.mark.parametrize("args, field", [(["--rule", "mean"], "--rule"), (["--rule", "nope"], "rule"),
                                         (["--seed", "-1"], "seed"), (["--problem", "x.toml"], "--domain")])
def test_the_command_refuses_bad_input_in_one_line(registered, args, field):
    r = CliRunner().invoke(app, ["aggregate", "council", "--domain", registered, *args])
    assert r.exit_code == 2 and field in r.output and len(r.output.strip().splitlines()) == 1, r.output


def test_an_unknown_domain_is_refused():
    r = CliRunner().invoke(app, ["aggregate", "council", "--domain", "nowhere"])
    assert r.exit_code == 2 and "--domain = 'nowhere'" in r.output


def test_the_default_domain_named_gives_the_framework_council():
    # naming the default domain changes nothing: the six frameworks' council on the sampled cohort
    from fairarena.domains.registry import DEFAULT_DOMAIN

    runner = CliRunner()
    a = runner.invoke(app, ["aggregate", "council", "--rule", "borda", "--json"])
    b = runner.invoke(app, ["aggregate", "council", "--rule", "borda", "--json", "--domain", DEFAULT_DOMAIN])
    assert a.exit_code == b.exit_code == 0
    da, db = json.loads(a.stdout), json.loads(b.stdout)
    for d in (da, db):
        for row in d["rows"]:
            row.pop("seconds")
    assert da == db and da["metrics"]["utilitarian"] == "esg"


def _files(tmp_path, objectives):
    seat = {"P0": {"seat": 1}, "P1": {"seat": 0}, "P2": {"seat": 0}}
    other = {"P0": {"seat": 0}, "P1": {"seat": 1}, "P2": {"seat": 0}}
    (tmp_path / "inst.json").write_text(json.dumps({"seed": 0}))
    agents = [{"name": n, "objective": o, "allocation": a}
              for n, o, a in zip(("a", "b", "c"), objectives, (seat, other, seat))]
    (tmp_path / "props.json").write_text(json.dumps({"agents": agents}))
    return ["--problem", str(tmp_path / "inst.json"), "--proposals", str(tmp_path / "props.json")]


def test_run_scores_the_decision_with_the_domains_metrics(registered, tmp_path):
    files = _files(tmp_path, ["rawlsian", "egalitarian", "rawlsian"])
    r = CliRunner().invoke(app, ["aggregate", "run", *files, "--rule", "mean", "--domain", registered, "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    # the coordinate-wise mean (2/3, 1/3, 0) repaired: P0 keeps the one whole seat; scored by the domain
    assert doc["decision"]["allocation"] == {"P0": {"seat": 1}, "P1": {"seat": 0}, "P2": {"seat": 0}}
    assert doc["metrics"] == {"seated": 1.0, "p0": 1.0, "feasible": True, "violations": []}


def test_run_refuses_a_welfare_objective_on_a_problem_without_welfare_data(registered, tmp_path):
    files = _files(tmp_path, ["utilitarian", "rawlsian", "rawlsian"])
    r = CliRunner().invoke(app, ["aggregate", "run", *files, "--rule", "mean", "--domain", registered])
    assert r.exit_code == 2 and r.output.startswith("error: survival = None") and len(r.output.splitlines()) == 1


def test_evaluate_reads_the_instance_through_the_domain(registered, tmp_path):
    files = _files(tmp_path, ["rawlsian", "egalitarian", "rawlsian"])
    (tmp_path / "decision.json").write_text(json.dumps({"allocation": {"P1": {"seat": 1}}}))
    r = CliRunner().invoke(app, ["evaluate", files[0], files[1], "--agents", files[3], "--decision",
                                 str(tmp_path / "decision.json"), "--domain", registered, "--json"])
    assert r.exit_code == 0, r.output
    ev = json.loads(r.stdout)
    # one seat for three: every allocation leaves someone unseated, so the minimum CNSS (rawlsian a, c) is 0
    # everywhere (indifferent agents: utility 1), and any one seated person gives the Gini of CNSS its
    # worst value (n - 1) / n = 2/3 (egalitarian b: utility 0 at its own proposal too)
    assert [s["name"] for s in ev["stakeholders"]] == ["a", "b", "c"]
    assert [s["utility"] for s in ev["stakeholders"]] == pytest.approx([1.0, 0.0, 1.0])
