"""The deliberation arena: agents aligned by retrieval to an ethical framework (or baseline, or
adversarial research profiles) negotiate allocations over structured rounds — two or more participants,
on any allocation problem a domain plug-in describes (:mod:`fairarena.domains`; the arena names none).

>>> from fairarena.arena import build_agent, default_domain, run_debate, DebateConfig
>>> c = default_domain().sample(1, "tight")
>>> a = build_agent("A", "aligned:rawlsian", "scripted", c)
>>> b = build_agent("B", "baseline", "scripted", c)
>>> run_debate(c, a, b, DebateConfig(rounds=3)).feasible["joint"]
True
"""

from __future__ import annotations

from fairarena.lazy import lazy_exports

# name -> module; imported on first use, so importing the package loads nothing heavy
_LAZY = {
    "arena_documents": "fairarena.arena.agents",
    "build_agent": "fairarena.arena.agents",
    "default_rag_dir": "fairarena.arena.agents",
    "CLOSING_RULES": "fairarena.arena.closing",
    "ClosingContext": "fairarena.arena.closing",
    "Decision": "fairarena.arena.closing",
    "MECHANISMS": "fairarena.arena.closing",
    "DOMAINS": "fairarena.arena.domain",
    "Domain": "fairarena.arena.domain",
    "TRIAGE": "fairarena.arena.domain",
    "default_domain": "fairarena.arena.domain",
    "ObjectiveNegotiator": "fairarena.arena.negotiator",
    "AgentProfile": "fairarena.arena.profiles",
    "ParticipantProfile": "fairarena.arena.profiles",
    "closing_rules": "fairarena.arena.closing",
    "get_closing_rule": "fairarena.arena.closing",
    "register_closing_rule": "fairarena.arena.closing",
    "register_mechanism": "fairarena.arena.closing",
    "participant_objective": "fairarena.arena.closing",
    "council_debate": "fairarena.arena.council",
    "repair_to_feasible": "fairarena.aggregation.repair",
    "CONCESSION": "fairarena.arena.negotiator",
    "Negotiator": "fairarena.arena.negotiator",
    "proportional_allocation": "fairarena.arena.negotiator",
    "PROPOSAL_FORMATS": "fairarena.arena.formats",
    "realise_priorities": "fairarena.arena.formats",
    "PROPOSAL_SCHEMA": "fairarena.arena.parsing",
    "ParsedProposal": "fairarena.arena.parsing",
    "parse_proposal": "fairarena.arena.parsing",
    "proposal_schema": "fairarena.arena.parsing",
    "validate_mapping": "fairarena.arena.parsing",
    "KINDS": "fairarena.arena.profiles",
    "Profile": "fairarena.arena.profiles",
    "parse_agent": "fairarena.arena.profiles",
    "Agent": "fairarena.arena.protocol",
    "Debate": "fairarena.arena.protocol",
    "DebateConfig": "fairarena.arena.protocol",
    "LIMITS": "fairarena.arena.protocol",
    "default_names": "fairarena.arena.protocol",
    "render_cohort": "fairarena.arena.protocol",
    "DebateResult": "fairarena.arena.result",
    "run_debate": "fairarena.arena.result",
    "read_transcript": "fairarena.arena.transcript",
    "recompute_metrics": "fairarena.arena.transcript",
    "transcript_status": "fairarena.arena.transcript",
}

__all__ = [
    "CLOSING_RULES", "DOMAINS", "Decision", "Domain", "LIMITS", "MECHANISMS", "TRIAGE", "default_names",
    "transcript_status",
    "Agent", "CONCESSION", "ClosingContext", "Debate", "DebateConfig", "DebateResult", "KINDS", "Negotiator",
    "PROPOSAL_FORMATS", "PROPOSAL_SCHEMA", "ParsedProposal", "realise_priorities", "Profile", "arena_documents", "build_agent", "closing_rules",
    "default_rag_dir", "get_closing_rule", "parse_agent", "parse_proposal", "proportional_allocation",
    "proposal_schema", "read_transcript", "recompute_metrics", "register_closing_rule", "register_mechanism",
    "render_cohort", "repair_to_feasible", "run_debate", "validate_mapping", "participant_objective",
    "council_debate", "default_domain", "ObjectiveNegotiator", "AgentProfile", "ParticipantProfile",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
