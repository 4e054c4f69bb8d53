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
>>> _ = COLOURS.add("blue", "#00f", title="Blue", warm=False)
>>> COLOURS.names()
('red', 'blue')
>>> COLOURS.names(warm=False)
('blue',)
>>> COLOURS.entry("blue").title
'Blue'

Lazy entries: :meth:`Registry.add_lazy` registers a name with a ``"module:object"`` path that is imported
on first use (so a registry can list a plug-in without importing it), and a registry made with
``entry_points="group"`` also lists the entry points of that group (``importlib.metadata``: what installed
distributions declare, e.g. under ``[project.entry-points."fairarena.domains"]``) when a name is looked up
that is not registered, or when the registry is listed. An entry point never replaces a name registered in
the package.

>>> PLUGINS: Registry[object] = Registry("plugin")
>>> PLUGINS.add_lazy("join", "os.path:join", title="os.path.join")
>>> PLUGINS.is_loaded("join"), PLUGINS.get("join").__name__, PLUGINS.is_loaded("join")
(False, 'join', True)
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
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


@dataclass(frozen=True)
class LazyObject:
    """A registered object not imported yet: ``path`` is ``"module:object"`` (the object may be a dotted
    attribute path, ``"module:Class.attribute"``)."""

    path: str


def load_object(path: Any, field: str = "object") -> Any:
    """Import ``"module:object"`` (``object`` may be dotted) and return the object. A malformed path, a
    module that fails to import or a missing attribute raises :class:`InputError` naming ``field``, with
    the import error's own message."""
    if not isinstance(path, str) or path.count(":") != 1 or not all(path.split(":")):
        raise InputError(field, path, "MODULE:OBJECT (e.g. mypackage.domain:DOMAIN)")
    module, _, attr = path.partition(":")
    try:
        obj: Any = importlib.import_module(module)
    except Exception as exc:  # any import failure of a plug-in is the user's input, reported in one line
        raise InputError(field, path, f"an importable module ({type(exc).__name__}: {exc})") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InputError(field, path, f"an object {attr!r} in module {module!r} (it has no {part!r})") from None
    return obj


class Registry(Mapping[str, T], Generic[T]):
    """A named collection of objects of one concept, in registration order.

    ``kind`` names the concept in messages ("notion", "framework", ...); ``field`` is the input field
    named by the unknown-name error (defaults to ``kind``); ``entry_points``: an entry-point group whose
    entries are added as lazy entries when first needed (module doc).
    """

    def __init__(self, kind: str, *, field: str | None = None, entry_points: str | None = None) -> None:
        self.kind = kind
        self.field = field or kind
        self.entry_point_group = entry_points
        self._discovered = entry_points is None
        self._entries: dict[str, Entry[T]] = {}
        self.shadowed: list[tuple[str, str]] = []   # (name, path) of entry points a package entry hides

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

    def add_lazy(self, name: str, path: str, *, title: str = "", description: str = "", citation: str = "",
                 replace: bool = False, **meta: Any) -> None:
        """Register ``name`` as the object at ``path`` (``"module:object"``), imported on first use. An
        entry point's entry has the metadata ``source`` (its distribution) and ``path``."""
        self.add(name, LazyObject(path), title=title, description=description, citation=citation,  # type: ignore[arg-type]
                 replace=replace, path=path, **meta)

    def discover(self, *, refresh: bool = False) -> None:
        """Add the entry points of :attr:`entry_point_group` as lazy entries (once; ``refresh`` reads the
        installed distributions again). A name already registered keeps its entry (listed in
        :attr:`shadowed`)."""
        if self.entry_point_group is None or (self._discovered and not refresh):
            return
        self._discovered = True
        from importlib.metadata import entry_points

        for ep in entry_points(group=self.entry_point_group):
            dist = getattr(getattr(ep, "dist", None), "name", None) or ""
            if ep.name in self._entries:
                cur = self._entries[ep.name].obj
                if not (isinstance(cur, LazyObject) and cur.path == ep.value):
                    if (ep.name, ep.value) not in self.shadowed:
                        self.shadowed.append((ep.name, ep.value))
                        warnings.warn(f"{self.kind} {ep.name!r} of entry point {ep.value} ({dist or 'unknown'}) is "
                                      f"hidden by the registered {self.kind} of that name", stacklevel=2)
                continue
            try:
                self.add_lazy(ep.name, ep.value, source=dist or "entry point")
            except ValueError as exc:   # a malformed name in a third party's metadata: skipped, said once
                warnings.warn(f"{self.kind} entry point {ep.name!r} skipped: {exc}", stacklevel=2)

    def is_loaded(self, name: str) -> bool:
        """True when ``name``'s object is imported (always for entries added with :meth:`add`)."""
        return not isinstance(self.entry(name).obj, LazyObject)

    def _load(self, e: Entry[T]) -> T:
        obj = e.obj
        if isinstance(obj, LazyObject):
            loaded = load_object(obj.path, f"{self.field} {e.name!r}")
            if self._entries.get(e.name) is e:   # not removed or replaced while importing
                self._entries[e.name] = replace(e, obj=loaded)
            return loaded  # type: ignore[no-any-return]
        return obj

    def _lookup(self, name: Any) -> Entry[T] | None:
        try:
            e = self._entries.get(name)
        except TypeError:   # an unhashable name
            return None
        if e is None and not self._discovered:
            self.discover()
            e = self._entries.get(name)
        return e

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
        """The object registered as ``name`` (a lazy entry is imported now); unknown names raise
        :class:`InputError` listing choices."""
        e = self._lookup(name)
        if e is None:
            if default is not ...:
                return default  # type: ignore[no-any-return]
            raise self.unknown(name)
        return self._load(e)

    def entry(self, name: str) -> Entry[T]:
        """The entry of ``name`` with its metadata (a lazy entry's ``obj`` stays a :class:`LazyObject`)."""
        e = self._lookup(name)
        if e is None:
            raise self.unknown(name)
        return e

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
        """Entries in order, filtered as :meth:`names`; lazy entries are listed without importing them
        (their ``obj`` is a :class:`LazyObject`)."""
        self.discover()
        out = []
        for e in list(self._entries.values()):
            if any(e.meta.get(k, _MISSING) != v for k, v in meta.items()):
                continue
            if where is not None and not where(e):
                continue
            out.append(e)
        return out

    def choices(self, sep: str = ", ") -> str:
        """The valid names as one string, for messages and CLI help."""
        self.discover()
        return sep.join(self._entries)

    # -- Mapping protocol ---------------------------------------------------------------------
    def pairs(self) -> list[tuple[str, T]]:
        """``(name, object)`` of every entry in order (lazy entries imported now): what ``list(items())``
        gives, in one pass over the entries (the Mapping view looks each name up again; the allocation
        metrics iterate their registry for every allocation scored)."""
        self.discover()
        return [(e.name, self._load(e)) for e in list(self._entries.values())]

    def __getitem__(self, name: str) -> T:
        e = self._lookup(name)
        if e is None:
            raise KeyError(name)
        return self._load(e)

    def __iter__(self) -> Iterator[str]:
        self.discover()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self.discover()
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return self._lookup(name) is not None

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"


_MISSING = object()
