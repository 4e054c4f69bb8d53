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

from typing import Any

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
