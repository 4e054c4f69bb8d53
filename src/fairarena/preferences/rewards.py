"""Rank -> reward maps: from a preference profile to a reward matrix ``mu`` in (0, 1)^{N x K}.

For each agent draw ``K`` values (default Uniform(low, high) with ``0 < low < high < 1``, bounded
away from 0 and 1), sort them descending and give the arm ranked ``r`` the ``r``-th largest value.
Favourite arms:

- ``fav_mode='fixed'``: every agent has exactly ``f`` favourites: the arms at its top ``f`` ranks
  all get its top value (``1 <= f < K``; ``f = K`` would make every arm a favourite);
- ``fav_mode='random'``: each agent's ``f`` is drawn uniformly from ``1..K`` (an agent with
  ``f = K`` is indifferent between all arms);
- ``fav_mode='strict'``: no ties (the plain rank map; the top-ranked arm is the only favourite).
"""

from __future__ import annotations

import numpy as np

from fairarena.errors import InputError

FAVOURITE_MODES = ("fixed", "random", "strict")


def rank_rewards(rng: np.random.Generator, n: int, k: int, low: float = 0.01, high: float = 0.99) -> np.ndarray:
    """``(n, k)`` values per agent, sorted descending (value of rank 0 first)."""
    vals = rng.uniform(low, high, size=(n, k))
    return -np.sort(-vals, axis=1)


def apply_favourites(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Give each agent's top ``counts[i]`` ranks its top value (ties = several favourites)."""
    values = np.array(values, dtype=float, copy=True)
    k = values.shape[1]
    tie = np.arange(k)[None, :] < np.asarray(counts)[:, None]
    return np.where(tie, values[:, :1], values)


def rewards_from_profile(profile: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``mu[i, profile[i, r]] = values[i, r]``: the arm agent ``i`` ranks ``r``-th gets value ``r``."""
    profile = np.asarray(profile, dtype=np.int64)
    n, k = profile.shape
    mu = np.empty((n, k))
    np.put_along_axis(mu, profile, np.asarray(values, dtype=float), axis=1)
    return mu


def favourite_counts(rng: np.random.Generator, n: int, k: int, fav_mode: str, f: int | None) -> np.ndarray:
    if fav_mode == "fixed":
        if f is None or not (1 <= f < k):
            raise InputError("f", f, f"fixed favourites need 1 <= f < K = {k}")
        return np.full(n, int(f))
    if fav_mode == "random":
        return rng.integers(1, k + 1, size=n)
    if fav_mode == "strict":
        return np.ones(n, dtype=np.int64)
    raise InputError("fav_mode", fav_mode, f"expected one of {', '.join(FAVOURITE_MODES)}")


def reward_matrix(profile: np.ndarray, rng: np.random.Generator, fav_mode: str = "strict",
                  f: int | None = None, low: float = 0.01, high: float = 0.99) -> np.ndarray:
    """Reward matrix for a profile: values drawn with ``rng``, assigned by rank, favourites tied."""
    profile = np.asarray(profile)
    n, k = profile.shape
    counts = favourite_counts(rng, n, k, fav_mode, f)
    vals = apply_favourites(rank_rewards(rng, n, k, low, high), counts)
    return rewards_from_profile(profile, vals)
