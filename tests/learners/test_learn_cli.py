"""`fairarena learn` end to end (typer's CliRunner): outputs, JSON, and exit code 2 on bad input."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from fairarena.learners.cli import register
from fairarena.cli_common import standalone_app

app = standalone_app(register)

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["learn", *args])


@pytest.fixture(scope="module")
def instance(tmp_path_factory):
    path = tmp_path_factory.mktemp("learn") / "mu.json"
    path.write_text(json.dumps({"rewards": [[0.9, 0.5, 0.1], [0.8, 0.1, 0.5], [0.1, 0.5, 0.9]]}))
    return path


def test_learn_json_and_outputs(instance, tmp_path):
    out = tmp_path / "run"
    res = run("--learner", "pf,uf", "--instance", str(instance), "--rewards", "beta:0.1", "--T", "3000",
              "--seeds", "3", "--out", str(out), "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["rewards"][0] == [0.9, 0.5, 0.1]
    assert set(doc["learners"]) == {"pf", "uf"}
    pf = doc["learners"]["pf"]
    assert len(pf["final_policy"]) == 3 and abs(sum(pf["final_policy"]) - 1) < 1e-9
    # every registered notion is scored and has a regret (names from the notion registry)
    from fairarena.bandit.notions import NOTIONS

    assert set(pf["final_scores"]) == set(NOTIONS) and set(pf["regret"]) == set(NOTIONS)
    assert doc["learners"]["uf"]["regret"]["pf"] is None
    # the PF learner's last mistake is a round of the run; learners without favourite sets have none
    assert 1 <= pf["last_mistake"] <= 3000 and len(pf["last_mistake_per_seed"]) == 3
    assert doc["learners"]["uf"]["last_mistake"] is None
    assert isinstance(pf["regret_slope"], float) and pf["seconds"] > 0
    uf = doc["learners"]["uf"]["final_policy"]
    assert uf[0] == max(uf) and uf[0] > 0.5  # arm 1 has the largest summed reward
    curves = pd.read_parquet(out / "curves.parquet")
    assert set(curves["learner"]) == {"pf", "uf"} and set(curves["seed"]) == {0, 1, 2}
    assert curves["t"].max() == 3000
    arms = pd.read_parquet(out / "arms.parquet")
    assert len(arms) == 2 * 3 * 3000
    record = json.loads((out / "run.json").read_text())
    assert record["config"]["T"] == 3000 and record["seeds"] == [0, 1, 2] and "numpy" in record["versions"]
    assert (out / "figure3.png").stat().st_size > 10_000
    # same seeds, same numbers
    res2 = run("--learner", "pf,uf", "--instance", str(instance), "--rewards", "beta:0.1", "--T", "3000",
               "--seeds", "3", "--out", str(tmp_path / "again"), "--json", "--no-figure")
    doc2 = json.loads(res2.stdout)
    assert doc2["learners"]["pf"]["final_policy"] == pf["final_policy"]
    assert doc2["learners"]["uf"]["regret"] == doc["learners"]["uf"]["regret"]


def test_learn_dots_all_learners_human_output(tmp_path):
    res = run("--learner", "all", "--instance", "dots", "--T", "300", "--seeds", "2", "--out", str(tmp_path),
              "--no-figure", "--growth", "0.05")
    assert res.exit_code == 0, res.output
    assert "nashucb" in res.output and "uniform" in res.output
    assert len(pd.read_parquet(tmp_path / "curves.parquet")["learner"].unique()) == 7


@pytest.mark.parametrize("args,needle", [
    (["--gamma", "1.0"], "gamma"),
    (["--gamma", "0"], "gamma"),
    (["--delta", "1.5"], "delta"),
    (["--delta", "0"], "delta"),
    (["--T", "2"], "T"),
    (["--learner", "thompson"], "learner"),
    (["--rewards", "beta:0.5"], "too large"),
    (["--rewards", "beta"], "rewards"),
    (["--seeds", "0"], "seeds"),
    (["--seeds", "-3"], "seeds"),
    (["--seed", "-1"], "seed"),
    (["--jobs", "0"], "jobs"),
    (["--grid", "1"], "grid"),
    (["--alpha", "nan"], "alpha"),
    (["--growth", "-1"], "growth"),
    (["--gamma", "nan"], "gamma"),
    (["--backend", "ray"], "backend"),
    (["--T", "1e12"], "memory"),
    (["--T", "12.5"], "whole number"),
    (["--T", "ten"], "whole number"),
    (["--nash-form", "cubic"], "form"),
    (["--ef-kind", "cubed"], "ef_kind"),
    (["--instance", "missing.json"], "not found"),
    (["--instance", "missing.json"], "instance = 'missing.json'"),
    (["--instance", "."], "instance = '.': is a folder"),
])
def test_bad_inputs_exit_2(args, needle, instance, tmp_path):
    base = {"--instance": str(instance), "--T": "50", "--seeds": "1", "--out": str(tmp_path / "o")}
    for k in range(0, len(args), 2):
        base[args[k]] = args[k + 1]
    flat = [x for kv in base.items() for x in kv]
    res = run(*flat, "--json")
    assert res.exit_code == 2, res.output
    assert needle in res.output and "Traceback" not in res.output
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("payload", ['{"rewards": [[0.5, 0.2], [0.1]]}', '{"rewards": [0.5, 0.2]}', '[[1.5, 0.2]]',
                                     '{"policy": [1]}'])
def test_wrong_shape_instance_files_exit_2(payload, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(payload)
    res = run("--instance", str(bad), "--T", "50", "--seeds", "1", "--out", str(tmp_path / "o"), "--json")
    assert res.exit_code == 2, res.output
    assert "rewards" in res.output


def test_horizon_in_scientific_notation(instance, tmp_path):
    res = run("--learner", "uf", "--instance", str(instance), "--T", "2e2", "--seeds", "1",
              "--out", str(tmp_path / "o"), "--json", "--no-figure")
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "o" / "run.json").read_text())["config"]["T"] == 200


def test_memory_estimate_refuses_before_any_work():
    from fairarena.errors import InputError
    from fairarena.learners.simulate import check_memory, estimate_memory

    # the estimate grows linearly in learners x seeds x T (every pull is kept)
    a, b = estimate_memory(1, 20, 10 ** 6, 50, 4), estimate_memory(2, 20, 2 * 10 ** 6, 50, 4)
    assert 3.5 < b / a < 4.1 and a > 20 * 10 ** 6 * 20
    assert check_memory(1, 2, 1000, 3, 3, limit=10 ** 9) == estimate_memory(1, 2, 1000, 3, 3)
    with pytest.raises(InputError, match="memory"):
        check_memory(7, 20, 10 ** 12, 50, 4, limit=16 * 2 ** 30)


def test_help_lists_exactly_the_registered_learners():
    from fairarena.learners import LEARNERS
    from fairarena.learners.cli import LEARNER_HELP

    assert LEARNER_HELP.split(", a comma list")[0].split(", ") == list(LEARNERS)


def test_nash_form_option_reaches_the_spec():
    from fairarena.learners.catalog import parse_learners

    (spec,) = parse_learners("nashucb", form="product")
    assert spec.form == "product"
    assert parse_learners("nashucb")[0].form == "geometric"


def test_interrupted_run_resumes_from_its_finished_batches(instance, tmp_path, monkeypatch):
    import importlib

    sim = importlib.import_module("fairarena.learners.simulate")
    args = ["--learner", "pf,uf", "--instance", str(instance), "--T", "800", "--seeds", "4", "--jobs", "2",
            "--backend", "sequential", "--json", "--no-figure"]
    ref = run(*args, "--out", str(tmp_path / "ref"))
    assert ref.exit_code == 0, ref.output

    real, calls = sim.run_batch, []

    def dies_on_the_third_batch(spec, env, T, seeds, *a, **kw):
        calls.append((spec.name, list(seeds)))
        if len(calls) == 3:
            raise KeyboardInterrupt  # as if the run were killed while its third batch ran
        return real(spec, env, T, seeds, *a, **kw)

    monkeypatch.setattr(sim, "run_batch", dies_on_the_third_batch)
    out = tmp_path / "run"
    first = run(*args, "--out", str(out))
    assert first.exit_code != 0
    assert sorted(p.name for p in (out / "batches").iterdir()) == ["pf.0.npz", "pf.1.npz"]
    assert not (out / "summary.json").exists()  # an unfinished run never looks finished
    # without --resume the folder is refused; with it only the two missing batches run
    assert run(*args, "--out", str(out)).exit_code == 2
    calls.clear()
    again = run(*args, "--out", str(out), "--resume")
    assert again.exit_code == 0, again.output
    assert calls == [("uf", [0, 1]), ("uf", [2, 3])]
    assert json.loads(again.stdout)["learners"]["pf"]["regret"] == json.loads(ref.stdout)["learners"]["pf"]["regret"]
    a = pd.read_parquet(out / "arms.parquet")
    b = pd.read_parquet(tmp_path / "ref" / "arms.parquet")
    assert a.equals(b) and not (out / "batches").exists()


def test_ef_kind_option_judges_the_run(instance, tmp_path):
    args = ["--learner", "uniform", "--instance", str(instance), "--T", "300", "--seeds", "1", "--json", "--no-figure"]
    sq = json.loads(run(*args, "--out", str(tmp_path / "sq")).stdout)["learners"]["uniform"]
    ab = run(*args, "--out", str(tmp_path / "ab"), "--ef-kind", "absolute")
    assert ab.exit_code == 0, ab.output
    ab = json.loads(ab.stdout)["learners"]["uniform"]
    assert ab["final_policy"] == sq["final_policy"] and ab["regret"]["uf"] == sq["regret"]["uf"]
    assert ab["regret"]["ef"] != sq["regret"]["ef"]
    record = json.loads((tmp_path / "ab" / "run.json").read_text())
    assert record["config"]["notion_options"] == {"ef_kind": "absolute"}
