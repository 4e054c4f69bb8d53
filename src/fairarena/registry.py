"""One generic registry type for every named concept (notions, learners, frameworks, rules, backends...).

A :class:`Registry` is a read-only mapping from a name to the registered object, plus metadata per
entry (title, description, citation and any concept-specific fields such as a metric's direction).
Registration is by decorator or by :meth:`Registry.add`; a duplicate name is an error, never a silent
overwrite; an unknown name raises :class:`~fairarena.errors.InputError` that lists the valid choices.
Every other list of names in the package (config validation, CLI choices and help, result columns,
titles) is derived from a registry instead of being typed again.

This module imports nothing heavy, so a CLI can enumerate choices without loading numerical code.

>>> COLOURS: Registry[str] = Registry("colour")
>>> @COLOURS.register("red", title="Red", warm=True)
... def _red(): return "#f00"
>>> COLOURS.add("blue", "#00f", title="Blue", warm=False)
>>> COLOURS.names()
('red', 'blue')
>>> COLOURS.names(warm=False)
('blue',)
>>> COLOURS.entry("blue").title
'Blue'
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from fairarena.errors import InputError

T = TypeVar("T")


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered object and its metadata."""

    name: str
    obj: T
    title: str = ""
    description: str = ""
    citation: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __getattr__(self, item: str) -> Any:  # concept-specific metadata as attributes
        meta = object.__getattribute__(self, "meta")
        if item in meta:
            return meta[item]
        raise AttributeError(item)


class Registry(Mapping[str, T], Generic[T]):
    """A named collection of objects of one concept, in registration order.

    ``kind`` names the concept in messages ("notion", "framework", ...); ``field`` is the input field
    named by the unknown-name error (defaults to ``kind``).
    """

    def __init__(self, kind: str, *, field: str | None = None) -> None:
        self.kind = kind
        self.field = field or kind
        self._entries: dict[str, Entry[T]] = {}

    # -- registration -------------------------------------------------------------------------
    def add(self, name: str, obj: T, *, title: str = "", description: str = "", citation: str = "",
            replace: bool = False, **meta: Any) -> T:
        """Register ``obj`` under ``name``; a duplicate name raises unless ``replace=True``."""
        if not isinstance(name, str) or not name or name != name.strip():
            raise ValueError(f"{self.kind} name must be a non-empty string without surrounding spaces: {name!r}")
        if name in self._entries and not replace:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = Entry(name, obj, title, description, citation, dict(meta))
        return obj

    def register(self, name: str | None = None, *, title: str = "", description: str = "",
                 citation: str = "", **meta: Any) -> Callable[[T], T]:
        """Decorator form of :meth:`add`; the name defaults to the object's ``name`` or ``__name__``."""

        def deco(obj: T) -> T:
            key = name or getattr(obj, "name", None) or getattr(obj, "__name__")
            doc = description or (getattr(obj, "__doc__", None) or "").strip().split("\n")[0]
            self.add(key, obj, title=title, description=doc, citation=citation, **meta)
            return obj

        return deco

    def remove(self, name: str) -> None:
        """Unregister ``name`` (for tests and plug-ins that register temporarily)."""
        self._entries.pop(name, None)

    # -- lookup -------------------------------------------------------------------------------
    def get(self, name: str, default: Any = ...) -> T:  # type: ignore[override]
        """The object registered as ``name``; unknown names raise :class:`InputError` listing choices."""
        try:
            return self._entries[name].obj
        except (KeyError, TypeError):
            if default is not ...:
                return default
            raise self.unknown(name) from None

    def entry(self, name: str) -> Entry[T]:
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise self.unknown(name) from None

    def unknown(self, name: Any) -> InputError:
        return InputError(self.field, name, f"expected one of {self.choices()}")

    def check(self, name: str) -> str:
        """Return ``name`` if registered, else raise the unknown-name :class:`InputError`."""
        self.entry(name)
        return name

    def names(self, where: Callable[[Entry[T]], bool] | None = None, **meta: Any) -> tuple[str, ...]:
        """Registered names in order, optionally filtered by a predicate and/or metadata equality."""
        return tuple(e.name for e in self.entries(where, **meta))

    def entries(self, where: Callable[[Entry[T]], bool] | None = None, **meta: Any) -> list[Entry[T]]:
        out = []
        for e in self._entries.values():
            if any(e.meta.get(k, _MISSING) != v for k, v in meta.items()):
                continue
            if where is not None and not where(e):
                continue
            out.append(e)
        return out

    def choices(self, sep: str = ", ") -> str:
        """The valid names as one string, for messages and CLI help."""
        return sep.join(self._entries)

    # -- Mapping protocol ---------------------------------------------------------------------
    def __getitem__(self, name: str) -> T:
        return self._entries[name].obj

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"


_MISSING = object()
