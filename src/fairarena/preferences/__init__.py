"""Preference profiles and the reward matrices built from them.

- :mod:`~fairarena.preferences.cultures`: a registry of statistical cultures sampled with
  prefsampling (impartial culture, impartial anonymous culture, single-peaked, Mallows).
- :mod:`~fairarena.preferences.rewards`: rank -> reward maps with favourite-arm settings.
- :mod:`~fairarena.preferences.preflib`: reading PrefLib ``.soc``/``.soi`` files with preflibtools.
- :mod:`~fairarena.preferences.prefvoting`: optional conversion to/from pref_voting profiles.

A profile is an integer array ``(N, K)``: row ``i`` lists the candidates (arms ``0..K-1``) from
agent ``i``'s most to least preferred.
"""

from fairarena.preferences.cultures import CULTURES, Culture, get_culture, is_single_peaked, sample_profile
from fairarena.preferences.rewards import FAVOURITE_MODES, rank_rewards, reward_matrix, rewards_from_profile

__all__ = [
    "CULTURES", "Culture", "get_culture", "is_single_peaked", "sample_profile",
    "FAVOURITE_MODES", "rank_rewards", "reward_matrix", "rewards_from_profile",
]
