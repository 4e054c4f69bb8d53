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

from fairarena.allocation.problem import AllocationProblem
from fairarena.arena.prompts import compact_allocation, escape
from fairarena.arena.step import Step
from fairarena.registry import Registry


@dataclass
class Decision:
    allocation: np.ndarray | None
    note: str


@dataclass
class ClosingContext:
    """What a closing rule sees: the problem, the participants in speaking order, every final (valid or
    not), and ``ask(name, phase, extra=..., draft=...) -> Step`` to put one more question to a participant
    (phases ``draft`` and ``decide``; the protocol records the turn)."""

    problem: AllocationProblem
    names: list[str]
    finals: dict[str, Step]
    ask: Callable[..., Step] = field(repr=False)
    rounds: int = 1

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
            return Decision(f(ctx.problem, list(valid.values())), note)

        CLOSING_RULES.add(name, ClosingRule(name, rule, description, False), description=description,
                          interactive=False)
        return f
    return deco


def closing_rules() -> dict[str, str]:
    return {k: r.description for k, r in CLOSING_RULES.items()}


def get_closing_rule(name: str) -> ClosingRule:
    return CLOSING_RULES.get(name)


def decide(rule: ClosingRule, ctx: ClosingContext) -> Decision:
    out = rule.func(ctx)
    return out if isinstance(out, Decision) else Decision(*out)


def repair_to_feasible(problem: AllocationProblem, x: np.ndarray) -> np.ndarray:
    """Smallest obvious fix of a non-negative allocation: indivisible amounts rounded down, whole units
    left over handed out by largest fractional remainder (ties: patient order) within need; divisible
    resources scaled down proportionally where they exceed capacity."""
    x = np.maximum(np.asarray(x, dtype=float), 0.0).copy()
    for r in range(problem.n_resources):
        col = x[:, r]
        if problem.indivisible[r]:
            base = np.floor(col + 1e-9)
            while base.sum() > problem.capacity[r]:
                base[int(np.argmax(base))] -= 1
            left = int(round(problem.capacity[r] - base.sum()))
            order = sorted(range(problem.n), key=lambda i: (-(col[i] - base[i]), i))
            for i in order:
                if left <= 0 or col[i] - base[i] <= 1e-9:
                    break
                base[i] += 1
                left -= 1
            x[:, r] = base
        elif col.sum() > problem.capacity[r]:
            x[:, r] = col * (problem.capacity[r] / col.sum())
    return x


@register_mechanism("mean-repair", "coordinate-wise mean of the valid finals, repaired to feasibility")
def mean_repair(problem: AllocationProblem, allocations: list[np.ndarray]) -> np.ndarray:
    return repair_to_feasible(problem, np.mean(np.stack(allocations), axis=0))


@register_closing_rule("joint-draft", "the first agent drafts the joint allocation; each other agent in turn accepts it "
                                      "or amends it once (a valid amendment becomes the draft)")
def joint_draft(ctx: ClosingContext) -> Decision:
    drafter = ctx.names[0]
    draft = ctx.ask(drafter, "draft")
    cur, cur_valid, cur_by = draft.allocation, draft.proposal.valid, drafter
    cur_map, cur_just, cur_viol = draft.proposal.mapping, draft.proposal.justification, draft.proposal.violations
    notes: list[str] = []
    for name in ctx.names[1:]:
        shown = "The draft is valid." if cur_valid else f"The draft is INVALID: {'; '.join(cur_viol[:5])}."
        extra = (f"Draft by agent {cur_by}: allocation {compact_allocation(cur_map)}\n{escape(shown)}\n"
                 f"Justification: {escape(cur_just)}")
        p = ctx.ask(name, "decide", extra=extra, draft=cur if cur_valid else None).proposal
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
    return Decision(cur, "; ".join(notes))
