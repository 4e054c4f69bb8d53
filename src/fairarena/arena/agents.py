"""Building agents from specs: profile (``aligned:rawlsian``...), model (``scripted``, ``openai:...``,
``llamacpp:...``), retrieval.

Retrieval (``rag``): ``auto`` turns it on for retrieval profiles whose model is a language model and the
``rag`` extra is installed, otherwise the agent runs without it and the transcript says why; ``on``
requires it (an error when the extra is missing); ``off`` never retrieves. The scripted negotiator
does not read text, so ``auto`` leaves retrieval off for it (``on`` still records what it would see).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

from fairarena.arena.negotiator import ObjectiveNegotiator
from fairarena.arena.profiles import Profile, parse_agent
from fairarena.arena.protocol import Agent
from fairarena.errors import InputError
from fairarena.llm import ScriptedChatModel, build_model, parse_model_spec
from fairarena.llm.wrappers import UsageMeter

RAG_MODES = ("auto", "on", "off")


def default_rag_dir() -> Path:
    base = os.environ.get("FAIRARENA_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "fairarena")
    return Path(base) / "rag"


def arena_documents(user_dirs: list[str | Path] = ()) -> list[Any]:
    """The framework corpus plus the research documents of the adversarial-rag profile (label ``adversarial``;
    framework-filtered queries of aligned agents never see them)."""
    from fairarena.arena.research_adversarial import ADVERSARIAL_DOCUMENTS
    from fairarena.rag.corpus import Document, load_corpus

    docs = load_corpus(user_dirs)
    docs += [Document("adversarial", name, text, "research_adversarial") for name, text in ADVERSARIAL_DOCUMENTS.items()]
    return docs


class _StoreCache:
    """One vector store per (dir, embedder, user dirs) in this process: opening costs a model load."""

    stores: dict[tuple[str, str, tuple[str, ...]], Any] = {}

    @classmethod
    def get(cls, rag_dir: Path, embedder: str, user_dirs: tuple[str, ...]) -> Any:
        key = (str(rag_dir), embedder, user_dirs)
        if key not in cls.stores:
            from fairarena.rag.store import VectorStore
            cls.stores[key] = VectorStore.open(rag_dir, arena_documents(list(user_dirs)), embedder)
        return cls.stores[key]


def rag_unavailable() -> str | None:
    import importlib.util
    for mod in ("chromadb", "sentence_transformers"):
        if importlib.util.find_spec(mod) is None:
            return f"rag extra not installed ({mod} missing)"
    return None


def scripted_negotiator(domain: Any, instance: Any, profile: Profile, problem: Any) -> Any:
    """The scripted negotiator of ``profile`` on ``instance``: the domain's own (``scripted_negotiator``, e.g.
    the need-satisfaction negotiator of triage), else the objective negotiator
    (:class:`fairarena.arena.negotiator.ObjectiveNegotiator`) of the domain participant the profile is
    aligned to (``aligned:<participant>``; or a :class:`ParticipantProfile`)."""
    own = getattr(domain, "scripted_negotiator", None)
    if callable(own):
        return own(instance, profile, problem)
    everyone = list(domain.participants(instance))
    want = getattr(profile, "participant", None) or profile.framework
    match = [p for p in everyone if p.name == want]
    if not match:
        raise InputError("agent", profile.name, f"a profile aligned to a participant of domain {domain.name!r} "
                         f"({', '.join(p.name for p in everyone)}) for the scripted negotiator")
    return ObjectiveNegotiator(domain, instance, match[0], everyone, problem)


def build_agent(name: str, agent: str | Profile, model: str, cohort: Any, *, cache: str | Path | None = None,
                offline: bool = False, rag: str = "auto", rag_dir: str | Path | None = None,
                embedder: str = "minilm", corpus_dirs: list[str | Path] = (), models: dict[str, Any] | None = None,
                max_calls: int | None = None, max_tokens: int | None = None, retries: int = 5,
                domain: Any = None, **backend_opts: Any) -> Agent:
    """``models`` shares one built model per spec between the agents of a debate (one GGUF load).
    ``cohort``: the instance of ``domain`` (default the registry's default domain); the scripted model
    plays the profile with :func:`scripted_negotiator`."""
    from fairarena.arena.domain import default_domain

    domain = default_domain() if domain is None else domain
    profile = agent if isinstance(agent, Profile) else parse_agent(agent)
    if rag not in RAG_MODES:
        raise InputError("rag", rag, f"one of {', '.join(RAG_MODES)}")
    spec = parse_model_spec(model)
    problem = domain.problem(cohort)
    negotiator = None
    if spec.backend == "scripted" and spec.model == "negotiator":
        negotiator = scripted_negotiator(domain, cohort, profile, problem)
        chat: Any = UsageMeter(ScriptedChatModel(negotiator, name="negotiator"))
    else:
        key = str(spec)
        if models is not None and key in models:
            chat = models[key]
        else:
            chat = build_model(spec, cache=cache, offline=offline, max_calls=max_calls, max_tokens=max_tokens,
                               retries=retries, **backend_opts)
            if models is not None:
                models[key] = chat
    retriever = None
    note = None
    if profile.uses_retrieval:
        want = rag == "on" or (rag == "auto" and negotiator is None)
        missing = rag_unavailable() if want else None   # two module searches: not for every debate without retrieval
        if not want:
            note = ("retrieval off (--rag off)" if rag == "off" else
                    "retrieval off: the scripted negotiator does not read text (use --rag on to record it)")
        elif missing:
            if rag == "on":
                raise InputError("rag", rag, f"the rag extra: pip install 'fairarena[rag]' ({missing})")
            note = f"{missing}: framework statement in the system prompt instead of retrieval"
        else:
            store = _StoreCache.get(Path(rag_dir) if rag_dir else default_rag_dir(), embedder,
                                    tuple(str(d) for d in corpus_dirs))
            label = profile.retrieval_framework

            def retriever(query: str, k: int, _store: Any = store, _fw: str | None = label) -> list[Any]:
                return _store.query(query, _fw, k)
    elif profile.kind == "baseline" or profile.kind == "adversarial":
        note = None
    return Agent(name, profile, chat, str(spec), negotiator, retriever, note)


def resolve_participants(agents: list[str] = (), *, agent_a: str | None = None, agent_b: str | None = None,
                         models: list[str] = (), model_b: str | None = None) -> list[dict[str, str]]:
    """The participants of a debate as ``[{"name", "profile", "model"}]``, every spec checked.

    ``agents``: ``PROFILE`` or ``NAME=PROFILE`` (names default to A, B, C... by position); without any,
    the two-agent form ``agent_a`` / ``agent_b`` (defaults ``aligned:rawlsian`` and ``baseline``).
    ``models``: ``SPEC`` (the default of every participant; at most one) or ``NAME=SPEC`` (one
    participant's model; NAME must be a participant). ``model_b``: the second participant's model.
    Nothing is built: this only validates, so it runs before any work or write.
    """
    import re

    from fairarena.arena.protocol import LIMITS, default_names

    agents, models = list(agents or ()), list(models or ())
    if agents and (agent_a is not None or agent_b is not None):
        raise InputError("agent", "--agent with --agent-a/--agent-b", "either repeated --agent or --agent-a/--agent-b")
    entries = agents or [agent_a or "aligned:rawlsian", agent_b or "baseline"]
    if not 2 <= len(entries) <= LIMITS["participants"]:
        raise InputError("agent", " ".join(entries), f"2 to {LIMITS['participants']} participants (repeat --agent)")
    names = default_names(len(entries))
    out: list[dict[str, str]] = []
    for k, entry in enumerate(entries):
        name, sep, profile = str(entry).partition("=")
        if not sep:
            name, profile = names[k], name
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,31}", name):
            raise InputError("agent", entry, "PROFILE or NAME=PROFILE, NAME of letters, digits, '-' or '_'")
        parse_agent(profile)
        out.append({"name": name, "profile": profile, "model": ""})
    return assign_models(out, models, model_b)


def assign_models(participants: list[dict[str, Any]], models: Sequence[str],
                  model_b: str | None = None) -> list[dict[str, Any]]:
    """Give each participant (``{"name", "profile", "model"}``) its model spec, checked, nothing built:
    ``models`` holds ``SPEC`` (every participant's default; at most one) or ``NAME=SPEC`` (one participant's;
    NAME must be a participant), ``model_b`` the second participant's (the two-agent form); default
    ``scripted``. The names must be distinct. Returns ``participants``."""
    seen = [p["name"] for p in participants]
    if len(set(seen)) != len(seen):
        raise InputError("agent", ", ".join(seen), "distinct participant names")
    default, per = None, {}
    for spec in models:
        name, sep, rest = str(spec).partition("=")
        if sep and name in seen:
            if name in per:
                raise InputError("model", spec, f"one --model {name}=SPEC per participant")
            per[name] = rest
        elif default is not None:
            raise InputError("model", spec, "one default --model SPEC; NAME=SPEC for one participant "
                                            f"(participants: {', '.join(seen)})")
        else:
            default = spec
    if model_b is not None:
        if seen[1] in per:
            raise InputError("model-b", model_b, f"either --model-b or --model {seen[1]}=SPEC")
        per[seen[1]] = model_b
    for p in participants:
        p["model"] = per.get(p["name"], default or "scripted")
        parse_model_spec(p["model"])
    return participants
