"""Reading reward matrices and policies from JSON or CSV files (validated, with clear errors)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fairarena.bandit.problem import renormalise_policy, validate_rewards
from fairarena.errors import InputError
from fairarena.inputs import load_numbers_file, require_numbers


def _read_payload(path: str | Path, field: str) -> Any:
    """JSON or CSV numbers via the one input reader (:mod:`fairarena.inputs`)."""
    return load_numbers_file(path, field)


def load_rewards(path: str | Path) -> np.ndarray:
    """``{"rewards": [[...], ...]}``, a bare nested list, or CSV with one row per agent."""
    data = _read_payload(path, "rewards")
    if isinstance(data, dict):
        if "rewards" not in data:
            raise InputError("rewards", sorted(data), "JSON object needs a 'rewards' key")
        data = data["rewards"]
    return validate_rewards(require_numbers(data, "rewards"))


def load_policy(path: str | Path, k: int) -> np.ndarray:
    """``{"policy": [...]}``, a bare list, or CSV with one row (or one column) of K numbers; a sum
    within 1e-6 of 1 is renormalised (see :func:`load_policy_checked` to learn whether it was)."""
    return load_policy_checked(path, k)[0]


def load_policy_checked(path: str | Path, k: int) -> tuple[np.ndarray, bool]:
    """:func:`load_policy` and whether the policy was renormalised (its sum was off by 1e-9..1e-6)."""
    data = _read_payload(path, "policy")
    if isinstance(data, dict):
        if "policy" not in data:
            raise InputError("policy", sorted(data), "JSON object needs a 'policy' key")
        data = data["policy"]
    if isinstance(data, list) and data and all(isinstance(r, list) for r in data):
        if len(data) == 1:
            data = data[0]
        elif all(len(r) == 1 for r in data):
            data = [r[0] for r in data]
        else:
            raise InputError("policy", data, "expected one row (or one column) of K numbers")
    return renormalise_policy(require_numbers(data, "policy"), k)
