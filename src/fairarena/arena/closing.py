"""Closing rules: how the participants' final allocations become one joint recommendation.

Two registries (:class:`fairarena.registry.Registry`), so the aggregation work can add social-choice
rules without touching the protocol:

* :data:`CLOSING_RULES` — every rule the ``--closing`` option accepts. An interactive rule is a function
  ``rule(ctx: ClosingContext) -> Decision``; it may ask participants through ``ctx.ask`` (the protocol
  records those turns), e.g. ``joint-draft``.
* :data:`MECHANISMS` — plain functions ``(problem, [allocations]) -> allocation``, registered with
  :func:`register_mechanism` (which also registers them as a closing rule over the *valid* finals),
  e.g. ``mean-repair``.

A rule receives the finals, never the debate: it cannot write into the debate's history. It returns a
:class:`Decision` (an allocation or None, and a note). The arena scores and validates the decision; an
infeasible decision is recorded as such — never silently fixed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from fairarena.aggregation.repair import mean_repair as _aggregation_mean_repair
from fairarena.aggregation.repair import repair_to_feasible  # noqa: F401  (the one repair; re-exported)
from fairarena.allocation.problem import AllocationProblem
from fairarena.arena.prompts import draft_text, escape
from fairarena.arena.step import Step
from fairarena.errors import InputError
from fairarena.registry import Registry


@dataclass
class Decision:
    allocation: np.ndarray | None
    note: str
    details: dict[str, Any] | None = None   # structured record for the transcript (e.g. the dialectical rounds)


@dataclass
class ClosingContext:
    """What a closing rule sees: the problem, the participants in speaking order, every final (valid or
    not), and ``ask(name, phase, extra=..., draft=...) -> Step`` to put one more question to a participant
    (phases ``draft``, ``decide`` and ``revise``; the protocol records the turn). ``objectives`` gives each
    participant's objective for the aggregation rules (:func:`participant_objective`). ``domain``,
    ``instance`` and ``profiles`` (participant -> arena profile) let the domain score the participants by
    its own utilities (:meth:`profile_hook`: its ``closing_profile``, else its participants' ``value`` for
    debaters aligned to them); without a domain the objectives alone."""

    problem: AllocationProblem
    names: list[str]
    finals: dict[str, Step]
    ask: Callable[..., Step] = field(repr=False)
    rounds: int = 1
    objectives: dict[str, str | None] = field(default_factory=dict)  # participant -> objective (None: none)
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)           # e.g. share, revisions (dialectical)
    domain: Any = None                                               # the debate's domain adapter
    instance: Any = None                                             # the instance behind ``problem``
    profiles: dict[str, Any] = field(default_factory=dict)           # participant -> arena Profile

    def profile_hook(self) -> Callable[..., tuple[Any, list[str]]] | None:
        """How this debate's aggregation closings score the participants by the domain's own utilities:
        the domain's ``closing_profile``; else, when a debater speaks for one of the domain's participants
        (``aligned:<participant>`` on a domain other than the default one, the kit's optimum agents),
        :func:`fairarena.aggregation.council.finals_profile` (the participants' ``value``); else None: the
        debaters' allocation objectives (:func:`participant_objective`, triage's frameworks)."""
        hook = getattr(self.domain, "closing_profile", None)
        if hook is not None or self.domain is None:
            return hook
        if not any(getattr(self.profiles.get(n), "participant", None) for n in self.names):
            return None
        from fairarena.aggregation.council import finals_profile

        return lambda instance, debaters, finals: finals_profile(self.domain, instance, debaters, finals)

    def domain_profile(self, positions: dict[str, np.ndarray]) -> tuple[Any, list[str]] | None:
        """The domain's candidate profile of ``positions`` (participant -> allocation) by
        :meth:`profile_hook`; None when the debaters' objectives score them instead (triage)."""
        hook = self.profile_hook()
        if hook is None:
            return None
        return hook(self.instance, {n: self.profiles.get(n) for n in self.names}, dict(positions))

    @property
    def valid_finals(self) -> dict[str, np.ndarray]:
        return {k: s.allocation for k, s in self.finals.items() if s.proposal.valid and s.allocation is not None}


@dataclass(frozen=True)
class ClosingRule:
    name: str
    func: Callable[[ClosingContext], Decision]
    description: str
    interactive: bool


CLOSING_RULES: Registry[ClosingRule] = Registry("closing rule", field="closing")
MECHANISMS: Registry[Callable[[AllocationProblem, list[np.ndarray]], np.ndarray]] = Registry("mechanism")


def register_closing_rule(name: str, description: str, *, interactive: bool = True) -> Callable[..., Any]:
    """Register ``rule(ctx) -> Decision`` (a ``(allocation, note)`` tuple is accepted too)."""
    def deco(func: Callable[[ClosingContext], Any]) -> Callable[..., Any]:
        CLOSING_RULES.add(name, ClosingRule(name, func, description, interactive), description=description,
                          interactive=interactive)
        return func
    return deco


def register_mechanism(name: str, description: str) -> Callable[..., Any]:
    """Register ``f(problem, allocations) -> allocation`` as a mechanism and as a closing rule over the
    valid finals."""
    def deco(f: Callable[[AllocationProblem, list[np.ndarray]], np.ndarray]) -> Callable[..., Any]:
        MECHANISMS.add(name, f, description=description)

        def rule(ctx: ClosingContext) -> Decision:
            valid = ctx.valid_finals
            if not valid:
                return Decision(None, "no valid final allocation to aggregate")
            skipped = [k for k in ctx.finals if k not in valid]
            note = f"aggregated {len(valid)} valid final(s)" + (f"; skipped invalid {', '.join(skipped)}" if skipped else "")
            x = f(ctx.problem, list(valid.values()))
            fix = getattr(ctx.domain, "repair", None)   # optional: the domain's rules beyond capacities
            if callable(fix) and ctx.instance is not None:
                y = np.asarray(fix(ctx.instance, x), dtype=float)
                if not np.array_equal(y, np.asarray(x, dtype=float)):
                    note += f"; repaired to the {getattr(ctx.domain, 'name', 'domain')} domain's rules (its repair)"
                x = y
            return Decision(x, note)

        CLOSING_RULES.add(name, ClosingRule(name, rule, description, False), description=description,
                          interactive=False)
        return f
    return deco


def closing_rules() -> dict[str, str]:
    _register_aggregation_rules()
    return {k: r.description for k, r in CLOSING_RULES.items()}


def get_closing_rule(name: str) -> ClosingRule:
    if name not in CLOSING_RULES:
        _register_aggregation_rules()   # an aggregation rule registered since import
    return CLOSING_RULES.get(name)


def check_domain_closing(domain: Any, name: str, field_name: str = "closing") -> str:
    """``name`` when the closing can decide a debate of ``domain``; else InputError naming ``field_name``
    (before any work): a domain that scores participants by its own utilities (``closing_profile``, e.g.
    tourism) can be closed only by the arena's own closings and the candidate-set aggregation rules, since
    the feasible-set and repair rules optimise or score allocation objectives it does not have."""
    rule = get_closing_rule(name)
    if getattr(domain, "closing_profile", None) is None or CLOSING_RULES.entry(name).meta.get("source") != "aggregation":
        return rule.name
    from fairarena.aggregation.rules import RULES

    kind = RULES.entry(name).kind
    if kind != "candidates":
        allowed = [n for n in CLOSING_RULES if CLOSING_RULES.entry(n).meta.get("source") != "aggregation"
                   or RULES.entry(n).kind == "candidates"]
        raise InputError(field_name, name, f"one of {', '.join(allowed)} (a {kind} rule needs allocation objectives; "
                                           f"the {getattr(domain, 'name', '?')} domain scores participants by its own utilities)")
    return rule.name


def decide(rule: ClosingRule, ctx: ClosingContext) -> Decision:
    out = rule.func(ctx)
    return out if isinstance(out, Decision) else Decision(*out)


@register_mechanism("mean-repair", "coordinate-wise mean of the valid finals, repaired to feasibility")
def mean_repair(problem: AllocationProblem, allocations: list[np.ndarray]) -> np.ndarray:
    return _aggregation_mean_repair(problem, allocations)


@register_closing_rule("joint-draft", "the first agent drafts the joint allocation; each other agent in turn accepts it "
                                      "or amends it once (a valid amendment becomes the draft); the record keeps "
                                      "every draft's and decision's justification (how the joint was formed)")
def joint_draft(ctx: ClosingContext) -> Decision:
    drafter = ctx.names[0]
    draft = ctx.ask(drafter, "draft")
    cur, cur_valid, cur_by = draft.allocation, draft.proposal.valid, drafter
    cur_map, cur_just, cur_viol = draft.proposal.mapping, draft.proposal.justification, draft.proposal.violations
    notes: list[str] = []
    steps = [{"agent": drafter, "phase": "draft", "valid": bool(cur_valid), "justification": cur_just}]
    for name in ctx.names[1:]:
        extra = draft_text(cur_by, cur_map, cur_valid, cur_viol, cur_just)   # quoted bounded, single-line
        p = ctx.ask(name, "decide", extra=extra, draft=cur if cur_valid else None).proposal
        steps.append({"agent": name, "phase": "decide", "accept": p.accept is True, "valid": bool(p.valid),
                      "justification": p.justification})
        if p.accept is True:
            notes.append(f"{name} accepted {cur_by}'s draft" + ("" if cur_valid else " (the draft is invalid)"))
        elif p.valid:
            notes.append(f"{name} amended {cur_by}'s draft")
            cur, cur_valid, cur_by, cur_map, cur_just, cur_viol = p.allocation, True, name, p.mapping, p.justification, []
        elif cur is not None:
            notes.append(f"{name}'s amendment was invalid; {cur_by}'s draft stands")
        else:
            notes.append(f"{cur_by}'s draft had no allocation; {name}'s amendment stands")
            cur, cur_valid, cur_by = p.allocation, False, name
            cur_map, cur_just, cur_viol = p.mapping, p.justification, p.violations
    how = f"{cur_by}'s draft stands" + (f": {cur_just}" if cur_just else "")
    return Decision(cur, "; ".join(notes), {"final_draft_by": cur_by, "how": how, "steps": steps})


# -- the aggregation rules as closing mechanisms --------------------------------------------------------
#: The objective a participant is scored by when an aggregation rule closes the debate (and when the
#: dialectical protocol checks acceptance). Aligned agents: their framework. A baseline agent has no
#: framework; it is told to produce good feasible allocations, and the nearest registered objective is the
#: total expected survival gain, so it gets ``utilitarian``. Adversarial participants get none: their
#: biased welfare is not a registered objective, and a rule meant to be fair should not weigh a bias as a
#: stakeholder; they do not vote, but their valid final stays a candidate (the alternative, giving them
#: the utilitarian objective too, is ``non_aligned={"adversarial": "utilitarian", ...}``).
NON_ALIGNED_OBJECTIVES: dict[str, str | None] = {"baseline": "utilitarian", "adversarial": None,
                                                 "adversarial-rag": None}


def participant_objective(profile: Any, non_aligned: dict[str, str | None] | None = None) -> str | None:
    """The objective of a participant's profile (see :data:`NON_ALIGNED_OBJECTIVES`)."""
    if profile.kind == "aligned":
        return profile.framework
    return (NON_ALIGNED_OBJECTIVES if non_aligned is None else non_aligned).get(profile.kind)


def _voters(ctx: ClosingContext) -> tuple[list[str], dict[str, np.ndarray], list[str]]:
    """(voters: participants with a valid final and an objective, in speaking order; extra candidates:
    valid finals of participants without an objective; notes on who was left out and why)."""
    valid = ctx.valid_finals
    voters = [n for n in ctx.names if n in valid and ctx.objectives.get(n)]
    extra = {n: valid[n] for n in ctx.names if n in valid and not ctx.objectives.get(n)}
    notes = []
    if invalid := [n for n in ctx.names if n not in valid]:
        notes.append(f"left out invalid final(s) of {', '.join(invalid)}")
    if extra:
        notes.append(f"{', '.join(extra)} (no objective) do not vote; their final(s) stay candidates")
    return voters, extra, notes


def aggregation_profile(ctx: ClosingContext) -> tuple[Any, list[str]]:
    """The aggregation :class:`~fairarena.aggregation.rules.Profile` of the debate's valid finals: one
    agent per voter (objective = :func:`participant_objective`, proposal = its final), the finals of
    participants without an objective as extra candidates. None when fewer than two voters.

    When the debate's domain defines ``closing_profile`` (e.g. tourism), the domain's candidate profile of
    the valid finals instead (its voters, its utilities; only candidate-set rules apply)."""
    from fairarena.aggregation.rules import Agent as AggAgent, Profile as AggProfile

    own = ctx.domain_profile(ctx.valid_finals)
    if own is not None:
        profile, dnotes = own
        invalid = [n for n in ctx.names if n not in ctx.valid_finals]
        return profile, ([f"left out invalid final(s) of {', '.join(invalid)}"] if invalid else []) + list(dnotes)
    voters, extra, notes = _voters(ctx)
    if len(voters) < 2:
        return None, notes + [f"{len(voters)} participant(s) with a valid final and an objective; a rule needs two"]
    valid = ctx.valid_finals
    agents = [AggAgent(n, str(ctx.objectives[n]), valid[n]) for n in voters]
    return AggProfile.from_proposals(ctx.problem, agents, extra=extra), notes


def _aggregation_closing(rule_name: str) -> Callable[[ClosingContext], Decision]:
    def rule(ctx: ClosingContext) -> Decision:
        from fairarena.aggregation.rules import RULES, aggregate

        kind = RULES.entry(rule_name).kind
        if kind != "candidates" and ctx.profile_hook() is not None:
            return Decision(None, f"rule {rule_name} ({kind}) needs allocation objectives; the {ctx.domain.name} "
                                  "domain scores participants by its own utilities, so only candidate-set rules close it")
        profile, notes = aggregation_profile(ctx)
        if profile is None:
            return Decision(None, "; ".join(notes))
        try:
            d = aggregate(profile, rule_name, seed=ctx.seed)
        except InputError as exc:   # e.g. a feasible-set rule refusing an objective: recorded, not raised
            return Decision(None, f"rule {rule_name} refused the profile: {exc}")
        x = d.drawn_allocation(profile)   # a lottery closes on its seeded draw (the expectation may be fractional)
        voters = ", ".join(f"{a.name} ({a.objective})" for a in profile.agents)
        note = f"{rule_name} over the valid finals; voters {voters}; {d.note}" + "".join(f"; {n}" for n in notes)
        details = {"rule": rule_name, "kind": d.kind, "voters": {a.name: a.objective for a in profile.agents},
                   "candidates": list(profile.candidates), "winner": d.winner, "lottery": d.lottery, "draw": d.draw,
                   "utilities": {a.name: float(u) for a, u in zip(profile.agents, d.utilities)}}
        return Decision(x, note, details)
    return rule


def _register_aggregation_rules() -> None:
    """Every rule of the aggregation registry (:data:`fairarena.aggregation.rules.RULES`, the rules' one home)
    as a closing over the valid finals. Called at import and again whenever a closing name is looked up or the
    closings are listed, so a rule registered later (a plug-in's) is a closing too: this registry is a view."""
    from fairarena.aggregation.rules import RULES

    for name in RULES:
        if name in CLOSING_RULES:
            continue
        entry = RULES.entry(name)
        desc = f"aggregation rule {name}: {entry.description} (over the valid finals; docs/aggregation.md)"
        CLOSING_RULES.add(name, ClosingRule(name, _aggregation_closing(name), desc, False), description=desc,
                          interactive=False, source="aggregation", citation=entry.citation)


_register_aggregation_rules()


# -- the dialectical protocol ---------------------------------------------------------------------------
DIALECTICAL_SHARE = 0.8      # default share of its own ideal each agent must keep in the others' positions
DIALECTICAL_REVISIONS = 3    # default revision rounds after the finals


def _cnss_distance(problem: AllocationProblem, xs: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """Mean absolute difference of need satisfaction per patient between two positions (0: the patients
    are served alike; 1: opposite)."""
    from fairarena.allocation.metrics import need_satisfaction

    c = {k: need_satisfaction(problem, x) for k, x in xs.items()}
    return {a: {b: float(np.mean(np.abs(c[a] - c[b]))) for b in c if b != a} for a in c}


def dialectical_state(ctx: ClosingContext, positions: dict[str, np.ndarray], share: float) -> dict[str, Any]:
    """Each checked participant's normalised utility (1 = its ideal over the feasible set) of every
    position, whether everyone keeps at least ``share`` in every other participant's position, and how far
    apart the positions are. With a domain that defines ``closing_profile`` the checked participants are
    its voters and the utilities its own (a position it leaves out is worth 0 to everyone)."""
    from fairarena.aggregation.objectives import utilities

    names = [n for n in ctx.names if n in positions]
    own = ctx.domain_profile({n: positions[n] for n in names})
    if own is None:
        checked = [n for n in names if ctx.objectives.get(n)]
        X = np.stack([positions[n] for n in names])
        U = utilities(ctx.problem, [str(ctx.objectives[n]) for n in checked], X, "range") if checked else np.zeros((0, len(names)))
        util = {a: {b: float(U[i, j]) for j, b in enumerate(names)} for i, a in enumerate(checked)}
    else:   # the domain's utilities; a position the domain leaves out is worth 0 to every participant
        prof = own[0]
        checked = [] if prof is None else [a.name for a in prof.agents]
        col = {} if prof is None else {c: j for j, c in enumerate(prof.candidates)}
        util = {a: {b: float(prof.U[i, col[b]]) if b in col else 0.0 for b in names} for i, a in enumerate(checked)}
    worst = {a: min((util[a][b] for b in names if b != a), default=1.0) for a in checked}
    identical = all(np.allclose(positions[names[0]], positions[n]) for n in names[1:])
    dist = _cnss_distance(ctx.problem, {n: positions[n] for n in names})
    return {"utilities": util, "worst_accepted": worst,
            "compatible": bool(checked) and all(w >= share - 1e-9 for w in worst.values()),
            "identical": bool(identical),
            "max_distance": max((d for row in dist.values() for d in row.values()), default=0.0),
            "distances": dist}


@register_closing_rule("dialectical", "agents revise their positions until they are compatible but not identical: each "
                                      "keeps at least a stated share (--share, default 0.8) of its own ideal in every "
                                      "other agent's position, or the revision limit (--revisions) is reached; the joint "
                                      "decision is the position best for the worst-off agent")
def dialectical(ctx: ClosingContext) -> Decision:
    share = float(ctx.options.get("share", DIALECTICAL_SHARE))
    limit = int(ctx.options.get("revisions", DIALECTICAL_REVISIONS))
    positions = dict(ctx.valid_finals)
    if len(positions) < 2:
        return Decision(None, "dialectical closing needs two valid finals")
    rounds: list[dict[str, Any]] = []
    state = dialectical_state(ctx, positions, share)
    checked = list(state["utilities"])   # participants with an objective (or the domain's voters)
    rounds.append({"revision": 0, "revised": [], **state})
    k = 0
    while not state["compatible"] and k < limit:
        k += 1
        # who revises: every participant whose position some other (checked) participant does not accept
        movers = [n for n in ctx.names if n in positions
                  and any(state["utilities"][a][n] < share - 1e-9 for a in checked if a != n)]
        for name in movers:
            rejecters = [a for a in checked if a != name and state["utilities"][a][name] < share - 1e-9]
            extra = (f"Revision {k} of at most {limit}. Each agent should keep at least {share:.0%} of its own ideal in "
                     f"every other agent's position. Your position leaves "
                     + escape(", ".join(f"{a} {state['utilities'][a][name]:.0%}" for a in rejecters))
                     + " of their ideal. Revise your position towards the others' without giving up your framework; "
                       "positions may stay different.")
            step = ctx.ask(name, "revise", extra=extra)
            if step.proposal.valid and step.allocation is not None:
                positions[name] = step.allocation
        state = dialectical_state(ctx, positions, share)
        checked = list(state["utilities"])
        rounds.append({"revision": k, "revised": movers, **state})
    names = [n for n in ctx.names if n in positions]
    # the joint decision: the position whose worst-off checked participant is best off (speaking order on ties)
    def worst_of(n: str) -> float:
        return min((state["utilities"][a][n] for a in checked), default=0.0)
    joint = max(names, key=lambda n: (worst_of(n), -names.index(n)))
    accepted = bool(checked) and worst_of(joint) >= share - 1e-9
    details = {"share": share, "revisions": k, "limit": limit, "compatible": state["compatible"],
               "identical": state["identical"], "max_distance": state["max_distance"], "joint_position": joint,
               "joint_utilities": {a: state["utilities"][a][joint] for a in checked},
               "accepted_by_all": accepted, "unchecked": [n for n in names if n not in checked], "rounds": rounds}
    note = (f"{'compatible' if state['compatible'] else 'not compatible'} after {k} revision(s) "
            f"(share {share:g}; positions {'identical' if state['identical'] else 'distinct'}, "
            f"max need-satisfaction distance {state['max_distance']:.3f}); joint = {joint}'s position, "
            + ("which every agent accepts (each keeps at least the share)" if accepted else
               f"the best for the worst-off agent ({worst_of(joint):.0%} of its ideal, below the share)"))
    return Decision(positions[joint], note, details)
