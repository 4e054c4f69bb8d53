"""Stakeholder-centric evaluation of collective decisions (see :mod:`.stakeholders`)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["evaluate", "recipients_view", "envy_free_up_to_one"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("fairarena.evaluation.stakeholders"), name)
    raise AttributeError(name)
