"""Domains as plug-ins: one documented protocol, a lazy registry with an entry-point group, and a
conformance kit.

* :mod:`fairarena.domains.protocol` -- what a domain supplies (:class:`Domain`, :class:`MetricSpec`,
  :class:`Participant`) and the defaults of its optional members;
* :mod:`fairarena.domains.registry` -- :data:`DOMAINS` (name -> domain, imported on first use; third-party
  domains through the entry-point group ``fairarena.domains``) and :func:`resolve`;
* :mod:`fairarena.domains.conformance` -- :func:`check` (also ``fairarena domain check``): round trip,
  seed determinism, feasibility, metric directions, a scripted debate, a council and small studies;
* :mod:`fairarena.domains.scripted` and :mod:`fairarena.domains.council` -- the defaults a domain gets
  when it does not supply its own scripted agents or council profile.

    from fairarena.domains import DOMAINS, check
    report = check(DOMAINS.get("triage"))
    print(report.table())

Importing this package loads nothing numerical (see docs/domains.md).
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
    "check": "fairarena.domains.conformance",
    "CheckReport": "fairarena.domains.conformance",
    "CheckResult": "fairarena.domains.conformance",
    "CHECKS": "fairarena.domains.conformance",
    "optimum_agents": "fairarena.domains.scripted",
    "candidate_profile": "fairarena.domains.council",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
