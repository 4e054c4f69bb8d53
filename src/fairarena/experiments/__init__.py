"""Experiments: grid configs, the full-factorial sweep, parallel/distributed execution, results store.

- :mod:`~fairarena.experiments.config`: validated grid configs (TOML) and presets (``paper``, ...).
- :mod:`~fairarena.experiments.sweep`: settings -> instances -> batched optimal policies and scores.
- :mod:`~fairarena.experiments.backends`: joblib (loky) locally, Dask distributed on a cluster.
- :mod:`~fairarena.experiments.store`: ``settings.parquet``, ``summary.json``, Table 1, Figure 1.
- :mod:`~fairarena.experiments.preflib_example`: the PrefLib Dots example (Figure 2).
"""

from fairarena.experiments.config import PRESETS, GridConfig, Setting, expand, load_config, preset
from fairarena.experiments.sweep import SweepResult, run_sweep

__all__ = ["PRESETS", "GridConfig", "Setting", "expand", "load_config", "preset", "SweepResult", "run_sweep"]
