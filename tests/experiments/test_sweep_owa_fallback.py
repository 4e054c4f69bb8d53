"""The exact OWA LP used when the batched barrier solver cannot centre an instance."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.bandit.notions import get_notion, owa_value
from fairarena.sweep.config import expand, preset
from fairarena.bandit.notions import owa_lp
from fairarena.sweep.run import make_instance


@pytest.mark.parametrize("seed", range(8))
def test_owa_lp_matches_the_batched_ggi_and_maximin_optima(seed):
    rng = np.random.default_rng(seed)
    n, k = rng.integers(2, 7, size=2)
    mu = rng.uniform(0.05, 0.95, size=(n, k))
    w = 2.0 ** -np.arange(n)
    for name, weights in (("ggi", w), ("maximin", np.eye(1, n)[0])):
        ours = get_notion(name).value(mu, owa_lp(mu, weights))
        ref = get_notion(name).value(mu, get_notion(name).policy(mu))
        assert ours == pytest.approx(ref, abs=1e-7)
        assert ours >= owa_value(mu[None], np.full((1, k), 1 / k), weights)[0] - 1e-12


def test_owa_lp_on_a_degenerate_paper_instance():
    """Setting 281 of the paper grid (N=2, K=9, one arm a favourite of both agents): GGI puts
    everything on that shared favourite."""
    cfg = preset("paper")
    s = next(x for x in expand(cfg) if x.setting_id == 281)
    mu = make_instance(s, cfg)
    p = owa_lp(mu, 2.0 ** -np.arange(2))
    shared = np.flatnonzero((mu >= mu.max(axis=1, keepdims=True) - 1e-12).all(axis=0))
    assert shared.size == 1 and p[shared[0]] == pytest.approx(1.0)
