"""Collective decisions over alternatives (multi-agent multi-armed bandits).

N agents, K arms, reward means ``mu[i, k]`` in [0, 1]; a policy is a probability vector over arms.
"""

from __future__ import annotations

from fairarena.lazy import lazy_exports

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


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
