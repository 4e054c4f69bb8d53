"""Tourism as a domain plug-in (:mod:`fairarena.domains.protocol`): the arena's tourism domain
(:class:`fairarena.tourism.arena.TourismDomain`: rendering, rules, transcripts, the closing hook) plus
seeded destinations, the tourism metrics with their directions, the stakeholders as participants, their
scripted negotiators and the council's candidates.

Registered in :data:`fairarena.domains.DOMAINS` as ``tourism`` (visitor flows, :data:`TOURISM`) and
``tourism-lists`` (recommendation lists, :data:`TOURISM_LISTS`); ``DOMAINS.get("tourism")`` imports this
module on first use.

* instances: :func:`~fairarena.tourism.destination.generate` (``pois`` points of interest, default 40);
* participants: the stakeholders ``stakeholder_names`` (default the four built-in kinds, tourists as the
  family persona), named as arena participants (:func:`~fairarena.tourism.arena.agent_name`), each valuing
  a decision by its objective (:func:`~fairarena.tourism.stakeholders.stakeholder_value`) and proposing
  its own optimum (:func:`~fairarena.tourism.decisions.propose`);
* metrics: :data:`fairarena.tourism.metrics.METRICS` (scalar ones; ``satisfaction`` over every tourist
  group), with their linear forms on valid flows where they have one (the visits of valid flows add up to
  ``S x`` the number of visitors, so shares and means of visits are linear);
* validity beyond capacities: flows keep :func:`~fairarena.tourism.metrics.flow_feasibility` (every visitor
  makes one visit per slot), lists are ``k..1`` position scores (:func:`~fairarena.tourism.decisions.decode`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from fairarena.domains.protocol import MetricSpec, Participant
from fairarena.errors import InputError
from fairarena.tourism.arena import TourismDomain, agent_name, profile_of
from fairarena.tourism.decisions import decode, encode, metrics_of, propose, utility_matrix
from fairarena.tourism.destination import Destination, generate
from fairarena.tourism.metrics import METRICS, satisfaction
from fairarena.tourism.stakeholders import Stakeholder, make, parse_stakeholders, stakeholder_value

__all__ = ["TourismPlugin", "TOURISM", "TOURISM_LISTS", "DEFAULT_STAKEHOLDERS"]

#: the participants of a tourism instance unless told otherwise (the tourism study preset's)
DEFAULT_STAKEHOLDERS: tuple[str, ...] = ("tourists:family", "residents", "local-business", "destination")

#: the metrics linear in valid flows: (G, P) coefficients of every slot's visitors, per destination
_FLOW_LINEAR = ("satisfaction", "crowding_residential", "small_exposure_share", "emissions_per_visit",
                "emissions_norm", "popularity_mean", "long_tail_share")


def _flow_linear(key: str) -> Any:
    def linear(d: Destination) -> tuple[np.ndarray, float]:
        a = d.arrays
        S = a.baseline.shape[1]
        visits = S * a.size.sum()            # every visitor makes one visit per slot (valid flows)
        const = 0.0
        if key == "satisfaction":            # size-weighted mean of U_g = sum rel F / (size_g S)
            per = a.relevance / visits
        elif key == "crowding_residential":  # (baseline + tourists) over residential capacity x slots
            den = a.capacity[a.residential].sum() * S
            if den <= 0:
                return np.zeros((len(a.groups), len(a.pois) * S)), 0.0
            per = np.broadcast_to(a.residential / den, a.relevance.shape)
            const = float(a.baseline[a.residential].sum() / den)
        else:
            col = {"small_exposure_share": a.small, "emissions_per_visit": a.env,
                   "emissions_norm": a.env / (a.env.max() if a.env.max() > 0 else 1.0),
                   "popularity_mean": a.popularity, "long_tail_share": a.long_tail}[key]
            per = np.broadcast_to(np.asarray(col, dtype=float) / visits, a.relevance.shape)
        return np.repeat(per[:, :, None], S, axis=2).reshape(len(a.groups), -1), const

    return linear


@dataclass(frozen=True)
class TourismPlugin(TourismDomain):
    """The tourism domain with the plug-in members (module doc). ``pois``: the size of a sampled
    destination; ``stakeholder_names``: the participants."""

    pois: int = 40
    stakeholder_names: tuple[str, ...] = DEFAULT_STAKEHOLDERS
    #: the domain-specific study fields it reads: the decision negotiated, the destination's size, list length
    study_fields: tuple[str, ...] = ("decision", "pois", "k")

    # -- instances ---------------------------------------------------------------------------------
    def sample(self, seed: int, pois: int | None = None) -> Destination:
        """The synthetic destination of ``seed`` (:func:`~fairarena.tourism.destination.generate`)."""
        return generate(seed, self.pois if pois is None else pois)

    # -- metrics -----------------------------------------------------------------------------------
    def metrics(self) -> list[MetricSpec]:
        return [MetricSpec(n, n, METRICS.entry(n).direction, METRICS.entry(n).description,
                           _flow_linear(n) if self.decision == "flows" and n in _FLOW_LINEAR else None)
                for n in METRICS]

    def _decision(self, d: Destination, x: np.ndarray) -> np.ndarray:
        dec, bad = decode(d, self.decision, x)
        if dec is None:
            raise InputError("allocation", "; ".join(bad[:2]), f"a valid {self.decision[:-1]} decision")
        return dec

    def evaluate(self, instance: Destination, x: np.ndarray) -> dict[str, float]:
        """Every scalar tourism metric of a valid decision (``satisfaction``: over every tourist group)."""
        m = metrics_of(instance, self.decision, self._decision(instance, x))
        out = {n: float(m[n]) for n in METRICS if n != "satisfaction"}
        return {"satisfaction": satisfaction(instance, m, None, self.decision), **out}

    # violations (flows: every visitor one visit per slot; lists: scores k..1) and repair: TourismDomain's

    # -- participants ------------------------------------------------------------------------------
    def _stakeholder(self, p: Participant) -> Stakeholder:
        if isinstance(p.data, Stakeholder):
            return p.data
        return make(p.name.replace("-", ":", 1) if p.name.startswith("tourists-") else p.name, "participant")

    def participants(self, instance: Destination | None = None) -> list[Participant]:
        return [Participant(agent_name(s), "stakeholder", dict(s.objective), s.value, group=s.kind, data=s)
                for s in parse_stakeholders(list(self.stakeholder_names), "stakeholder_names")]

    def value(self, instance: Destination, participant: Participant, x: np.ndarray) -> float:
        dec = self._decision(instance, x)
        return stakeholder_value(instance, self._stakeholder(participant),
                                 metrics_of(instance, self.decision, dec), self.decision)

    def optimum(self, instance: Destination, participant: Participant) -> np.ndarray:
        """The stakeholder's own proposal (:func:`~fairarena.tourism.decisions.propose`) as an allocation."""
        s = self._stakeholder(participant)
        return encode(instance, self.decision, propose(instance, s, self.decision, self.k))

    def scripted_agents(self, instance: Destination, participants: Sequence[Participant] | None = None) -> list[Any]:
        """One scripted stakeholder negotiator per participant (:class:`fairarena.tourism.negotiator.
        StakeholderNegotiator`), over the stakeholders' candidates (kept for the closing's profile)."""
        from fairarena.arena.protocol import Agent
        from fairarena.llm.scripted import ScriptedChatModel
        from fairarena.llm.wrappers import UsageMeter
        from fairarena.tourism.negotiator import Options, StakeholderNegotiator

        ss = [self._stakeholder(p) for p in (self.participants(instance) if participants is None else participants)]
        options = Options(instance, self.decision, self.problem(instance), ss, self.candidates_for(instance, ss))
        agents = []
        for s in ss:
            neg = StakeholderNegotiator(options, s)
            agents.append(Agent(agent_name(s), profile_of(s), UsageMeter(ScriptedChatModel(neg, name="stakeholder")),
                                "scripted:stakeholder", negotiator=neg))   # type: ignore[arg-type]
        return agents

    def council_profile(self, instance: Destination, participants: Sequence[Participant] | None = None) -> Any:
        """The tourism council: the stakeholders' candidates (proposals, compromises or ranking-rule lists)
        with payoff-table utilities (:func:`~fairarena.tourism.decisions.utility_matrix`), as
        :func:`fairarena.tourism.decisions.decide` builds it; candidate-set rules only."""
        from fairarena.aggregation.rules import Voter
        from fairarena.aggregation.rules import Profile as AggProfile

        ps = list(self.participants(instance) if participants is None else participants)
        ss = [self._stakeholder(p) for p in ps]
        cands = self.candidates_for(instance, ss)
        prof = AggProfile.from_utilities([Voter(p.name, group=s.kind) for p, s in zip(ps, ss)], cands.names,
                                         utility_matrix(cands.values))
        prof.X = np.stack([encode(instance, self.decision, x) for x in cands.decisions])
        return prof

    # -- optional hooks ----------------------------------------------------------------------------
    def conflict_frontier(self, instance: Destination, metric_x: str, metric_y: str, points: int = 50) -> dict[str, Any]:
        """The conflict audit of two tourism metrics (:mod:`fairarena.tourism.conflict`)."""
        from fairarena.tourism import conflict

        if self.decision == "flows":
            return conflict.audit_tourism_flows(instance, metric_x, metric_y, points)
        return conflict.audit_tourism(instance, metric_x, metric_y, points, k=self.k)

    def study_design(self, kind: str) -> dict[str, Any] | None:
        """A small study of ``kind`` on 12-POI destinations (the study runner's fields)."""
        if kind not in ("duel", "council"):
            return None
        design: dict[str, Any] = {"kind": kind, "domain": "tourism", "stakeholders": list(self.stakeholder_names),
                                  "decision": self.decision, "pois": 12}
        if self.decision == "lists":
            design["k"] = 3
        return design

    # -- council studies: the protocol's study_* members, answered by fairarena.tourism.study ----------------
    def study_check(self, design: Any) -> None:
        from fairarena.tourism.study import study_check
        study_check(design)

    def study_variants(self, design: Any) -> list[str]:
        from fairarena.tourism.study import study_variants
        return study_variants(design)

    def study_rules(self, design: Any) -> list[str]:
        from fairarena.tourism.study import study_rules
        return study_rules(design)

    def study_task_fields(self, design: Any, variant: str) -> dict[str, Any]:
        from fairarena.tourism.study import study_task_fields
        return study_task_fields(design, variant)

    def study_key_config(self, task: Any) -> dict[str, Any]:
        from fairarena.tourism.study import study_key_config
        return study_key_config(task)

    def study_council(self, task: Any, rules: list[str], models: dict[str, Any], transcript: Any, **run: Any
                      ) -> dict[str, Any]:
        from fairarena.tourism.study import study_council
        return study_council(task, rules, models, transcript, **run)

    def study_rule_rows(self, task: Any, rules: list[str]) -> list[dict[str, Any]]:
        from fairarena.tourism.study import study_rule_rows
        return study_rule_rows(task, rules)

    def study_presets(self) -> dict[str, dict[str, Any]]:
        """The tourism study presets (visitor flows: this plug-in's decision only)."""
        if self.decision != "flows":
            return {}
        from fairarena.tourism.study import study_presets
        return study_presets()

    def study_plan_debate(self, task: Any, standin: Any) -> tuple[str, str, Any]:
        from fairarena.tourism.study import study_plan_debate
        return study_plan_debate(task, standin)


TOURISM = TourismPlugin()
TOURISM_LISTS = TourismPlugin(name="tourism-lists", item="group", item_id="GROUP_ID",
                              setting="tourist recommendation lists", decision="lists")
