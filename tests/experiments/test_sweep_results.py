"""The sweep's numbers: optimality on each notion's own score, reproducibility, reference agreement."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairarena.bandit.notions import optimal_policies
from fairarena.bandit.problem import favourites
from fairarena.sweep import run_sweep
from fairarena.sweep.config import expand
from fairarena.sweep.run import make_instance, solve_chunk


def test_one_row_per_setting_and_policy(tiny_result, tiny_cfg):
    df = tiny_result.frame
    assert len(df) == len(expand(tiny_cfg)) * 5
    assert list(df["policy"].unique()) == ["pf", "ef", "uf", "nsw", "ggi"]
    assert df.groupby("setting_id").size().eq(5).all()


def test_each_policy_is_optimal_on_its_own_notion(tiny_result):
    df = tiny_result.frame
    assert (df.loc[df.policy == "pf", "pf"] > 1 - 1e-7).all()  # PF policy: PF score 1 everywhere
    assert (df.loc[df.policy == "ef", "ef"] == 1.0).all()
    assert (df.loc[df.policy == "uf", "uf"] == 1.0).all()
    assert (df.loc[df.policy == "nsw", "nsw"] == 1.0).all()
    assert (df.loc[df.policy == "ggi", "ggi"] == 1.0).all()
    # and the table says so
    t = tiny_result.summary["table"]
    assert t["pf"]["pf"][0] == pytest.approx(1.0, abs=1e-7)
    assert t["uf"]["uf"] == [1.0, 0.0]
    # other policies lose procedural fairness somewhere
    assert df.loc[df.policy == "ef", "pf"].min() < 0.9


def test_instances_honour_the_setting(tiny_cfg):
    for s in expand(tiny_cfg):
        mu = make_instance(s, tiny_cfg)
        assert mu.shape == (s.N, s.K) and 0 < mu.min() and mu.max() < 1
        counts = favourites(mu).sum(axis=1)
        if s.fav_mode == "fixed":
            assert (counts == s.f).all()
        assert np.array_equal(mu, make_instance(s, tiny_cfg))


def test_rerun_is_bit_identical_and_independent_of_worker_count(tiny_result, tiny_cfg):
    again = run_sweep(tiny_cfg, workers=2)
    pd.testing.assert_frame_equal(tiny_result.frame, again.frame, check_exact=True)
    assert again.summary["table"] == tiny_result.summary["table"]


def test_a_setting_reproduces_alone(tiny_result, tiny_cfg):
    s = expand(tiny_cfg)[7]
    alone = solve_chunk([s], tiny_cfg)
    rows = tiny_result.frame[tiny_result.frame.setting_id == s.setting_id].set_index("policy")
    for pname, sc in alone["scores"].items():
        for key in ("pf", "ef", "uf"):
            assert sc[key][0] == pytest.approx(rows.loc[pname, key], abs=1e-9)


def test_scores_agree_with_the_cvxpy_reference(tiny_result, tiny_cfg):
    pytest.importorskip("cvxpy")
    from fairarena.bandit import reference

    df = tiny_result.frame
    for s in expand(tiny_cfg)[::6]:
        mu = make_instance(s, tiny_cfg)
        rows = df[df.setting_id == s.setting_id].set_index("policy")
        i_star = reference.ef_optimum(mu)
        for pname in ("pf", "ef", "uf", "nsw", "ggi"):
            p = np.asarray(rows.loc[pname, "p"])
            assert rows.loc[pname, "pf"] == pytest.approx(reference.pf_score(mu, p), abs=1e-6)
            u = mu @ p
            ineq = 2 / (s.N * (s.N - 1)) * sum((u[i] - u[j]) ** 2 for i in range(s.N) for j in range(i + 1, s.N))
            assert rows.loc[pname, "ef"] == pytest.approx(1 - (ineq - i_star), abs=1e-6)
            assert rows.loc[pname, "uf"] == pytest.approx(u.sum() / mu.sum(axis=0).max(), abs=1e-6)


def test_other_seed_gives_other_numbers(tiny_result, tiny_cfg):
    other = run_sweep(tiny_cfg.model_copy(update={"seed": 7}), workers=1, limit=6)
    same = tiny_result.frame[tiny_result.frame.setting_id.isin(other.frame.setting_id)]
    assert not np.array_equal(same["uf_value"].to_numpy(), other.frame["uf_value"].to_numpy())


@pytest.mark.dask
def test_dask_local_cluster_gives_identical_results(tiny_result, tiny_cfg):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        res = run_sweep(tiny_cfg, backend="dask", address=cluster.scheduler_address)
    pd.testing.assert_frame_equal(tiny_result.frame, res.frame, check_exact=True)
    assert res.summary["table"] == tiny_result.summary["table"]
