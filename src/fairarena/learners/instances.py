"""Instances for the learners: the PrefLib Dots example and reward-matrix files.

The Dots instance of the procedural-fairness paper's learning example (Figure 3): 50 voters drawn
with seed 42 (uniformly, without replacement) from PrefLib's ``00024-00000003.soc`` (the
"Dots" data, 800 voters ranking 4 alternatives), rewards by rank ``linspace(0.9, 0.1, 4)`` =
0.9 / 0.633 / 0.367 / 0.1.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from fairarena.errors import InputError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

DOTS_FILE = "00024-00000003.soc"
DOTS_VOTERS = 50
DOTS_SEED = 42


def dots_resource() -> Traversable:
    """The packaged Dots file (``fairarena/data/preflib``, package data found by
    :mod:`importlib.resources`, never a path of one machine)."""
    from importlib.resources import files

    res = files("fairarena").joinpath("data", "preflib", DOTS_FILE)
    if not res.is_file():
        raise InputError("instance", "dots", f"PrefLib file {DOTS_FILE} is missing from the installed package "
                         "(fairarena/data/preflib); reinstall fairarena")
    return res


def dots_path() -> Path:
    """A file-system path of the packaged Dots file (packages installed as files)."""
    return Path(str(dots_resource()))


def dots_rewards(voters: int = DOTS_VOTERS, seed: int = DOTS_SEED) -> np.ndarray:
    """The Dots reward matrix ``(voters, 4)`` (PrefLib loading shared with the sweep)."""
    from fairarena.preferences.preflib import load_preflib, preflib_rewards, sample_voters

    from importlib.resources import as_file

    with as_file(dots_resource()) as path:
        prof = load_preflib(path)
    orders = sample_voters(prof, voters, seed)
    return preflib_rewards(orders, prof.n_alternatives)


def load_instance(spec: str | Path) -> tuple[str, np.ndarray]:
    """``'dots'`` or a reward-matrix file (JSON/CSV, validated): ``(name, rewards)``."""
    from fairarena.bandit.io import load_rewards

    if isinstance(spec, str) and spec.strip().lower() == "dots":
        return "dots", dots_rewards()
    path = Path(spec)
    if not path.is_file():  # the option's name in the error, not the file's content ("rewards")
        from fairarena.errors import InputError

        what = "is a folder" if path.is_dir() else "not found"
        raise InputError("instance", str(spec), f"{what}; expected 'dots' or a reward-matrix file (JSON/CSV)")
    return path.stem, np.asarray(load_rewards(path))
