"""Social-choice aggregation of agents' proposals (one registry of rules, one call shape) and the axiom
audit. See docs/aggregation.md.

* :mod:`.objectives` — agents' utilities (framework metrics normalised to [0, 1] over the feasible set);
* :mod:`.candidates` — candidate-set rules as pure batched functions on utility profiles;
* :mod:`.feasible` — feasible-set rules as exact MILPs;
* :mod:`.repair` — coordinate-wise mean / median repaired to feasibility;
* :mod:`.rules` — ``RULES``, ``Voter`` (also ``Agent``), ``Profile``, ``Decision``, ``aggregate``;
* :mod:`.stakeholders` — stakeholder-centric evaluation of a decision (re-exported by
  :mod:`fairarena.evaluation`);
* :mod:`.io` — proposal files; :mod:`.audit` — the axiom audit;
* :mod:`.council` — the six frameworks' council on a cohort (:func:`.council.council`) and the council of
  any domain through the protocol (``domain_council``: its participants over their optima, candidate-set
  rules).

No module here names a domain: a cohort or any other instance is reached through
:mod:`fairarena.domains` (``resolve``, ``DEFAULT_DOMAIN``, the protocol).

Nothing heavy is imported here.
"""

from __future__ import annotations

from fairarena.lazy import lazy_exports

_LAZY = {
    "RULES": "fairarena.aggregation.rules",
    "Agent": "fairarena.aggregation.rules",
    "Voter": "fairarena.aggregation.rules",
    "Profile": "fairarena.aggregation.rules",
    "Decision": "fairarena.aggregation.rules",
    "aggregate": "fairarena.aggregation.rules",
    "OBJECTIVES": "fairarena.aggregation.objectives",
    "utilities": "fairarena.aggregation.objectives",
    "repair_to_feasible": "fairarena.aggregation.repair",
    "domain_council": "fairarena.aggregation.council",
    "candidate_profile": "fairarena.aggregation.council",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
