"""The notion registry: a notion registered from outside the package works through the library,
the CLI's policy and score, and a small sweep, with no other edit; the fallback chain of
``optimal_policies``; the registry's metadata."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from fairarena.bandit.notions import NOTIONS, get_notion, optimal_policies, ratio_score, register, score_all
from fairarena.errors import InputError, SolverError


def _toy_value(mus, ps, o):
    """Utility of agent 1 (a dictator notion): the first agent's expected reward."""
    mus = np.where(np.isnan(mus), 0.0, mus)
    return np.einsum("bk,bk->b", mus[:, 0, :], ps)


def _toy_policy(mus, o):
    mus = np.where(np.isnan(mus), -np.inf, mus)
    out = np.zeros(mus.shape[::2])
    out[np.arange(len(mus)), mus[:, 0, :].argmax(axis=1)] = 1.0
    return out


@pytest.fixture
def toy():
    register("toy_dictator", "Dictatorship of agent 1", "a test notion", "All mass on agent 1's favourite.",
             value=_toy_value, score=ratio_score)(_toy_policy)
    yield get_notion("toy_dictator")
    NOTIONS.remove("toy_dictator")


MU = np.array([[0.2, 0.9, 0.4], [0.8, 0.1, 0.3], [0.5, 0.5, 0.6]])


def test_a_notion_registered_outside_the_package_is_used_everywhere(toy, tmp_path):
    # library
    assert toy.policy(MU).tolist() == [0.0, 1.0, 0.0]
    assert "toy_dictator" in optimal_policies(MU[None])
    sc = score_all(MU, [1.0, 0.0, 0.0])
    assert sc["toy_dictator"] == pytest.approx(0.2 / 0.9) and sc["values"]["toy_dictator"] == pytest.approx(0.2)
    # CLI policy and score (in this process, where the notion is registered)
    from fairarena.cli import app

    rewards = tmp_path / "r.json"
    rewards.write_text(json.dumps({"rewards": MU.tolist()}))
    policy = tmp_path / "p.json"
    policy.write_text(json.dumps([1.0, 0.0, 0.0]))
    runner = CliRunner()
    res = runner.invoke(app, ["policy", "--notion", "toy_dictator", "--rewards", str(rewards), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["policy"] == [0.0, 1.0, 0.0]
    res = runner.invoke(app, ["score", "--rewards", str(rewards), "--policy", str(policy), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["toy_dictator"] == pytest.approx(0.2 / 0.9, abs=1e-8)
    res = runner.invoke(app, ["notions", "--json"])
    assert "toy_dictator" in [r["name"] for r in json.loads(res.stdout)]
    # a small sweep with the toy policy, scored on the toy notion
    from fairarena.sweep.config import preset
    from fairarena.sweep.run import run_sweep

    cfg = preset("tiny", policies=["pf", "toy_dictator"])
    out = run_sweep(cfg, limit=8, backend="serial")
    df = out.frame
    assert set(df.policy) == {"pf", "toy_dictator"} and "toy_dictator" in df.columns
    assert (df.loc[df.policy == "toy_dictator", "toy_dictator"] == 1.0).all()
    assert (df.loc[df.policy == "pf", "toy_dictator"] <= 1.0).all()
    assert set(out.summary["table"]) == {"pf", "toy_dictator"}


def test_unknown_and_duplicate_names():
    with pytest.raises(InputError) as e:
        get_notion("fair")
    assert e.value.field == "notion" and "pf, ef, uf, nsw, ggi, maximin" in str(e.value)
    with pytest.raises(ValueError, match="already registered"):
        register("pf", "again", "", "", value=_toy_value, score=ratio_score)(_toy_policy)
    from fairarena.sweep.config import preset

    with pytest.raises(InputError) as e:
        preset("tiny", policies=["pf", "fair"])
    assert "policies" in e.value.field


def test_metadata_of_the_builtins():
    assert NOTIONS.names() == ("pf", "ef", "uf", "nsw", "ggi", "maximin")
    for e in NOTIONS.entries():
        assert e.title and e.citation and e.description and e.direction == "max"
    for word in ("min", "higher"):   # max/min is the one vocabulary; only higher-is-better notions register
        with pytest.raises(ValueError, match="direction must be 'max'"):
            register("upside_down", "t", "s", "x", value=_toy_value, score=ratio_score, direction=word)
    assert "upside_down" not in NOTIONS
    assert get_notion("pf").score_is_value and not get_notion("ef").score_is_value


def test_fallback_chain_batch_then_instance_then_exact():
    """A notion whose batched solve fails falls back to instance-by-instance solves, and an instance
    that still fails to the notion's exact solver; without an exact solver the error names it."""
    hard = 0.123  # instances whose first reward is this fail even alone

    def flaky_policy(mus, o):
        if len(mus) > 1 or mus[0, 0, 0] == hard:
            raise SolverError("cannot centre")
        return get_notion("maximin").policy_fn(mus, o)

    def exact(mu, o):
        from fairarena.bandit.notions import owa_lp

        return owa_lp(mu, np.eye(1, mu.shape[0])[0])

    mm = get_notion("maximin")
    register("flaky", "flaky maximin", "test", "test", value=mm.value_fn, score=ratio_score, exact=exact)(flaky_policy)
    register("flaky_no_exact", "flaky", "test", "test", value=mm.value_fn, score=ratio_score)(flaky_policy)
    try:
        rng = np.random.default_rng(3)
        mus = rng.uniform(0.05, 0.95, (4, 3, 4))
        mus[2, 0, 0] = hard
        stats: dict[str, int] = {}
        got = optimal_policies(mus, ["flaky", "maximin"], stats=stats)
        assert stats == {"instance_retries": 3, "exact": 1}
        v = mm.value_batch(mus, got["flaky"])
        np.testing.assert_allclose(v, mm.value_batch(mus, got["maximin"]), atol=1e-8)
        with pytest.raises(SolverError, match="flaky_no_exact: instance 2"):
            optimal_policies(mus, ["flaky_no_exact"])
    finally:
        NOTIONS.remove("flaky")
        NOTIONS.remove("flaky_no_exact")
