"""The generic registry: decorator and add, metadata, duplicates, unknown names, filtering."""

import pytest

from fairarena.errors import InputError
from fairarena.registry import Registry


def make() -> Registry:
    reg: Registry = Registry("colour", field="--colour")

    @reg.register("red", title="Red", citation="Newton 1704", warm=True)
    def red():
        """The colour of blood."""
        return "#f00"

    reg.add("blue", "#00f", title="Blue", warm=False)
    return reg


def test_registration_order_metadata_and_mapping():
    reg = make()
    assert reg.names() == ("red", "blue") and list(reg) == ["red", "blue"] and len(reg) == 2
    assert reg["blue"] == "#00f" and reg.get("red")() == "#f00"
    e = reg.entry("red")
    assert (e.title, e.citation, e.description, e.warm) == ("Red", "Newton 1704", "The colour of blood.", True)
    assert reg.names(warm=False) == ("blue",)
    assert reg.names(lambda e: e.title.startswith("R")) == ("red",)
    assert "red" in reg and "green" not in reg


def test_duplicate_rejected_unless_replaced():
    reg = make()
    with pytest.raises(ValueError, match="already registered"):
        reg.add("red", "#e00")
    assert reg["red"]() == "#f00"
    reg.add("red", "#e00", replace=True)
    assert reg["red"] == "#e00"


def test_unknown_name_is_an_input_error_listing_choices():
    reg = make()
    with pytest.raises(InputError) as exc:
        reg.get("green")
    assert exc.value.field == "--colour"
    assert str(exc.value) == "--colour = 'green': expected one of red, blue"
    assert reg.get("green", None) is None
    with pytest.raises(InputError):
        reg.check("green")
    with pytest.raises(KeyError):  # plain Mapping indexing stays a KeyError
        reg["green"]


def test_bad_names_rejected_and_remove():
    reg = make()
    for bad in ("", " red", 3):
        with pytest.raises(ValueError):
            reg.add(bad, 1)
    reg.remove("red")
    assert reg.names() == ("blue",)


def test_pairs_is_items_in_one_pass_loading_lazy_entries():
    reg = make()
    reg.add_lazy("json", "json:dumps")
    assert not reg.is_loaded("json")
    import json

    assert reg.pairs() == list(reg.items()) == [("red", reg["red"]), ("blue", "#00f"), ("json", json.dumps)]
    assert reg.is_loaded("json")
    reg.remove("red")
    assert [k for k, _ in reg.pairs()] == ["blue", "json"]
