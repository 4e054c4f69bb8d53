"""The triage-debate study: a design file (TOML, validated once), presets, and its expansion into tasks.

A study is the full factorial of its design: cohorts x capacity variants x debate seeds x Agent A's
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
from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, ValidationInfo, field_validator, model_validator

from fairarena.errors import InputError
from fairarena.study.kinds import KINDS as _KINDS, study_kind

KEY_CHARS = 24  # hex characters of sha256 kept in a task key (96 bits)

STUDY_KINDS = {name: kind.description for name, kind in _KINDS.items()}
"""The registered study kinds (:data:`fairarena.study.kinds.KINDS`) and what each does."""
STUDY_DOMAINS = {"triage": "sampled triage cohorts (capacity variants)",
                 "tourism": "seeded synthetic destinations (docs/tourism.md); council studies only",
                 "file": "a problem declared in a file (problem = PATH; docs/domains.md); council studies only"}
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


def capacity_variants() -> list[str]:
    from fairarena.triage.cohort import CAPACITY_VARIANTS

    return list(CAPACITY_VARIANTS)


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
    domain: str = Field("triage", description="triage (sampled cohorts) | tourism (seeded destinations; council only)")
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
                                    description="tourism: the stakeholder agents (tourists:<persona>, residents, "
                                                "local-business, destination, or a stakeholder file)")
    decision: str = Field("flows", description="tourism: the decision negotiated, flows | lists")
    pois: int = Field(40, ge=1, strict=True, description="tourism: points of interest per generated destination")
    k: int = Field(5, ge=1, strict=True, description="tourism: list length (decision lists)")
    problem: str = Field("", description="file: the problem file (TOML or JSON) a council decides; its digest "
                                         "is in every task key")

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
        allowed = STUDY_KINDS if info.field_name == "kind" else STUDY_DOMAINS
        if v not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return v

    @field_validator("capacity")
    @classmethod
    def _capacity(cls, v: list[str]) -> list[str]:
        return _members(v, capacity_variants(), "capacity variant")

    @field_validator("closing")
    @classmethod
    def _closing(cls, v: list[str], info: ValidationInfo) -> list[str]:
        if info.data.get("domain") == "tourism":   # the tourism debate's rules: checked with the whole design
            return list(dict.fromkeys(v))
        return _members(v, closing_names(), "closing rule")

    @field_validator("mechanisms")
    @classmethod
    def _mechanisms(cls, v: list[str], info: ValidationInfo) -> list[str]:
        if info.data.get("domain") == "tourism":   # lists add the ranking rules: checked with the whole design
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
        if self.domain == "tourism":
            if self.kind != "council":
                raise InputError("study.kind", self.kind, "council with domain 'tourism' (a tourism study puts every "
                                 "stakeholder in one debate)")
            from fairarena.tourism.study import check_design

            for closing in self.closing:
                check_design(stakeholders=self.stakeholders, decision=self.decision, rules=self.mechanisms,
                             closing=closing, k=self.k, pois=self.pois,   # scripted: the domain's own loop
                             model="scripted" if self.model_a.startswith("scripted") else self.model_a)
        elif self.domain == "file":
            _check_file_design(self)
        elif self.stakeholders:
            raise InputError("study.stakeholders", self.stakeholders, "empty with domain 'triage' (a triage "
                             "council's members are agent_a)")
        servers = {_server_of(s) for s in self.model_specs} - {None}
        for k in self.replicas:
            if k not in servers:
                raise InputError("study.replicas", k, "the base URL of one of the study's model specs ("
                                 + (", ".join(sorted(str(x) for x in servers)) or "none: the models are scripted")
                                 + ")")
        if self.kind == "council" and self.domain == "triage":
            fws = framework_names()
            for j, m in enumerate(self.agent_a):
                if not m.startswith("aligned:") or m.partition(":")[2] not in fws:
                    raise InputError(f"study.agent_a[{j}]", m, "aligned:<framework> in a council (a member votes "
                                     "with its framework's objective and proposes its exact optimum)")
            if len(self.agent_a) < 2:
                raise InputError("study.agent_a", self.agent_a, "at least two members in a council")
        return self

    # -- derived ----------------------------------------------------------------------------------
    @property
    def model_specs(self) -> list[str]:
        """The model specs the study's debates use (a council's members all use ``model_a``)."""
        return sorted({self.model_a} if self.kind == "council" else {self.model_a, self.model_b})

    @property
    def members(self) -> list[str]:
        """A council's members: ``stakeholders`` (tourism; a problem file's, default every stakeholder of the
        file) or ``agent_a`` (triage)."""
        if self.domain == "file":
            return list(self.stakeholders) or [st.name for st in file_problem(self.problem)[1].stakeholders]
        return list(self.stakeholders) if self.domain == "tourism" else list(self.agent_a)

    def council_rules(self) -> list[str]:
        """The rules a council is compared with: ``mechanisms``, or every rule of the domain when empty."""
        if self.mechanisms:
            return list(self.mechanisms)
        if self.domain == "tourism":
            from fairarena.tourism.decisions import rule_names

            return list(rule_names(self.decision))
        if self.domain == "file":
            return candidate_rule_names()
        return mechanism_names()

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
    with its control as ``agent_a``), without expanding anything."""
    council = cfg.kind == "council"
    tourism = cfg.domain == "tourism"
    pairs = len(cfg.agent_a) * len(cfg.opponents) + (1 if cfg.baseline_control else 0)
    out = {"cohorts": cfg.cohorts, "capacity": 1 if tourism else len(cfg.capacity), "seeds": len(cfg.seeds),
           "samples": cfg.samples, "closing": len(cfg.closing)}
    if not council:
        out["agent_a"] = pairs
    return out


def estimate_size(cfg: StudyConfig) -> tuple[int, int]:
    """``(debates, model calls)`` of a design, from its factors (no expansion): the debates before any
    repeated debate is merged, and debates x members x (rounds + 2) calls (repairs not counted)."""
    debates = 1
    for n in size_factors(cfg).values():
        debates *= n
    members = len(cfg.members) if cfg.kind == "council" else 2
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


@functools.lru_cache(maxsize=8)
def file_problem(path: str) -> tuple[Any, Any]:
    """``(domain, problem)`` of a problem file: the registered ``file`` domain (``fairarena.domains``) bound to
    the file, validated completely (InputError naming ``study.problem``)."""
    from dataclasses import replace as bind

    from fairarena.domains.registry import DOMAINS

    base = DOMAINS.get("file")
    try:
        instance = base.load(path)
    except InputError as exc:
        raise InputError("study.problem", path, f"a valid problem file ({exc})") from None
    return bind(base, declared=instance, source=str(path)), instance


def _check_file_design(cfg: StudyConfig) -> None:
    """A problem-file study: a council on the file's one problem (cohorts = 1), a readable problem file, members
    among its stakeholders (two at least), candidate-set rules only."""
    if cfg.kind != "council":
        raise InputError("study.kind", cfg.kind, "council with domain 'file' (every stakeholder in one debate)")
    if not cfg.problem:
        raise InputError("study.problem", cfg.problem, "the path of a problem file with domain 'file'")
    if cfg.cohorts != 1:
        raise InputError("study.cohorts", cfg.cohorts, "1 with domain 'file' (a file declares one problem; "
                                                       "replicate with seeds or samples)")
    _, instance = file_problem(cfg.problem)
    names = [st.name for st in instance.stakeholders]
    for j, m in enumerate(cfg.stakeholders):
        if m not in names:
            raise InputError(f"study.stakeholders[{j}]", m, f"a stakeholder of the problem file ({', '.join(names)})")
    if len(cfg.members) < 2:
        raise InputError("study.stakeholders", cfg.stakeholders, "at least two members in a council")
    ok = candidate_rule_names()
    for j, r in enumerate(cfg.mechanisms):
        if r not in ok:
            raise InputError(f"study.mechanisms[{j}]", r, f"a candidate-set rule with domain 'file' ({', '.join(ok)})")


def _plays_language_model(data: dict[str, Any]) -> bool:
    """Does a (not yet validated) duel design give a role to a model that is not scripted? A spec that does
    not parse counts as scripted here: its own field check reports it."""
    from fairarena.llm.spec import parse_model_spec

    if data.get("kind", "duel") != "duel" or data.get("domain", "triage") != "triage":
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


def _tourism() -> dict[str, Any]:
    # Issue 15's tourism study: the four built-in stakeholder kinds (tourists as the family persona) on 50
    # seeded 40-POI destinations, negotiating visitor flows through the arena; the joint drafted as the Nash
    # bargaining solution (joint-draft, docs/tourism.md), every rule beside it.
    return dict(name="tourism", kind="council", domain="tourism", cohorts=50, first_cohort_seed=0,
                stakeholders=["tourists:family", "residents", "local-business", "destination"], decision="flows",
                pois=40, rounds=3, closing=["joint-draft"], model_a="scripted", model_b="scripted", seeds=[0],
                mechanisms=[])


def presets() -> dict[str, dict[str, Any]]:
    paper = _paper()
    council = _council()
    tourism = _tourism()
    return {
        "paper": paper,
        # the demo's study: the paper's design on 5 cohorts
        "small": dict(paper, name="small", cohorts=5),
        # a few debates for tests
        "tiny": dict(paper, name="tiny", cohorts=2, agent_a=paper["agent_a"][:2], rounds=1),
        "council": council,
        "council-small": dict(council, name="council-small", cohorts=3),
        "tourism": tourism,
        "tourism-small": dict(tourism, name="tourism-small", cohorts=3, pois=20),
    }


def preset(name: str, /, **overrides: Any) -> StudyConfig:
    table = presets()
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
        table = presets()
        if base not in table:
            raise InputError("study.base", base, f"one of {', '.join(table)}")
        data = {**table[base], **data}
    return from_dict(data, "study."), text


def to_toml(cfg: StudyConfig) -> str:
    """The design as a commented TOML file (every field written out)."""
    lines = [f"# fairarena study design ({cfg.name}). Run: fairarena study run THIS_FILE --out DIR",
             "# Every list is a factor of the full factorial; see docs/study.md.", ""]
    for name, info in StudyConfig.model_fields.items():
        if info.description:
            lines.append(f"# {info.description}")
        line = f"{name} = {_toml_value(getattr(cfg, name))}"
        if name == "baseline_control" and not cfg.baseline_control and not _plays_language_model(cfg.canonical()):
            line = "# " + line   # left to its default: a design edited to use a language model gets the control
        lines.append(line)
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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def debate_config(self) -> Any:
        from fairarena.arena import DebateConfig

        kw: dict[str, Any] = dict(rounds=self.rounds, max_repairs=self.max_repairs, closing=self.closing,
                                  seed=self.seed, temperature=self.temperature, max_tokens=self.max_tokens)
        if self.proposal_format != "allocation":
            kw["proposal_format"] = self.proposal_format
        return DebateConfig(**kw)


ROLE_OF = {"baseline": "B", "adversarial": "C"}


@functools.lru_cache(maxsize=256)
def cohort_of(seed: int, capacity: str) -> Any:
    """The sampled cohort (cached per process: every debate of a cohort shares it)."""
    from fairarena.triage import sample_cohort

    return sample_cohort(seed, capacity)


@functools.lru_cache(maxsize=256)
def _cohort_digest(seed: int, capacity: str) -> str:
    blob = json.dumps(cohort_of(seed, capacity).to_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def task_key(cohort_digest: str, agent_a: str, agent_b: str, model_a: str, model_b: str, config: dict[str, Any],
             rag: str, proposal_format: str, prompt: str) -> str:
    """sha256 (first :data:`KEY_CHARS` hex) of the canonical JSON of everything that determines a debate."""
    blob = json.dumps({"cohort": cohort_digest, "agents": [agent_a, agent_b], "models": [model_a, model_b],
                       "config": config, "rag": rag, "proposal_format": proposal_format, "prompt_version": prompt},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:KEY_CHARS]


@dataclass(frozen=True)
class CouncilTask:
    """One debate of a council study: every member in one debate on one instance (a triage cohort of one
    capacity variant, or a tourism destination; ``capacity`` is the tourism decision then), closed by
    ``closing``; the record also holds every mechanism's decision on the same instance."""

    index: int
    key: str
    cohort: int            # instance number k (0-based)
    cohort_seed: int       # the cohort's or destination's seed
    capacity: str          # triage: the capacity variant; tourism: the decision (flows, lists)
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
    pois: int | None = None   # tourism only
    k: int | None = None      # tourism only
    kind: str = "council"
    sample: int = 0           # repeat number (0..samples-1); ``seed`` is that repeat's own seed
    problem: str | None = None   # a problem file's path (domain file only; absent from other tasks' dicts)

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


def instance_digest(domain: str, seed: int, variant: str, pois: int | None = None, problem: str | None = None) -> str:
    """Hash of a study instance's full data: a triage cohort (seed, capacity variant), a tourism
    destination (seed, number of POIs) or a problem file's problem (its canonical JSON, whatever the path)."""
    if domain == "file":
        from fairarena.domains.protocol import instance_digest as digest_of

        dom, inst = file_problem(str(problem))
        return digest_of(dom, inst)
    if domain == "tourism":
        from fairarena.tourism.study import instance_digest as destination_digest

        return destination_digest(seed, int(pois or 0))
    return _cohort_digest(seed, variant)


def expand_council(cfg: StudyConfig) -> list[CouncilTask]:
    """Every debate of a council study, in (instance, capacity, seed, closing) order. The key hashes the
    instance's data, the members, the model, the debate's configuration, the retrieval mode and the arena's
    prompt version (tourism: also the decision and k); the mechanisms are post-processing, not in the key."""
    pv = prompt_version()
    out: list[CouncilTask] = []
    tourism = cfg.domain == "tourism"
    on_file = cfg.domain == "file"
    variants = [cfg.decision] if tourism else ["problem"] if on_file else cfg.capacity
    members = tuple(cfg.members)
    for k, cs in enumerate(cfg.cohort_seeds):
        for var in variants:
            digest = instance_digest(cfg.domain, cs, var, cfg.pois if tourism else None, cfg.problem or None)
            for seed, sample in _seeds(cfg):
                for closing in cfg.closing:
                    t = CouncilTask(len(out), "", k, cs, var, cfg.domain, members, cfg.model_a, cfg.rounds, closing,
                                    seed, cfg.temperature, cfg.max_repairs, cfg.max_tokens, cfg.rag,
                                    cfg.pois if tourism else None, cfg.k if tourism and var == "lists" else None,
                                    sample=sample, problem=cfg.problem if on_file else None)
                    conf = ({"rounds": cfg.rounds, "closing": closing, "seed": seed, "decision": var, "k": t.k,
                             "temperature": cfg.temperature, "max_repairs": cfg.max_repairs,
                             "max_tokens": cfg.max_tokens} if tourism else asdict(t.debate_config()))
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
    debates (when asked) after each cohort's block."""
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
