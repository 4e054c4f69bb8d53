"""The tourism domain's part of a council study (fairarena.tourism.study): its rows against the rules and the
debate run one at a time (run.run, run.debate), its transcript, determinism, the design checks."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from fairarena.errors import InputError
from fairarena.tourism import decisions as D
from fairarena.tourism import run as R
from fairarena.tourism import study as S
from fairarena.tourism.destination import generate
from fairarena.tourism.stakeholders import parse_stakeholders

NAMES = ["tourists:family", "residents", "local-business", "destination"]
POIS, K, ROUNDS, SEED, CLOSING = 12, 5, 3, 0, "joint-draft"


def _task(decision: str, path, *, seed: int = SEED, rules: list[str] | None = None, destination_seed: int = 0):
    return S.council_task(destination_seed=destination_seed, pois=POIS, stakeholders=NAMES, decision=decision, k=K,
                          rounds=ROUNDS, closing=CLOSING, seed=seed, model="scripted", rules=rules or [],
                          transcript=path)


@pytest.fixture(scope="module", params=["lists", "flows"])
def council(request, tmp_path_factory):
    decision = request.param
    S.clear_caches()
    path = tmp_path_factory.mktemp(decision) / "t.jsonl"
    return decision, _task(decision, path), path


def _independent(decision: str):
    """The same destination, stakeholders and candidates built without the study module's caches."""
    d = generate(0, POIS)
    ss = parse_stakeholders(NAMES)
    return d, ss, D.candidates(d, ss, decision, K)


def test_rule_rows_equal_run_rule_by_rule(council):
    decision, out, _ = council
    d, ss, cands = _independent(decision)
    assert out["status"] == "ok" and out["error"] is None and out["stakeholders"] == NAMES
    rules = D.rule_names(decision)
    assert [r["rule"] for r in out["rows"]] == rules + ["debate"]
    assert [r["kind"] for r in out["rows"]] == ["rule"] * len(rules) + ["debate"]
    U = D.utility_matrix(cands.values)
    sizes = {g.id: g.size for g in d.groups}
    for row in out["rows"][:-1]:
        ref = R.run(d, ss, decision, row["rule"], k=K, seed=SEED, cands=cands)
        assert row["chosen"] == ref["decision"]["chosen"], row["rule"]
        ev = ref["evaluation"]
        assert row["utilities"] == pytest.approx({r["stakeholder"]: r["utility"] for r in ev["stakeholders"]})
        # a rule chooses a candidate: its utilities are the payoff table's column (slow obvious check)
        col = U[:, cands.names.index(row["chosen"])]
        assert [row["utilities"][n] for n in NAMES] == pytest.approx(col.tolist())
        assert row["min_utility"] == pytest.approx(col.min())
        assert row["worst_off"] == NAMES[int(np.argmin(col))]
        assert row["gini_utilities"] == pytest.approx(ev["evaluation"]["gini_utilities"])
        scalars = {m: v for m, v in ev["metrics"].items() if isinstance(v, float)}
        assert {m: v for m, v in row["metrics"].items() if m != "satisfaction"} == pytest.approx(scalars)
        per = ev["metrics"]["ndcg" if decision == "lists" else "flow_utility"]
        want = sum(sizes[g] * v for g, v in per.items()) / sum(sizes.values())
        assert row["metrics"]["satisfaction"] == pytest.approx(want)
        assert row["feasible"] is True
        assert all(0.0 <= u <= 1.0 for u in row["utilities"].values())


def _stable(path) -> list[str]:
    """The transcript's lines without what varies between identical runs (wall times, creation time)."""
    out = []
    for line in path.read_text().splitlines():
        x = json.loads(line)
        for key in ("latency_s", "timing", "created"):
            x.pop(key, None)
        out.append(json.dumps(x, sort_keys=True))
    return out


def test_debate_row_and_transcript_equal_the_scripted_debate(council):
    """The study's debate row is run.debate's joint (an arena debate), and its transcript the arena's."""
    decision, out, path = council
    d, ss, cands = _independent(decision)
    deb = R.debate(d, ss, cands, decision, CLOSING, ROUNDS, SEED, k=K)
    row = out["rows"][-1]
    assert row["rule"] == "debate" and row["chosen"] == deb["chosen"] is not None
    ref = R.run(d, ss, decision, "nash", k=K, rounds=ROUNDS, seed=SEED, cands=cands, closing=CLOSING)
    assert ref["decision"]["chosen"] == row["chosen"]
    assert row["utilities"] == pytest.approx({r["stakeholder"]: r["utility"] for r in ref["evaluation"]["stakeholders"]})
    assert out["debate"] == {"rounds": ROUNDS, "agreed": deb["agreed"], "closing": CLOSING}
    # every stakeholder speaks in each round, gives its final, and drafts or decides once (joint-draft)
    assert out["usage"] == {n: {"calls": ROUNDS + 2, "prompt_tokens": 0, "completion_tokens": 0} for n in NAMES}
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    head = lines[0]
    assert head["type"] == "header" and head["domain"] == ("tourism-lists" if decision == "lists" else "tourism")
    assert {k: head[k] for k in ("destination_seed", "stakeholders", "decision", "k", "seed")} == \
        {"destination_seed": 0, "stakeholders": NAMES, "decision": decision, "k": K, "seed": SEED}
    assert head["config"]["rounds"] == ROUNDS and head["config"]["closing"] == CLOSING
    turns = [x for x in lines if x["type"] == "turn"]
    assert [t["phase"] for t in turns] == ["round"] * 4 * ROUNDS + ["final"] * 4 + ["draft"] + ["decide"] * 3
    closing = next(x for x in lines if x["type"] == "closing")
    assert closing["rule"] == CLOSING and "Nash bargaining solution" in closing["details"]["how"]


def test_metric_directions_cover_every_metric_of_the_rows(council):
    decision, out, _ = council
    dirs = S.metric_directions(decision)
    for row in out["rows"]:
        assert set(row["metrics"]) == set(dirs)
    assert set(dirs.values()) <= {"max", "min"}
    assert dirs["satisfaction"] == "max" and dirs["small_exposure_share"] == "max"
    assert dirs["exposure_gini"] == "min" and dirs["crowding_residential"] == "min"


def test_same_seed_same_result_and_rule_rows_equal_the_task(tmp_path):
    rules = ["leximin", "pf-lottery", "borda", "nash"]          # the order given is kept
    S.clear_caches()
    a = _task("lists", tmp_path / "a.jsonl", seed=3, rules=rules)
    S.clear_caches()
    b = _task("lists", tmp_path / "b.jsonl", seed=3, rules=rules)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert _stable(tmp_path / "a.jsonl") == _stable(tmp_path / "b.jsonl")
    assert [r["rule"] for r in a["rows"]] == rules + ["debate"]
    S.clear_caches()
    rr = S.rule_rows(destination_seed=0, pois=POIS, stakeholders=NAMES, decision="lists", k=K, seed=3, rules=rules)
    assert json.dumps(rr, sort_keys=True) == json.dumps(a["rows"][:-1], sort_keys=True)
    other = _task("lists", tmp_path / "c.jsonl", seed=3, rules=rules, destination_seed=1)
    assert other["rows"] != a["rows"]                           # another destination, other numbers


def test_instance_digest_is_the_canonical_json_hash_and_changes_with_seed_and_pois():
    S.clear_caches()
    blob = json.dumps(generate(4, 10).to_dict(), sort_keys=True, separators=(",", ":"))
    assert S.instance_digest(4, 10) == hashlib.sha256(blob.encode()).hexdigest()
    assert S.instance_digest(4, 10) == S.instance_digest(4, 10)
    assert len({S.instance_digest(4, 10), S.instance_digest(5, 10), S.instance_digest(4, 11)}) == 3


GOOD = dict(stakeholders=NAMES, decision="lists", rules=[], closing="nash", k=5, pois=12, model="scripted")
LLM = "openai:fake@http://127.0.0.1:9/v1"


@pytest.mark.parametrize("change, field", [
    (dict(stakeholders=["residents"]), "study.stakeholders"),
    (dict(stakeholders=["residents", "nobody"]), "study.stakeholders"),
    (dict(stakeholders=["residents", "residents"]), "study.stakeholders"),
    (dict(stakeholders="residents,destination"), "study.stakeholders"),
    (dict(decision="maps"), "study.decision"),
    (dict(rules=["nope"]), "study.mechanisms"),
    (dict(decision="flows", rules=["pav"]), "study.mechanisms"),
    (dict(rules=["nash", "nash"]), "study.mechanisms"),
    (dict(closing="mean"), "study.closing"),             # a repair rule needs allocation objectives
    (dict(closing="mean-repair"), "study.closing"),      # averaged position scores state no list
    (dict(decision="flows", model=LLM, closing="no-such-rule"), "study.closing"),
    (dict(k=0), "study.k"),
    (dict(k=13), "study.k"),
    (dict(pois=1, k=1), "study.pois"),
    (dict(pois=6000), "study.pois"),
    (dict(model=LLM, closing="mean-repair"), "study.model_a"),   # language models negotiate flows only
    (dict(decision="flows", model="nonsense:x", closing="mean-repair"), "study.model_a"),
])
def test_check_design_names_the_bad_field(change, field):
    with pytest.raises(InputError) as exc:
        S.check_design(**{**GOOD, **change})
    assert exc.value.field == field


def test_check_design_accepts_good_designs():
    S.check_design(**GOOD)
    S.check_design(**{**GOOD, "decision": "flows", "rules": ["borda", "leximin"], "closing": "leximin"})
    S.check_design(**{**GOOD, "decision": "flows", "model": LLM, "closing": "mean-repair"})


def test_language_model_council_ok_and_failing(tmp_path):
    """Language-model agents through the arena (fixed chat models, no server): a model replying with the
    tourists' optimal flows gives a feasible debate row at the tourists' ideal; a model whose server is down
    gives status failed, the error, and the rule rows all the same."""
    from fairarena.allocation.problem import allocation_to_mapping
    from fairarena.llm import ScriptedChatModel
    from fairarena.llm.base import ServerUnavailableError

    names = ["tourists:family", "residents"]
    d = generate(0, 6)
    ss = parse_stakeholders(names)
    F = D.propose(d, ss[0], "flows")
    reply = {"allocation": allocation_to_mapping(D.flows_problem(d), F.reshape(len(d.groups), -1)),
             "justification": "ok", "critique": ""}
    kw = dict(destination_seed=0, pois=6, stakeholders=names, decision="flows", k=2, rounds=1, closing="mean-repair",
              seed=0, model=LLM, rules=["nash", "utilitarian"])
    ok = S.council_task(**kw, transcript=tmp_path / "ok.jsonl",
                        models={LLM: ScriptedChatModel(lambda m, q: reply)})
    assert ok["status"] == "ok" and ok["error"] is None
    row = ok["rows"][-1]
    assert row["rule"] == "debate" and row["chosen"] is None and row["feasible"] is True
    assert row["utilities"]["tourists:family"] == pytest.approx(1.0)
    assert ok["debate"]["agreed"] is True and ok["debate"]["rounds"] >= 1
    assert set(ok["usage"]) == set(names) and all(u["calls"] >= 2 for u in ok["usage"].values())
    assert json.loads((tmp_path / "ok.jsonl").read_text().splitlines()[0])["domain"] == "tourism"

    def down(m, q):
        raise ServerUnavailableError("http://127.0.0.1:9/v1")

    bad = S.council_task(**kw, transcript=tmp_path / "bad.jsonl", models={LLM: ScriptedChatModel(down)})
    assert bad["status"] == "failed" and "no LLM server answers" in bad["error"]
    assert [r["rule"] for r in bad["rows"]] == ["nash", "utilitarian"]
    assert bad["rows"] == ok["rows"][:-1]


def test_module_docstring_example_runs(capsys):
    code = S.__doc__.split("Example (runnable; a few seconds)::")[1]
    exec("\n".join(line[4:] for line in code.strip("\n").splitlines()), {})
    printed = capsys.readouterr().out.splitlines()
    assert [p.split()[0] for p in printed] == ["schulze", "nash", "leximin", "debate"]
