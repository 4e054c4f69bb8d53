"""The arena names no domain (issue 21, part 3): the triage domain object lives in the triage package and is
reached through the registry; a debate of any domain records that domain's metrics; the scripted
negotiator plays any domain's participants; DebateResult.to_frame (issue 23, part 7)."""

from __future__ import annotations

import ast
import json

import numpy as np
import pytest

from import_scan import SRC, file_imports

from fairarena.arena import DebateConfig, build_agent, run_debate
from fairarena.domains import DOMAINS
from fairarena.inequality import gini

DOMAIN_PACKAGES = ("fairarena.triage", "fairarena.tourism", "fairarena.pb", "fairarena.problems")


def test_no_arena_module_imports_a_domain_package_or_names_one():
    bad = []
    for path in sorted((SRC / "arena").glob("*.py")):
        for mod in file_imports(path):
            if mod.startswith(DOMAIN_PACKAGES):
                bad.append(f"{path.name}: imports {mod}")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in ("triage", "tourism"):
                bad.append(f"{path.name}:{node.lineno}: the literal {node.value!r}")
    assert not bad, "\n".join(bad)


def test_the_old_import_path_resolves_through_the_registry():
    import fairarena.arena.domain as old
    from fairarena.domains.registry import DEFAULT_DOMAIN
    from fairarena.triage.domain import TRIAGE, TriageDomain

    assert DOMAINS.get(DEFAULT_DOMAIN) is TRIAGE and DOMAINS.get("triage") is TRIAGE
    assert old.TRIAGE is TRIAGE and old.TriageDomain is TriageDomain
    assert old.default_domain() is TRIAGE
    with pytest.raises(AttributeError):
        old.NOT_A_NAME  # noqa: B018


def test_agent_profile_is_the_arena_profile_and_profile_its_alias():
    from fairarena.aggregation.rules import Profile as VotingProfile
    from fairarena.arena import AgentProfile, Profile, parse_agent

    assert Profile is AgentProfile and isinstance(parse_agent("baseline"), AgentProfile)
    assert AgentProfile is not VotingProfile


def test_the_negotiator_reads_the_framework_weights_through_the_domain():
    """The aligned welfares equal the slow obvious ones: ESG weights = survival, DW-ESG = disadvantage x
    survival, VWCI = vulnerability; Rawlsian: min; egalitarian: the equality form; libertarian: its opening."""
    from fairarena.arena.negotiator import Negotiator
    from fairarena.arena.profiles import parse_agent

    cohort = DOMAINS.get("triage").sample(3, "tight")
    p = cohort.to_problem()
    want = {"utilitarian": p.survival, "prioritarian": p.disadvantage * p.survival, "care": p.vulnerability}
    for fw, w in want.items():
        wf = Negotiator(p, parse_agent(f"aligned:{fw}"), cohort=cohort).welfare
        assert wf.kind == "linear" and np.array_equal(wf.coef, w), fw
    assert Negotiator(p, parse_agent("aligned:rawlsian"), cohort=cohort).welfare.kind == "min"
    assert Negotiator(p, parse_agent("aligned:egalitarian"), cohort=cohort).welfare.kind == "sen"
    assert Negotiator(p, parse_agent("aligned:libertarian"), cohort=cohort).welfare.kind == "preserve"


def _events(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_to_frame_of_a_triage_debate_is_the_transcript_with_gini_of_need_satisfaction(tmp_path):
    from fairarena.allocation.metrics import need_satisfaction
    from fairarena.allocation.problem import allocation_from_mapping

    dom = DOMAINS.get("triage")
    cohort = dom.sample(1, "tight")
    agents = [build_agent("A", "aligned:rawlsian", "scripted", cohort), build_agent("B", "baseline", "scripted", cohort)]
    res = run_debate(cohort, agents, DebateConfig(rounds=2), transcript=tmp_path / "t.jsonl")
    df = res.to_frame()
    keys = [m.key for m in dom.metrics()]
    assert "gini_cnss" in keys
    assert list(df.columns) == ["round", "participant", "phase", "valid", "feasible", "repairs", *keys]
    assert len(df) == 2 * 2 + 2 + 1   # rounds x participants, the finals, the joint
    turns = [e for e in _events(tmp_path / "t.jsonl") if e["type"] == "turn" and e["phase"] == "round"]
    assert len(turns) == 4
    problem = cohort.to_problem()
    for e in turns:
        row = df[(df["round"] == e["round"]) & (df["participant"] == e["agent"])].iloc[0]
        for k in keys:
            assert row[k] == pytest.approx(e["metrics"][k], nan_ok=True), k
        # the slow obvious Gini of need satisfaction of the recorded allocation
        x = allocation_from_mapping(problem, e["proposal"]["allocation"], "test")
        c = need_satisfaction(problem, x)
        pairs = sum(abs(a - b) for a in c for b in c)
        obvious = 0.0 if c.sum() == 0 else pairs / (2 * len(c) ** 2 * c.mean())
        assert row["gini_cnss"] == pytest.approx(obvious, abs=1e-12)
        assert row["gini_cnss"] == pytest.approx(float(gini(c)), abs=1e-12)
    joint = df[df["participant"] == "joint"].iloc[0]
    assert joint["esg"] == pytest.approx(res.metrics["joint"]["esg"])
    assert res.rounds[0]["a"]["metrics"]["gini_cnss"] == pytest.approx(df.iloc[0]["gini_cnss"])


@pytest.mark.parametrize("name", ["file", "tourism"])
def test_a_debate_of_another_domain_records_its_metrics_and_the_scripted_negotiator_plays_its_participants(name, tmp_path):
    from fairarena.allocation.problem import allocation_from_mapping
    from fairarena.arena.transcript import read_transcript, recompute_metrics
    from fairarena.domains.protocol import violations_of

    dom = DOMAINS.get(name)
    inst = dom.sample(0)
    ps = list(dom.participants(inst))
    res = run_debate(inst, f"aligned:{ps[0].name}", f"aligned:{ps[1].name}", config=DebateConfig(rounds=3),
                     domain=dom, transcript=tmp_path / "t.jsonl")
    assert res.status == "ok" and all(res.feasible.values()), res.error
    keys = [m.key for m in dom.metrics()]
    df = res.to_frame()
    assert list(df.columns)[6:] == keys and "esg" not in df.columns
    problem = dom.problem(inst)
    events = read_transcript(tmp_path / "t.jsonl")
    assert events[0]["domain"] == name
    turns = [e for e in events if e.get("type") == "turn"]
    by_agent: dict[str, list[np.ndarray]] = {}
    for e in turns:
        x = allocation_from_mapping(problem, e["proposal"]["allocation"], "test")
        assert not violations_of(dom, inst, x, problem)
        want = dom.evaluate(inst, x)
        assert set(e["metrics"]) >= set(keys)
        for k in keys:
            assert e["metrics"][k] == pytest.approx(want[k], nan_ok=True)
        if e["phase"] == "round":
            by_agent.setdefault(e["agent"], []).append(x)
    for (agent, xs), p in zip(sorted(by_agent.items()), ps):
        # the opening is the participant's optimum; its own objective never rises over the rounds
        assert np.allclose(xs[0], dom.optimum(inst, p))
        values = [sum(w * dom.evaluate(inst, x)[k] for k, w in p.objective.items()) for x in xs]
        assert all(b <= a + 1e-9 for a, b in zip(values, values[1:])), (agent, values)
    checks = recompute_metrics(events)
    assert checks and all(json.dumps(c["recorded"], sort_keys=True) == json.dumps(c["recomputed"], sort_keys=True)
                          for c in checks)


def test_the_arena_applies_the_domains_violations():
    """A proposal within capacities that breaks the domain's own rule is invalid, with the domain's message."""
    from fairarena.arena.protocol import Debate
    from fairarena.arena.parsing import ParsedProposal

    base = DOMAINS.get("file")

    class Strict:
        def __getattr__(self, name):
            return getattr(base, name)

        def violations(self, instance, x):
            return ["nobody may get anything"] if np.asarray(x).sum() > 0 else []

    dom = Strict()
    inst = base.sample(0)
    ps = list(base.participants(inst))
    debate = Debate.__new__(Debate)
    debate.domain, debate.instance, debate._rules = dom, inst, True
    x = np.asarray(base.optimum(inst, ps[0]), dtype=float)
    out = debate.validated(ParsedProposal(x))
    assert not out.valid and out.violations == ["nobody may get anything"]
    assert debate.validated(ParsedProposal(np.zeros_like(x))).valid


def test_the_debate_tables_columns_are_the_default_domains_metric_specs():
    from fairarena.arena.cli import row_metrics

    specs = DOMAINS.get("triage").metrics()
    assert row_metrics() == tuple((m.key, m.label, m.direction) for m in specs)
    assert row_metrics(DOMAINS.get("file")) == tuple((m.key, m.label, m.direction) for m in DOMAINS.get("file").metrics())


def test_a_transcript_that_names_no_domain_is_rescored_with_the_default_domain(tmp_path):
    from fairarena.arena.transcript import read_transcript, recompute_metrics

    cohort = DOMAINS.get("triage").sample(2, "tight")
    run_debate(cohort, "aligned:care", "baseline", config=DebateConfig(rounds=1), transcript=tmp_path / "t.jsonl")
    events = read_transcript(tmp_path / "t.jsonl")
    assert events[0].pop("domain") == "triage" and "cohort" in events[0]
    checks = recompute_metrics(events)
    assert len(checks) == 2 + 2 + 2 + 1   # the round proposals, the finals, the draft and the decision, the joint
    assert all(json.dumps(c["recorded"], sort_keys=True) == json.dumps(c["recomputed"], sort_keys=True) for c in checks)


def test_an_arena_only_domain_on_a_generic_problem_records_the_metrics_of_need_satisfaction(tmp_path):
    """A domain with only the arena's members is scored with the allocation core's metrics of its problem; a
    generic problem (no welfare data, no Gini resource) has only those of need satisfaction. Before, the
    debate stopped with 'survival = None: a problem with survival data ...'."""
    from fairarena.allocation.metrics import compute_metrics, defined_metrics
    from fairarena.arena.optimum import optimum_agents
    from fairarena.arena.transcript import read_transcript, recompute_metrics
    from fairarena.domains.protocol import ARENA_MEMBERS

    base = DOMAINS.get("file")
    inst = base.sample(0)
    problem = base.problem(inst)
    assert not problem.has_welfare and problem.gini_resource is None
    assert defined_metrics(problem) == ("rmg", "var", "gini_cnss")

    class ArenaOnly:
        name = "file-arena-only"

        def __getattr__(self, member):
            if member not in ARENA_MEMBERS:
                raise AttributeError(member)
            return getattr(base, member)

    dom = ArenaOnly()
    DOMAINS.add(dom.name, dom)
    try:
        res = run_debate(inst, *optimum_agents(base, inst), config=DebateConfig(rounds=1), domain=dom,
                         transcript=tmp_path / "t.jsonl")
        assert res.status == "ok", res.error
        assert set(res.metrics["joint"]) == {"rmg", "var", "gini_cnss", "cnss", "feasible", "violations", "waste",
                                             "unused"}
        assert list(res.to_frame().columns)[6:] == ["rmg", "var", "gini_cnss"]
        checks = recompute_metrics(read_transcript(tmp_path / "t.jsonl"))
        assert checks and all(c["recorded"] == c["recomputed"] for c in checks)
    finally:
        DOMAINS.remove(dom.name)
    x = base.optimum(inst, base.participants(inst)[0])
    assert compute_metrics(problem, x, keys=("rmg",)).keys() == {"rmg", "cnss", "feasible", "violations", "waste",
                                                                 "unused"}


def test_defined_metrics_on_a_triage_cohort_are_every_metric():
    from fairarena.allocation.metrics import METRIC_KEYS, compute_metrics, defined_metrics
    from fairarena.triage import sample_cohort

    problem = sample_cohort(3).to_problem()
    assert defined_metrics(problem) == METRIC_KEYS
    x = problem.zeros()
    x[0] = problem.need[0]
    full = compute_metrics(problem, x)
    assert compute_metrics(problem, x, keys=defined_metrics(problem)) == full and set(METRIC_KEYS) <= set(full)
