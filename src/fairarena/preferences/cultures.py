"""Statistical cultures of strict preference profiles, sampled with prefsampling.

Every culture is registered once (name, title, source, parameters) and sampled through one call
shape: ``sample_profile(culture, n, k, seed, phi=None) -> (N, K) int array`` (row ``i`` = agent
``i``'s ranking of the arms ``0..K-1``, best first). The seed is an ``int`` (prefsampling's own
seeding), so a profile is reproducible from its setting's derived seed alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from fairarena.errors import InputError
from fairarena.registry import Registry


@dataclass(frozen=True)
class Culture:
    name: str
    title: str
    source: str
    needs_phi: bool = False
    sampler: Callable[..., Any] = field(default=None, repr=False)  # type: ignore[assignment]


CULTURES: Registry[Culture] = Registry("culture")
"""The preference cultures by name (a :class:`~fairarena.registry.Registry`; aliases below)."""
ALIASES = {
    "impartial": "ic", "impartial_culture": "ic",
    "iac": "uniform", "impartial_anonymous": "uniform",
    "single_peaked": "sp_conitzer", "sp": "sp_conitzer", "conitzer": "sp_conitzer",
    "walsh": "sp_walsh",
}


def register_culture(name: str, title: str, source: str, needs_phi: bool = False):
    """Decorator: register ``sampler(n, k, seed, phi) -> profile`` as a culture (duplicates rejected)."""
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        CULTURES.add(name, Culture(name, title, source, needs_phi, fn), title=title, citation=source,
                     needs_phi=needs_phi)
        return fn
    return deco


@register_culture("ic", "Impartial culture", "every ranking equally likely, independently per agent")
def _ic(n: int, k: int, seed: int, phi: float | None) -> Any:
    from prefsampling.ordinal import impartial

    return impartial(n, k, seed=seed)


@register_culture("uniform", "Impartial anonymous culture",
           "every anonymous profile (multiset of rankings) equally likely (Kuga & Nagatani 1974)")
def _iac(n: int, k: int, seed: int, phi: float | None) -> Any:
    from prefsampling.ordinal import impartial_anonymous

    return impartial_anonymous(n, k, seed=seed)


@register_culture("sp_conitzer", "Single-peaked (Conitzer)",
           "random peak, then extend left or right with equal probability (Conitzer, JAIR 2009)")
def _spc(n: int, k: int, seed: int, phi: float | None) -> Any:
    from prefsampling.ordinal import single_peaked_conitzer

    return single_peaked_conitzer(n, k, seed=seed)


@register_culture("sp_walsh", "Single-peaked (Walsh)",
           "uniform over all single-peaked rankings on the axis (Walsh 2015)")
def _spw(n: int, k: int, seed: int, phi: float | None) -> Any:
    from prefsampling.ordinal import single_peaked_walsh

    return single_peaked_walsh(n, k, seed=seed)


@register_culture("mallows", "Mallows", "P(r) ~ phi^{Kendall tau distance to a central ranking} (Mallows 1957); "
           "central ranking 0 < 1 < ... < K-1, phi = 0: all identical, phi = 1: impartial culture",
           needs_phi=True)
def _mallows(n: int, k: int, seed: int, phi: float | None) -> Any:
    return mallows_rim(n, k, float(phi), seed)  # type: ignore[arg-type]


def mallows_rim(n: int, k: int, phi: float, seed: int | None) -> list[list[int]]:
    """Mallows profile by the repeated insertion model, **draw for draw the same profile as**
    ``prefsampling.ordinal.mallows(n, k, phi, seed=seed)`` (tested), about 20x faster.

    In the repeated insertion model (Doignon, Pekec & Regenwetter 2004) candidate ``j`` is inserted
    at position ``q <= j`` of the partial ranking with probability proportional to ``phi^(j - q)``.
    prefsampling draws each insertion with ``rng.choice(p=...)``, which consumes one uniform double
    and takes the first cumulative probability above it; here all ``n (k - 1)`` doubles are drawn
    at once from the same generator, in the same order, and the positions found by one
    ``searchsorted`` per insertion step over all voters (same cumulative sums, so same positions).
    """
    if not 0.0 <= phi <= 1.0:
        raise InputError("phi", phi, "expected a number in [0, 1]")
    rng = np.random.default_rng(seed)
    u = rng.random((n, k - 1))
    pos = np.empty((n, k - 1), dtype=np.int64)
    for j in range(1, k):
        dist = np.zeros(j + 1)
        for q in range(j + 1):
            dist[q] = phi ** (j - q)
        cdf = (dist / dist.sum()).cumsum()
        cdf /= cdf[-1]
        pos[:, j - 1] = cdf.searchsorted(u[:, j - 1], side="right")
    votes = []
    for row in pos.tolist():
        vote = [0]
        for j, q in enumerate(row, start=1):
            vote.insert(q, j)
        votes.append(vote)
    return votes


def get_culture(name: str) -> Culture:
    key = ALIASES.get(name, name) if isinstance(name, str) else name
    if key not in CULTURES:
        raise InputError("culture", name, f"expected one of {CULTURES.choices()}")
    return CULTURES[key]


def validate_phi(phi: Any, field: str = "phi") -> float:
    try:
        x = float(phi)
    except (TypeError, ValueError):
        raise InputError(field, phi, "expected a number in [0, 1]") from None
    if not (np.isfinite(x) and 0.0 <= x <= 1.0):
        raise InputError(field, phi, "expected a number in [0, 1]")
    return x


def validate_size(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(field, value, "expected a positive integer")
    return int(value)


def sample_profile(culture: str, n: int, k: int, seed: int, phi: float | None = None) -> np.ndarray:
    """A profile of ``n`` strict rankings over ``k`` arms from ``culture``: ``(n, k)`` int array."""
    c = get_culture(culture)
    n = validate_size(n, "N")
    k = validate_size(k, "K")
    if c.needs_phi:
        if phi is None:
            raise InputError("phi", phi, f"culture {c.name!r} needs phi in [0, 1]")
        phi = validate_phi(phi)
    out = np.asarray(c.sampler(n, k, int(seed), phi), dtype=np.int64).reshape(n, k)
    return out


def is_single_peaked(profile: np.ndarray, axis: list[int] | np.ndarray | None = None) -> bool:
    """Whether every ranking is single-peaked on ``axis`` (default ``0, 1, ..., K-1``): each prefix
    of the ranking (its top ``j`` candidates) is a contiguous interval of the axis."""
    profile = np.asarray(profile)
    k = profile.shape[1]
    pos = np.empty(k, dtype=np.int64)
    pos[np.asarray(axis if axis is not None else np.arange(k))] = np.arange(k)
    p = pos[profile]  # axis positions in preference order
    lo = np.minimum.accumulate(p, axis=1)
    hi = np.maximum.accumulate(p, axis=1)
    return bool(np.all(hi - lo == np.arange(k)))
