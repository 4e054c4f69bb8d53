"""Every built-in learner registered, and building specs by name.

Importing this module registers the built-in families (one module each) into
:data:`fairarena.learners.base.LEARNERS`, in the order the CLI lists them: ``pf``, ``ef``, ``uf``,
``nashucb``, ``ggi``, ``etc``, ``uniform``.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from fairarena.errors import InputError
from fairarena.learners.base import LEARNERS, LearnerSpec

# isort: off -- the import order is the registration order, which is the order the CLI lists
from fairarena.learners import pf as _pf  # noqa: E402,F401
from fairarena.learners import ef as _ef  # noqa: E402,F401
from fairarena.learners import uf as _uf  # noqa: E402,F401
from fairarena.learners import nash as _nash  # noqa: E402,F401
from fairarena.learners import ggi as _ggi  # noqa: E402,F401
from fairarena.learners import baselines as _baselines  # noqa: E402,F401
# isort: on


def make_learner(learner: "str | LearnerSpec", **params: Any) -> LearnerSpec:
    """A validated spec from a name and parameters (or a spec, with parameters replaced)."""
    if isinstance(learner, LearnerSpec):
        return replace(learner, **params) if params else learner
    if not isinstance(learner, str):
        raise LEARNERS.unknown(learner)
    cls = LEARNERS.get(learner)
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(params) - known)
    if unknown:
        raise InputError(f"{learner}.{unknown[0]}", params[unknown[0]],
                         f"unknown parameter; {learner} takes {', '.join(sorted(known)) or 'none'}")
    return cls(**params)


def learner_params(learner: str) -> tuple[str, ...]:
    """The parameter names a registered learner takes."""
    return tuple(f.name for f in fields(LEARNERS.get(learner)))
