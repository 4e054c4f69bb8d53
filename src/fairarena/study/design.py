"""The debate study: a design file (TOML, validated once), presets, and its expansion into tasks.

A design names a registered domain (``domain``; default the registry's default domain, the one the arena's
profile agents play) and reaches it only through the domain protocol (:mod:`fairarena.study.instances`,
the optional ``study_*`` members). Its ``kind`` picks the kind's design (:mod:`fairarena.study.designs`).

A duel study on the default domain is the full factorial of its design: cohorts x capacity variants x debate seeds x Agent A's
profiles x opponents (plus an optional ``baseline``-vs-``baseline`` control per cohort) x closing
rules. Every debate is one :class:`DebateTask`, keyed by a hash of everything that determines it: the
cohort itself (its full JSON, not only its seed, so a changed sampler changes the key), both profiles,
both model specs (canonical form), the whole :class:`fairarena.arena.DebateConfig` (rounds, closing,
seed, temperature, repair turns, ...), the retrieval mode, the proposal format and the arena's prompt
version. A task's key never depends on its position in the study or on what else the study contains,
so resuming, adding cohorts or changing the number of workers never changes a finished debate's key.

>>> cfg = preset("paper")
>>> len(expand(cfg))
600
>>> len({t.key for t in expand(cfg)})
600
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, ValidationInfo, field_validator, model_validator

from fairarena.errors import InputError
from fairarena.study.kinds import KINDS as _KINDS, study_kind

KEY_CHARS = 24  # hex characters of sha256 kept in a task key (96 bits)

STUDY_KINDS = {name: kind.description for name, kind in _KINDS.items()}
"""The registered study kinds (:data:`fairarena.study.kinds.KINDS`) and what each does."""


def study_domains() -> dict[str, str]:
    """The domains a design may name: every registered domain (:data:`fairarena.domains.DOMAINS`) with its
    title."""
    from fairarena.domains.registry import DOMAINS

    return {n: str(DOMAINS.entry(n).title or n) for n in DOMAINS}


def _default_domain() -> str:
    from fairarena.study.instances import default_domain

    return default_domain()


def _domain_names() -> list[str]:
    from fairarena.study.instances import domain_names

    return domain_names()


LATER_FIELDS = ("kind", "domain", "stakeholders", "decision", "pois", "k", "samples", "replicas", "problem")
"""Fields added after the first studies: left out of the digest at their defaults (earlier digests hold)."""
MAX_DEBATES = 200_000
"""The most debates a design may expand to (the paper preset has 600, the council preset 50): checked from
the design's factors before anything is expanded, sampled or written."""
MAX_MODEL_CALLS = 10_000_000
"""The most model calls a design may ask for, estimated as debates x members x (rounds + 2) (each member's
turns, its final and the closing; repairs not counted; the paper preset: 6,000)."""
RUNNER_FIELDS = ("concurrency", "default_concurrency", "replicas", "samples")
"""Fields that change no debate (how fast it runs, or how many repeats exist): a folder whose design
differs from the file only in these adopts the file without ``--force``; every existing debate keeps its key."""


# ------------------------------------------------------------------------------------------------
# Registries this module reads (never retyped here)
# ------------------------------------------------------------------------------------------------

def framework_names() -> list[str]:
    """The six ethical frameworks, in the allocation FRAMEWORKS registry's order."""
    from fairarena.allocation.welfare import FRAMEWORKS

    return list(FRAMEWORKS)


def _check_variant(domain: str, variant: str) -> str | None:
    """Why the domain's ``sample`` refuses instance variant ``variant`` (the design's ``capacity``), or None
    (accepted, or a domain whose ``sample`` takes no ``capacity``)."""
    from fairarena.study.instances import instance_of, sample_options

    options = sample_options(domain, {"capacity": variant})
    if not options:
        return None
    try:
        instance_of(domain, 0, options=options)
    except InputError as exc:
        return exc.expected
    return None


def closing_names() -> list[str]:
    from fairarena.arena.closing import closing_rules

    return list(closing_rules())


def mechanism_names() -> list[str]:
    """Aggregation rules a study may apply to its debates' proposals (:data:`fairarena.aggregation.rules.RULES`)."""
    from fairarena.aggregation.rules import RULES

    return list(RULES)


def proposal_formats() -> list[str]:
    """Proposal formats the arena registers (:data:`fairarena.arena.formats.PROPOSAL_FORMATS`)."""
    from fairarena.arena.formats import PROPOSAL_FORMATS

    return list(PROPOSAL_FORMATS)


def rag_modes() -> tuple[str, ...]:
    from fairarena.arena.agents import RAG_MODES

    return RAG_MODES


@functools.lru_cache(maxsize=1)
def prompt_version() -> str:
    """The arena's prompt version: its own ``PROMPT_VERSION`` when it declares one, else a short hash of
    every prompt text the agents see (phase instructions, common rules, framework statements, the
    adversarial research prompt). A changed prompt is a different debate, hence a different key."""
    from fairarena.arena import protocol

    declared = getattr(protocol, "PROMPT_VERSION", None)
    if declared is not None:
        return str(declared)
    from fairarena.arena import profiles
    from fairarena.arena.research_adversarial import ADVERSARIAL_PROMPT

    blob = json.dumps({"phase": protocol.PHASE_TASK, "rules": profiles.COMMON_RULES,
                       "frameworks": profiles.FRAMEWORK_STATEMENTS, "adversarial": ADVERSARIAL_PROMPT},
                      sort_keys=True)
    return "h" + hashlib.sha256(blob.encode()).hexdigest()[:12]


# ------------------------------------------------------------------------------------------------
# The design
# ------------------------------------------------------------------------------------------------

class StudyConfig(BaseModel):
    """One study design. Every list is a factor of the full factorial."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("custom", min_length=1, description="a label for reports")
    kind: str = Field("duel", description="duel (Agent A against each opponent, the paper's design) | council "
                                          "(every member in one debate, compared with every mechanism)")
    domain: str = Field(default_factory=lambda: _default_domain(),
                        description="a registered domain (fairarena domain list); default the package's first")
    cohorts: int = Field(50, ge=1, strict=True, description="number of sampled cohorts")
    first_cohort_seed: int = Field(0, ge=0, strict=True, description="cohort k (k = 0..cohorts-1) is sampled with seed first_cohort_seed + k")
    capacity: list[str] = Field(["standard"], min_length=1, description="capacity variants (tight, standard, high)")
    agent_a: list[str] = Field(default_factory=lambda: [f"aligned:{f}" for f in framework_names()], min_length=1,
                               description="Agent A's profiles: aligned:<framework>, baseline, adversarial, adversarial-rag")
    opponents: list[str] = Field(["baseline", "adversarial"], min_length=1,
                                 description="Agent B's profiles (the paper's B = baseline, C = adversarial)")
    baseline_control: Optional[bool] = Field(
        None, strict=True, description="add one baseline-vs-baseline debate per cohort, seed and closing (the null of every "
                          "effect; default: true when a language model plays a duel, false with scripted models)")
    model_a: str = Field("scripted:negotiator", description="model spec of Agent A (scripted, openai:MODEL@URL, llamacpp:...)")
    model_b: str = Field("scripted:negotiator", description="model spec of the opponent")
    rounds: int = Field(3, ge=1, le=50, strict=True, description="debate rounds before the finals")
    closing: list[str] = Field(["joint-draft"], min_length=1,
                               description="closing rules or mechanisms; each closes the same debate once")
    seeds: list[StrictInt] = Field([0], min_length=1, description="debate seeds (replicates; the models' sampling seeds)")
    temperature: float = Field(0.0, ge=0.0, le=2.0, strict=True)
    max_repairs: int = Field(2, ge=0, le=10, strict=True, description="repair turns for an invalid proposal")
    max_tokens: int = Field(900, ge=16, strict=True, description="max completion tokens per model call")
    rag: str = Field("auto", description="retrieval for retrieval profiles: auto | on | off")
    proposal_format: str = Field("allocation", description="how agents state proposals (registered formats only)")
    mechanisms: list[str] = Field(default_factory=list,
                                  description="aggregation rules applied to each debate's round-1 proposals and finals "
                                              "and compared with its joint (post-processing: not in the task key)")
    concurrency: dict[str, Union[int, dict[str, Union[int, float]]]] = Field(
        default_factory=dict, description="per model server (base URL, or model spec): calls in flight, a fixed "
                                          "limit N or an adaptive {start = S, max = M}")
    default_concurrency: Union[int, dict[str, Union[int, float]]] = Field(
        4, description="calls in flight to a server not listed in concurrency (N or {start = S, max = M})")
    replicas: dict[str, list[str]] = Field(default_factory=dict,
                                           description="per base URL of a model spec: the base URLs of every server "
                                                       "of that model (data-parallel replicas; calls are spread)")
    samples: int = Field(1, description="repeats of every debate at the study's temperature, each with its own "
                                        "recorded seed (sample 0 uses the design's seed)")
    stakeholders: list[str] = Field(default_factory=list,
                                    description="another domain's participants in a duel (two by two) or a council "
                                                "(default every one; tourism: tourists:<persona>, residents, "
                                                "local-business, destination, or a stakeholder file)")
    decision: str = Field("flows", description="tourism: the decision negotiated, flows | lists")
    pois: int = Field(40, ge=1, strict=True, description="tourism: points of interest per generated destination")
    k: int = Field(5, ge=1, strict=True, description="tourism: list length (decision lists)")
    problem: str = Field("", description="file: the problem file (TOML or JSON) a council or a duel decides; its "
                                         "digest is in every task key")

    # -- defaults resolved from the whole design --------------------------------------------------
    @model_validator(mode="before")
    @classmethod
    def _control_default(cls, data: Any) -> Any:
        """``baseline_control`` left out (or null) is resolved here, once, to a plain bool: true for a duel
        in which a language model plays (its effects need their null), false for scripted models and
        councils. The digest is taken over the resolved value, so a scripted design keeps its digest."""
        if isinstance(data, dict) and data.get("baseline_control") is None:
            data = {**data, "baseline_control": _plays_language_model(data)}
        return data

    # -- field checks (each names the entry) ------------------------------------------------------
    @field_validator("kind", "domain")
    @classmethod
    def _kind_domain(cls, v: str, info: ValidationInfo) -> str:
        allowed = list(STUDY_KINDS) if info.field_name == "kind" else _domain_names()
        if v not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return v

    @field_validator("capacity")
    @classmethod
    def _capacity(cls, v: list[str], info: ValidationInfo) -> list[str]:
        domain = info.data.get("domain")
        for j, x in enumerate(v):
            why = _check_variant(domain, x) if isinstance(domain, str) else None
            if why is not None:
                raise ValueError(f"entry {j} is {x!r}: expected a capacity variant, {why}")
        return list(dict.fromkeys(v))

    @field_validator("closing")
    @classmethod
    def _closing(cls, v: list[str], info: ValidationInfo) -> list[str]:
        if _own_rules(info.data):   # the domain's own debate and rules: its study_check checks them
            return list(dict.fromkeys(v))
        return _members(v, closing_names(), "closing rule")

    @field_validator("mechanisms")
    @classmethod
    def _mechanisms(cls, v: list[str], info: ValidationInfo) -> list[str]:
        if _own_rules(info.data):   # e.g. ranking rules: checked with the whole design by its study_check
            return list(dict.fromkeys(v))
        return _members(v, mechanism_names(), "mechanism (aggregation rule)")

    @field_validator("agent_a", "opponents")
    @classmethod
    def _profiles(cls, v: list[str]) -> list[str]:
        from fairarena.arena.profiles import parse_agent

        out: list[str] = []
        for j, x in enumerate(v):
            try:
                name = parse_agent(x).name
            except InputError as exc:
                raise ValueError(f"entry {j} is {x!r}: expected {exc.expected}") from None
            if name not in out:
                out.append(name)
        return out

    @field_validator("model_a", "model_b")
    @classmethod
    def _model(cls, v: str) -> str:
        from fairarena.llm.spec import parse_model_spec

        try:
            return str(parse_model_spec(v))
        except InputError as exc:
            raise ValueError(exc.expected) from None

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: list[int]) -> list[int]:
        for j, s in enumerate(v):
            if s < 0:
                raise ValueError(f"entry {j} is {s}: expected non-negative integers")
        return list(dict.fromkeys(v))

    @field_validator("rag")
    @classmethod
    def _rag(cls, v: str) -> str:
        if v not in rag_modes():
            raise ValueError(f"expected one of {', '.join(rag_modes())}")
        return v

    @field_validator("proposal_format")
    @classmethod
    def _format(cls, v: str) -> str:
        if v not in proposal_formats():
            raise ValueError(f"expected one of {', '.join(proposal_formats())} (the arena's registered formats)")
        return v

    @field_validator("concurrency", mode="before")
    @classmethod
    def _concurrency(cls, v: Any) -> Any:
        from fairarena.llm.concurrency import ConcurrencyPolicy

        if not isinstance(v, dict):
            raise ValueError("expected a table of server = limit")
        for k, n in v.items():
            try:
                ConcurrencyPolicy.of(n, "")
            except InputError as exc:
                raise ValueError(f"server {k!r} has limit {n!r}{': ' + exc.field.lstrip('.') if exc.field else ''}: "
                                 f"expected {exc.expected}") from None
        return dict(v)

    @field_validator("default_concurrency", mode="before")
    @classmethod
    def _default_concurrency(cls, v: Any) -> Any:
        from fairarena.llm.concurrency import ConcurrencyPolicy

        try:
            ConcurrencyPolicy.of(v, "")
        except InputError as exc:
            raise ValueError(f"{exc.field.lstrip('.') + ': ' if exc.field else ''}expected {exc.expected}") from None
        return v

    @field_validator("samples", mode="before")
    @classmethod
    def _samples(cls, v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError("expected a positive integer (repeats of every debate; 1 = no repeats)")
        return v

    @field_validator("replicas", mode="before")
    @classmethod
    def _replicas(cls, v: Any) -> Any:
        if not isinstance(v, dict):
            raise ValueError("expected a table of base URL = [base URLs]")
        out: dict[str, list[str]] = {}
        for k, urls in v.items():
            if not _is_url(k):
                raise ValueError(f"key {k!r}: expected the base URL (http:// or https://) of a model spec")
            if not isinstance(urls, list) or not urls:
                raise ValueError(f"{k!r} = {urls!r}: expected a non-empty list of base URLs")
            for j, u in enumerate(urls):
                if not _is_url(u):
                    raise ValueError(f"{k!r} entry {j} is {u!r}: expected a base URL starting with http:// or https://")
            out[k.rstrip("/")] = list(dict.fromkeys(u.rstrip("/") for u in urls))
        return out


    @model_validator(mode="after")
    def _design(self) -> "StudyConfig":
        check_size(self)
        default = self.domain == _default_domain()
        if not default:
            self.design.check()      # the kind's checks: a domain's participants, or its own study_check
        elif self.stakeholders:
            raise InputError("study.stakeholders", self.stakeholders, f"empty with domain {self.domain!r} (its "
                             "council's members are agent_a)")
        servers = {_server_of(s) for s in self.model_specs} - {None}
        for k in self.replicas:
            if k not in servers:
                raise InputError("study.replicas", k, "the base URL of one of the study's model specs ("
                                 + (", ".join(sorted(str(x) for x in servers)) or "none: the models are scripted")
                                 + ")")
        if default:
            self.design.check()      # e.g. a council's members are aligned agents
        return self

    # -- derived ----------------------------------------------------------------------------------
    @property
    def participant_duel(self) -> bool:
        """A duel on any domain but the default one: the domain's participants (its scripted agents) two by
        two, every pair of ``stakeholders`` (default every participant), rather than the arena's profile
        agents (``agent_a`` x ``opponents``), which play the default domain."""
        return bool(getattr(self.design, "participant_duel", False))

    @property
    def design(self) -> Any:
        """The kind's design (:mod:`fairarena.study.designs`: :class:`~fairarena.study.designs.DuelDesign` or
        :class:`~fairarena.study.designs.CouncilDesign`): the fields its kind reads and the kind's answers."""
        return study_kind(self.kind).design(self)

    @property
    def model_specs(self) -> list[str]:
        """The model specs the study's debates use (the kind's design: a council's members all use ``model_a``)."""
        return self.design.model_specs

    @property
    def members(self) -> list[str]:
        """A council's members: ``agent_a`` on the default domain (the arena's profile agents); on another,
        the domain's ``study_members``, else ``stakeholders``, default every participant."""
        if self.participant_duel:
            return duel_players(self)
        if self.domain == _default_domain():
            return list(self.agent_a)
        own = study_hook(self.domain, "study_members")
        if own is not None:
            return list(own(self))
        return list(self.stakeholders) or duel_players(self)

    def council_rules(self) -> list[str]:
        """The rules a council is compared with: ``mechanisms``, or every rule of the domain when empty."""
        if self.mechanisms:
            return list(self.mechanisms)
        if self.domain == _default_domain():
            return mechanism_names()
        own = study_hook(self.domain, "study_rules")
        return list(own(self)) if own is not None else candidate_rule_names()

    @property
    def cohort_seeds(self) -> list[int]:
        return [self.first_cohort_seed + k for k in range(self.cohorts)]

    def canonical(self) -> dict[str, Any]:
        """The validated design as plain data (what the study hash is taken over)."""
        return self.model_dump(mode="json")

    def digest(self) -> str:
        """Hash of the validated design: two files with the same design (whatever their comments or field
        order) have the same digest; a store refuses a study with a different one."""
        data = self.canonical()
        if not data["mechanisms"]:      # a design without mechanisms keeps the digest it had before the field
            del data["mechanisms"]
        for f in LATER_FIELDS:          # likewise the fields added with council and tourism studies, at their defaults
            if data[f] == StudyConfig.model_fields[f].get_default(call_default_factory=True):
                del data[f]
        blob = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()

    def server_policy(self, model_spec: str) -> Any:
        """The :class:`fairarena.llm.concurrency.ConcurrencyPolicy` of the server behind a model spec
        (None: no limit, scripted models). ``concurrency`` is looked up by base URL, then by model spec."""
        from fairarena.llm.concurrency import ConcurrencyPolicy
        from fairarena.llm.spec import parse_model_spec

        ms = parse_model_spec(model_spec)
        if ms.backend == "scripted":
            return None
        for k in (ms.base_url, str(ms)):
            if k and k in self.concurrency:
                return ConcurrencyPolicy.of(self.concurrency[k], f"study.concurrency[{k!r}]")
        if ms.backend == "llamacpp":
            return ConcurrencyPolicy.fixed(1)  # one in-process llama.cpp context is not thread-safe
        return ConcurrencyPolicy.of(self.default_concurrency, "study.default_concurrency")

    def server_limit(self, model_spec: str) -> int | None:
        """The most calls ever in flight to the server behind a model spec (None: scripted, no limit)."""
        p = self.server_policy(model_spec)
        return None if p is None else p.max

    def replica_urls(self, model_spec: str) -> list[str]:
        """The base URLs serving a model spec: ``replicas`` of its base URL, else its own (none: no server)."""
        url = _server_of(model_spec)
        if url is None:
            return []
        return list(self.replicas.get(url, [url]))


def size_factors(cfg: StudyConfig) -> dict[str, int]:
    """The design's factors, each by the field it comes from (``agent_a`` x ``opponents`` of a duel counted
    with its control as ``agent_a``), without expanding anything (the kind's design)."""
    return cfg.design.size_factors()


def estimate_size(cfg: StudyConfig) -> tuple[int, int]:
    """``(debates, model calls)`` of a design, from its factors (no expansion): the debates before any
    repeated debate is merged, and debates x members x (rounds + 2) calls (repairs not counted)."""
    debates = 1
    for n in size_factors(cfg).values():
        debates *= n
    members = cfg.design.seats   # a council's members, a duel's two
    return debates, debates * members * (cfg.rounds + 2)


def check_size(cfg: StudyConfig) -> None:
    """Refuse a design larger than :data:`MAX_DEBATES` debates or :data:`MAX_MODEL_CALLS` model calls,
    naming its largest factor, before anything is expanded."""
    debates, calls = estimate_size(cfg)
    if debates <= MAX_DEBATES and calls <= MAX_MODEL_CALLS:
        return
    factors = size_factors(cfg)
    field = max(factors, key=lambda f: factors[f])
    value = getattr(cfg, field)
    shown = " x ".join(f"{f} {n:,}" for f, n in factors.items() if n > 1) or "1"
    if debates > MAX_DEBATES:
        what = f"{debates:,} debates ({shown}); at most {MAX_DEBATES:,} in one study (docs/study.md)"
    else:
        what = (f"about {calls:,} model calls ({debates:,} debates x {calls // debates:,} calls); at most "
                f"{MAX_MODEL_CALLS:,} in one study (docs/study.md)")
    raise InputError(f"study.{field}", value, f"the design has {what}")


def candidate_rule_names() -> list[str]:
    """The candidate-set aggregation rules (the rules a problem file's council is compared with)."""
    from fairarena.aggregation.rules import RULES

    return [n for n in RULES if RULES.entry(n).kind == "candidates"]


def file_problem(path: str) -> tuple[Any, Any]:
    """``(domain, problem)`` of a problem file: the registry's problem-file domain
    (:data:`fairarena.domains.registry.PROBLEM_FILE_FORMS`) bound to the file, validated completely
    (InputError naming ``study.problem``). ``file_problem.cache_clear()`` forgets every study instance."""
    from fairarena.domains.registry import problem_file_form

    return problem_file_form("study_problem")(problem_file_form("domain"), str(path))


def _clear_file_problems() -> None:
    from fairarena.domains.registry import problem_file_form
    from fairarena.study.instances import clear

    clear()
    problem_file_form("study_problem").cache_clear()


file_problem.cache_clear = _clear_file_problems  # type: ignore[attr-defined]


def study_hook(domain: str, member: str) -> Any:
    """The domain's optional study member ``member`` (:data:`fairarena.domains.protocol.OPTIONAL`), or None."""
    from fairarena.study.instances import study_domain

    own = getattr(study_domain(domain), member, None)
    return own if callable(own) else None


def _own_rules(data: Mapping[str, Any]) -> bool:
    """Does a (partly validated) council design's domain name its own rules and closings (``study_rules``)?"""
    domain = data.get("domain")
    if data.get("kind") != "council" or not isinstance(domain, str) or domain == _default_domain():
        return False
    return study_hook(domain, "study_rules") is not None


def council_variants(cfg: StudyConfig) -> list[str]:
    """The instance variants a council study crosses with its instances: the domain's ``study_variants``;
    else the design's ``capacity`` when the domain's ``sample`` takes it, ``["problem"]`` with a problem file,
    ``["sample"]`` otherwise."""
    from fairarena.study.instances import sample_options

    own = study_hook(cfg.domain, "study_variants")
    if own is not None:
        return list(own(cfg))
    if cfg.problem:
        return ["problem"]
    return list(cfg.capacity) if sample_options(cfg.domain, {"capacity": "x"}) else ["sample"]


def _check_participant_council(cfg: StudyConfig) -> None:
    """A council of a domain's participants (no study members of its own): scripted models (its scripted
    agents debate), two members at least, candidate-set rules."""
    if not cfg.model_a.startswith("scripted"):
        raise InputError("study.model_a", cfg.model_a, f"scripted in a council on domain {cfg.domain!r} (the "
                         "domain's scripted agents play its participants)")
    if cfg.problem and cfg.cohorts != 1:
        raise InputError("study.cohorts", cfg.cohorts, "1 with a problem file (a file declares one problem; "
                                                       "replicate with seeds or samples)")
    if len(cfg.members) < 2:
        raise InputError("study.stakeholders", cfg.stakeholders, "at least two members in a council")
    ok = candidate_rule_names()
    for j, r in enumerate(cfg.mechanisms):
        if r not in ok:
            raise InputError(f"study.mechanisms[{j}]", r, f"a candidate-set rule with domain {cfg.domain!r} "
                                                          f"({', '.join(ok)})")


def duel_options(cfg: StudyConfig) -> dict[str, Any]:
    """The design fields a participant duel's domain samples its instances with (the keyword arguments of
    its ``sample``, e.g. the number of points of interest of a generated destination)."""
    from fairarena.study.instances import sample_options

    if cfg.problem:
        return {}
    return sample_options(cfg.domain, {f: getattr(cfg, f) for f in ("pois", "k", "decision")})


def duel_players(cfg: StudyConfig) -> list[str]:
    """A participant duel's players: the participants named by ``stakeholders`` (a participant's name, or the
    name its domain object carries), default every participant of the first instance, in order."""
    from fairarena.study.instances import instance_of, study_domain

    dom = study_domain(cfg.domain, cfg.problem or None)
    inst = instance_of(cfg.domain, cfg.first_cohort_seed, problem=cfg.problem or None, options=duel_options(cfg))
    ps = list(dom.participants(inst))
    if not cfg.stakeholders:
        return [p.name for p in ps]
    by = {p.name: p.name for p in ps}
    for p in ps:
        own = getattr(p.data, "name", None)
        if isinstance(own, str):
            by.setdefault(own, p.name)
    out = []
    for j, s in enumerate(cfg.stakeholders):
        if s not in by:
            raise InputError(f"study.stakeholders[{j}]", s, f"a participant of domain {cfg.domain!r} "
                                                           f"({', '.join(p.name for p in ps)})")
        if by[s] not in out:
            out.append(by[s])
    return out


def _check_participant_duel(cfg: StudyConfig) -> None:
    """A duel of a domain's participants: scripted models (the domain's scripted agents play), at least two
    players, a problem file only with ``problem``, no mechanisms (they aggregate the profile agents'
    proposals)."""
    for f in ("model_a", "model_b"):
        if not str(getattr(cfg, f)).startswith("scripted"):
            raise InputError(f"study.{f}", getattr(cfg, f), f"scripted in a duel on domain {cfg.domain!r} (the "
                             "domain's scripted agents play its participants)")
    if cfg.mechanisms:
        raise InputError("study.mechanisms", cfg.mechanisms, f"empty in a duel on domain {cfg.domain!r}")
    if cfg.problem and cfg.cohorts != 1:
        raise InputError("study.cohorts", cfg.cohorts, "1 with a problem file (a file declares one problem; "
                                                       "replicate with seeds or samples)")
    if len(duel_players(cfg)) < 2:
        raise InputError("study.stakeholders", cfg.stakeholders, "at least two participants in a duel")


def _plays_language_model(data: dict[str, Any]) -> bool:
    """Does a (not yet validated) duel design give a role to a model that is not scripted? A spec that does
    not parse counts as scripted here: its own field check reports it."""
    from fairarena.llm.spec import parse_model_spec

    if data.get("kind", "duel") != "duel" or data.get("domain", _default_domain()) != _default_domain():
        return False
    for f in ("model_a", "model_b"):
        try:
            if parse_model_spec(str(data.get(f, "scripted"))).backend != "scripted":
                return True
        except InputError:
            pass
    return False


def _is_url(x: Any) -> bool:
    return isinstance(x, str) and (x.startswith("http://") or x.startswith("https://")) and len(x.split("://", 1)[1].strip("/")) > 0


def _server_of(model_spec: str) -> str | None:
    from fairarena.llm.spec import parse_model_spec

    ms = parse_model_spec(model_spec)
    return ms.base_url.rstrip("/") if ms.backend == "openai" and ms.base_url else None


def sample_seed(seed: int, sample: int) -> int:
    """The seed of repeat ``sample`` of a debate whose design seed is ``seed``: ``seed`` itself for sample 0
    (a study without repeats keeps its keys), else 31 bits of SHA-256 over ``"sample:<seed>:<sample>"``
    (any server accepts it; a collision with a design seed merely makes two tasks one)."""
    if sample == 0:
        return seed
    return int(hashlib.sha256(f"sample:{seed}:{sample}".encode()).hexdigest()[:8], 16) & 0x7FFFFFFF


def _members(v: list[str], allowed: list[str], what: str) -> list[str]:
    for j, x in enumerate(v):
        if x not in allowed:
            raise ValueError(f"entry {j} is {x!r}: expected a {what}, one of {', '.join(allowed)}")
    return list(dict.fromkeys(v))


# ------------------------------------------------------------------------------------------------
# Presets
# ------------------------------------------------------------------------------------------------

def _paper() -> dict[str, Any]:
    # The paper's design (its Section 5): 50 cohorts, standard capacity, A aligned to each framework,
    # B = baseline and C = adversarial, 3 rounds and a joint final drafted by A; scripted models.
    return dict(name="paper", cohorts=50, first_cohort_seed=0, capacity=["standard"],
                agent_a=[f"aligned:{f}" for f in framework_names()], opponents=["baseline", "adversarial"],
                rounds=3, closing=["joint-draft"], model_a="scripted", model_b="scripted", seeds=[0])


def _council() -> dict[str, Any]:
    # Issue 14's council: six agents, one aligned to each framework, deliberate on each of the paper's 50
    # cohorts (3 rounds, joint draft); the same cohorts aggregated by every registered rule.
    return dict(name="council", kind="council", cohorts=50, first_cohort_seed=0, capacity=["standard"],
                agent_a=[f"aligned:{f}" for f in framework_names()], rounds=3, closing=["joint-draft"],
                model_a="scripted", model_b="scripted", seeds=[0], mechanisms=[])


def presets() -> dict[str, dict[str, Any]]:
    """Every preset by name: the default domain's (the paper's duel and the council, with their smaller
    forms), then each registered domain's own (the protocol's optional ``study_presets()``, in registry
    order; a name already taken is kept)."""
    out = _builtin_presets()
    for name, design in _domain_presets().items():
        out.setdefault(name, dict(design))
    return out


def _preset_table(name: str) -> dict[str, dict[str, Any]]:
    """The presets to look ``name`` up in: the built-in ones when it is one of them (no domain is imported),
    else every preset."""
    own = _builtin_presets()
    return own if name in own else presets()


def _builtin_presets() -> dict[str, dict[str, Any]]:
    paper = _paper()
    council = _council()
    out = {
        "paper": paper,
        # the demo's study: the paper's design on 5 cohorts
        "small": dict(paper, name="small", cohorts=5),
        # a few debates for tests
        "tiny": dict(paper, name="tiny", cohorts=2, agent_a=paper["agent_a"][:2], rounds=1),
        "council": council,
        "council-small": dict(council, name="council-small", cohorts=3),
    }
    return out


@functools.lru_cache(maxsize=1)
def _domain_presets() -> dict[str, dict[str, Any]]:
    from fairarena.study.instances import domain_names, study_domain

    out: dict[str, dict[str, Any]] = {}
    for d in domain_names():
        own = getattr(study_domain(d), "study_presets", None)
        if callable(own):
            for name, design in own().items():
                out.setdefault(name, dict(design))
    return out


def preset(name: str, /, **overrides: Any) -> StudyConfig:
    table = _preset_table(name)
    if name not in table:
        raise InputError("preset", name, f"one of {', '.join(table)}")
    return from_dict({**table[name], **overrides}, "")


def from_dict(data: dict[str, Any], where: str = "study.") -> StudyConfig:
    try:
        return StudyConfig(**data)
    except ValidationError as exc:
        err = exc.errors()[0]
        inner = (err.get("ctx") or {}).get("error")
        if isinstance(inner, InputError):   # a whole-design check (model validator) names its field itself
            raise InputError(inner.field, inner.value, inner.expected) from None
        loc = ".".join(str(x) for x in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        value = err.get("input")
        if err["type"] in _TYPE_ERRORS:   # strict fields: text or a boolean is never read as a number
            msg = _TYPE_ERRORS[err["type"]] + (' (write 0.5, not "0.5")' if isinstance(value, str)
                                               and err["type"] != "bool_type" else "")
        field = f"{where}{loc}" if loc else (where.rstrip(".") or "study")
        if isinstance(value, dict) and loc == "":
            value = "(the design)"
        raise InputError(field, value, msg) from None


_TYPE_ERRORS = {"int_type": "expected an integer", "float_type": "expected a number",
                "bool_type": "expected true or false", "int_from_float": "expected an integer"}


def load_study(path: str | Path) -> tuple[StudyConfig, str]:
    """The design of a study TOML file (top-level fields, or a ``[study]`` table; ``base = "paper"`` starts
    from a preset and overrides only the fields given), and the file's text."""
    from fairarena.inputs import load_toml

    data, text = load_toml(path, "study", missing="an existing study TOML file", invalid="a valid UTF-8 TOML file")
    if isinstance(data.get("study"), dict):
        data = data["study"]
    if not data:   # an empty file is not the paper's 600-debate study
        raise InputError("study", str(path), 'an empty design: give at least one field (base = "paper" starts from '
                                             "a preset) or use `fairarena study init --preset NAME`")
    base = data.pop("base", None)
    if base is not None:
        table = _preset_table(str(base))
        if base not in table:
            raise InputError("study.base", base, f"one of {', '.join(table)}")
        data = {**table[base], **data}
    return from_dict(data, "study."), text


DOMAIN_FIELDS = ("capacity", "agent_a", "opponents", "baseline_control", "decision", "pois", "k")
"""The design fields only some domains read; a domain names its own in ``study_fields`` (:func:`read_fields`)."""


def read_fields(cfg: StudyConfig) -> tuple[str, ...]:
    """The fields of ``cfg`` its study reads: those of its kind's design (:attr:`~fairarena.study.designs.Design.FIELDS`)
    less the :data:`DOMAIN_FIELDS` its domain does not name in its optional ``study_fields`` (a domain without
    ``study_fields`` keeps them all)."""
    from fairarena.study.instances import study_domain

    own = getattr(study_domain(cfg.domain), "study_fields", None)
    kind = type(cfg.design).FIELDS
    return tuple(f for f in StudyConfig.model_fields
                 if f in kind and (own is None or f not in DOMAIN_FIELDS or f in own))


def to_toml(cfg: StudyConfig) -> str:
    """The design as a commented TOML file: every field the study reads (:func:`read_fields`) and any other
    field not at its default; the fields left out (at their defaults, not read) are named in a comment."""
    lines = [f"# fairarena study design ({cfg.name}). Run: fairarena study run THIS_FILE --out DIR",
             "# Every list is a factor of the full factorial; see docs/study.md.", ""]
    reads = read_fields(cfg)
    left: list[str] = []
    for name, info in StudyConfig.model_fields.items():
        value = getattr(cfg, name)
        if name not in reads and (value == info.get_default(call_default_factory=True)
                                  or (name == "baseline_control" and not value)):   # None: resolved to False
            left.append(name)
            continue
        if info.description:
            lines.append(f"# {info.description}")
        line = f"{name} = {_toml_value(value)}"
        if name == "baseline_control" and not value and not _plays_language_model(cfg.canonical()):
            line = "# " + line   # left to its default: a design edited to use a language model gets the control
        lines.append(line)
    if left:
        lines += ["", f"# not read by a {cfg.kind} study on domain {cfg.domain!r}, left at their defaults: "
                      + ", ".join(left)]
    return "\n".join(lines) + "\n"


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v).__name__)  # pragma: no cover


# ------------------------------------------------------------------------------------------------
# Tasks
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DebateTask:
    """One debate of a study. ``index`` orders the study's tasks; ``key`` identifies the debate."""

    index: int
    key: str
    cohort: int            # cohort number k (0-based)
    cohort_seed: int
    capacity: str
    agent_a: str
    agent_b: str
    opponent_role: str     # "B" (baseline), "C" (adversarial), or the profile name for others
    framework: str | None  # Agent A's framework when aligned
    model_a: str
    model_b: str
    rounds: int
    closing: str
    seed: int
    temperature: float
    max_repairs: int
    max_tokens: int
    rag: str
    proposal_format: str
    control: bool = False
    sample: int = 0        # repeat number (0..samples-1); ``seed`` is that repeat's own seed
    # a duel of a domain's participants (absent from the dicts of the profile duels, whose keys predate them):
    domain: str | None = None        # the domain (agent_a, agent_b: its participants)
    problem: str | None = None       # a problem file's path
    options: tuple[tuple[str, Any], ...] | None = None   # the domain's sample options (duel_options)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for f in ("domain", "problem", "options"):
            if d[f] is None:
                del d[f]
        if "options" in d:
            d["options"] = dict(self.options or ())
        return d

    def sample_options(self) -> dict[str, Any]:
        return dict(self.options or ())

    def debate_config(self) -> Any:
        from fairarena.arena import DebateConfig

        kw: dict[str, Any] = dict(rounds=self.rounds, max_repairs=self.max_repairs, closing=self.closing,
                                  seed=self.seed, temperature=self.temperature, max_tokens=self.max_tokens)
        if self.proposal_format != "allocation":
            kw["proposal_format"] = self.proposal_format
        return DebateConfig(**kw)


ROLE_OF = {"baseline": "B", "adversarial": "C"}


def cohort_of(seed: int, capacity: str) -> Any:
    """The default domain's instance of ``seed`` and capacity variant (``sample(seed, capacity=...)``; cached
    per process: every debate of an instance shares it)."""
    from fairarena.study.instances import default_domain, instance_of

    return instance_of(default_domain(), seed, options={"capacity": capacity})


def _cohort_digest(seed: int, capacity: str) -> str:
    """The digest of :func:`cohort_of` (the domain protocol's: sha256 of its canonical ``to_dict`` JSON)."""
    from fairarena.study.instances import default_domain, digest_of

    return digest_of(default_domain(), seed, options={"capacity": capacity})


def task_key(cohort_digest: str, agent_a: str, agent_b: str, model_a: str, model_b: str, config: dict[str, Any],
             rag: str, proposal_format: str, prompt: str) -> str:
    """sha256 (first :data:`KEY_CHARS` hex) of the canonical JSON of everything that determines a debate."""
    blob = json.dumps({"cohort": cohort_digest, "agents": [agent_a, agent_b], "models": [model_a, model_b],
                       "config": config, "rag": rag, "proposal_format": proposal_format, "prompt_version": prompt},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:KEY_CHARS]


@dataclass(frozen=True)
class CouncilTask:
    """One debate of a council study: every member in one debate on one instance (``capacity``: the instance
    variant, :func:`council_variants`: a capacity variant, a domain's own variant such as a decision,
    ``problem`` or ``sample``), closed by ``closing``; the record also holds every mechanism's decision on the
    same instance."""

    index: int
    key: str
    cohort: int            # instance number k (0-based)
    cohort_seed: int       # the cohort's or destination's seed
    capacity: str          # the instance variant (council_variants)
    domain: str
    members: tuple[str, ...]
    model: str
    rounds: int
    closing: str
    seed: int
    temperature: float
    max_repairs: int
    max_tokens: int
    rag: str
    pois: int | None = None   # a domain's own task fields (study_task_fields), e.g. a destination's size
    k: int | None = None      # and list length
    kind: str = "council"
    sample: int = 0           # repeat number (0..samples-1); ``seed`` is that repeat's own seed
    problem: str | None = None   # a problem file's path (absent from other tasks' dicts)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["members"] = list(self.members)
        if self.problem is None:
            del d["problem"]
        return d

    def debate_config(self) -> Any:
        from fairarena.arena import DebateConfig

        return DebateConfig(rounds=self.rounds, max_repairs=self.max_repairs, closing=self.closing, seed=self.seed,
                            temperature=self.temperature, max_tokens=self.max_tokens)


def instance_digest(domain: str, seed: int, variant: str, pois: int | None = None, problem: str | None = None,
                    k: int | None = None) -> str:
    """Hash of a study instance's full data (:func:`fairarena.domains.protocol.instance_digest`): a problem
    file's problem (its canonical JSON, whatever the path), else the domain's ``sample(seed, ...)`` with
    the options its ``sample`` takes (the variant as ``capacity``, ``pois``, ``k``)."""
    from fairarena.study.instances import digest_of, sample_options

    if problem:
        return digest_of(domain, seed, problem=str(problem))
    given = {"capacity": variant, "pois": pois, "k": k}
    return digest_of(domain, seed, options=sample_options(domain, {f: v for f, v in given.items() if v is not None}))


def expand_council(cfg: StudyConfig) -> list[CouncilTask]:
    """Every debate of a council study, in (instance, capacity, seed, closing) order. The key hashes the
    instance's data, the members, the model, the debate's configuration, the retrieval mode and the arena's
    prompt version (tourism: also the decision and k); the mechanisms are post-processing, not in the key."""
    pv = prompt_version()
    out: list[CouncilTask] = []
    fields_of = study_hook(cfg.domain, "study_task_fields")
    key_config = study_hook(cfg.domain, "study_key_config")
    members = tuple(cfg.members)
    for k, cs in enumerate(cfg.cohort_seeds):
        for var in council_variants(cfg):
            extra = dict(fields_of(cfg, var)) if fields_of is not None else {}
            problem = extra.get("problem", cfg.problem or None)
            digest = instance_digest(cfg.domain, cs, var, extra.get("pois"), problem, extra.get("k"))
            for seed, sample in _seeds(cfg):
                for closing in cfg.closing:
                    t = CouncilTask(len(out), "", k, cs, var, cfg.domain, members, cfg.model_a, cfg.rounds, closing,
                                    seed, cfg.temperature, cfg.max_repairs, cfg.max_tokens, cfg.rag,
                                    extra.get("pois"), extra.get("k"), sample=sample, problem=problem)
                    conf = dict(key_config(t)) if key_config is not None else asdict(t.debate_config())
                    conf.pop("proposal_format", None)
                    blob = json.dumps({"kind": "council", "domain": cfg.domain, "instance": digest,
                                       "members": list(members), "model": cfg.model_a, "config": conf,
                                       "rag": cfg.rag, "prompt_version": pv}, sort_keys=True, separators=(",", ":"))
                    out.append(replace(t, key=hashlib.sha256(blob.encode()).hexdigest()[:KEY_CHARS]))
    return out


def _seeds(cfg: StudyConfig) -> list[tuple[int, int]]:
    """``(seed, sample)`` of every repeat: per design seed, samples 0..samples-1 (:func:`sample_seed`)."""
    return [(sample_seed(seed, j), j) for seed in cfg.seeds for j in range(cfg.samples)]


def expand(cfg: StudyConfig) -> list[Any]:
    """Every debate of the study, by its kind's ``expand`` (:mod:`fairarena.study.kinds`): a duel study's
    :class:`DebateTask` (:func:`expand_duel`), a council study's :class:`CouncilTask` (:func:`expand_council`)."""
    return study_kind(cfg.kind).expand(cfg)


def expand_duel(cfg: StudyConfig) -> list[DebateTask]:
    """Every debate of a duel study, in (cohort, capacity, seed, A, opponent, closing) order, the control
    debates (when asked) after each cohort's block. A duel of a domain's participants:
    :func:`expand_participant_duel`."""
    if cfg.participant_duel:
        return expand_participant_duel(cfg)
    pv = prompt_version()
    out: list[DebateTask] = []
    configs: dict[tuple[str, int], dict[str, Any]] = {}   # the DebateConfig depends on (closing, seed) only

    def add(k: int, cs: int, cap: str, seed: int, a: str, b: str, closing: str, control: bool, sample: int) -> None:
        fw = a.partition(":")[2] if a.startswith("aligned:") else None
        t = DebateTask(len(out), "", k, cs, cap, a, b, "control" if control else ROLE_OF.get(b, b), fw,
                       cfg.model_a, cfg.model_b, cfg.rounds, closing, seed, cfg.temperature, cfg.max_repairs,
                       cfg.max_tokens, cfg.rag, cfg.proposal_format, control, sample)
        conf = configs.get((closing, seed))
        if conf is None:
            conf = asdict(t.debate_config())
            conf.pop("proposal_format", None)   # keyed on its own below (keys of earlier studies unchanged)
            configs[(closing, seed)] = conf
        key = task_key(_cohort_digest(cs, cap), a, b, cfg.model_a, cfg.model_b, conf, cfg.rag, cfg.proposal_format, pv)
        out.append(replace(t, key=key))

    for k, cs in enumerate(cfg.cohort_seeds):
        for cap in cfg.capacity:
            for seed, sample in _seeds(cfg):
                for a in cfg.agent_a:
                    for b in cfg.opponents:
                        for closing in cfg.closing:
                            add(k, cs, cap, seed, a, b, closing, False, sample)
                if cfg.baseline_control:
                    for closing in cfg.closing:
                        add(k, cs, cap, seed, "baseline", "baseline", closing, True, sample)
    keys = [t.key for t in out]
    if len(set(keys)) != len(keys):  # only when a factor repeats a debate (e.g. control and opponents both baseline)
        seen: set[str] = set()
        out = [t for t in out if not (t.key in seen or seen.add(t.key))]  # type: ignore[func-returns-value]
        out = [replace(t, index=i) for i, t in enumerate(out)]
    return out


def expand_participant_duel(cfg: StudyConfig) -> list[DebateTask]:
    """Every debate of a duel of a domain's participants, in (instance, seed, pair, closing) order: each
    pair of players (:func:`duel_players`; the first of the pair speaks first) on each instance. The key
    hashes the domain, the instance's digest (:func:`fairarena.domains.protocol.instance_digest`), the pair,
    the models, the debate's configuration, the proposal format and the arena's prompt version. A problem
    file's study has one instance (its seeds replicate the debates)."""
    from fairarena.study.instances import digest_of

    pv = prompt_version()
    players = duel_players(cfg)
    pairs = [(a, b) for i, a in enumerate(players) for b in players[i + 1:]]
    options = duel_options(cfg)
    opts = tuple(sorted(options.items()))
    problem = cfg.problem or None
    out: list[DebateTask] = []
    for k, cs in enumerate(cfg.cohort_seeds):
        digest = digest_of(cfg.domain, cs, problem=problem, options=options)
        for seed, sample in _seeds(cfg):
            for a, b in pairs:
                for closing in cfg.closing:
                    t = DebateTask(len(out), "", k, cs, "problem" if problem else "sample", a, b, b, None,
                                   cfg.model_a, cfg.model_b, cfg.rounds, closing, seed, cfg.temperature,
                                   cfg.max_repairs, cfg.max_tokens, cfg.rag, cfg.proposal_format, False, sample,
                                   domain=cfg.domain, problem=problem, options=opts)
                    conf = asdict(t.debate_config())
                    conf.pop("proposal_format", None)
                    blob = json.dumps({"kind": "duel", "domain": cfg.domain, "instance": digest, "agents": [a, b],
                                       "models": [cfg.model_a, cfg.model_b], "config": conf, "rag": cfg.rag,
                                       "proposal_format": cfg.proposal_format, "prompt_version": pv},
                                      sort_keys=True, separators=(",", ":"))
                    out.append(replace(t, key=hashlib.sha256(blob.encode()).hexdigest()[:KEY_CHARS]))
    seen: set[str] = set()   # instances that are one (a domain whose sample ignores the seed): one debate
    out = [t for t in out if not (t.key in seen or seen.add(t.key))]  # type: ignore[func-returns-value]
    return [replace(t, index=i) for i, t in enumerate(out)]
