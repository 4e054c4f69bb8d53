"""Hospital-triage cohorts: patients, the six resources, archetypes, sampling, capacity variants.

A :class:`Cohort` is the validated JSON file format (pydantic). :meth:`Cohort.to_problem` turns it
into a :class:`TriageProblem`, the numeric :class:`~fairarena.allocation.AllocationProblem` the
metrics and solvers use, with the derived weights (see :func:`disadvantage_scores`,
:func:`vulnerability_scores`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer, field_validator, model_validator

from fairarena.allocation.problem import AllocationProblem
from fairarena.errors import InputError
from fairarena.fsutil import atomic_write_json

__all__ = [
    "RESOURCES",
    "INDIVISIBLE",
    "URGENCY_LEVELS",
    "CAPACITY_VARIANTS",
    "Patient",
    "Cohort",
    "TriageProblem",
    "Archetype",
    "ConditionVariant",
    "ARCHETYPES",
    "sample_cohort",
    "survival_label",
    "disadvantage_scores",
    "vulnerability_scores",
    "cohort_weights",
    "load_cohort",
    "save_cohort",
    "parse_cohort",
    "as_problem",
    "validation_error",
    "read_json",
]

ResourceName = Literal["ICU", "Ventilator", "MedA", "MedB", "Nursing", "Surgery"]
RESOURCES: tuple[str, ...] = ("ICU", "Ventilator", "MedA", "MedB", "Nursing", "Surgery")
INDIVISIBLE: frozenset[str] = frozenset({"ICU", "Ventilator", "Surgery"})
URGENCY_LEVELS: dict[str, int] = {"critical": 3, "high": 2, "moderate": 1, "low": 0}
SES_LEVELS = ("low", "lower-middle", "middle", "upper-middle", "high")

CAPACITY_VARIANTS: dict[str, dict[str, int]] = {
    # the paper's
    "tight": {"ICU": 2, "Ventilator": 1, "MedA": 45, "MedB": 35, "Nursing": 60, "Surgery": 2},
    # ours: more of everything, still below typical demand (see docs/triage.md)
    "standard": {"ICU": 3, "Ventilator": 2, "MedA": 55, "MedB": 45, "Nursing": 75, "Surgery": 2},
    "high": {"ICU": 4, "Ventilator": 2, "MedA": 65, "MedB": 50, "Nursing": 85, "Surgery": 3},
}

Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]


def _compact(amounts: Mapping[str, float]) -> dict[str, int | float]:
    """Integral amounts as ints in JSON (``1`` rather than ``1.0``)."""
    return {k: int(v) if float(v).is_integer() else v for k, v in amounts.items()}


# -- file format ------------------------------------------------------------------------------

class Patient(BaseModel):
    """One patient: attributes shown to deliberating agents, clinical needs and survival."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Annotated[str, Field(min_length=1)]
    age: Annotated[int, Field(ge=0, le=120)]
    gender: str
    race: str
    ses: Literal["low", "lower-middle", "middle", "upper-middle", "high"]
    citizenship: str
    occupation: str
    family: str
    condition: str
    survival: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    urgency: Literal["critical", "high", "moderate", "low"]
    needs: dict[ResourceName, Amount]
    archetype: str | None = None
    disadvantage_weight: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    vulnerability_weight: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None

    @field_serializer("needs")
    def _ser_needs(self, value: dict[str, float]) -> dict[str, int | float]:
        return _compact(value)

    @property
    def survival_label(self) -> str:
        """The label agents see instead of the number (Acute / Low / Mid / High)."""
        return survival_label(self.survival)


class Cohort(BaseModel):
    """A cohort file: ``{"patients": [...], "capacity": {RESOURCE: amount}, "meta": {...}}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    patients: Annotated[list[Patient], Field(min_length=1)]
    capacity: dict[ResourceName, Amount]
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("capacity")
    @classmethod
    def _all_capacities(cls, value: dict[str, float]) -> dict[str, float]:
        for res in RESOURCES:
            if res not in value:
                raise InputError(f"capacity.{res}", None, f"a capacity for every resource {list(RESOURCES)} "
                                 f"(missing {res})")
            if res in INDIVISIBLE and value[res] != int(value[res]):
                raise InputError(f"capacity.{res}", value[res], "an integer (indivisible resource)")
        return {res: value[res] for res in RESOURCES}

    @field_serializer("capacity")
    def _ser_capacity(self, value: dict[str, float]) -> dict[str, int | float]:
        return _compact(value)

    @model_validator(mode="after")
    def _consistent(self) -> "Cohort":
        seen: set[str] = set()
        for k, p in enumerate(self.patients):
            if p.id in seen:
                raise InputError(f"patients[{k}].id", p.id, "unique patient ids (duplicate)")
            seen.add(p.id)
            if not any(v > 0 for v in p.needs.values()):
                raise InputError(f"patients[{k}].needs", dict(p.needs), "at least one resource with a need > 0")
            for res, v in p.needs.items():
                if res in INDIVISIBLE and v != int(v):
                    raise InputError(f"patients[{k}].needs.{res}", v, "an integer (indivisible resource)")
        for name in ("disadvantage_weight", "vulnerability_weight"):
            given = [getattr(p, name) is not None for p in self.patients]
            if any(given) and not all(given):
                k = given.index(False)
                raise InputError(f"patients[{k}].{name}", None,
                                 f"{name} on every patient or on none")
            if all(given) and sum(getattr(p, name) for p in self.patients) <= 0:
                raise InputError(f"patients[0].{name}", 0, f"{name}s with a positive sum")
        return self

    # -- conversions ---------------------------------------------------------------------------
    def to_problem(self) -> "TriageProblem":
        """The numeric problem (arrays, weights) the metrics and solvers work on."""
        return TriageProblem.from_cohort(self)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (unset optional fields omitted)."""
        return self.model_dump(mode="json", exclude_none=True)

    def to_json(self) -> str:
        """The cohort as a JSON document."""
        return json.dumps(self.to_dict(), indent=2) + "\n"

    @property
    def ids(self) -> list[str]:
        """Patient ids in file order."""
        return [p.id for p in self.patients]


# -- weights ----------------------------------------------------------------------------------

_SES_POINTS = {"low": 2.0, "lower-middle": 1.5, "middle": 1.0, "upper-middle": 0.5, "high": 0.0}
_DEPENDENCY_WORDS = ("child", "children", "caregiver", "dependent", "dependant", "parent", "pregnan")


def _citizenship_points(citizenship: str) -> float:
    c = citizenship.lower()
    if "undocumented" in c:
        return 1.5
    if "refugee" in c or "asylum" in c:
        return 1.0
    if "permanent" in c:
        return 0.5
    if "citizen" in c:
        return 0.0
    return 1.0  # visas, visitors, stateless: non-citizen


def disadvantage_scores(patient: Patient) -> float:
    """Raw disadvantage ``1 + SES points + citizenship points`` (normalised later).

    SES: low 2, lower-middle 1.5, middle 1, upper-middle 0.5, high 0. Citizenship: citizen 0,
    permanent resident 0.5, refugee/asylum seeker 1, other non-citizen 1, undocumented 1.5.
    """
    return 1.0 + _SES_POINTS[patient.ses] + _citizenship_points(patient.citizenship)


def vulnerability_scores(patient: Patient) -> float:
    """Raw vulnerability ``1 + age points + gender points + dependency points`` (normalised later).

    Age: under 18 -> 1.5, 80 and over -> 1.5, 65-79 -> 1, otherwise 0. Gender: female or
    non-binary -> 0.5 (gendered care burden and under-treatment), otherwise 0. Dependency: 1 when the
    family field mentions a child, children, parent, caregiver, dependant or pregnancy.
    """
    age = patient.age
    pts = 1.0
    pts += 1.5 if age < 18 or age >= 80 else (1.0 if age >= 65 else 0.0)
    g = patient.gender.lower()
    pts += 0.5 if (g.startswith("f") or "non-binary" in g or "nonbinary" in g) else 0.0
    fam = patient.family.lower()
    pts += 1.0 if any(w in fam for w in _DEPENDENCY_WORDS) else 0.0
    return pts


def cohort_weights(cohort: Cohort) -> tuple[np.ndarray, np.ndarray]:
    """Normalised (disadvantage ``w``, vulnerability ``v``); explicit per-patient weights win."""
    out = []
    for name, rule in (("disadvantage_weight", disadvantage_scores), ("vulnerability_weight", vulnerability_scores)):
        given = [getattr(p, name) for p in cohort.patients]
        raw = np.array(given if all(g is not None for g in given) else [rule(p) for p in cohort.patients], float)
        out.append(raw / raw.sum())
    return out[0], out[1]


def survival_label(s: float) -> str:
    """Acute (< 0.2), Low (0.2-0.5), Mid (0.5-0.7), High (>= 0.7)."""
    if s < 0.2:
        return "Acute"
    if s < 0.5:
        return "Low"
    if s < 0.7:
        return "Mid"
    return "High"


# -- numeric problem --------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class TriageProblem(AllocationProblem):
    """An :class:`AllocationProblem` built from a :class:`Cohort` (kept in ``cohort``)."""

    cohort: Cohort | None = None

    @classmethod
    def from_cohort(cls, cohort: Cohort) -> "TriageProblem":
        """Arrays in file order; resources in :data:`RESOURCES` order; weights from the rules."""
        w, v = cohort_weights(cohort)
        return cls(
            ids=tuple(p.id for p in cohort.patients),
            resources=RESOURCES,
            capacity=np.array([cohort.capacity[r] for r in RESOURCES], float),
            need=np.array([[p.needs.get(r, 0.0) for r in RESOURCES] for p in cohort.patients], float),
            indivisible=np.array([r in INDIVISIBLE for r in RESOURCES]),
            survival=np.array([p.survival for p in cohort.patients], float),
            urgency=np.array([URGENCY_LEVELS[p.urgency] for p in cohort.patients], float),
            disadvantage=w,
            vulnerability=v,
            gini_resource="Nursing",
            cohort=cohort,
        )


def as_problem(obj: "Cohort | AllocationProblem") -> AllocationProblem:
    """Accept a Cohort or a problem; return the problem."""
    return obj.to_problem() if isinstance(obj, Cohort) else obj


# -- parsing with errors that name the field ----------------------------------------------------

def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part == "[key]":
            continue
        else:
            out += ("." if out else "") + str(part)
    return out or "<root>"


def validation_error(exc: ValidationError, root: str = "") -> InputError:
    """The first pydantic error as an :class:`InputError` naming the field (``patients[3].survival``)."""
    err = exc.errors()[0]
    inner = (err.get("ctx") or {}).get("error")
    if isinstance(inner, InputError):
        return inner
    field = _loc(tuple(err.get("loc", ())))
    if root:
        field = f"{root}.{field}" if field != "<root>" else root
    value = err.get("input")
    if err.get("type") == "missing":
        value = None
    return InputError(field, value, err.get("msg", "a valid value"))


def parse_cohort(data: Any) -> Cohort:
    """Validate a decoded JSON object as a cohort (InputError naming the field on failure)."""
    try:
        return Cohort.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from None


def read_json(path: str | os.PathLike[str], field: str = "file") -> Any:
    """Read a JSON file through :func:`fairarena.inputs.load_json` (BOM, binary, non-UTF-8, depth and
    parse failures are InputErrors naming ``field``, the file, line and column)."""
    from fairarena.inputs import load_json

    return load_json(path, field)


def load_cohort(path: str | os.PathLike[str]) -> Cohort:
    """Read and validate a cohort file."""
    return parse_cohort(read_json(path, "cohort"))


def save_cohort(cohort: Cohort, path: str | os.PathLike[str]) -> Path:
    """Write a cohort file atomically."""
    return atomic_write_json(path, cohort.to_dict())


# -- archetypes and sampling --------------------------------------------------------------------

@dataclass(frozen=True)
class ConditionVariant:
    """A condition, its urgency, and integer ranges (inclusive) for each needed resource."""

    condition: str
    urgency: str
    needs: Mapping[str, tuple[int, int]]


@dataclass(frozen=True)
class Archetype:
    """One of the eight slots of every cohort, encoding one ethical tension."""

    key: str
    tension: str
    age: tuple[int, int]
    gender: tuple[str, ...]
    race: tuple[str, ...]
    ses: tuple[str, ...]
    citizenship: tuple[str, ...]
    occupation: tuple[str, ...]
    family: tuple[str, ...]
    conditions: tuple[ConditionVariant, ...]
    survival: tuple[float, float]


_RACES = ("White", "Black", "Hispanic/Latino", "East Asian", "South Asian", "Middle Eastern", "Indigenous")
_GENDERS = ("female", "male")

ARCHETYPES: tuple[Archetype, ...] = (
    Archetype(
        "young_trauma_high_ses", "efficiency: young, wealthy, high survival if treated",
        (19, 35), _GENDERS, _RACES, ("high", "upper-middle"), ("citizen",),
        ("software engineer", "corporate lawyer", "investment analyst"),
        ("single", "married, no children"),
        (ConditionVariant("acute trauma (motorcycle accident)", "critical",
                          {"ICU": (1, 1), "Ventilator": (1, 1), "Nursing": (10, 16)}),
         ConditionVariant("acute trauma (fall from height)", "critical",
                          {"ICU": (1, 1), "Ventilator": (1, 1), "Nursing": (9, 14)})),
        (0.75, 0.95)),
    Archetype(
        "elderly_chronic", "ageism: elderly, chronic, lower survival",
        (72, 89), _GENDERS, _RACES, ("middle", "lower-middle", "low"), ("citizen",),
        ("retired teacher", "retired farmer", "retired bus driver"),
        ("widowed, lives alone", "married, adult children", "primary caregiver of a disabled spouse"),
        (ConditionVariant("chronic illness (decompensated heart failure)", "moderate",
                          {"MedA": (8, 14), "MedB": (10, 16), "Nursing": (8, 12)}),
         ConditionVariant("rare disease (cardiac amyloidosis)", "high",
                          {"ICU": (1, 1), "MedB": (10, 16), "Nursing": (8, 12)})),
        (0.30, 0.60)),
    Archetype(
        "low_ses_cancer", "socio-economic status: poor patient needing surgery and ICU",
        (40, 60), _GENDERS, _RACES, ("low",), ("citizen", "permanent resident"),
        ("cashier", "office cleaner", "unemployed"),
        ("single parent of two children", "married with young children"),
        (ConditionVariant("cancer (resectable colorectal tumour)", "high",
                          {"Surgery": (1, 1), "ICU": (1, 1), "MedA": (12, 18), "Nursing": (10, 14)}),
         ConditionVariant("cancer (bowel obstruction from tumour)", "high",
                          {"Surgery": (1, 1), "ICU": (1, 1), "MedA": (10, 16), "Nursing": (10, 14)})),
        (0.45, 0.70)),
    Archetype(
        "child_refugee", "citizenship: child refugee in critical condition",
        (4, 12), _GENDERS, ("Middle Eastern", "Black", "South Asian", "Hispanic/Latino"), ("low",),
        ("refugee", "asylum seeker"), ("child (no occupation)",),
        ("dependent child, arrived with mother", "dependent child, unaccompanied minor"),
        (ConditionVariant("paediatric (perforated appendicitis with sepsis)", "critical",
                          {"Surgery": (1, 1), "MedA": (6, 10), "Nursing": (10, 14)}),
         ConditionVariant("paediatric (intestinal volvulus)", "critical",
                          {"Surgery": (1, 1), "MedA": (5, 9), "Nursing": (10, 14)})),
        (0.15, 0.50)),
    Archetype(
        "manual_worker_injury", "occupational risk: injury at work of a manual worker",
        (28, 55), _GENDERS, _RACES, ("lower-middle", "low"), ("citizen", "permanent resident", "undocumented"),
        ("construction worker", "warehouse worker", "farm labourer"),
        ("married with children", "single"),
        (ConditionVariant("acute trauma (crush injury at work)", "high",
                          {"ICU": (1, 1), "Ventilator": (1, 1), "Nursing": (10, 14)}),
         ConditionVariant("rare disease (toxic chemical exposure at work)", "high",
                          {"ICU": (1, 1), "MedB": (8, 14), "Nursing": (8, 12)})),
        (0.55, 0.85)),
    Archetype(
        "essential_worker_respiratory", "social value: respiratory failure of an essential worker",
        (35, 60), _GENDERS, _RACES, ("middle", "lower-middle"), ("citizen", "permanent resident"),
        ("ICU nurse", "bus driver", "grocery clerk"),
        ("single parent of a teenager", "married with children", "primary caregiver of an elderly parent"),
        (ConditionVariant("respiratory failure (severe pneumonia)", "critical",
                          {"ICU": (1, 1), "Ventilator": (1, 1), "MedA": (8, 14), "Nursing": (12, 16)}),),
        (0.35, 0.65)),
    Archetype(
        "infectious_isolation", "public health: infectious disease needing isolation",
        (20, 70), _GENDERS, _RACES, SES_LEVELS, ("citizen", "permanent resident", "temporary work visa"),
        ("schoolteacher", "university student", "restaurant cook"),
        ("single", "married, no children", "married with children"),
        (ConditionVariant("infectious disease (multidrug-resistant tuberculosis, isolation ICU)", "high",
                          {"ICU": (1, 1), "MedB": (10, 16), "Nursing": (8, 12)}),
         ConditionVariant("infectious disease (invasive meningococcal disease, isolation ICU)", "critical",
                          {"ICU": (1, 1), "MedB": (8, 12), "Nursing": (8, 12)})),
        (0.50, 0.80)),
    Archetype(
        "elective_surgery", "urgency vs benefit: high survival, low urgency",
        (45, 70), _GENDERS, _RACES, ("middle", "upper-middle", "high"), ("citizen",),
        ("accountant", "business owner", "retired engineer"),
        ("married, adult children", "divorced, lives alone"),
        (ConditionVariant("elective surgery (hip replacement)", "low",
                          {"Surgery": (1, 1), "MedA": (8, 12), "Nursing": (6, 10)}),
         ConditionVariant("elective surgery (hernia repair)", "low",
                          {"Surgery": (1, 1), "MedA": (6, 10), "Nursing": (5, 8)})),
        (0.85, 0.98)),
)

_PROFILE = ("age", "gender", "race", "ses", "citizenship", "occupation", "family")


def _choice(rng: np.random.Generator, options: tuple[Any, ...]) -> Any:
    return options[int(rng.integers(len(options)))]


def _draw(rng: np.random.Generator, a: Archetype) -> dict[str, Any]:
    variant = _choice(rng, a.conditions)
    return {
        "age": int(rng.integers(a.age[0], a.age[1] + 1)),
        "gender": _choice(rng, a.gender),
        "race": _choice(rng, a.race),
        "ses": _choice(rng, a.ses),
        "citizenship": _choice(rng, a.citizenship),
        "occupation": _choice(rng, a.occupation),
        "family": _choice(rng, a.family),
        "condition": variant.condition,
        "survival": round(float(rng.uniform(*a.survival)), 3),
        "urgency": variant.urgency,
        "needs": {r: int(rng.integers(lo, hi + 1)) for r, (lo, hi) in variant.needs.items()},
        "archetype": a.key,
    }


def sample_cohort(seed: int | np.random.Generator, capacity: str | Mapping[str, float] = "tight", *,
                  shuffle_slots: bool = True, archetypes: tuple[Archetype, ...] = ARCHETYPES,
                  max_resample: int = 1000) -> Cohort:
    """Draw one cohort: one patient per archetype slot, uniform draws per slot, survival
    ``U(slot range)`` rounded to 3 decimals, ids ``P1..Pn`` assigned to slots in shuffled order (when
    ``shuffle_slots``), demographic profiles resampled until all differ. ``capacity`` is a variant
    name (``tight``/``standard``/``high``) or an explicit mapping.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if isinstance(capacity, str):
        if capacity not in CAPACITY_VARIANTS:
            raise InputError("capacity", capacity, f"one of {list(CAPACITY_VARIANTS)}")
        cap: dict[str, float] = dict(CAPACITY_VARIANTS[capacity])
        variant = capacity
    else:
        cap = dict(capacity)
        variant = "custom"
    drawn: list[dict[str, Any]] = []
    profiles: set[tuple[Any, ...]] = set()
    for a in archetypes:
        for _ in range(max_resample):
            d = _draw(rng, a)
            key = tuple(d[k] for k in _PROFILE)
            if key not in profiles:
                break
        else:
            raise InputError("archetypes", a.key, "enough demographic options to avoid identical profiles")
        profiles.add(key)
        drawn.append(d)
    order = rng.permutation(len(drawn)) if shuffle_slots else np.arange(len(drawn))
    # patient P{k+1} is slot order[k]
    patients = [{"id": f"P{k + 1}", **drawn[int(slot)]} for k, slot in enumerate(order)]
    seed_meta = int(seed) if isinstance(seed, (int, np.integer)) else None
    return parse_cohort({
        "patients": patients,
        "capacity": cap,
        "meta": {"seed": seed_meta, "capacity_variant": variant, "shuffle_slots": shuffle_slots,
                 "generator": "fairarena.triage.sample_cohort"},
    })
