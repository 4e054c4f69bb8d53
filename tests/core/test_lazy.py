"""Lazy package exports: a name is imported on first access, cached, and unknown names fail cleanly."""

import sys

import pytest

from fairarena.lazy import lazy_exports


def test_names_load_on_first_access_and_are_cached():
    ns: dict = {}
    getattr_, dir_ = lazy_exports("fairarena", {"Registry": "fairarena.registry"}, ns)
    from fairarena.registry import Registry

    assert getattr_("Registry") is Registry and ns["Registry"] is Registry
    assert "Registry" in dir_()


def test_submodules_resolve_and_unknown_names_raise_attribute_error():
    getattr_, _ = lazy_exports("fairarena", {}, {})
    assert getattr_("registry") is sys.modules["fairarena.registry"]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        getattr_("nope")
    with pytest.raises(AttributeError):
        getattr_("__wrapped__")
