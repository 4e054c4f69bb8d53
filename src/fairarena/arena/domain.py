"""Domain adapters: what the arena needs to know about one kind of allocation problem.

The protocol (:mod:`fairarena.arena.protocol`) is generic over an
:class:`~fairarena.allocation.problem.AllocationProblem`; everything it shows to agents or records
about the *instance* behind the problem comes from a :class:`Domain`: how the instance is rendered in
a prompt, what its items and resources are called, the rules every agent is told, the retrieval query,
and how the instance is stored in (and read back from) a transcript header. Triage is the first domain
(:data:`TRIAGE`); a new domain registers itself in :data:`DOMAINS`.

Optional hook: a domain whose participants are scored by the domain's own utilities (not by an
allocation objective of :mod:`fairarena.aggregation.objectives`) defines ``closing_profile`` (see
:class:`Domain`); the aggregation closings and the dialectical acceptance check then use it. Triage does
not define it: its participants are scored by :func:`fairarena.arena.closing.participant_objective`.

Every piece of instance data that enters a prompt goes through :func:`fairarena.arena.prompts.cell`
(table cells) so that it cannot add columns, rows or tags (see docs/arena.md, "Quoting").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from fairarena.allocation.problem import AllocationProblem
from fairarena.arena.prompts import cell, number
from fairarena.registry import Registry


class Domain(Protocol):
    """What a domain supplies to the arena (an instance is any object the domain understands).

    Optional (not part of the protocol's required methods; looked up with ``getattr``)::

        def closing_profile(self, instance, participants: dict[str, Profile],
                            finals: dict[str, np.ndarray]) -> tuple[aggregation.Profile | None, list[str]]

    ``participants``: every participant's arena profile, in speaking order; ``finals``: the positions to
    score (participant -> valid allocation; the valid finals, or the dialectical positions). Returns a
    candidate :class:`fairarena.aggregation.rules.Profile` whose agents are the voting participants (named
    as in the debate) and whose candidates are the participants whose position the domain keeps (named
    after them; ``X`` their allocations), with the domain's utilities, plus notes (who was left out and
    why); None instead of the profile when fewer than two participants vote or no position is kept. Only
    candidate-set rules apply to such a profile."""

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


DOMAINS: Registry[Domain] = Registry("domain")


@dataclass(frozen=True)
class TriageDomain:
    """Hospital triage (the cohorts of :mod:`fairarena.triage`): survival shown only as a label."""

    name: str = "triage"
    item: str = "patient"
    item_id: str = "PATIENT_ID"
    setting: str = "a hospital triage allocation"

    def problem(self, instance: Any) -> AllocationProblem:
        return instance.to_problem()

    def render(self, instance: Any) -> str:
        """The cohort as agents see it: survival as a label only, never the number. Every free-text
        field is a table cell escaped by :func:`cell` (no ``|``, no line break, no tag survives)."""
        from fairarena.triage.cohort import INDIVISIBLE, RESOURCES, SURVIVAL_LABEL_SCHEMES

        scheme = getattr(instance, "survival_labels", "main")   # the cohort file's meta.survival_labels
        label, legend = SURVIVAL_LABEL_SCHEMES[scheme], SURVIVAL_LABEL_SCHEMES.entry(scheme).description
        lines = ["| id | age | gender | race | SES | citizenship | occupation | family | condition | urgency | survival | needs |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for p in instance.patients:
            needs = ", ".join(f"{cell(r)} {number(v)}" for r, v in p.needs.items() if v > 0)
            row = (p.id, p.age, p.gender, p.race, p.ses, p.citizenship, p.occupation, p.family, p.condition,
                   p.urgency, label(p.survival))
            lines.append("| " + " | ".join(cell(v) for v in row) + f" | {needs} |")
        cap = ", ".join(f"{r} {number(instance.capacity[r])}" for r in RESOURCES)
        return (f"Patients (survival given adequate care, as a label: {legend}):\n"
                + "\n".join(lines) + f"\nCapacities: {cap}. Indivisible (whole units): {', '.join(sorted(INDIVISIBLE))}.")

    def rules(self, problem: AllocationProblem) -> str:
        from fairarena.arena.profiles import COMMON_RULES
        return COMMON_RULES

    def retrieval_query(self, instance: Any, framework: str) -> str:
        conditions = ", ".join(sorted({f"{p.condition} ({p.urgency})" for p in instance.patients}))
        return (f"{framework} principles for allocating scarce ICU beds, ventilators, surgery, medication and nursing "
                f"among patients with {conditions}.")

    def to_dict(self, instance: Any) -> dict[str, Any]:
        return instance.to_dict()

    def from_dict(self, data: Any) -> Any:
        from fairarena.triage import parse_cohort
        return parse_cohort(data)


TRIAGE = TriageDomain()
DOMAINS.add("triage", TRIAGE, title="Hospital triage",
            description="patients, scarce ICU/ventilator/surgery/medication/nursing capacity",
            citation="Chaki, Gourru, Velcin: Beyond Arrow's Impossibility (arXiv 2604.13705)")
