"""Preference profiles and the reward matrices built from them.

- :mod:`~fairarena.preferences.cultures`: a registry of statistical cultures sampled with
  prefsampling (impartial culture, impartial anonymous culture, single-peaked, Mallows).
- :mod:`~fairarena.preferences.rewards`: rank -> reward maps with favourite-arm settings.
- :mod:`~fairarena.preferences.preflib`: reading PrefLib ``.soc``/``.soi`` files with preflibtools.
- :mod:`~fairarena.preferences.prefvoting`: optional conversion to/from pref_voting profiles.

A profile is an integer array ``(N, K)``: row ``i`` lists the candidates (arms ``0..K-1``) from
agent ``i``'s most to least preferred.
"""

from __future__ import annotations

from fairarena.lazy import lazy_exports

# name -> module; imported on first use, so importing the package loads nothing heavy
_LAZY = {
    "CULTURES": "fairarena.preferences.cultures",
    "Culture": "fairarena.preferences.cultures",
    "get_culture": "fairarena.preferences.cultures",
    "is_single_peaked": "fairarena.preferences.cultures",
    "sample_profile": "fairarena.preferences.cultures",
    "FAVOURITE_MODES": "fairarena.preferences.rewards",
    "rank_rewards": "fairarena.preferences.rewards",
    "reward_matrix": "fairarena.preferences.rewards",
    "rewards_from_profile": "fairarena.preferences.rewards",
}

__all__ = [
    "CULTURES", "Culture", "get_culture", "is_single_peaked", "sample_profile", "FAVOURITE_MODES",
    "rank_rewards", "reward_matrix", "rewards_from_profile",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
