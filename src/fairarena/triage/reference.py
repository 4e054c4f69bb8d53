"""Reference instances with known answers from the paper (data files under
``fairarena/data/triage/``): a cohort, allocations from its debate, and the metrics the paper reports.

>>> ref = load_reference("cohort32")
>>> sorted(ref.allocations)
['final', 'round1_agent_a']
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from fairarena.errors import InputError
from fairarena.triage.cohort import Cohort, parse_cohort

__all__ = ["ReferenceInstance", "REFERENCES", "load_reference"]

REFERENCES: tuple[str, ...] = ("cohort32",)


@dataclass(frozen=True)
class ReferenceInstance:
    """A cohort, named allocations (``{id: {resource: amount}}``) and the reported metrics per allocation."""

    name: str
    source: str
    reconstruction: str
    cohort: Cohort
    allocations: dict[str, dict[str, dict[str, float]]]
    reported: dict[str, dict[str, float]]


def load_reference(name: str = "cohort32") -> ReferenceInstance:
    """Load a packaged reference instance by name (one of :data:`REFERENCES`)."""
    if name not in REFERENCES:
        raise InputError("reference", name, f"one of {', '.join(REFERENCES)}")
    text = resources.files("fairarena").joinpath(f"data/triage/{name}.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return ReferenceInstance(name=data["name"], source=data["source"], reconstruction=data["reconstruction"],
                             cohort=parse_cohort(data["cohort"]), allocations=data["allocations"],
                             reported=data["reported"])
