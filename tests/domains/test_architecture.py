"""docs/architecture.md stays true to the package layout: every package and top-level module of
``src/fairarena`` has its place in the map, and every module the map names exists where it says."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "fairarena"
DOC = ROOT / "docs" / "architecture.md"


def tree() -> str:
    """The map: the first fenced block of the document."""
    text = DOC.read_text(encoding="utf-8")
    return re.search(r"```\n(.*?)```", text, flags=re.S).group(1)


def entries() -> list[tuple[str, str]]:
    """``(entry, text)``: each top-level line of the map (two spaces, then a package ``name/`` or a module
    ``name.py``) with its continuation lines."""
    out: list[tuple[str, str]] = []
    for line in tree().splitlines()[1:]:
        m = re.match(r"^  (\S+)", line)
        if m and (m.group(1).endswith("/") or m.group(1).endswith(".py")):
            out.append((m.group(1), line[m.end():]))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + "\n" + line)
    return out


def named_modules(text: str) -> list[str]:
    return re.findall(r"(?<![\w./-])((?:\w+/)*[A-Za-z_]\w*\.py)\b", text)


def exists(entry: str, module: str) -> bool:
    """``module`` as the map names it in ``entry``: a path from ``src/fairarena`` (``conformance/kit.py``),
    or a module of the entry's package or of one of its sub-packages (``registry.py`` under ``notions/``)."""
    pkg = SRC / entry.rstrip("/") if entry.endswith("/") else SRC
    return ((SRC / module).is_file() or (pkg / module).is_file()
            or any(p.is_file() for p in pkg.glob(f"*/{module}")))


def test_every_package_and_top_level_module_is_in_the_map():
    names = {e for e, _ in entries()}
    packages = sorted(p.name + "/" for p in SRC.iterdir() if (p / "__init__.py").is_file())
    assert [p for p in packages if p not in names] == []
    text = tree()
    modules = sorted(p.name for p in SRC.glob("*.py") if p.name != "__init__.py")
    assert [m for m in modules if not re.search(rf"(?<![\w/.]){re.escape(m)}\b", text)] == []


def test_every_module_the_map_names_exists():
    missing = [f"{entry} {module}" for entry, text in entries() for module in named_modules(entry + text)
               if not exists(entry, module)]
    assert missing == []
    # the scan sees the map's modules (it is not vacuous)
    assert sum(len(named_modules(e + t)) for e, t in entries()) > 100
