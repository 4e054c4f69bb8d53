"""The default council of a domain that supplies no ``council_profile``: its participants over their optima.

:func:`candidate_profile` builds the aggregation profile every candidate-set rule of
:data:`fairarena.aggregation.rules.RULES` decides on: one agent per participant, one candidate per
participant's optimum (named after it), utilities = each participant's value (``domain.value``)
normalised over the candidates, 1 at its best candidate and 0 at its worst (an indifferent participant:
all 1; :func:`fairarena.aggregation.candidates.per_agent_range`), and ``X`` = the optima. Feasible-set
and repair rules need allocation objectives over the whole feasible set, which a domain supplies with its
own ``council_profile`` (triage does); :func:`council_rules` lists the rules a profile accepts.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from fairarena.domains.protocol import Participant

__all__ = ["candidate_profile", "council_profile", "council_rules"]


def candidate_profile(domain: Any, instance: Any, participants: Sequence[Participant] | None = None,
                      optima: Sequence[np.ndarray] | None = None) -> Any:
    """The participants' council over their optima (module doc); ``optima`` in participant order (default
    ``domain.optimum`` of each). Its one home is :func:`fairarena.aggregation.council.candidate_profile`."""
    from fairarena.aggregation.council import candidate_profile as home

    return home(domain, instance, participants, optima)


def council_profile(domain: Any, instance: Any, participants: Sequence[Participant] | None = None) -> Any:
    """``domain.council_profile(instance, participants)`` when the domain has one, else
    :func:`candidate_profile`."""
    own = getattr(domain, "council_profile", None)
    if callable(own):
        return own(instance, participants)
    return candidate_profile(domain, instance, participants)


def council_rules(profile: Any) -> list[str]:
    """The registered aggregation rules ``profile`` accepts: every rule with an allocation problem, the
    candidate-set rules without one."""
    from fairarena.aggregation.rules import RULES

    return [n for n in RULES if profile.problem is not None or RULES.entry(n).kind == "candidates"]
