"""The conformance kit for domain plug-ins (:mod:`fairarena.domains`), and the defaults it gives a domain.

* :mod:`fairarena.conformance.kit` -- :func:`check` (also ``fairarena.domains.check`` and ``fairarena domain
  check``): round trip, seed determinism, presentation, feasibility, metric directions, a scripted debate, a
  council and small studies;
* :func:`optimum_agents` (:mod:`fairarena.arena.optimum`), the scripted participants of a domain that
  supplies none, and :func:`candidate_profile` (:mod:`fairarena.aggregation.council`), the council of a domain
  that supplies no ``council_profile``: the defaults the kit gives a domain, re-exported here; they live in
  the layers below the studies, which use them too;
* :mod:`fairarena.conformance.cli` -- ``fairarena domain list`` and ``fairarena domain check``.

This package sits above the arena, aggregation and the studies (it runs them); :mod:`fairarena.domains`
(the protocol and the registry, which those layers use) imports none of them, so no package imports
another that imports it back.
"""

from __future__ import annotations

from fairarena.lazy import lazy_exports

_LAZY = {
    "check": "fairarena.conformance.kit",
    "CheckReport": "fairarena.conformance.kit",
    "CheckResult": "fairarena.conformance.kit",
    "CHECKS": "fairarena.conformance.kit",
    "optimum_agents": "fairarena.arena.optimum",
    "OptimumNegotiator": "fairarena.arena.optimum",
    "candidate_profile": "fairarena.aggregation.council",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
