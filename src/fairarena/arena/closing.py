"""Closing rules: how the two final allocations become one joint recommendation.

A registry, so the aggregation issue can add social-choice rules. Two kinds of entries:

* interactive rules get a :class:`ClosingContext` (they may ask the agents), e.g. ``joint-draft``;
* mechanisms are plain functions ``(problem, [allocations]) -> allocation`` registered with
  :func:`register_mechanism`, e.g. ``mean-repair``. They receive the *valid* finals only.

Every rule returns ``(allocation or None, note)``. The arena scores and validates the result; a rule
may return an infeasible allocation, which is then recorded as such — never silently fixed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from fairarena.allocation.problem import AllocationProblem
from fairarena.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from fairarena.arena.protocol import Debate, Step


@dataclass
class ClosingContext:
    debate: "Debate"
    finals: dict[str, "Step"]

    @property
    def problem(self) -> AllocationProblem:
        return self.debate.problem


@dataclass(frozen=True)
class ClosingRule:
    name: str
    func: Callable[[ClosingContext], tuple[np.ndarray | None, str]]
    description: str
    interactive: bool


_RULES: dict[str, ClosingRule] = {}


def register_closing_rule(name: str, description: str, *, interactive: bool = True) -> Callable[..., Any]:
    def deco(func: Callable[[ClosingContext], tuple[np.ndarray | None, str]]) -> Callable[..., Any]:
        _RULES[name] = ClosingRule(name, func, description, interactive)
        return func
    return deco


def register_mechanism(name: str, description: str) -> Callable[..., Any]:
    """Register ``f(problem, allocations) -> allocation`` as a closing rule over the valid finals."""
    def deco(f: Callable[[AllocationProblem, list[np.ndarray]], np.ndarray]) -> Callable[..., Any]:
        def rule(ctx: ClosingContext) -> tuple[np.ndarray | None, str]:
            valid = [s.allocation for s in ctx.finals.values() if s.proposal.valid and s.allocation is not None]
            if not valid:
                return None, "no valid final allocation to aggregate"
            skipped = [k for k, s in ctx.finals.items() if not s.proposal.valid]
            note = f"aggregated {len(valid)} valid final(s)" + (f"; skipped invalid {', '.join(skipped)}" if skipped else "")
            return f(ctx.problem, valid), note
        _RULES[name] = ClosingRule(name, rule, description, False)
        return f
    return deco


def closing_rules() -> dict[str, str]:
    return {k: r.description for k, r in _RULES.items()}


def get_closing_rule(name: str) -> ClosingRule:
    if name not in _RULES:
        raise InputError("closing", name, f"one of {', '.join(_RULES)}")
    return _RULES[name]


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


@register_closing_rule("joint-draft", "agent A drafts the joint allocation; agent B accepts it or amends it once")
def joint_draft(ctx: ClosingContext) -> tuple[np.ndarray | None, str]:
    d = ctx.debate
    draft = d.ask("A", "draft", d.config.rounds)
    d.history.append((d.config.rounds, "draft", "A", draft))
    if not draft.proposal.valid:
        shown = f"The draft is INVALID: {'; '.join(draft.proposal.violations[:5])}."
    else:
        shown = "The draft is valid."
    from fairarena.arena.protocol import _compact
    extra = (f"Draft by agent A: allocation {_compact(draft.proposal.mapping)}\n{shown}\n"
             f"Justification: {draft.proposal.justification}")
    decision = d.ask("B", "decide", d.config.rounds, extra=extra, draft=draft.allocation if draft.proposal.valid else None)
    d.history.append((d.config.rounds, "decide", "B", decision))
    p = decision.proposal
    if p.accept is True:
        return draft.allocation, "B accepted A's draft" + ("" if draft.proposal.valid else " (the draft is invalid)")
    if p.valid:
        return p.allocation, "B amended A's draft"
    if draft.allocation is not None:
        return draft.allocation, "B's amendment was invalid; A's draft stands"
    return p.allocation, "A's draft had no allocation; B's amendment stands"
