"""PrefLib ordinal data (``.soc`` strict complete, ``.soi`` strict incomplete), read with preflibtools.

``load_preflib(path)`` gives a :class:`PrefLibProfile` with one ranking per voter (multiplicities
expanded, file order kept); ``sample_voters`` draws voters uniformly without replacement with a
seed; ``preflib_rewards`` maps ranks to rewards (default ``linspace(0.9, 0.1, K)``). In a ``.soi``
order the unranked candidates all get the lowest reward.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fairarena.errors import InputError

SUPPORTED_TYPES = ("soc", "soi")


@dataclass(frozen=True)
class PrefLibProfile:
    path: str
    title: str
    data_type: str
    alternatives: tuple[str, ...]          # names, index = arm
    orders: tuple[tuple[int, ...], ...]    # one per voter, 0-based arms, best first (may be partial)

    @property
    def n_voters(self) -> int:
        return len(self.orders)

    @property
    def n_alternatives(self) -> int:
        return len(self.alternatives)


def load_preflib(path: str | Path) -> PrefLibProfile:
    from preflibtools.instances import OrdinalInstance

    path = Path(path)
    if not path.is_file():
        raise InputError("file", str(path), "no such PrefLib file")
    inst = OrdinalInstance()
    try:
        inst.parse_file(str(path))
    except (ValueError, IndexError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise InputError("file", str(path), f"malformed PrefLib file ({type(exc).__name__}: {exc})") from None
    dtype = (inst.data_type or path.suffix.lstrip(".")).lower()
    if dtype not in SUPPORTED_TYPES:
        raise InputError("file", str(path), f"data type {dtype!r}: expected one of .soc, .soi (strict orders)")
    m = int(inst.num_alternatives or 0)
    if m < 1 or not inst.orders:
        raise InputError("file", str(path), "malformed PrefLib file: no alternatives or no orders")
    ids = sorted(inst.alternatives_name) if inst.alternatives_name else list(range(1, m + 1))
    if len(ids) != m:
        raise InputError("file", str(path), f"malformed PrefLib file: {len(ids)} alternative names for {m} alternatives")
    index = {a: j for j, a in enumerate(ids)}
    orders: list[tuple[int, ...]] = []
    for order in inst.orders:
        flat: list[int] = []
        for cls in order:
            if len(cls) != 1:
                raise InputError("file", str(path), f"order {order}: ties are not allowed in .soc/.soi")
            if cls[0] not in index:
                raise InputError("file", str(path), f"order {order}: unknown alternative {cls[0]}")
            flat.append(index[cls[0]])
        if len(set(flat)) != len(flat) or (dtype == "soc" and len(flat) != m):
            raise InputError("file", str(path), f"order {order}: not a strict {'complete ' if dtype == 'soc' else ''}order")
        orders.extend([tuple(flat)] * int(inst.multiplicity[order]))
    names = tuple(str(inst.alternatives_name.get(a, a)) for a in ids) if inst.alternatives_name else tuple(map(str, ids))
    return PrefLibProfile(str(path), inst.title or path.name, dtype, names, tuple(orders))


def sample_voters(profile: PrefLibProfile, voters: int, seed: int) -> list[tuple[int, ...]]:
    """``voters`` voters drawn uniformly at random without replacement (``default_rng(seed)``)."""
    if isinstance(voters, bool) or not isinstance(voters, (int, np.integer)) or voters < 1:
        raise InputError("voters", voters, "expected a positive integer")
    if voters > profile.n_voters:
        raise InputError("voters", voters, f"the file has only {profile.n_voters} voters")
    idx = np.random.default_rng(seed).choice(profile.n_voters, size=int(voters), replace=False)
    return [profile.orders[i] for i in idx]


def preflib_rewards(orders: list[tuple[int, ...]], k: int, values: np.ndarray | None = None) -> np.ndarray:
    """Reward matrix: the arm at rank ``r`` gets ``values[r]`` (default ``linspace(0.9, 0.1, K)``);
    arms missing from a partial order get ``values[-1]``."""
    values = np.linspace(0.9, 0.1, k) if values is None else np.asarray(values, dtype=float)
    mu = np.full((len(orders), k), values[-1])
    for i, order in enumerate(orders):
        mu[i, list(order)] = values[: len(order)]
    return mu
