"""Experiments: grid configs, the full-factorial sweep, results store.

- :mod:`~fairarena.experiments.presets`: the named grids (``paper``, ``small``, ``tiny``), a registry.
- :mod:`~fairarena.experiments.config`: validated grid configs (TOML) expanded into settings.
- :mod:`~fairarena.experiments.sweep`: settings -> instances -> batched optimal policies and scores,
  run on any backend of :mod:`fairarena.execution`.
- :mod:`~fairarena.experiments.store`: ``settings.parquet``, ``summary.json``, Table 1, Figure 1.
- :mod:`~fairarena.experiments.preflib_example`: the PrefLib Dots example (Figure 2).

Names are imported lazily (importing this package loads neither numpy nor pydantic).
"""

from __future__ import annotations

from fairarena.lazy import lazy_exports

_LAZY = {
    "PRESETS": "fairarena.experiments.presets",
    "GridConfig": "fairarena.experiments.config",
    "Setting": "fairarena.experiments.config",
    "expand": "fairarena.experiments.config",
    "load_config": "fairarena.experiments.config",
    "preset": "fairarena.experiments.config",
    "SweepResult": "fairarena.experiments.sweep",
    "run_sweep": "fairarena.experiments.sweep",
}

__all__ = list(_LAZY)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
