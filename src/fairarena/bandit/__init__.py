"""Collective decisions over alternatives (multi-agent multi-armed bandits).

N agents, K arms, reward means ``mu[i, k]`` in [0, 1]; a policy is a probability vector over arms.
"""

from fairarena.bandit.notions import NOTIONS, Notion, get_notion, score_all
from fairarena.bandit.problem import (
    decision_shares,
    favourites,
    utilities,
    validate_policy,
    validate_rewards,
)

__all__ = [
    "NOTIONS", "Notion", "get_notion", "score_all", "decision_shares", "favourites", "utilities",
    "validate_policy", "validate_rewards",
]
