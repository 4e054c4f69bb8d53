"""The debate protocol: the turn loop over any number of participants on any allocation problem.

Round ``t``: every participant answers in turn (speaking order = the order given), each seeing every
other participant's latest proposal in the history. Each sees the instance (rendered by the domain
adapter, :mod:`fairarena.arena.domain`), the history of earlier proposals (allocation, validity,
justification and critique excerpts), its retrieved reference material, and answers with JSON matching
:data:`fairarena.arena.parsing.PROPOSAL_SCHEMA`. An invalid answer gets up to ``max_repairs`` repair
turns that quote the exact violations; if it is still invalid it is recorded as infeasible with its
violations. After the last round every participant submits a final allocation, then the closing rule
(:mod:`fairarena.arena.closing`) turns the finals into a decision; it may ask participants through the
protocol, which alone writes the history. Prompts are built by :mod:`fairarena.arena.prompts`; the
result and transcript footer by :mod:`fairarena.arena.result`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from fairarena.allocation.problem import AllocationProblem, allocation_to_mapping
from fairarena.allocation.metrics import defined_metrics
from fairarena.arena.closing import ClosingContext, check_domain_closing, decide, get_closing_rule, participant_objective
from fairarena.arena.domain import Domain, default_domain
from fairarena.arena.formats import PROPOSAL_FORMATS, SpokenModel
from fairarena.arena.negotiator import Negotiator
from fairarena.arena.profiles import Profile
from fairarena.arena.parsing import ParsedProposal
from fairarena.arena.step import Step
from fairarena.arena.prompts import PHASE_TASK, PROMPT_VERSION, build_messages, escape, excerpt
from fairarena.arena.scoring import metrics_domain, score, score_with  # noqa: F401  (their old import path)
from fairarena.arena.transcript import Closing, TranscriptWriter, Turn
from fairarena.errors import FairArenaError, InputError
from fairarena.llm.base import ChatModel, LLMError

__all__ = ["Agent", "Debate", "DebateConfig", "DebateFailed", "LIMITS", "PHASE_TASK", "PROMPT_VERSION", "Step",
           "default_names", "score", "score_with"]

# Hard bounds of a debate (docs/arena.md, "Limits"); DebateConfig rejects anything outside them.
LIMITS = {
    "rounds": 50,            # rounds per debate
    "max_repairs": 5,        # repair turns per answer
    "max_tokens": 32768,     # completion tokens per call
    "temperature": 2.0,      # upper bound (lower bound 0)
    "top_k": 50,             # quoted chunks per prompt
    "participants": 26,      # agents per debate
    "reply_chars": 200_000,  # upper bound of DebateConfig.reply_chars
}


@dataclass
class DebateConfig:
    rounds: int = 3
    max_repairs: int = 2
    closing: str = "joint-draft"
    seed: int = 0
    temperature: float = 0.0
    max_tokens: int = 900
    use_schema: bool = True
    top_k: int = 5
    reference_chars: int | None = None   # truncate each quoted chunk (None: whole chunk)
    history_chars: int = 300             # justification/critique excerpt length in the history
    text_limit: int = 600                # maxLength of justification/critique in the schema
    reply_chars: int = 20_000            # a reply is kept (transcript) up to this many characters
    repair_echo_chars: int = 2_000       # how much of an invalid reply a repair prompt quotes back
    share: float = 0.8                   # dialectical closing: share of its ideal each agent must keep
    revisions: int = 3                   # dialectical closing: revision rounds after the finals
    proposal_format: str = "allocation"  # how agents state proposals (fairarena.arena.formats.PROPOSAL_FORMATS)

    def __post_init__(self) -> None:
        def integer(name: str, lo: int, hi: int | None) -> None:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
                raise InputError(name.replace("_", "-"), v, f"an integer from {lo} to {hi}" if hi else f"an integer >= {lo}")

        integer("rounds", 1, LIMITS["rounds"])
        integer("max_repairs", 0, LIMITS["max_repairs"])
        integer("max_tokens", 1, LIMITS["max_tokens"])
        integer("top_k", 1, LIMITS["top_k"])
        integer("seed", 0, None)
        integer("history_chars", 20, 10_000)
        integer("text_limit", 20, 100_000)
        integer("reply_chars", 200, LIMITS["reply_chars"])
        integer("repair_echo_chars", 100, LIMITS["reply_chars"])
        integer("revisions", 0, LIMITS["rounds"])
        sh = self.share
        if isinstance(sh, bool) or not isinstance(sh, (int, float)) or not math.isfinite(sh) or not 0 <= sh <= 1:
            raise InputError("share", sh, "a number from 0 to 1")
        if self.reference_chars is not None:
            integer("reference_chars", 20, None)
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or not 0 <= t <= LIMITS["temperature"]:
            raise InputError("temperature", t, f"a finite number from 0 to {LIMITS['temperature']}")
        if not isinstance(self.use_schema, bool):
            raise InputError("use_schema", self.use_schema, "true or false")
        get_closing_rule(self.closing)
        PROPOSAL_FORMATS.get(self.proposal_format)


Retriever = Callable[[str, int], list[Any]]  # (query, k) -> [RetrievedChunk]


@dataclass
class Agent:
    name: str                        # "A", "B", ... (any short name)
    profile: Profile
    model: ChatModel
    model_spec: str
    negotiator: Negotiator | None = None
    retriever: Retriever | None = None
    rag_note: str | None = None      # why an aligned agent runs without retrieval


def default_names(n: int) -> list[str]:
    """A, B, C, ... (then A2, B2, ... past 26)."""
    return [chr(ord("A") + k % 26) + ("" if k < 26 else str(k // 26 + 1)) for k in range(n)]


class DebateFailed(FairArenaError):
    pass


def _cap(text: str | None, n: int) -> tuple[str | None, int | None]:
    """(text cut to ``n`` characters, original length when cut else None)."""
    if text is None or len(text) <= n:
        return text, None
    return text[:n], len(text)


class Debate:
    def __init__(self, instance: Any, agents: list[Agent], config: DebateConfig,
                 writer: TranscriptWriter | None = None, *, domain: Domain | None = None) -> None:
        from fairarena.domains.protocol import metric_specs

        check_agents(agents)
        domain = default_domain() if domain is None else domain
        check_domain_closing(domain, config.closing)   # e.g. a feasible-set rule on a domain without objectives
        self.instance = instance
        self.domain = domain
        self.problem: AllocationProblem = domain.problem(instance)
        # the per-round summaries' metrics: the domain's (an arena-only domain: the allocation core's)
        scorer = metrics_domain(domain)
        self.metric_keys: tuple[str, ...] = (tuple(metric_specs(scorer)) if callable(getattr(scorer, "metrics", None))
                                             else defined_metrics(self.problem))
        self._rules = callable(getattr(domain, "violations", None))       # the domain's rules beyond capacities
        self.format = PROPOSAL_FORMATS.get(config.proposal_format)
        if self.format.speak is not None:   # scripted negotiators state their allocation in the format
            agents = [replace(a, model=SpokenModel(a.model, self.format, self.problem)) if a.negotiator is not None
                      else a for a in agents]
        self.agents = {a.name: a for a in agents}
        self.names = [a.name for a in agents]
        self.config = config
        self.writer = writer
        self.instance_text = domain.render(instance)
        self.history: list[tuple[int, str, str, Step]] = []   # (round, phase, agent, step)
        self.model_time = 0.0
        self.calls = 0
        self.turns: list[Turn] = []
        self.schema = self.format.schema(self.problem, text_limit=config.text_limit)
        self.decision_schema = self.format.schema(self.problem, text_limit=config.text_limit, decision=True)
        self.budget_notes: list[dict[str, Any]] = []

    # -- history ---------------------------------------------------------------------------------
    def others(self, name: str) -> list[str]:
        return [n for n in self.names if n != name]

    def last_valid(self, name: str) -> Step | None:
        for _, _, who, step in reversed(self.history):
            if who == name and step.proposal.valid:
                return step
        return None

    def last(self, name: str) -> Step | None:
        for _, _, who, step in reversed(self.history):
            if who == name:
                return step
        return None

    # -- prompts ---------------------------------------------------------------------------------
    def retrieval_query(self, agent: Agent) -> str:
        fw = agent.profile.framework or agent.profile.retrieval_framework or ""
        q = self.domain.retrieval_query(self.instance, fw)
        for other in self.others(agent.name):
            step = self.last(other)
            if step is not None:
                q += " " + excerpt(step.proposal.justification + " " + step.proposal.critique,
                                   400 if len(self.names) == 2 else max(80, 400 // (len(self.names) - 1)))
        return q

    def messages(self, agent: Agent, phase: str, t: int, refs: list[Any], extra: str = "", *,
                 history_chars: int | None = None, summary: str | None = None,
                 history: list[tuple[int, str, str, Step]] | None = None) -> list[dict[str, str]]:
        """The prompt (laid out by :func:`fairarena.arena.prompts.build_messages`: stable part first)."""
        return build_messages(self, agent, phase, t, refs, extra, history_chars=history_chars, summary=summary,
                              history=history)

    def fitted_messages(self, agent: Agent, phase: str, t: int, refs: list[Any], extra: str
                        ) -> tuple[list[dict[str, str]], dict[str, Any] | None]:
        """The prompt, shortened to the model's context window when it declares one (see
        :mod:`fairarena.arena.budget`); the second value records what was shortened (None: nothing)."""
        from fairarena.arena.budget import fit_prompt
        return fit_prompt(self, agent, phase, t, refs, extra)

    # -- one ask with repairs --------------------------------------------------------------------
    def ask(self, name: str, phase: str, t: int, *, extra: str = "", draft: np.ndarray | None = None) -> Step:
        agent = self.agents[name]
        refs: list[Any] = []
        if agent.retriever is not None:
            refs = agent.retriever(self.retrieval_query(agent), self.config.top_k)
        if agent.negotiator is not None:
            self._brief(agent.negotiator, name, phase, t, draft)
        msgs, budget = self.fitted_messages(agent, phase, t, refs, extra)
        if budget is not None:
            refs = refs[: budget.get("references", len(refs))]
        schema = (self.decision_schema if phase == "decide" else self.schema) if self.config.use_schema else None
        cfg = self.config
        for attempt in range(cfg.max_repairs + 1):
            seed = cfg.seed * 1_000_003 + self.calls
            self.calls += 1
            t0 = time.perf_counter()
            try:
                resp = agent.model.chat(msgs, seed=seed % (2**31), temperature=cfg.temperature,
                                        max_tokens=cfg.max_tokens, schema=schema)
            except LLMError as exc:
                self.model_time += time.perf_counter() - t0
                self._record(Turn(name, agent.profile.name, phase, t, attempt, msgs, None, None, [], False, None,
                                  [c.to_dict() for c in refs], agent.rag_note, {}, 0.0, False,
                                  f"{type(exc).__name__}: {exc}", budget=budget))
                raise DebateFailed(f"agent {name} ({agent.model_spec}) failed in {phase} {t}: {exc}") from exc
            self.model_time += time.perf_counter() - t0
            text = resp.text if isinstance(resp.text, str) else str(resp.text)
            parsed = self.validated(self.format.parse(text, self.problem))
            metrics = self.score(parsed.allocation) if parsed.allocation is not None else None
            usage = {"prompt_tokens": resp.usage.prompt_tokens, "completion_tokens": resp.usage.completion_tokens,
                     "estimated": resp.usage.estimated, "attempts": resp.attempts, "json_mode": resp.json_mode,
                     "finish_reason": resp.finish_reason}
            if getattr(resp.usage, "cached_tokens", None) is not None:   # the server's prefix-cache reuse
                usage["cached_tokens"] = resp.usage.cached_tokens
            if resp.usage.cached_tokens is not None:   # the server's prefix-cache reuse, when it reports it
                usage["cached_tokens"] = resp.usage.cached_tokens
            raw, raw_chars = _cap(text, cfg.reply_chars)
            cuts = {k: _cap(getattr(parsed, k), cfg.reply_chars) for k in ("justification", "critique")}
            if any(n is not None for _, n in cuts.values()):   # the step (result, closing, prompts) keeps the cut text
                parsed = replace(parsed, **{k: v for k, (v, _) in cuts.items()})
            record = parsed.to_dict()
            for k, (_, cut) in cuts.items():
                if cut is not None:
                    record[k + "_chars"] = cut
            self._record(Turn(name, agent.profile.name, phase, t, attempt, msgs, raw, record,
                              list(parsed.violations), parsed.valid, metrics, [c.to_dict() for c in refs],
                              agent.rag_note, usage, resp.latency_s, resp.cached, raw_chars=raw_chars, budget=budget))
            accepted = phase == "decide" and parsed.accept is True  # accepting needs no allocation of its own
            if parsed.valid or accepted or attempt == cfg.max_repairs:
                return Step(parsed, metrics, attempt, self.metric_keys)
            echo = excerpt(text, cfg.repair_echo_chars) if len(text) > cfg.repair_echo_chars else text
            feedback = ("Your proposal is invalid:\n" + "\n".join(f"- {escape(v)}" for v in parsed.violations[:20])
                        + (f"\n- ... and {len(parsed.violations) - 20} more" if len(parsed.violations) > 20 else "")
                        + ("" if echo is text else f"\n(Your reply had {len(text)} characters; it is quoted back cut to "
                                                   f"{cfg.repair_echo_chars}.)")
                        + ("\nYour reply was cut off at the token limit: write amounts with at most 2 decimals and keep "
                           "the justification and critique short." if resp.finish_reason == "length" else "")
                        + "\nReturn a corrected JSON object (same format) that fixes every violation.")
            msgs = self._repair_messages(agent, msgs, echo, feedback)
        raise AssertionError("unreachable")  # pragma: no cover

    def score(self, x: np.ndarray) -> dict[str, Any]:
        """The metrics of one allocation on this debate's instance (:func:`score_with`)."""
        return score_with(self.domain, self.instance, self.problem, x)

    def validated(self, parsed: ParsedProposal) -> ParsedProposal:
        """``parsed`` with the domain's own rules applied (its ``violations``, when it has them): a proposal
        within capacities that breaks them is invalid, with the domain's messages as violations."""
        if not self._rules or parsed.allocation is None or parsed.violations:
            return parsed
        bad = [str(v) for v in self.domain.violations(self.instance, parsed.allocation)]
        return replace(parsed, violations=bad) if bad else parsed

    def _repair_messages(self, agent: Agent, msgs: list[dict[str, str]], echo: str, feedback: str
                         ) -> list[dict[str, str]]:
        """The prompt plus the quoted invalid reply and the feedback; when the model declares a context
        window and that does not fit, the quoted reply is cut to 200 characters, then left out."""
        from fairarena.llm.base import count_tokens, max_prompt_tokens

        out = msgs + [{"role": "assistant", "content": echo}, {"role": "user", "content": feedback}]
        limit = max_prompt_tokens(agent.model, self.config.max_tokens)
        if limit is None or count_tokens(agent.model, out) <= limit:
            return out
        short = msgs + [{"role": "assistant", "content": excerpt(echo, 200)}, {"role": "user", "content": feedback}]
        if count_tokens(agent.model, short) <= limit:
            return short
        return msgs + [{"role": "user", "content": "Your previous reply is not repeated here (context limit). " + feedback}]

    def _brief(self, negotiator: Negotiator, name: str, phase: str, t: int, draft: np.ndarray | None) -> None:
        """Tell a scripted negotiator what it may know: the others' profiles, their latest valid proposals
        and violations, and every valid final."""
        others = self.others(name)
        valid = {o: s.allocation for o in others if (s := self.last_valid(o)) is not None}
        violations = {o: list(s.proposal.violations) for o in others if (s := self.last(o)) is not None}
        finals = {who: s.allocation for _, ph, who, s in self.history
                  if ph == "final" and s.proposal.valid and s.allocation is not None}
        own_final = finals.get(name)
        st = negotiator.state
        st.phase, st.round, st.rounds = phase, t, self.config.rounds
        st.name = name
        st.others_profiles = {o: self.agents[o].profile for o in others}   # common knowledge of types
        st.finals = finals
        st.others_last = valid
        st.others_violations = violations
        st.partner_last = valid.get(others[0]) if len(others) == 1 else None
        st.partner_violations = violations.get(others[0], []) if len(others) == 1 else []
        st.own_final, st.draft = own_final, draft

    def _record(self, turn: Turn) -> None:
        self.turns.append(turn)
        if self.writer is not None:
            self.writer.write(turn)

    # -- the protocol ----------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        rounds: list[dict[str, Any]] = []
        for t in range(1, self.config.rounds + 1):
            row: dict[str, Any] = {"round": t}
            for name in self.names:
                step = self.ask(name, "round", t)
                self.history.append((t, "round", name, step))
                row[name] = step.summary()
            rounds.append(row)
        finals: dict[str, Step] = {}
        for name in self.names:
            step = self.ask(name, "final", self.config.rounds)
            self.history.append((self.config.rounds, "final", name, step))
            finals[name] = step
        rule = get_closing_rule(self.config.closing)

        def closing_ask(name: str, phase: str, *, extra: str = "", draft: np.ndarray | None = None) -> Step:
            if name not in self.agents or phase not in ("draft", "decide", "revise"):
                raise InputError("closing", f"{name}/{phase}", "a participant asked in phase draft, decide or revise")
            step = self.ask(name, phase, self.config.rounds, extra=extra, draft=draft)
            self.history.append((self.config.rounds, phase, name, step))
            return step

        ctx = ClosingContext(self.problem, list(self.names), dict(finals), closing_ask, self.config.rounds,
                             objectives={n: participant_objective(a.profile) for n, a in self.agents.items()},
                             seed=self.config.seed,
                             options={"share": self.config.share, "revisions": self.config.revisions},
                             domain=self.domain, instance=self.instance,
                             profiles={n: a.profile for n, a in self.agents.items()})
        decision = decide(rule, ctx)
        joint = self.close(rule.name, decision.allocation, decision.note, decision.details)
        return {"rounds": rounds, "finals": finals, "joint": joint}

    def close(self, rule: str, x: np.ndarray | None, note: str, details: dict[str, Any] | None = None) -> Closing:
        if x is None:
            c = Closing(rule, None, None, False, ["no joint allocation: " + note], note, details=details)
        else:
            m = self.score(x)
            c = Closing(rule, allocation_to_mapping(self.problem, x), m, bool(m["feasible"]), list(m["violations"]), note,
                        details=details)
        if self.writer is not None:
            self.writer.write(c)
        return c


def check_agents(agents: list[Agent]) -> None:
    """Two or more participants with distinct, short names."""
    import re

    if not isinstance(agents, (list, tuple)) or not 2 <= len(agents) <= LIMITS["participants"]:
        raise InputError("agent", len(agents) if isinstance(agents, (list, tuple)) else agents,
                         f"2 to {LIMITS['participants']} participants")
    names = [a.name for a in agents]
    for n in names:
        if not isinstance(n, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,31}", n):
            raise InputError("agent", n, "a name of letters, digits, '-' or '_' (at most 32, starting with a letter)")
    if len(set(names)) != len(names):
        raise InputError("agent", ", ".join(names), "distinct participant names")


# -- compatibility: the names this module exported before the split ------------------------------------
def render_cohort(cohort: Any) -> str:
    """The cohort as agents see it (the default domain's rendering)."""
    return default_domain().render(cohort)

