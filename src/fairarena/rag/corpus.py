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

# The six frameworks, in the order used throughout the project (names shared with the triage core).
FRAMEWORKS = ("utilitarian", "egalitarian", "rawlsian", "prioritarian", "libertarian", "care")

FRAMEWORK_TITLES = {
    "utilitarian": "Utilitarianism (Mill)",
    "egalitarian": "Egalitarianism (Dworkin)",
    "rawlsian": "Rawlsian justice (Rawls)",
    "prioritarian": "Prioritarianism (Parfit)",
    "libertarian": "Libertarianism (Nozick)",
    "care": "Care ethics (Gilligan)",
}

USER_SUFFIXES = (".txt", ".md", ".markdown")


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
    if name not in FRAMEWORKS and name not in tuple(allow):
        raise InputError("framework", name, f"one of {', '.join(FRAMEWORKS)}")
    return name


def builtin_documents() -> list[Document]:
    root = resources.files("fairarena") / "data" / "corpus"
    docs = []
    for fw in FRAMEWORKS:
        text = (root / f"{fw}.md").read_text(encoding="utf-8")
        docs.append(Document(fw, fw, text, "builtin"))
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
            try:
                text = f.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise InputError("corpus_dir", str(f), "UTF-8 text") from None
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
