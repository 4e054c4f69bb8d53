"""Instances for the learners: the PrefLib Dots example and reward-matrix files.

The Dots instance of the procedural-fairness paper's learning example (Figure 3): 50 voters drawn
with seed 42 (uniformly, without replacement) from PrefLib's ``00024-00000003.soc`` (the
"Dots" data, 800 voters ranking 4 alternatives), rewards by rank ``linspace(0.9, 0.1, 4)`` =
0.9 / 0.633 / 0.367 / 0.1.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fairarena.errors import InputError

DOTS_FILE = "00024-00000003.soc"
DOTS_VOTERS = 50
DOTS_SEED = 42


def dots_path() -> Path:
    """The packaged copy of the Dots file (``fairarena/data/preflib``), else the shared data folder."""
    packaged = Path(__file__).resolve().parent.parent / "data" / "preflib" / DOTS_FILE
    if packaged.is_file():
        return packaged
    shared = Path("/work/shared/data/preflib") / DOTS_FILE
    if shared.is_file():
        return shared
    raise InputError("instance", "dots", f"PrefLib file {DOTS_FILE} not found (expected {packaged})")


def dots_rewards(voters: int = DOTS_VOTERS, seed: int = DOTS_SEED) -> np.ndarray:
    """The Dots reward matrix ``(voters, 4)``."""
    try:  # the preferences package (PrefLib loading shared with the sweep)
        from fairarena.preferences.preflib import load_preflib, preflib_rewards, sample_voters
    except ImportError:  # pragma: no cover - fallback while that package is absent
        return _dots_fallback(voters, seed)
    prof = load_preflib(dots_path())
    orders = sample_voters(prof, voters, seed)
    return preflib_rewards(orders, prof.n_alternatives)


def _dots_fallback(voters: int, seed: int) -> np.ndarray:
    """Same draw as :func:`fairarena.preferences.preflib.sample_voters` with preflibtools directly."""
    from preflibtools.instances import OrdinalInstance

    inst = OrdinalInstance()
    inst.parse_file(str(dots_path()))
    ids = sorted(inst.alternatives_name) if inst.alternatives_name else list(range(1, inst.num_alternatives + 1))
    index = {a: j for j, a in enumerate(ids)}
    orders = []
    for order in inst.orders:
        orders.extend([tuple(index[c[0]] for c in order)] * int(inst.multiplicity[order]))
    idx = np.random.default_rng(seed).choice(len(orders), size=voters, replace=False)
    k = len(ids)
    values = np.linspace(0.9, 0.1, k)
    mu = np.empty((voters, k))
    for i, j in enumerate(idx):
        mu[i, list(orders[j])] = values
    return mu


def load_instance(spec: str | Path) -> tuple[str, np.ndarray]:
    """``'dots'`` or a reward-matrix file (JSON/CSV, validated): ``(name, rewards)``."""
    from fairarena.bandit.io import load_rewards

    if isinstance(spec, str) and spec.strip().lower() == "dots":
        return "dots", dots_rewards()
    path = Path(spec)
    return path.stem, np.asarray(load_rewards(path))
