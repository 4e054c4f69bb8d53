"""Compatibility module: the metrics now live in :mod:`fairarena.allocation.metrics` and the framework
registry in :mod:`fairarena.allocation.frameworks`; the names are re-exported here."""

from __future__ import annotations

from fairarena.allocation.frameworks import FRAMEWORKS, Framework, get_framework
from fairarena.allocation.metrics import (
    METRIC_KEYS,
    METRICS,
    compute_metrics,
    compute_metrics_batch,
    gini,
    need_satisfaction,
)

__all__ = [
    "Framework",
    "FRAMEWORKS",
    "METRIC_KEYS",
    "METRICS",
    "get_framework",
    "need_satisfaction",
    "gini",
    "compute_metrics",
    "compute_metrics_batch",
]
