"""The deliberation arena: agents aligned by retrieval to an ethical framework (or baseline, or
adversarial research profiles) negotiate triage allocations over structured rounds.

>>> from fairarena.triage import sample_cohort
>>> from fairarena.arena import build_agent, run_debate, DebateConfig
>>> c = sample_cohort(1, "tight")
>>> a = build_agent("A", "aligned:rawlsian", "scripted", c)
>>> b = build_agent("B", "baseline", "scripted", c)
>>> run_debate(c, a, b, DebateConfig(rounds=3)).feasible["joint"]
True
"""

from fairarena.arena.agents import arena_documents, build_agent, default_rag_dir
from fairarena.arena.closing import (
    ClosingContext, closing_rules, get_closing_rule, register_closing_rule, register_mechanism, repair_to_feasible,
)
from fairarena.arena.negotiator import CONCESSION, Negotiator, proportional_allocation
from fairarena.arena.parsing import PROPOSAL_SCHEMA, ParsedProposal, parse_proposal, proposal_schema, validate_mapping
from fairarena.arena.profiles import KINDS, Profile, parse_agent
from fairarena.arena.protocol import Agent, Debate, DebateConfig, DebateResult, render_cohort, run_debate
from fairarena.arena.transcript import read_transcript, recompute_metrics

__all__ = [
    "Agent", "CONCESSION", "ClosingContext", "Debate", "DebateConfig", "DebateResult", "KINDS", "Negotiator",
    "PROPOSAL_SCHEMA", "ParsedProposal", "Profile", "arena_documents", "build_agent", "closing_rules",
    "default_rag_dir", "get_closing_rule", "parse_agent", "parse_proposal", "proportional_allocation",
    "proposal_schema", "read_transcript", "recompute_metrics", "register_closing_rule", "register_mechanism",
    "render_cohort", "repair_to_feasible", "run_debate", "validate_mapping",
]
