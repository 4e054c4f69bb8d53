"""Duels and councils on any registered domain, through the domain protocol only (issue 21, part 4).

Each debate's numbers are compared with slow obvious code on the domain object itself; the keys of the
default domain's duels are pinned elsewhere (test_study_design.py) and must not move."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np
import pytest

from fairarena.allocation.problem import allocation_from_mapping
from fairarena.domains.protocol import instance_digest, metric_specs
from fairarena.domains.registry import DOMAINS
from fairarena.errors import InputError
from fairarena.study.design import expand, from_dict, preset, to_toml
from fairarena.study.store import load_results, run_study

SEATS_FILE = str(Path(__file__).resolve().parents[2] / "src" / "fairarena" / "data" / "problems" / "school_seats.toml")
TOURISM = dict(kind="duel", domain="tourism", model_a="scripted", model_b="scripted", pois=12, cohorts=1, rounds=1,
               stakeholders=["tourists:family", "residents", "destination"])


def _check_records(cfg, root, domain):
    """Every record: ok, A/B/joint metrics exactly the domain's metric keys, the joint's equal to
    ``domain.evaluate`` of the joint allocation recomputed here, the instance the task's."""
    keys = set(metric_specs(domain))
    recs = load_results(root)
    assert len(recs) == len(expand(cfg)) and all(r["status"] == "ok" for r in recs)
    for r in recs:
        t = r["task"]
        assert t["domain"] == cfg.domain and t["framework"] is None and t["opponent_role"] == t["agent_b"]
        for who in ("a", "b", "joint"):
            got = {k for k in r["metrics"][who] if k not in ("feasible", "violations")}
            assert got == keys, (who, got ^ keys)
        inst = (domain.bind(SEATS_FILE).sample(0) if cfg.problem else
                domain.sample(t["cohort_seed"], **t["options"]))
        x = allocation_from_mapping(domain.problem(inst), r["final"]["joint"]["allocation"])
        want = domain.evaluate(inst, x)
        for k, v in want.items():
            got = r["metrics"]["joint"][k]
            assert (math.isnan(v) and math.isnan(got)) or math.isclose(got, v, rel_tol=1e-9, abs_tol=1e-12), k
    return recs


def test_a_tourism_duel_pits_the_stakeholders_two_by_two(tmp_path):
    cfg = from_dict(dict(TOURISM, name="t"))
    tasks = expand(cfg)
    # three stakeholders: three pairs, the first of a pair speaking first, on one destination
    assert [(t.agent_a, t.agent_b) for t in tasks] == [("tourists-family", "residents"),
                                                       ("tourists-family", "destination"), ("residents", "destination")]
    assert len({t.key for t in tasks}) == 3 and tasks[0].to_dict()["options"] == {"pois": 12}
    summary = run_study(cfg, to_toml(cfg), tmp_path / "s")
    assert summary.ok == 3 and summary.failed == 0
    _check_records(cfg, tmp_path / "s", DOMAINS.get("tourism"))


def test_a_duel_key_holds_the_instance_and_the_pair(tmp_path):
    keys = [t.key for t in expand(from_dict(dict(TOURISM, name="t")))]
    assert keys == [t.key for t in expand(from_dict(dict(TOURISM, name="other name")))]   # not in the key
    assert not set(keys) & {t.key for t in expand(from_dict(dict(TOURISM, name="t", pois=13)))}
    swapped = from_dict(dict(TOURISM, name="t", stakeholders=["residents", "tourists:family", "destination"]))
    assert set(keys) != {t.key for t in expand(swapped)}   # who speaks first is another debate


def test_a_problem_file_duel_has_one_instance(tmp_path):
    cfg = from_dict(dict(kind="duel", domain="file", problem=SEATS_FILE, model_a="scripted", model_b="scripted",
                         cohorts=1, rounds=1, seeds=[0, 1], name="f"))
    tasks = expand(cfg)
    file = DOMAINS.get("file")
    names = [p.name for p in file.bind(SEATS_FILE).participants(file.load(SEATS_FILE))]
    n = len(names)
    assert len(tasks) == 2 * n * (n - 1) // 2 and {t.capacity for t in tasks} == {"problem"}
    assert {t.problem for t in tasks} == {SEATS_FILE}
    summary = run_study(cfg, to_toml(cfg), tmp_path / "f")
    assert summary.ok == len(tasks)
    _check_records(cfg, tmp_path / "f", file.bind(SEATS_FILE))
    with pytest.raises(InputError) as e:
        from_dict(dict(cfg.canonical(), cohorts=2))
    assert e.value.field == "study.cohorts"


def test_a_pb_duel_runs_on_the_generic_arena(tmp_path):
    pb = DOMAINS.get("pb")
    players = [p.name for p in pb.participants(pb.sample(0))][:2]
    cfg = from_dict(dict(kind="duel", domain="pb", stakeholders=players, model_a="scripted", model_b="scripted",
                         cohorts=1, rounds=1, name="p"))
    assert [(t.agent_a, t.agent_b) for t in expand(cfg)] == [tuple(players)]
    assert run_study(cfg, to_toml(cfg), tmp_path / "p").ok == 1
    _check_records(cfg, tmp_path / "p", pb)


@pytest.mark.parametrize("change, field", [
    (dict(model_a="openai:m@http://127.0.0.1:9"), "study.model_a"),
    (dict(mechanisms=["borda"]), "study.mechanisms"),
    (dict(stakeholders=["residents", "mars"]), "study.stakeholders[1]"),
    (dict(stakeholders=["residents"]), "study.stakeholders"),
])
def test_a_bad_participant_duel_names_the_field(change, field):
    with pytest.raises(InputError) as e:
        from_dict(dict(TOURISM, name="t", **change))
    assert e.value.field == field


def test_the_default_domains_duel_tasks_are_as_before():
    t = expand(preset("tiny"))[0]
    assert not {"domain", "problem", "options"} & set(t.to_dict())
    assert t.to_dict() == {**t.to_dict()} and len(t.to_dict()) == 21


def test_a_council_of_a_domains_participants_scores_rules_as_the_domain_does(tmp_path):
    """pb has no study members of its own: its participants in one scripted debate, and each candidate-set
    rule over the council profile, the row's metrics those of the chosen optimum (a lottery: expected)."""
    from fairarena.aggregation.rules import aggregate
    from fairarena.aggregation.council import domain_profile as council_profile

    pb = DOMAINS.get("pb")
    cfg = from_dict(dict(kind="council", domain="pb", model_a="scripted", cohorts=1, rounds=1, name="c",
                         mechanisms=["borda", "nash", "maximin", "pf-lottery"]))
    summary = run_study(cfg, to_toml(cfg), tmp_path / "c")
    assert summary.ok == 1, summary.failed_now
    rec = load_results(tmp_path / "c")[0]
    inst = pb.sample(0)
    ps = pb.participants(inst)
    assert rec["members"] == [p.name for p in ps]
    prof = council_profile(pb, inst, ps)
    rows = {r["rule"]: r for r in rec["rows"]}
    for rule in cfg.mechanisms:
        d = aggregate(prof, rule, seed=0)
        if d.lottery is not None:
            want = {k: sum(p * pb.evaluate(inst, prof.X[prof.candidates.index(c)])[k] for c, p in d.lottery.items())
                    for k in metric_specs(pb)}
        else:
            want = pb.evaluate(inst, prof.X[prof.candidates.index(d.winner or d.draw)])
        assert rows[rule]["metrics"] == pytest.approx(want, rel=1e-9)
        assert rows[rule]["utilities"] == pytest.approx({a.name: u for a, u in zip(prof.agents, d.utilities)})
        u = rows[rule]["utilities"]
        assert rows[rule]["min_utility"] == pytest.approx(min(u.values()))
    deb = rows["debate"]
    assert deb["kind"] == "debate" and deb["feasible"] and set(deb["metrics"]) == set(metric_specs(pb))
    for m in rec["members"]:   # normalised on the candidates' range: within [0, 1] for a chosen candidate
        assert -1e-9 <= deb["utilities"][m] <= 1 + 1e-9


def test_instances_and_digests_come_from_the_protocol():
    from fairarena.study.design import _cohort_digest, cohort_of, instance_digest as study_digest

    triage, tourism = DOMAINS.get("triage"), DOMAINS.get("tourism")
    assert cohort_of(3, "tight").to_dict() == triage.sample(3, "tight").to_dict()
    blob = json.dumps(triage.sample(3, "tight").to_dict(), sort_keys=True, separators=(",", ":"))
    import hashlib

    assert _cohort_digest(3, "tight") == hashlib.sha256(blob.encode()).hexdigest()   # the digest the keys hold
    assert study_digest("tourism", 2, "flows", 20) == instance_digest(tourism, tourism.sample(2, pois=20))


def test_the_metric_key_list_is_the_domains():
    from fairarena.study.mechanisms import SCALAR_METRICS, allocation_directions, scalar_metrics

    assert SCALAR_METRICS == scalar_metrics() == ("esg", "rmg", "var", "dw_esg", "vwci", "gini", "gini_cnss")
    specs = metric_specs(DOMAINS.get("triage"))
    assert allocation_directions() == {k: m.direction for k, m in specs.items()}
    assert set(allocation_directions().values()) == {"max", "min"}


def test_each_kind_has_its_own_design():
    from fairarena.study.designs import CouncilDesign, DuelDesign

    duel, council = preset("paper").design, preset("council").design
    assert isinstance(duel, DuelDesign) and isinstance(council, CouncilDesign)
    assert duel.opponents == ["baseline", "adversarial"] and council.members == council.agent_a
    with pytest.raises(AttributeError, match="no field 'opponents'"):
        council.opponents            # a council has no opponents
    with pytest.raises(AttributeError, match="no field 'nonsense'"):
        duel.nonsense
    assert duel.seats == 2 and council.seats == 6
    assert council.model_specs == ["scripted:negotiator"] and duel.model_specs == ["scripted:negotiator"]


DOMAIN_NAMES = ("triage", "tourism", "tourism-lists", "pb", "file")
DOMAIN_PACKAGES = ("fairarena.triage", "fairarena.tourism", "fairarena.pb", "fairarena.problems")


def test_the_study_package_names_no_domain():
    """No import of a domain package and no domain name as a string (docstrings aside) in the study package
    (analysis.py included: a transcript naming no domain is rendered through the registry's default)."""
    root = Path(__file__).resolve().parents[2] / "src" / "fairarena" / "study"
    sites = []
    for path in sorted(root.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        # 'file' is also a common word (a dict key): flagged only where compared, or given as a domain
        in_context = {id(c) for n in ast.walk(tree) if isinstance(n, ast.Compare)
                      for c in [n.left, *n.comparators] if isinstance(c, ast.Constant)}
        in_context |= {id(k.value) for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords
                       if k.arg == "domain" and isinstance(k.value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value == "file" and id(node) not in in_context:
                continue
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(DOMAIN_PACKAGES):
                sites.append(f"{path.name}:{node.lineno} imports {node.module}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                if node.value in DOMAIN_NAMES or any(node.value.startswith(p + ".") or node.value.startswith(p + ":")
                                                     for p in DOMAIN_PACKAGES):
                    sites.append(f"{path.name}:{node.lineno} {node.value!r}")
    assert sites == []
