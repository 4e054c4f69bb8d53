"""The domain protocol: everything a kind of allocation problem supplies to fairarena, in one place.

A *domain* (hospital triage, tourist visitor flows, school seats, ...) is one object; its *instances*
(a cohort, a destination, a school district) are any objects the domain understands. The generic layers
(the arena, the council, the studies, the conformance kit :func:`fairarena.domains.check`) reach an
instance only through its domain. What a domain supplies:

1. **Instances**: ``sample(seed)`` (the same seed gives the same instance, in any process), ``to_dict`` /
   ``from_dict`` (plain JSON data), and optionally ``save(instance, path)`` / ``load(path)`` and
   ``digest(instance)``; without them :func:`save_instance`, :func:`load_instance` and
   :func:`instance_digest` write the ``to_dict`` JSON and hash its canonical form (sorted keys, no spaces:
   the digest a study's task keys hold).
2. **The allocation problem**: ``problem(instance)`` is a
   :class:`~fairarena.allocation.problem.AllocationProblem` (individuals x resources, capacities, divisible
   or indivisible resources, needs): an allocation is an array ``x (n, R)``, feasible when it is
   non-negative, within every capacity and whole on indivisible resources. A domain with rules beyond
   capacities (every visitor makes one visit per slot, a list has exactly k items) states them with the
   optional ``violations(instance, x) -> list[str]`` (empty: valid); :func:`violations_of` checks both.
3. **Metrics**: ``metrics()`` lists :class:`MetricSpec` (key, label, direction ``"max"`` or ``"min"`` -- the
   one direction vocabulary -- description, optional linear form) and ``evaluate(instance, x)`` gives every
   listed metric of a valid allocation as a float (NaN: undefined for that allocation).
4. **Participants** (frameworks or stakeholders): ``participants(instance)`` lists :class:`Participant`
   (name, kind, objective as signed metric weights); ``value(instance, participant, x)`` is the
   participant's objective (higher is better) and ``optimum(instance, participant)`` the allocation it
   proposes alone (valid). The scripted negotiators, the council's candidates and the payoff-table
   utilities are built from these.
5. **How agents see the instance** (the arena's part, :class:`ArenaDomain`): ``name``, ``item`` (what one
   row is called: "patient"), ``item_id`` (the placeholder in reply formats: "PATIENT_ID"), ``setting``
   (one phrase naming the decision), ``render(instance)`` (the table agents read), ``rules(problem)`` (the
   rules every agent is told) and ``retrieval_query(instance, framework)``; the resource names are the
   problem's ``resources`` and the item names its ``ids``.
6. **How participants are scored for closings and councils** (optional): ``closing_profile(instance,
   participants, finals)`` (the arena's hook: see :class:`ArenaDomain`) and ``council_profile(instance,
   participants)`` (an aggregation profile of the participants over their optima; default
   :func:`fairarena.aggregation.council.candidate_profile`: payoff-table utilities of ``value``, candidate-set
   rules only). ``scripted_agents(instance, participants)`` gives the scripted arena agents that play the
   participants (default :func:`fairarena.arena.optimum.optimum_agents`, which only propose their optima).
7. **Optional hooks**: ``conflict_frontier(instance, metric_x, metric_y, points)`` (the trade-off between
   two metrics over the feasible set), ``analyses()`` (extra named analyses ``name -> callable``) and
   ``study_design(kind)`` (the fields of a small study of ``kind`` -- ``"duel"`` or ``"council"`` -- that the
   study runner would run on this domain; the kit runs it when the runner accepts it).
8. **Studies** (optional; :mod:`fairarena.study` reaches a domain only through these and the members above).
   Without any of them a duel pits the participants two by two and a council puts them all in one debate,
   played by ``scripted_agents``, decided by the candidate-set rules over ``council_profile``; the instances
   are ``sample(seed, **options)`` (the design fields its ``sample`` takes, e.g. ``capacity``), their digest
   :func:`instance_digest`. ``bind(path)`` is the domain bound to a file of instances (a problem file: its
   problem, metrics and participants; a design's ``problem``). ``study_fields`` (a tuple) names which of the
   design fields only some domains read (:data:`fairarena.study.design.DOMAIN_FIELDS`) it reads, so that
   ``study init`` leaves the others out. ``study_instance(seed, **options)`` replaces
   ``sample`` for studies; ``study_presets()`` adds named designs (``fairarena study init --preset``). A
   domain with its own council study supplies ``study_check(design)`` (InputError naming ``study.<field>``),
   ``study_variants(design)`` (the instance variants, the task's ``capacity``), ``study_members(design)``,
   ``study_rules(design)`` (the rules it is compared with by default; with it the domain also checks the
   design's closings and mechanisms), ``study_task_fields(design, variant)`` (its task fields ``pois``,
   ``k``, ``problem``), ``study_key_config(task)`` (what a task key holds of its debate),
   ``study_council(task, rules, models, transcript, cache=, offline=)`` (one task run: the record's outcome
   fields), ``study_rule_rows(task, rules)`` (the rules' rows on a task's instance) and
   ``study_plan_debate(task, standin)`` (``study plan``'s stand-in debate of a language-model council).

:data:`REQUIRED` and :data:`OPTIONAL` name the members; :func:`missing_members` lists what an object
lacks. The protocol classes are :class:`typing.Protocol` types for readers and type checkers: a domain
need not inherit from anything. ``docs/domains.md`` has a complete small domain.

This module imports nothing numerical (the CLI lists domains without numpy).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from fairarena.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from fairarena.allocation.problem import AllocationProblem

__all__ = ["ArenaDomain", "Domain", "MetricSpec", "Participant", "Direction", "DIRECTIONS", "REQUIRED", "OPTIONAL",
           "ARENA_MEMBERS", "missing_members", "instance_digest", "canonical_json", "save_instance", "load_instance",
           "violations_of", "metric_specs", "value_of"]

Direction = Literal["max", "min"]
#: the one direction vocabulary: ``max`` (higher is better) or ``min`` (lower is better)
DIRECTIONS: tuple[str, ...] = ("max", "min")


@dataclass(frozen=True)
class MetricSpec:
    """One metric of a domain's allocations.

    ``linear``, optional: ``linear(instance) -> (coef, const)`` with ``coef`` an ``(n, R)`` array, such that
    the metric of every valid allocation ``x`` is ``(coef * x).sum() + const`` (its MILP form: a solver can
    optimise it over the feasible set); it may return None for an instance on which the metric is not
    linear (e.g. triage's need satisfaction under the indicator form)."""

    key: str
    label: str
    direction: Direction
    description: str = ""
    linear: Callable[[Any], Any] | None = field(default=None, compare=False, repr=False)

    def better(self, a: float, b: float) -> bool:
        """True when value ``a`` is strictly better than ``b``."""
        return a > b if self.direction == "max" else a < b


@dataclass(frozen=True)
class Participant:
    """A framework or a stakeholder of a domain.

    ``name``: the arena participant name (letters, digits, ``-`` and ``_``); ``kind``: ``"framework"``,
    ``"stakeholder"`` or another word the domain uses; ``objective``: metric key -> weight, positive when
    more of the metric is better for this participant (its sign agrees with the metric's direction:
    ``max`` -> positive, ``min`` -> negative); ``description``: the value statement agents are given;
    ``group``: an optional group (the aggregation rules' group fairness); ``data``: the domain's own object
    behind it (e.g. its stakeholder), never compared."""

    name: str
    kind: str
    objective: Mapping[str, float]
    description: str = ""
    group: str | None = None
    data: Any = field(default=None, compare=False, repr=False)


class ArenaDomain(Protocol):
    """What the arena needs: how an instance is shown to agents and stored in a transcript.

    Optional (looked up with ``getattr``)::

        def closing_profile(self, instance, participants: dict[str, arena.Profile],
                            finals: dict[str, np.ndarray]) -> tuple[aggregation.Profile | None, list[str]]

    ``participants``: every participant's arena profile, in speaking order; ``finals``: the positions to
    score (participant -> valid allocation; the valid finals, or the dialectical positions). Returns a
    candidate :class:`fairarena.aggregation.rules.Profile` whose agents are the voting participants (named
    as in the debate) and whose candidates are the participants whose position the domain keeps (named
    after them; ``X`` their allocations), with the domain's utilities, plus notes (who was left out and
    why); None instead of the profile when fewer than two participants vote or no position is kept. Only
    candidate-set rules apply to such a profile. Without the hook, the debaters that speak for one of the
    domain's participants (``aligned:<participant>``, the kit's optimum agents) vote with that participant's
    ``value`` over the valid finals (:func:`fairarena.aggregation.council.finals_profile`); when none does
    (triage's framework agents), the aggregation closings score each participant by
    :func:`fairarena.arena.closing.participant_objective` over the whole feasible set."""

    name: str
    item: str            # what one row of the allocation is called ("patient")
    item_id: str         # the placeholder used in reply formats ("PATIENT_ID")
    setting: str         # one phrase naming the decision ("a hospital triage allocation")

    def problem(self, instance: Any) -> AllocationProblem: ...

    def render(self, instance: Any) -> str: ...

    def rules(self, problem: AllocationProblem) -> str: ...

    def retrieval_query(self, instance: Any, framework: str) -> str: ...

    def to_dict(self, instance: Any) -> dict[str, Any]: ...

    def from_dict(self, data: Any) -> Any: ...


class Domain(ArenaDomain, Protocol):
    """A domain plug-in: the arena's part plus instances, metrics and participants (module doc).

    Optional members (:data:`OPTIONAL`): ``digest``, ``save``, ``load``, ``violations``,
    ``closing_profile``, ``council_profile``, ``scripted_agents``, ``conflict_frontier``, ``analyses``,
    ``study_design`` and the study members (``bind``, ``study_instance``, ``study_presets``, ``study_check``,
    ...: :data:`OPTIONAL`)."""

    def sample(self, seed: int) -> Any: ...

    def metrics(self) -> Sequence[MetricSpec]: ...

    def evaluate(self, instance: Any, x: np.ndarray) -> dict[str, float]: ...

    def participants(self, instance: Any) -> Sequence[Participant]: ...

    def value(self, instance: Any, participant: Participant, x: np.ndarray) -> float: ...

    def optimum(self, instance: Any, participant: Participant) -> np.ndarray: ...


#: the arena's members (:class:`ArenaDomain`)
ARENA_MEMBERS: tuple[str, ...] = ("name", "item", "item_id", "setting", "problem", "render", "rules",
                                  "retrieval_query", "to_dict", "from_dict")
#: every required member of a plug-in (:class:`Domain`)
REQUIRED: tuple[str, ...] = ARENA_MEMBERS + ("sample", "metrics", "evaluate", "participants", "value", "optimum")
#: optional members with what they are for
OPTIONAL: dict[str, str] = {
    "digest": "a stable hash of an instance (default: sha256 of the canonical to_dict JSON)",
    "save": "write an instance to a file (default: the to_dict JSON)",
    "load": "read an instance from a file (default: from_dict of the JSON)",
    "violations": "the domain's rules beyond capacities and integrality, as messages (empty: valid)",
    "closing_profile": "the arena's closings score participants by the domain's own utilities (default: the "
                       "participants' value over the valid finals, for debaters aligned to a participant)",
    "council_profile": "the aggregation profile of the participants (default: their optima, payoff-table "
                       "utilities of value)",
    "scripted_agents": "scripted arena agents playing the participants (default: each proposes its optimum)",
    "conflict_frontier": "the trade-off between two metrics over the feasible set",
    "analyses": "extra named analyses",
    "study_design": "the fields of a small duel or council study of this domain",
    "study_fields": "the domain-specific study design fields it reads (capacity, agent_a, opponents, "
                    "baseline_control, decision, pois, k; default: all; study init writes only these)",
    "bind": "the domain bound to a file of instances (a problem file: its problem, metrics and participants)",
    "study_instance": "a study's instance of a seed (default: sample(seed, **options))",
    "study_presets": "named study designs of this domain (fairarena study init --preset NAME)",
    "study_check": "check a council study design's domain fields (InputError naming study.<field>)",
    "study_variants": "a council study's instance variants (default: capacity if sample takes it, else one)",
    "study_members": "a council study's default members (default: stakeholders, else every participant)",
    "study_rules": "a council study's default rules, the domain checking closings and mechanisms itself",
    "study_task_fields": "a council task's own fields (pois, k, problem) for a design and variant",
    "study_key_config": "what a council task's key holds of its debate (default: the arena's DebateConfig)",
    "study_council": "run one council task into its transcript: the record's outcome fields",
    "study_rule_rows": "the rows of rules on a council task's instance",
    "study_plan_debate": "study plan's stand-in debate of a language-model council task",
}


def missing_members(obj: Any, members: Sequence[str] = REQUIRED) -> list[str]:
    """The members of ``members`` that ``obj`` lacks (a method must be callable, ``name``, ``item``,
    ``item_id`` and ``setting`` non-empty strings)."""
    out = []
    for m in members:
        v = getattr(obj, m, None)
        if m in ("name", "item", "item_id", "setting"):
            if not isinstance(v, str) or not v:
                out.append(m)
        elif not callable(v):
            out.append(m)
    return out


# -- defaults for the optional members --------------------------------------------------------------

def canonical_json(data: Any) -> str:
    """The canonical JSON of plain data: sorted keys, no spaces (what :func:`instance_digest` hashes)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def instance_digest(domain: Any, instance: Any) -> str:
    """``domain.digest(instance)``, or the sha256 hex of the canonical JSON of ``domain.to_dict(instance)``
    (for triage the cohort digest a study's task keys hold)."""
    own = getattr(domain, "digest", None)
    if callable(own):
        return str(own(instance))
    return hashlib.sha256(canonical_json(domain.to_dict(instance)).encode()).hexdigest()


def save_instance(domain: Any, instance: Any, path: str | os.PathLike[str]) -> None:
    """``domain.save(instance, path)``, or the ``to_dict`` JSON written atomically."""
    own = getattr(domain, "save", None)
    if callable(own):
        own(instance, path)
        return
    from fairarena.fsutil import atomic_write_json

    atomic_write_json(path, domain.to_dict(instance))


def load_instance(domain: Any, path: str | os.PathLike[str]) -> Any:
    """``domain.load(path)``, or ``domain.from_dict`` of the JSON file (bad files: InputError naming it)."""
    own = getattr(domain, "load", None)
    if callable(own):
        return own(path)
    from fairarena.inputs import load_json

    return domain.from_dict(load_json(path, getattr(domain, "name", "instance")))


def violations_of(domain: Any, instance: Any, x: Any, problem: Any = None) -> list[str]:
    """Why ``x`` is not a valid allocation of ``instance``: the problem's capacity, sign and integrality
    violations (:func:`fairarena.allocation.problem.check_feasibility`), then the domain's own rules
    (``violations``, when it has them). Empty: valid."""
    from fairarena.allocation.problem import check_feasibility

    problem = domain.problem(instance) if problem is None else problem
    out = list(check_feasibility(problem, x))
    own = getattr(domain, "violations", None)
    if callable(own):
        out += [str(v) for v in own(instance, x)]
    return out


def metric_specs(domain: Any) -> dict[str, MetricSpec]:
    """``domain.metrics()`` keyed by metric (a repeated key or a direction outside :data:`DIRECTIONS`:
    InputError naming the metric)."""
    out: dict[str, MetricSpec] = {}
    for j, m in enumerate(domain.metrics()):
        key = getattr(m, "key", None)
        if not isinstance(key, str) or not key:
            raise InputError(f"metrics[{j}].key", key, "a non-empty string")
        if key in out:
            raise InputError(f"metrics[{j}].key", key, "distinct metric keys")
        direction = getattr(m, "direction", None)
        if direction not in DIRECTIONS:
            raise InputError(f"metrics.{key}.direction", direction, f"one of {', '.join(DIRECTIONS)}")
        out[key] = m
    return out


def value_of(domain: Any, instance: Any, participant: Participant, x: Any) -> float:
    """The participant's value of ``x`` as a float (``domain.value``; higher is better)."""
    return float(domain.value(instance, participant, x))
