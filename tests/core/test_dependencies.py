"""Every third-party module the package imports is declared in pyproject.toml (base or an extra).

`make demo` installs the base dependencies only, so an import that works here only because an extra
happened to pull it in (threadpoolctl came with scikit-learn from the rag extra) breaks the demo.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[2]
# import name -> distribution name, where they differ
DIST = {"llama_cpp": "llama-cpp-python", "sentence_transformers": "sentence-transformers",
        "distributed": "dask", "yaml": "pyyaml", "sklearn": "scikit-learn", "PIL": "pillow"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> tuple[set[str], set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = {_norm(re.split(r"[<>=!~;\[ ]", r)[0]) for r in project["dependencies"]}
    extras = {_norm(re.split(r"[<>=!~;\[ ]", r)[0]) for reqs in project["optional-dependencies"].values()
              for r in reqs}
    return base, extras


def _imports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (ROOT / "src" / "fairarena").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for n in names:
                top = n.split(".")[0]
                if top != "fairarena" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_imported_package_is_declared():
    base, extras = _declared()
    declared = base | extras | {"tomli"}
    missing = {m: sorted(files)[:3] for m, files in _imports().items() if _norm(DIST.get(m, m)) not in declared}
    assert not missing, f"add to pyproject.toml (base or the right extra): {missing}"
