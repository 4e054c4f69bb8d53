"""The triage domain plug-in: hospital triage cohorts (:mod:`fairarena.triage`) as a domain of
:mod:`fairarena.domains`, registered lazily as ``"triage"`` (``fairarena.triage.domain:TRIAGE``).

Besides the arena's part (rendering, rules, retrieval query; a transcript header keeps the instance
under ``cohort``) it implements the plug-in members (sampling, metrics, the six frameworks as
participants, ...) by calling :mod:`fairarena.triage` and :mod:`fairarena.allocation`, and the scripted
negotiator's hooks: the arena's need-satisfaction negotiator plays each framework with the welfare
:meth:`TriageDomain.welfare_form` reads from the framework's objective. It does not define the optional
``closing_profile``: its participants are scored by :func:`fairarena.arena.closing.participant_objective`.

The CNSS weights of the frameworks' linear metrics (ESG: survival; DW-ESG: disadvantage x survival; VWCI:
vulnerability) are read from one place, :func:`cnss_weights_of` (the metric definitions of
:data:`fairarena.allocation.metrics.METRICS`): the metrics' linear forms here and the negotiator's welfare.

Every piece of instance data that enters a prompt goes through :func:`fairarena.arena.prompts.cell`
(table cells) so that it cannot add columns, rows or tags (see docs/arena.md, "Quoting").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from fairarena.allocation.problem import AllocationProblem
from fairarena.arena.prompts import cell, number
from fairarena.domains.protocol import MetricSpec, Participant
from fairarena.triage.cohort import CAPACITY_VARIANTS

__all__ = ["TRIAGE", "TriageDomain", "cnss_weights_of", "GINI_OF_NEEDS"]

#: the metric of an inequality objective over need satisfaction (the egalitarian framework's)
GINI_OF_NEEDS = "gini_cnss"


def cnss_weights_of(key: str) -> Callable[[AllocationProblem], np.ndarray] | None:
    """``problem -> weights`` of a metric that is a weighted sum of need satisfaction (``esg``, ``dw_esg``,
    ``vwci``: the metric is ``CNSS @ weights(problem)``), None for any other metric: the one place the
    triage domain and the scripted negotiator read the frameworks' weights from."""
    from fairarena.allocation.metrics import METRICS

    m = METRICS.get(key) if key in METRICS else None
    return None if m is None or m.milp != "linear" else m.weights


def _triage_linear(key: str) -> Any:
    """The linear form of a weighted sum of need satisfaction (``esg``, ``dw_esg``, ``vwci``): under the
    fractional form ``CNSS_i = sum_r x[i, r] / (|N_i| need[i, r])`` on allocations within the needs, so
    ``sum_i w_i CNSS_i`` is linear in ``x``; under the indicator form it is not (None)."""
    weights = cnss_weights_of(key)
    if weights is None:
        return None

    def linear(instance: Any) -> tuple[np.ndarray, float] | None:
        p = instance.to_problem()
        if p.cnss != "fractional":
            return None
        per = np.divide(1.0, p.need * p.n_needed[:, None], out=np.zeros_like(p.need), where=p.needed)
        return weights(p)[:, None] * per, 0.0

    return linear


@dataclass(frozen=True)
class TriageDomain:
    """Hospital triage (the cohorts of :mod:`fairarena.triage`): survival shown only as a label.

    Beyond the protocol: ``instance_key`` (a transcript header stores the instance under ``"cohort"``),
    ``variants`` (the capacity variants :meth:`sample` takes) and the scripted negotiator's hooks
    :meth:`scripted_negotiator` and :meth:`welfare_form`."""

    name: str = "triage"
    item: str = "patient"
    item_id: str = "PATIENT_ID"
    setting: str = "a hospital triage allocation"
    instance_key: str = "cohort"
    #: the domain-specific study fields it reads: capacity variants, Agent A's profiles and its opponents
    study_fields: tuple[str, ...] = ("capacity", "agent_a", "opponents", "baseline_control")

    @property
    def ses_levels(self) -> tuple[str, ...]:
        """The SES scale of the cohorts, low to high (:data:`fairarena.triage.cohort.SES_LEVELS`)."""
        from fairarena.triage.cohort import SES_LEVELS
        return tuple(SES_LEVELS)

    @property
    def variants(self) -> tuple[str, ...]:
        """The capacity variants of :meth:`sample` (``fairarena triage cohort --help``)."""
        return tuple(CAPACITY_VARIANTS)

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

    # -- the plug-in members (fairarena.domains.protocol.Domain) --------------------------------------
    def sample(self, seed: int, capacity: str = "standard") -> Any:
        """The sampled cohort of ``seed`` (:func:`fairarena.triage.sample_cohort`, ``capacity`` variant)."""
        from fairarena.triage import sample_cohort
        return sample_cohort(seed, capacity)

    def save(self, instance: Any, path: str | Path) -> None:
        from fairarena.triage import save_cohort
        save_cohort(instance, path)

    def load(self, path: str | Path) -> Any:
        from fairarena.triage import load_cohort
        return load_cohort(path)

    def metrics(self) -> list[MetricSpec]:
        """The allocation metrics (:data:`fairarena.allocation.metrics.METRICS`, in their order)."""
        from fairarena.allocation.metrics import METRICS
        return [MetricSpec(m.key, m.label, m.direction, m.formula, _triage_linear(m.key)) for m in METRICS.values()]

    def evaluate(self, instance: Any, x: np.ndarray) -> dict[str, float]:
        from fairarena.allocation.metrics import METRIC_KEYS, compute_metrics
        m = compute_metrics(instance.to_problem(), np.asarray(x, dtype=float))
        return {k: float(m[k]) for k in METRIC_KEYS}

    def score(self, instance: Any, x: np.ndarray, problem: AllocationProblem | None = None) -> dict[str, Any]:
        """The arena's record of an allocation (:func:`fairarena.arena.protocol.score_with`): every metric of
        :func:`fairarena.allocation.metrics.compute_metrics` plus CNSS, feasibility, waste and unused capacity."""
        from fairarena.allocation.metrics import compute_metrics
        return compute_metrics(instance.to_problem() if problem is None else problem, np.asarray(x, dtype=float))

    def participants(self, instance: Any = None) -> list[Participant]:
        """The six ethical frameworks (:data:`fairarena.allocation.frameworks.FRAMEWORKS`), each scored by
        its metric in its direction."""
        from fairarena.allocation.frameworks import FRAMEWORKS
        return [Participant(f.name, "framework", {f.metric: 1.0 if f.direction == "max" else -1.0}, f.objective,
                            data=f) for f in FRAMEWORKS.values()]

    def value(self, instance: Any, participant: Participant, x: np.ndarray) -> float:
        m = self.evaluate(instance, x)
        return float(sum(w * m[k] for k, w in participant.objective.items()))

    def optimum(self, instance: Any, participant: Participant) -> np.ndarray:
        """The framework's exact optimum (``FRAMEWORKS[name].solve``; the egalitarian in its default form)."""
        from fairarena.allocation.frameworks import FRAMEWORKS
        return np.asarray(FRAMEWORKS.get(participant.name).solve(instance.to_problem()), dtype=float)

    # -- the arena's scripted negotiator (fairarena.arena.negotiator.Negotiator) ------------------------
    def scripted_negotiator(self, instance: Any, profile: Any, problem: AllocationProblem | None = None) -> Any:
        """The need-satisfaction negotiator of ``profile`` on the cohort (the arena's scripted model for
        triage: each framework's own welfare of CNSS, see :mod:`fairarena.arena.negotiator`)."""
        from fairarena.arena.negotiator import Negotiator
        return Negotiator(instance.to_problem() if problem is None else problem, profile, cohort=instance, domain=self)

    def welfare_form(self, problem: AllocationProblem, participant: Participant | None) -> tuple[str, Any]:
        """How the scripted negotiator reads a framework's objective as a welfare of CNSS: ``("linear",
        weights)`` for a weighted sum of need satisfaction (the weights of :func:`cnss_weights_of`: ESG,
        DW-ESG, VWCI), ``("min", None)`` for the minimum (RMG), ``("equality", None)`` for the Gini of CNSS
        (the negotiator's egalitarian form), ``("opening", None)`` otherwise (the libertarian's variance:
        keep its entitlement opening)."""
        from fairarena.allocation.metrics import METRICS

        if participant is None or len(participant.objective) != 1:
            return "opening", None
        (key, w), = participant.objective.items()
        weights = cnss_weights_of(key)
        if weights is not None and w > 0:
            return "linear", weights(problem)
        if key in METRICS and METRICS.get(key).milp == "min" and w > 0:
            return "min", None
        if key == GINI_OF_NEEDS and w < 0:
            return "equality", None
        return "opening", None

    def tiebreak_weights(self, problem: AllocationProblem) -> np.ndarray:
        """The CNSS weights of the negotiator's tie-break stage: ESG's (survival; :func:`cnss_weights_of`)."""
        weights = cnss_weights_of("esg")
        assert weights is not None
        return weights(problem)

    def participant_of(self, instance: Any, name: str | None) -> Participant | None:
        """The framework participant called ``name`` (None when there is none)."""
        return next((p for p in self.participants(instance) if p.name == name), None)

    def scripted_agents(self, instance: Any, participants: Sequence[Participant] | None = None) -> list[Any]:
        """One scripted negotiator aligned to each framework, named after it
        (:func:`fairarena.arena.council.council_agents`)."""
        from fairarena.arena.council import council_agents
        names = None if participants is None else [p.name for p in participants]
        return council_agents(instance, "scripted", names)

    def council_profile(self, instance: Any, participants: Sequence[Participant] | None = None) -> Any:
        """The council's profile (:func:`fairarena.aggregation.council.council_profile`): every framework's
        optimum as a candidate, allocation objectives, so every aggregation rule applies."""
        from fairarena.aggregation.council import council_profile
        names = None if participants is None else [p.name for p in participants]
        return council_profile(instance.to_problem(), names)

    def conflict_frontier(self, instance: Any, metric_x: str, metric_y: str, points: int = 50) -> dict[str, Any]:
        """The conflict audit of two allocation metrics (:func:`fairarena.evaluation.conflict.audit_triage`)."""
        from fairarena.evaluation.conflict import audit_triage
        return audit_triage(instance.to_problem(), metric_x, metric_y, points)

    def study_design(self, kind: str) -> dict[str, Any] | None:
        """A small study of ``kind`` on cohorts (the study runner's fields)."""
        if kind == "duel":
            return {"kind": "duel", "domain": "triage", "agent_a": ["aligned:utilitarian", "aligned:rawlsian"],
                    "opponents": ["baseline"]}
        if kind == "council":
            return {"kind": "council", "domain": "triage",
                    "agent_a": ["aligned:utilitarian", "aligned:egalitarian", "aligned:rawlsian"]}
        return None


TRIAGE = TriageDomain()
# registered in fairarena.domains.registry (a lazy entry: "triage" -> this module's TRIAGE)
