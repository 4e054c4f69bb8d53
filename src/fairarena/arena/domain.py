"""Domain adapters: what the arena needs to know about one kind of allocation problem.

The protocol (:mod:`fairarena.arena.protocol`) is generic over an
:class:`~fairarena.allocation.problem.AllocationProblem`; everything it shows to agents or records
about the *instance* behind the problem comes from a domain: how the instance is rendered in a prompt,
what its items and resources are called, the rules every agent is told, the retrieval query, and how the
instance is stored in (and read back from) a transcript header. What the arena needs is
:class:`Domain` (:class:`fairarena.domains.protocol.ArenaDomain`); the whole plug-in protocol (instances,
metrics, participants, the conformance kit) is :mod:`fairarena.domains`, and :data:`DOMAINS` is
:data:`fairarena.domains.DOMAINS` (every domain by name, imported on first use).

The arena names no domain: it reaches every one through :data:`DOMAINS`, and :func:`default_domain` is the
registry's default entry (the domain of a debate or a transcript that names none). The domains live in
their own packages; the names this module exported before (``TRIAGE``, ``TriageDomain``) still resolve,
through the registry, for old code (module ``__getattr__``: nothing is imported until they are used).
"""

from __future__ import annotations

from typing import Any

from fairarena.domains.protocol import ArenaDomain as Domain
from fairarena.domains.registry import DEFAULT_DOMAIN, DOMAINS

__all__ = ["Domain", "DOMAINS", "DEFAULT_DOMAIN", "default_domain", "TRIAGE", "TriageDomain"]


def default_domain() -> Any:
    """The registry's default domain (:data:`fairarena.domains.registry.DEFAULT_DOMAIN`), imported on first use."""
    return DOMAINS.get(DEFAULT_DOMAIN)


def __getattr__(name: str) -> Any:
    # compatibility: the default domain object and its class, as this module defined them before they
    # moved to the domain's own package (resolved through the registry, never imported by the arena)
    if name == "TRIAGE":
        return default_domain()
    if name == "TriageDomain":
        return type(default_domain())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
