"""Fair multi-agent bandit learners: environment, learners, regret accounting, simulation.

>>> from fairarena.learners import FairLearner, MultiAgentBandit
>>> env = MultiAgentBandit([[0.9, 0.1], [0.9, 0.1], [0.1, 0.9]], "beta:0.05")
>>> res = FairLearner("pf").simulate(env, T=2000, seeds=4)
>>> res.final_policy().round(1).tolist()
[0.7, 0.3]

Modules: :mod:`~fairarena.learners.base` (specs, state, the ``LEARNERS`` registry), one module per
learner family (``pf``, ``ef``, ``uf``, ``nash``, ``ggi``, ``baselines``),
:mod:`~fairarena.learners.catalog` (all families registered, ``make_learner``),
:mod:`~fairarena.learners.simulate` (the harness and regret accounting),
:mod:`~fairarena.learners.facade` (``FairLearner``). The public names below are loaded on first use.
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import Any

_PUBLIC = {
    "MultiAgentBandit": "env", "RewardFamily": "env", "beta_params": "env", "parse_family": "env",
    "LEARNERS": "catalog", "make_learner": "catalog", "learner_params": "catalog",
    "LearnerSpec": "base", "LearnerState": "base", "register_learner": "base",
    "FairLearner": "facade",
    "SimulationResult": "simulate", "simulate": "simulate", "simulate_many": "simulate",
}

__all__ = list(_PUBLIC)


def __getattr__(name: str) -> Any:
    mod = _PUBLIC.get(name)
    if mod is None:
        raise AttributeError(f"module 'fairarena.learners' has no attribute {name!r}")
    return getattr(import_module(f"fairarena.learners.{mod}"), name)


class _Package(types.ModuleType):
    """The import system binds a submodule to its package's attribute once loaded; the function
    ``simulate`` (in the module of the same name) keeps the public name, as it always had."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "simulate" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
