"""Batching must not change answers: stacks, NaN-padded mixed arm counts and single calls agree."""

import numpy as np

from fairarena.bandit.notions import (
    NOTIONS,
    evaluate_batch,
    evaluate_many,
    optimal_policies,
    optimal_policies_many,
    pad_stack,
)


def test_padded_batches_equal_single_instances():
    rng = np.random.default_rng(11)
    inst = [rng.uniform(0.05, 0.95, (int(n), int(k))) for n, k in rng.integers(2, 7, size=(14, 2))]
    inst[3][:, :2] = inst[3][:, :1]  # duplicated arm: ties everywhere
    many = optimal_policies_many(inst)
    scores = evaluate_many(inst, many)
    for mu, pols, sc in zip(inst, many, scores):
        alone = optimal_policies(mu[None])
        alone_sc = evaluate_batch(mu[None], alone)
        for name in NOTIONS:
            assert pols[name].shape == (mu.shape[1],)
            v1 = NOTIONS[name].value_batch(mu[None], pols[name][None])[0]
            v2 = NOTIONS[name].value_batch(mu[None], alone[name])[0]
            assert abs(v1 - v2) <= 1e-9, name
            for key in ("pf", "ef", "uf"):
                assert abs(sc[name][key] - alone_sc[name][key][0]) <= 1e-7, (name, key)


def test_padded_arms_get_zero_probability():
    mus = pad_stack([np.array([[0.9, 0.1]]), np.array([[0.2, 0.3, 0.8]])])
    assert np.isnan(mus[0, 0, 2])
    pols = optimal_policies(mus)
    for name, p in pols.items():
        assert p[0, 2] == 0.0, name
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(pols["uf"], [[1, 0, 0], [0, 0, 1]])
