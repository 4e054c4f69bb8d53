"""Reference instances with known answers from the paper (data files under
``fairarena/data/triage/``): a cohort, the allocations of its debate, their reported totals, and what
the paper reports about them.

The file wraps the cohort (``{"name", "source", "reconstruction", "cohort": {...}, "allocations",
"totals", "reported"}``); every command that takes ``--cohort`` reads the wrapped cohort
(:func:`fairarena.triage.cohort.load_cohort`).

>>> ref = load_reference("cohort32")
>>> sorted(ref.allocations)
['final_agent_a', 'final_agent_b', 'round1_agent_a', 'round1_agent_b']
>>> ref.totals["round2_agent_a"]["MedA"]
50
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from fairarena.errors import InputError
from fairarena.triage.cohort import Cohort, parse_cohort

__all__ = ["ReferenceInstance", "REFERENCES", "load_reference", "reference_path"]

REFERENCES: tuple[str, ...] = ("cohort32",)


@dataclass(frozen=True)
class ReferenceInstance:
    """A cohort, named allocations (``{id: {resource: amount}}``), per-resource totals the paper prints
    (including rounds whose allocation it does not give), and what it reports per allocation
    (``feasible``, ``rmg``, ``gini``; only what the text states)."""

    name: str
    source: str
    reconstruction: str
    cohort: Cohort
    allocations: dict[str, dict[str, dict[str, float]]]
    totals: dict[str, dict[str, float]]
    reported: dict[str, dict[str, Any]]


def reference_path(name: str = "cohort32") -> Path:
    """The packaged file of a reference instance (usable as ``--cohort``)."""
    if name not in REFERENCES:
        raise InputError("reference", name, f"one of {', '.join(REFERENCES)}")
    return Path(str(resources.files("fairarena").joinpath(f"data/triage/{name}.json")))


def load_reference(name: str = "cohort32") -> ReferenceInstance:
    """Load a packaged reference instance by name (one of :data:`REFERENCES`)."""
    data: dict[str, Any] = json.loads(reference_path(name).read_text(encoding="utf-8"))
    return ReferenceInstance(name=data["name"], source=data["source"], reconstruction=data["reconstruction"],
                             cohort=parse_cohort(data["cohort"]), allocations=data["allocations"],
                             totals=data.get("totals", {}), reported=data["reported"])
