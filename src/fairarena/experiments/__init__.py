"""Experiments: the former home of the debate study and the sweep.

The debate study moved to :mod:`fairarena.study`; its old module paths (``fairarena.experiments.study``,
``.study_store``, ``.study_analysis``, ``.study_council``, ...) are the moved modules themselves, deprecated.

The procedural-fairness sweep moved to :mod:`fairarena.sweep`. Its names stay importable from here
(``PRESETS``, ``GridConfig``, ``Setting``, ``expand``, ``load_config``, ``preset``, ``SweepResult``,
``run_sweep``, the same objects as ``fairarena.sweep``'s), and so do its old module paths
(``fairarena.experiments.config``, ``.presets``, ``.sweep``, ``.store``, ``.preflib_example``), which
are deprecated: new code imports :mod:`fairarena.sweep`.

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
