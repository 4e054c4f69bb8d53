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


def parse_learners(learner: str, *, gamma: float | None = None, delta: float | None = None,
                   alpha: float | None = None, growth: float | None = None,
                   form: str | None = None) -> list[LearnerSpec]:
    """Validated specs for a learner selection (a name, a comma-separated list, or ``all``) and the
    shared parameters: each given parameter is validated whatever the learners (a bad value is an
    error, not ignored) and passed to the learners that take it."""
    from fairarena.learners.base import check_open_unit, check_positive

    # shared options are validated whatever the learners (a bad value is an error, not ignored)
    if gamma is not None:
        check_open_unit("gamma", gamma)
    if delta is not None:
        check_open_unit("delta", delta)
    if alpha is not None:
        check_positive("alpha", alpha)
    if growth is not None:
        check_positive("growth", growth, allow_zero=True)
    if form is not None:
        make_learner("nashucb", form=form)
    names = list(LEARNERS) if learner.strip().lower() == "all" else [x.strip() for x in learner.split(",") if x.strip()]
    if not names:
        raise InputError("learner", learner, f"expected all or one of {LEARNERS.choices()}")
    specs = []
    for name in names:
        if name not in LEARNERS:
            raise InputError("learner", name, f"expected all or one of {LEARNERS.choices()}")
        takes = learner_params(name)
        given = {"gamma": gamma, "delta": delta, "alpha": alpha, "growth": growth, "form": form}
        specs.append(make_learner(name, **{k: v for k, v in given.items() if v is not None and k in takes}))
    return specs
