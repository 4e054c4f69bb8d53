"""Lazy package exports: a package ``__init__`` names what it offers without importing it.

Used by every package ``__init__`` so that ``import fairarena.x`` (and the CLI's start-up) loads no
numerical code; a name is imported from its module on first access and then cached in the package.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, table: Mapping[str, str],
                 namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``table`` maps an exported name to its module.

    A name missing from ``table`` is tried as a submodule (``fairarena.x.sub`` used as an attribute);
    anything else is an ``AttributeError``.
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            if not name.startswith("__"):
                try:
                    return importlib.import_module(f"{package}.{name}")
                except ModuleNotFoundError as exc:
                    if exc.name != f"{package}.{name}":
                        raise
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
