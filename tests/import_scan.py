"""The layer tests' one import scanner: every ``fairarena.*`` module a source file imports, wherever the
import statement is (function-local imports included, since those hid the package cycles)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "fairarena"


def file_imports(path: Path, *, names: bool = False) -> set[str]:
    """The ``fairarena.*`` modules ``path`` imports; with ``names``, also ``module.name`` for each name a
    ``from module import name`` takes."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
            if names:
                out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {n for n in out if n.startswith("fairarena.")}


def imports_of(package: str, *, names: bool = False) -> dict[str, set[str]]:
    """Each module of ``package`` (a path relative to the package root, e.g. ``"domains/protocol.py"``) ->
    :func:`file_imports`."""
    return {str(p.relative_to(SRC)): file_imports(p, names=names) for p in (SRC / package).rglob("*.py")}


def imported(paths: list[Path]) -> set[str]:
    """Every ``fairarena.*`` module any of ``paths`` imports."""
    return set().union(*(file_imports(p) for p in paths))
