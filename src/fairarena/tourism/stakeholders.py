"""Stakeholders as files: a value statement, a quantitative objective (a weighted set of metrics of
:mod:`fairarena.tourism.metrics`), optional retrieval documents and an agent profile.

Built-in files live in ``fairarena/data/tourism/stakeholders/``: ``tourists`` (parametrised by a persona:
``tourists:family``), ``residents``, ``local-business``, ``destination``. A stakeholder's *value* of a
decision is ``sum_m w_m m(decision)`` over its objective's metrics (weights signed: negative = lower is
better); its *utility* is that value normalised over the candidate decisions (see
:func:`fairarena.tourism.decisions.utility_matrix`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from fairarena.errors import InputError
from fairarena.registry import Registry
from fairarena.tourism.destination import PERSONAS, Destination
from fairarena.tourism.metrics import METRIC_KEYS, satisfaction

__all__ = ["Stakeholder", "STAKEHOLDER_FILES", "parse_stakeholders", "stakeholder_value", "builtin_names",
           "document_text", "agent_name"]


@dataclass(frozen=True)
class Stakeholder:
    name: str                    # e.g. "tourists:family"
    kind: str                    # file name: tourists, residents, local-business, destination
    value: str
    objective: dict[str, float]
    documents: tuple[str, ...] = ()
    profile: dict[str, Any] = field(default_factory=dict)
    persona: str | None = None


def _data(name: str) -> str:
    return resources.files("fairarena").joinpath(f"data/tourism/{name}").read_text(encoding="utf-8")


def _load_file(kind: str) -> dict[str, Any]:
    data = json.loads(_data(f"stakeholders/{kind}.json"))
    for m in data["objective"]:
        if m not in METRIC_KEYS:
            raise InputError(f"stakeholders/{kind}.objective", m, f"a metric, one of {', '.join(METRIC_KEYS)}")
    return data


STAKEHOLDER_FILES: Registry[str] = Registry("stakeholder")
for _k, _d in (("tourists", "visitors of one persona (tourists:<persona>)"), ("residents", "residents"),
               ("local-business", "local small businesses"),
               ("destination", "the destination: environment and capacity")):
    STAKEHOLDER_FILES.add(_k, _k, title=_k, description=_d)


def builtin_names() -> list[str]:
    """Every built-in stakeholder name (tourists expanded over the personas)."""
    return [f"tourists:{p}" for p in PERSONAS] + [k for k in STAKEHOLDER_FILES if k != "tourists"]


def make(name: str, field_name: str = "--stakeholders") -> Stakeholder:
    kind, _, persona = name.partition(":")
    if kind not in STAKEHOLDER_FILES:
        raise InputError(field_name, name, f"one of {', '.join(builtin_names())}")
    if kind == "tourists":
        if persona not in PERSONAS:
            raise InputError(field_name, name, f"tourists:<persona> with a persona among {PERSONAS.choices()}")
    elif persona:
        raise InputError(field_name, name, f"{kind} takes no ':' parameter")
    d = _load_file(kind)
    profile = {k: (v.replace("{persona}", persona) if isinstance(v, str) else v) for k, v in d["profile"].items()}
    return Stakeholder(name=name, kind=kind, value=d["value"], objective=dict(d["objective"]),
                       documents=tuple(d.get("documents", ())), profile=profile, persona=persona or None)


def parse_stakeholders(spec: str | list[str], field_name: str = "--stakeholders") -> list[Stakeholder]:
    """``"tourists:family,residents,..."`` -> stakeholders (at least two, no duplicates)."""
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if len(names) < 2:
        raise InputError(field_name, spec, "at least two stakeholders, comma-separated")
    if len(set(names)) != len(names):
        raise InputError(field_name, spec, "distinct stakeholders")
    return [make(n, field_name) for n in names]


def stakeholder_value(d: Destination, s: Stakeholder, metrics: dict[str, Any], decision: str) -> float:
    """``sum_m w_m m`` over the stakeholder's objective (``satisfaction`` for tourists is their persona's)."""
    total = 0.0
    for m, w in s.objective.items():
        v = satisfaction(d, metrics, s.persona, decision) if m == "satisfaction" else float(metrics[m])
        if math.isnan(v):
            v = 1.0  # a persona with no group in the destination is indifferent (always at its ideal)
        total += w * v
    return total


def document_text(name: str) -> str:
    """A retrieval document shipped with the built-in stakeholders."""
    return _data(name)


def agent_name(s: Stakeholder) -> str:
    """Arena participant names allow letters, digits, '-' and '_': ``tourists:family`` -> ``tourists-family``."""
    return s.name.replace(":", "-")
