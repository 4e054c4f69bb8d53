"""Optional conversion to/from pref_voting ``Profile`` objects (``pip install 'fairarena[prefvoting]'``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairarena.errors import FairArenaError


def _require() -> Any:
    try:
        import pref_voting.profiles as pv
    except ImportError:  # pragma: no cover - depends on the optional extra
        raise FairArenaError("pref_voting is not installed: pip install 'fairarena[prefvoting]'") from None
    return pv


def to_pref_voting(profile: np.ndarray) -> Any:
    """A pref_voting ``Profile`` (candidates ``0..K-1``) from an ``(N, K)`` ranking array."""
    pv = _require()
    return pv.Profile([list(map(int, r)) for r in np.asarray(profile)])


def from_pref_voting(prof: Any) -> np.ndarray:
    """``(N, K)`` ranking array (one row per voter, counts expanded) from a pref_voting ``Profile``."""
    _require()
    rankings, counts = prof.rankings_counts
    rows = [list(map(int, r)) for r, c in zip(rankings, counts) for _ in range(int(c))]
    return np.asarray(rows, dtype=np.int64)
