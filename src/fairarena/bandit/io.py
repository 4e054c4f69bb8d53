"""Reading reward matrices and policies from JSON or CSV files (validated, with clear errors)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np

from fairarena.bandit.problem import validate_policy, validate_rewards
from fairarena.errors import InputError


def _read_payload(path: str | Path, field: str) -> Any:
    path = Path(path)
    if not path.exists():
        raise InputError(field, str(path), "file not found")
    if path.is_dir():
        raise InputError(field, str(path), "is a directory, expected a JSON or CSV file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(field, str(path), f"cannot read: {exc}") from None
    if path.suffix.lower() == ".csv" or (text.strip()[:1] not in ("{", "[")):
        rows = []
        for lineno, row in enumerate(csv.reader(text.splitlines()), start=1):
            cells = [c.strip() for c in row if c.strip() != ""]
            if not cells or cells[0].startswith("#"):
                continue
            try:
                rows.append([float(c) for c in cells])
            except ValueError:
                raise InputError(f"{field} (line {lineno})", row, "expected numbers separated by commas") from None
        return rows
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(field, str(path), f"invalid JSON: {exc.msg} at line {exc.lineno}") from None


def load_rewards(path: str | Path) -> np.ndarray:
    """``{"rewards": [[...], ...]}``, a bare nested list, or CSV with one row per agent."""
    data = _read_payload(path, "rewards")
    if isinstance(data, dict):
        if "rewards" not in data:
            raise InputError("rewards", sorted(data), "JSON object needs a 'rewards' key")
        data = data["rewards"]
    return validate_rewards(data)


def load_policy(path: str | Path, k: int) -> np.ndarray:
    """``{"policy": [...]}``, a bare list, or CSV with one row (or one column) of K numbers."""
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
    return validate_policy(data, k)
