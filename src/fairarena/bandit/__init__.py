"""Collective decisions over alternatives (multi-agent multi-armed bandits).

N agents, K arms, reward means ``mu[i, k]`` in [0, 1]; a policy is a probability vector over arms.
"""

from __future__ import annotations

from typing import Any

# name -> module; imported on first use, so importing the package loads nothing heavy
_LAZY = {
    "NOTIONS": "fairarena.bandit.notions",
    "Notion": "fairarena.bandit.notions",
    "get_notion": "fairarena.bandit.notions",
    "score_all": "fairarena.bandit.notions",
    "decision_shares": "fairarena.bandit.problem",
    "favourites": "fairarena.bandit.problem",
    "utilities": "fairarena.bandit.problem",
    "validate_policy": "fairarena.bandit.problem",
    "validate_rewards": "fairarena.bandit.problem",
}

__all__ = [
    "NOTIONS", "Notion", "get_notion", "score_all", "decision_shares", "favourites", "utilities",
    "validate_policy", "validate_rewards",
]


def __getattr__(name: str) -> Any:
    import importlib

    module = _LAZY.get(name)
    if module is None:
        if not name.startswith("__"):  # a submodule used as an attribute (``fairarena.x.sub.f``)
            try:
                return importlib.import_module(f"{__name__}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.{name}":
                    raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
