"""The school-seat domain of docs/domains.md, extracted from the document (the tests run what it shows)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "domains.md"
MARKER = "<!-- seats-domain -->"


def doc_blocks() -> list[str]:
    """The python blocks of the seats section: the domain file first, then the examples that use it."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(MARKER)
    end = text.index("\n## ", start)
    return re.findall(r"```python\n(.*?)```", text[start:end], flags=re.S)


def write_seats(folder: Path, name: str = "seats") -> Path:
    path = folder / f"{name}.py"
    path.write_text(doc_blocks()[0], encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def seats_module(tmp_path_factory):
    folder = tmp_path_factory.mktemp("seats")
    path = write_seats(folder, "docs_seats")
    spec = importlib.util.spec_from_file_location("docs_seats", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_seats"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("docs_seats", None)
