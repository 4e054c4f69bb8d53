"""Kind-specific designs: what a duel study and a council study each read of a design.

A study file is validated once as :class:`fairarena.study.design.StudyConfig`, the one schema every study
file has (its digest and task keys are taken over it, so existing folders resume). Its ``kind`` then picks
the kind's design (:data:`fairarena.study.kinds.KINDS`, ``design``): :class:`DuelDesign` or
:class:`CouncilDesign`, each exposing only the fields that kind reads (:attr:`Design.FIELDS`) and the
kind's own answers (its model specs, the seats in one debate, its size factors, its whole-design check,
what ``study plan`` adds). The runner, the expansion and the plan ask the design instead of testing the
kind; ``StudyConfig.design`` gives it.

>>> from fairarena.study.design import preset
>>> type(preset("paper").design).__name__, type(preset("council").design).__name__
('DuelDesign', 'CouncilDesign')
>>> preset("council").design.model_specs
['scripted:negotiator']
"""

from __future__ import annotations

from typing import Any, ClassVar

from fairarena.errors import InputError

__all__ = ["Design", "DuelDesign", "CouncilDesign"]

#: the fields every kind reads: the instances, the replicates, the debate's settings and how it runs
COMMON_FIELDS = ("name", "kind", "domain", "cohorts", "first_cohort_seed", "seeds", "samples", "rounds", "closing",
                 "temperature", "max_repairs", "max_tokens", "rag", "problem", "concurrency", "default_concurrency",
                 "replicas")


class Design:
    """A kind's view of a validated design (``cfg``): its fields as attributes (only :attr:`FIELDS`)."""

    FIELDS: ClassVar[tuple[str, ...]] = COMMON_FIELDS

    def __init__(self, cfg: Any) -> None:
        self.config = cfg

    def __getattr__(self, name: str) -> Any:
        if name in type(self).FIELDS:
            return getattr(self.config, name)
        raise AttributeError(f"a {type(self).__name__} has no field {name!r} (its fields: {', '.join(self.FIELDS)})")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config.name!r}, domain={self.config.domain!r})"

    # -- the kind's answers ----------------------------------------------------------------------------
    @property
    def model_specs(self) -> list[str]:
        raise NotImplementedError

    @property
    def seats(self) -> int:
        """The agents in one debate (a model call estimate's factor)."""
        raise NotImplementedError

    def size_factors(self) -> dict[str, int]:
        raise NotImplementedError

    def check(self) -> None:
        """The kind's whole-design checks (InputError naming ``study.<field>``)."""

    def plan_fields(self) -> dict[str, Any]:
        """What ``study plan`` adds for this kind."""
        return {}


class DuelDesign(Design):
    """A duel: Agent A's profiles against each opponent on the default domain (the arena's profile agents),
    or a domain's participants two by two (``stakeholders``; :func:`fairarena.study.design.duel_players`)."""

    FIELDS = COMMON_FIELDS + ("capacity", "agent_a", "opponents", "baseline_control", "model_a", "model_b",
                              "proposal_format", "mechanisms", "stakeholders", "decision", "pois", "k")

    @property
    def participant_duel(self) -> bool:
        from fairarena.study.instances import default_domain

        return self.config.domain != default_domain()

    @property
    def model_specs(self) -> list[str]:
        return sorted({self.config.model_a, self.config.model_b})

    @property
    def seats(self) -> int:
        return 2

    def size_factors(self) -> dict[str, int]:
        from fairarena.study.design import duel_players

        cfg = self.config
        if self.participant_duel:
            n = len(cfg.stakeholders) or len(duel_players(cfg))
            pairs, variants = n * (n - 1) // 2, 1
        else:
            pairs, variants = len(cfg.agent_a) * len(cfg.opponents) + (1 if cfg.baseline_control else 0), len(cfg.capacity)
        return {"cohorts": cfg.cohorts, "capacity": variants, "seeds": len(cfg.seeds), "samples": cfg.samples,
                "closing": len(cfg.closing), "agent_a": pairs}

    def check(self) -> None:
        if self.participant_duel:
            from fairarena.study.design import _check_participant_duel

            _check_participant_duel(self.config)


class CouncilDesign(Design):
    """A council: every member in one debate per instance, beside every rule's decision on it."""

    FIELDS = COMMON_FIELDS + ("capacity", "agent_a", "model_a", "mechanisms", "stakeholders", "decision", "pois",
                              "k")

    @property
    def members(self) -> list[str]:
        return self.config.members

    @property
    def model_specs(self) -> list[str]:
        return [self.config.model_a]   # every member plays on model_a

    @property
    def seats(self) -> int:
        return len(self.config.members)

    def size_factors(self) -> dict[str, int]:
        from fairarena.study.design import council_variants

        cfg = self.config
        return {"cohorts": cfg.cohorts, "capacity": len(council_variants(cfg)), "seeds": len(cfg.seeds),
                "samples": cfg.samples, "closing": len(cfg.closing)}

    def check(self) -> None:
        from fairarena.study.design import _check_participant_council, framework_names, study_hook
        from fairarena.study.instances import default_domain

        cfg = self.config
        if cfg.domain != default_domain():
            own = study_hook(cfg.domain, "study_check")
            if own is not None:
                own(cfg)
            else:
                _check_participant_council(cfg)
            return
        fws = framework_names()
        for j, m in enumerate(cfg.agent_a):
            if not m.startswith("aligned:") or m.partition(":")[2] not in fws:
                raise InputError(f"study.agent_a[{j}]", m, "aligned:<framework> in a council (a member votes "
                                 "with its framework's objective and proposes its exact optimum)")
        if len(cfg.agent_a) < 2:
            raise InputError("study.agent_a", cfg.agent_a, "at least two members in a council")

    def plan_fields(self) -> dict[str, Any]:
        return {"members": self.config.members}
