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
from typing import Any

from fairarena.arena.negotiator import Negotiator
from fairarena.arena.profiles import Profile, parse_agent
from fairarena.arena.protocol import Agent
from fairarena.errors import InputError
from fairarena.llm import ScriptedChatModel, build_model, parse_model_spec
from fairarena.llm.wrappers import UsageMeter
from fairarena.triage import Cohort

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


def _rag_unavailable() -> str | None:
    import importlib.util
    for mod in ("chromadb", "sentence_transformers"):
        if importlib.util.find_spec(mod) is None:
            return f"rag extra not installed ({mod} missing)"
    return None


def build_agent(name: str, agent: str | Profile, model: str, cohort: Cohort, *, cache: str | Path | None = None,
                offline: bool = False, rag: str = "auto", rag_dir: str | Path | None = None,
                embedder: str = "minilm", corpus_dirs: list[str | Path] = (), models: dict[str, Any] | None = None,
                max_calls: int | None = None, max_tokens: int | None = None, retries: int = 5,
                **backend_opts: Any) -> Agent:
    """``models`` shares one built model per spec between the agents of a debate (one GGUF load)."""
    profile = agent if isinstance(agent, Profile) else parse_agent(agent)
    if rag not in RAG_MODES:
        raise InputError("rag", rag, f"one of {', '.join(RAG_MODES)}")
    spec = parse_model_spec(model)
    problem = cohort.to_problem()
    negotiator = None
    if spec.backend == "scripted" and spec.model == "negotiator":
        negotiator = Negotiator(problem, profile, cohort=cohort)
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
        missing = _rag_unavailable()
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
