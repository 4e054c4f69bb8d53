"""The framework corpus: one document per ethical framework shipped with the package, plus user documents.

Built-in documents live in ``fairarena/data/corpus/<framework>.md`` (written for this project).
User documents are plain text or markdown files in ``DIR/<framework>/*.txt|*.md`` (one folder per
framework; the folder name must be a framework name). PDF is not read: convert it to text first.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Iterable

from fairarena.errors import InputError

# The framework names come from the allocation core's registry (fairarena.allocation.frameworks.FRAMEWORKS);
# this module only adds the corpus titles (author and school) and a shipped document per name.
from fairarena.allocation.frameworks import FRAMEWORKS as _REGISTRY  # noqa: E402

_TITLES = {
    "utilitarian": "Utilitarianism (Mill)",
    "egalitarian": "Egalitarianism (Dworkin)",
    "rawlsian": "Rawlsian justice (Rawls)",
    "prioritarian": "Prioritarianism (Parfit)",
    "libertarian": "Libertarianism (Nozick)",
    "care": "Care ethics (Gilligan)",
}
FRAMEWORKS: tuple[str, ...] = tuple(_REGISTRY)
# a framework registered without a corpus title is shown by its registry title
FRAMEWORK_TITLES = {name: _TITLES.get(name) or _REGISTRY.entry(name).title or name for name in FRAMEWORKS}


def framework_title(name: str) -> str:
    """The corpus title of a framework (one registered later: its registry title)."""
    return _TITLES.get(name) or _REGISTRY.entry(name).title or name

USER_SUFFIXES = (".txt", ".md", ".markdown")
MAX_DOCUMENT_BYTES = 32 << 20  # one user document; larger ones are refused before reading


@dataclass(frozen=True)
class Document:
    framework: str
    name: str      # stable short name, unique within its framework
    text: str
    source: str    # "builtin" or the file path it came from

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]


def check_framework(name: str, *, allow: Iterable[str] = ()) -> str:
    if name not in _REGISTRY and name not in tuple(allow):
        raise InputError("framework", name, f"one of {_REGISTRY.choices()}")
    return name


def builtin_documents() -> list[Document]:
    root = resources.files("fairarena") / "data" / "corpus"
    docs = []
    for fw in _REGISTRY:
        path = root / f"{fw}.md"
        if not path.is_file():  # a framework registered from outside ships no document
            continue
        docs.append(Document(fw, fw, path.read_text(encoding="utf-8"), "builtin"))
    return docs


def load_user_documents(directory: str | Path, *, allow: Iterable[str] = ()) -> list[Document]:
    """Read ``directory/<framework>/*.txt|*.md``. Unknown framework folders and other file types are errors."""
    root = Path(directory)
    if not root.is_dir():
        raise InputError("corpus_dir", str(directory), "an existing directory with one sub-folder per framework")
    docs: list[Document] = []
    for sub in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        fw = check_framework(sub.name, allow=allow)
        for f in sorted(p for p in sub.rglob("*") if p.is_file() and not p.name.startswith(".")):
            if f.suffix.lower() not in USER_SUFFIXES:
                raise InputError("corpus_dir", str(f), f"plain text or markdown files ({', '.join(USER_SUFFIXES)})")
            if f.stat().st_size > MAX_DOCUMENT_BYTES:
                raise InputError("corpus_dir", str(f), f"a document of at most {MAX_DOCUMENT_BYTES >> 20} MB "
                                                       "(split it into several files)")
            data = f.read_bytes()
            if b"\0" in data:
                raise InputError("corpus_dir", str(f), "plain text (it holds NUL bytes: a binary file?)")
            try:
                text = data.decode("utf-8-sig")  # a byte-order mark is not part of the text
            except UnicodeDecodeError as exc:
                raise InputError("corpus_dir", str(f), f"UTF-8 text (invalid byte at offset {exc.start})") from None
            if text.strip():
                docs.append(Document(fw, "user:" + f.relative_to(sub).as_posix(), text, str(f)))
    return docs


def load_corpus(user_dirs: Iterable[str | Path] = (), *, builtin: bool = True, allow: Iterable[str] = ()) -> list[Document]:
    docs = builtin_documents() if builtin else []
    for d in user_dirs:
        docs.extend(load_user_documents(d, allow=allow))
    seen: set[tuple[str, str]] = set()
    for doc in docs:
        key = (doc.framework, doc.name)
        if key in seen:
            raise InputError("corpus", f"{doc.framework}/{doc.name}", "document names unique within a framework")
        seen.add(key)
    return docs
