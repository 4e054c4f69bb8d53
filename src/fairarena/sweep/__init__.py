"""The procedural-fairness sweep: grid configs, the full-factorial sweep, its results store.

- :mod:`~fairarena.sweep.presets`: the named grids (``paper``, ``small``, ``tiny``), a registry.
- :mod:`~fairarena.sweep.config`: validated grid configs (TOML) expanded into settings.
- :mod:`~fairarena.sweep.run`: settings -> instances -> batched optimal policies and scores,
  run on any backend of :mod:`fairarena.execution`.
- :mod:`~fairarena.sweep.store`: ``settings.parquet``, ``summary.json``, ``run.json``, Table 1 and
  Figure 1 (drawn by :mod:`fairarena.report.sweep_figures`).
- :mod:`~fairarena.sweep.preflib_example`: the PrefLib Dots example (Figure 2).
- :mod:`~fairarena.sweep.cli`: ``fairarena sweep`` and ``fairarena preflib``;
  :mod:`~fairarena.sweep.demo`: their sections of ``fairarena demo``.

Names are imported lazily (importing this package loads neither numpy nor pydantic).
"""

from __future__ import annotations

from fairarena.lazy import lazy_exports

_LAZY = {
    "PRESETS": "fairarena.sweep.presets",
    "GridConfig": "fairarena.sweep.config",
    "Setting": "fairarena.sweep.config",
    "expand": "fairarena.sweep.config",
    "load_config": "fairarena.sweep.config",
    "preset": "fairarena.sweep.config",
    "SweepResult": "fairarena.sweep.run",
    "run_sweep": "fairarena.sweep.run",
}

__all__ = list(_LAZY)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
