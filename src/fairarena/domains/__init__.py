"""Domains as plug-ins: one documented protocol and a lazy registry with an entry-point group.

* :mod:`fairarena.domains.protocol` -- what a domain supplies (:class:`Domain`, :class:`MetricSpec`,
  :class:`Participant`) and the defaults of its optional members;
* :mod:`fairarena.domains.registry` -- :data:`DOMAINS` (name -> domain, imported on first use; third-party
  domains through the entry-point group ``fairarena.domains``) and :func:`resolve`;
* :func:`check` -- the conformance kit (:mod:`fairarena.conformance`, also ``fairarena domain check``):
  round trip, seed determinism, feasibility, metric directions, a scripted debate, a council, small studies.

    from fairarena.domains import DOMAINS, check
    report = check(DOMAINS.get("triage"))
    print(report.table())

The arena, aggregation and the studies use this package; it imports none of them (the kit, which runs
them, is the package above, :mod:`fairarena.conformance`, reached here only through the lazy export of
:func:`check`). Importing it loads nothing numerical (see docs/domains.md).
"""

from __future__ import annotations

from fairarena.lazy import lazy_exports

_LAZY = {
    "DOMAINS": "fairarena.domains.registry",
    "ENTRY_POINT_GROUP": "fairarena.domains.registry",
    "resolve": "fairarena.domains.registry",
    "ArenaDomain": "fairarena.domains.protocol",
    "Domain": "fairarena.domains.protocol",
    "MetricSpec": "fairarena.domains.protocol",
    "Participant": "fairarena.domains.protocol",
    "DIRECTIONS": "fairarena.domains.protocol",
    "REQUIRED": "fairarena.domains.protocol",
    "OPTIONAL": "fairarena.domains.protocol",
    "instance_digest": "fairarena.domains.protocol",
    "save_instance": "fairarena.domains.protocol",
    "load_instance": "fairarena.domains.protocol",
    "violations_of": "fairarena.domains.protocol",
    "check": "fairarena.conformance.kit",
    "CheckReport": "fairarena.conformance.kit",
    "CheckResult": "fairarena.conformance.kit",
    "CHECKS": "fairarena.conformance.kit",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
