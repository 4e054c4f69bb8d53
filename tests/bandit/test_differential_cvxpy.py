"""Differential tests: the batched solvers against the slow, obvious cvxpy formulations.

Optimal *values* are unique, so they must agree (ours may only be better, by solver accuracy).
Policies are compared through what the definitions make unique: decision shares for PF,
the centred utility vector for EF, utilities for NSW; plus the tie-break objective (total utility).
"""

import warnings

import numpy as np
import pytest

cp = pytest.importorskip("cvxpy")

from fairarena.bandit import reference as R  # noqa: E402
from fairarena.bandit.notions import NOTIONS, evaluate_batch, optimal_policies, pf_score_batch  # noqa: E402
from fairarena.bandit.problem import favourites, inequality  # noqa: E402


N_INSTANCES = 120


def random_instance(rng, n_max=8, k_max=8, ties=False):
    """A random reward matrix in (0, 1); with ``ties`` every agent gets f tied favourites."""
    n = int(rng.integers(2, n_max + 1))
    k = int(rng.integers(2, k_max + 1))
    mu = rng.uniform(0.02, 0.98, (n, k))
    if ties:
        f = int(rng.integers(1, k))
        order = np.argsort(-mu, axis=1)
        for i in range(n):
            mu[i, order[i, :f]] = mu[i, order[i, 0]]
    return mu


@pytest.fixture(scope="module")
def cases():
    rng = np.random.default_rng(20261121)
    out = []
    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
    for j in range(N_INSTANCES):
        mu = random_instance(rng, ties=bool(j % 2))
        ours = {k: v[0] for k, v in optimal_policies(mu[None]).items()}
        ref = {name: fn(mu) for name, fn in R.POLICIES.items()}
        ref = {k: np.clip(v, 0, None) / np.clip(v, 0, None).sum() for k, v in ref.items()}
        out.append((mu, ours, ref))
    return out


@pytest.mark.parametrize("name", list(NOTIONS))
def test_optimal_values_agree(cases, name):
    notion = NOTIONS[name]
    for mu, ours, ref in cases:
        v_ours = notion.value_batch(mu[None], ours[name][None])[0]
        v_ref = notion.value_batch(mu[None], ref[name][None])[0]
        assert v_ours >= v_ref - 1e-7, (name, mu.tolist())
        assert abs(v_ours - v_ref) <= 1e-6, (name, v_ours, v_ref, mu.tolist())


def test_pf_decision_shares_and_tie_break_agree(cases):
    for mu, ours, ref in cases:
        fav = favourites(mu).astype(float)
        np.testing.assert_allclose(fav @ ours["pf"], fav @ ref["pf"], atol=1e-6)
        assert (mu @ ours["pf"]).sum() >= (mu @ ref["pf"]).sum() - 1e-6


def test_ef_inequality_and_tie_break_agree(cases):
    for mu, ours, ref in cases:
        i_star = R.ef_optimum(mu)
        i_ours, i_ref = inequality(mu @ ours["ef"]), inequality(mu @ ref["ef"])
        assert i_ours <= i_star + 1e-8
        gap = (mu @ ours["ef"]).sum() - (mu @ ref["ef"]).sum()
        if abs(gap) > 1e-5:
            # a larger total utility may only come from leaving the optimal face within the
            # tie-break stage's relaxation (the reference relaxes it by FACE_RELAX)
            winner_i = i_ours if gap > 0 else i_ref
            assert winner_i > i_star + 1e-12, (gap, i_ours, i_ref, i_star)


def test_nsw_utilities_agree(cases):
    for mu, ours, ref in cases:
        np.testing.assert_allclose(mu @ ours["nsw"], mu @ ref["nsw"], atol=1e-5)


def test_scores_of_reference_policies_agree(cases):
    """PF score via min-cut enumeration equals the LP; EF score uses the exact optimum."""
    for mu, ours, ref in cases[:60]:
        for name, p in ref.items():
            fast = pf_score_batch(favourites(mu)[None], p[None])[0]
            assert fast == pytest.approx(R.pf_score(mu, p), abs=1e-7)
        scores = evaluate_batch(mu[None], {k: v[None] for k, v in ours.items()})
        i_star = R.ef_optimum(mu)
        for name, p in ours.items():
            assert scores[name]["ef"][0] == pytest.approx(1 - (inequality(mu @ p) - i_star), abs=1e-7)


def test_pf_score_lp_fallback_for_many_arms():
    """K > 16 uses HiGHS instead of subset enumeration; both agree with the cvxpy LP."""
    from fairarena.bandit.notions import pf_score_lp

    rng = np.random.default_rng(3)
    for _ in range(10):
        mu = random_instance(rng, n_max=6, k_max=6, ties=True)
        p = rng.dirichlet(np.ones(mu.shape[1]))
        fav = favourites(mu)
        assert pf_score_lp(fav, p) == pytest.approx(pf_score_batch(fav[None], p[None])[0], abs=1e-9)
    mu = rng.uniform(0.05, 0.95, (5, 18))
    p = rng.dirichlet(np.ones(18))
    assert pf_score_batch(favourites(mu)[None], p[None])[0] == pytest.approx(R.pf_score(mu, p), abs=1e-7)
