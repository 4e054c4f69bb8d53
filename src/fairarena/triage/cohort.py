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
from typing import Annotated, Any, Callable, ClassVar, Literal, Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer, field_validator, model_validator

from fairarena.allocation.problem import DEFAULT_CNSS, AllocationProblem
from fairarena.errors import InputError
from fairarena.fsutil import atomic_write_json
from fairarena.registry import Registry

__all__ = [
    "RESOURCES",
    "INDIVISIBLE",
    "URGENCY_LEVELS",
    "CAPACITY_VARIANTS",
    "Patient",
    "Cohort",
    "TriageProblem",
    "SES_LEVELS",
    "DISADVANTAGE_RULES",
    "SURVIVAL_LABEL_SCHEMES",
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
# urgency, most urgent first: "acute" is the paper's top level (its Table 7: Acute, High, Low), "critical"
# ours (the same rank), "moderate" ours between high and low
URGENCY_LEVELS: dict[str, int] = {"acute": 3, "critical": 3, "high": 2, "moderate": 1, "low": 0}
# the paper's SES scale, lowest first: the eight labels of its Tables 1 and 7 (arXiv 2604.13705: Refugee,
# Low, Working, Lower-mid, Middle, Upper-mid, Upper, High). The tables put "Refugee" in the SES column; we
# place it lowest. The paper gives no order between "Upper" and "High"; we put High at the top.
SES_LEVELS: tuple[str, ...] = ("refugee", "low", "working", "lower-middle", "middle", "upper-middle", "upper",
                               "high")
DEFAULT_DISADVANTAGE = "ses-scale"  # the DW-ESG weight rule (DISADVANTAGE_RULES)
SesName = Literal["refugee", "low", "working", "lower-middle", "middle", "upper-middle", "upper", "high"]
UrgencyName = Literal["acute", "critical", "high", "moderate", "low"]
# the paper's spellings (Tables 1 and 7) -> the file's
_SES_ALIASES = {"lower-mid": "lower-middle", "l-mid": "lower-middle", "upper-mid": "upper-middle",
                "u-mid": "upper-middle", "work.": "working", "lower middle": "lower-middle",
                "upper middle": "upper-middle"}
#: the patient fields of the paper's Table 7 that every cohort file must give (needs come from the slot)
TABLE7_FIELDS: tuple[str, ...] = ("id", "age", "gender", "race", "ses", "condition", "survival", "urgency", "needs")

CAPACITY_VARIANTS: dict[str, dict[str, int]] = {
    # the paper's (arXiv 2604.13705)
    "tight": {"ICU": 2, "Ventilator": 1, "MedA": 45, "MedB": 35, "Nursing": 60, "Surgery": 2},
    # ours, re-derived (docs/triage.md, "Capacity variants"): the Rawlsian optimum reaches RMG 0.75 on
    # standard (the paper's Table 2 reaches 0.74) while ICU, ventilators, surgery and nursing stay scarce
    "standard": {"ICU": 4, "Ventilator": 2, "MedA": 50, "MedB": 40, "Nursing": 75, "Surgery": 2},
    "high": {"ICU": 5, "Ventilator": 3, "MedA": 60, "MedB": 50, "Nursing": 90, "Surgery": 3},
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
    ses: SesName
    # not in the paper's Table 7: citizenship defaults to "citizen" (its Appendix D.2: every slot without
    # non-citizen options is "Citizen"), occupation and family to "" (not given)
    citizenship: str = "citizen"
    occupation: str = ""
    family: str = ""
    condition: str
    survival: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
    urgency: UrgencyName
    needs: dict[ResourceName, Amount]
    archetype: str | None = None
    slot: Annotated[int, Field(ge=1)] | None = None
    disadvantage_weight: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    vulnerability_weight: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None

    @field_validator("ses", mode="before")
    @classmethod
    def _ses_case(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        v = value.strip().lower()
        return _SES_ALIASES.get(v, v)

    @field_validator("urgency", mode="before")
    @classmethod
    def _urgency_case(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

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
        scheme = self.meta.get("survival_labels", "main")
        if not isinstance(scheme, str) or scheme not in SURVIVAL_LABEL_SCHEMES:
            raise InputError("meta.survival_labels", scheme, f"one of {SURVIVAL_LABEL_SCHEMES.choices()}")
        return self

    @property
    def survival_labels(self) -> str:
        """How survival is shown to agents: ``meta.survival_labels``, a SURVIVAL_LABEL_SCHEMES name
        ("main", the default: the paper's Section 4.2; "appendix": its Appendix D.2)."""
        return self.meta.get("survival_labels", "main")

    # -- conversions ---------------------------------------------------------------------------
    def to_problem(self, *, cnss: str = DEFAULT_CNSS, disadvantage: str = DEFAULT_DISADVANTAGE) -> "TriageProblem":
        """The numeric problem (arrays, weights) the metrics and solvers work on (see
        :meth:`TriageProblem.from_cohort` for ``cnss`` and ``disadvantage``)."""
        return TriageProblem.from_cohort(self, cnss=cnss, disadvantage=disadvantage)

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

_SES_POINTS = {"refugee": 2.0, "low": 2.0, "working": 1.75, "lower-middle": 1.5, "middle": 1.0, "upper-middle": 0.5,
               "upper": 0.25, "high": 0.0}
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
    """Raw disadvantage of the ``points`` rule: ``1 + SES points + citizenship points``.

    SES: refugee 2, low 2, working 1.75, lower-middle 1.5, middle 1, upper-middle 0.5, upper 0.25, high 0.
    Citizenship: citizen 0, permanent resident 0.5, refugee/asylum seeker 1, other non-citizen 1,
    undocumented 1.5.
    """
    return 1.0 + _SES_POINTS[patient.ses] + _citizenship_points(patient.citizenship)


def ses_ranks(cohort: Cohort) -> np.ndarray:
    """Each patient's SES rank in the cohort, lowest SES = rank 1, ties share the best (smallest) rank
    (standard competition ranking "1224" over :data:`SES_LEVELS`)."""
    level = np.array([SES_LEVELS.index(p.ses) for p in cohort.patients])
    return np.array([1 + int(np.sum(level < lv)) for lv in level], dtype=float)


def ses_scale_ranks(cohort: Cohort) -> np.ndarray:
    """Each patient's rank on the paper's SES scale :data:`SES_LEVELS` (refugee 1, low 2, ..., high 8),
    whatever the other patients' levels."""
    return np.array([1 + SES_LEVELS.index(p.ses) for p in cohort.patients], dtype=float)


def _ses_scale_weights(cohort: Cohort) -> np.ndarray:
    return 1.0 / ses_scale_ranks(cohort)


def _ses_rank_weights(cohort: Cohort) -> np.ndarray:
    return 1.0 / ses_ranks(cohort)


def _points_weights(cohort: Cohort) -> np.ndarray:
    return np.array([disadvantage_scores(p) for p in cohort.patients], float)


DISADVANTAGE_RULES: Registry[Callable[[Cohort], np.ndarray]] = Registry("disadvantage rule", field="disadvantage")
DISADVANTAGE_RULES.add(
    "ses-scale", _ses_scale_weights, title="inverse rank on the SES scale (the paper's)",
    description="w_i proportional to 1 / rank of the patient's SES on the paper's eight-level scale "
                "(refugee 1, low 2, working 3, lower-middle 4, middle 5, upper-middle 6, upper 7, high 8), "
                "normalised to sum 1; reproduces the paper's example weights 0.385 and 0.048",
    citation="Chaki, Gourru & Velcin, arXiv 2604.13705, Appendix C (DW-ESG)")
DISADVANTAGE_RULES.add(
    "ses-rank", _ses_rank_weights, title="inverse SES rank within the cohort (ours, the former default)",
    description="w_i proportional to 1 / SES rank among the cohort's patients (lowest SES = rank 1, ties "
                "share the smallest rank), normalised to sum 1",
    citation="Chaki, Gourru & Velcin, arXiv 2604.13705, Appendix C (DW-ESG), read as a rank within the cohort")
DISADVANTAGE_RULES.add(
    "points", _points_weights, title="SES and citizenship points (ours)",
    description="w_i proportional to 1 + SES points + citizenship points, normalised to sum 1")


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


def cohort_weights(cohort: Cohort, disadvantage: str = DEFAULT_DISADVANTAGE) -> tuple[np.ndarray, np.ndarray]:
    """Normalised (disadvantage ``w``, vulnerability ``v``); explicit per-patient weights in the file win.

    ``disadvantage`` names the rule for ``w`` (:data:`DISADVANTAGE_RULES`): ``"ses-scale"`` (default, the
    paper's: inversely proportional to the rank on its SES scale), ``"ses-rank"`` (the rank within the
    cohort) or ``"points"`` (ours: 1 + SES + citizenship points).
    """
    rule = DISADVANTAGE_RULES.get(disadvantage)
    given_w = [p.disadvantage_weight for p in cohort.patients]
    w = np.array(given_w, float) if all(g is not None for g in given_w) else rule(cohort)
    given_v = [p.vulnerability_weight for p in cohort.patients]
    v = (np.array(given_v, float) if all(g is not None for g in given_v)
         else np.array([vulnerability_scores(p) for p in cohort.patients], float))
    return w / w.sum(), v / v.sum()


def _label_main(s: float) -> str:
    if s < 0.2:
        return "Acute"
    if s < 0.5:
        return "Low"
    if s < 0.7:
        return "Mid"
    return "High"


def _label_appendix(s: float) -> str:
    if s < 0.2:
        return "acute"
    if s < 0.7:
        return "moderate"
    return "mild"


SURVIVAL_LABEL_SCHEMES: Registry[Callable[[float], str]] = Registry("survival label scheme", field="labels")
SURVIVAL_LABEL_SCHEMES.add(
    "main", _label_main, title="Acute / Low / Mid / High (the paper's main text; shown in prompts by default)",
    description="Acute < 0.2, Low 0.2-0.5, Mid 0.5-0.7, High >= 0.7",
    citation="arXiv 2604.13705, main text")
SURVIVAL_LABEL_SCHEMES.add(
    "appendix", _label_appendix, title="acute / moderate / mild (the paper's appendix)",
    description="acute < 0.2, moderate 0.2-0.7, mild >= 0.7 (severity labels; cut points ours)",
    citation="arXiv 2604.13705, appendix")


def survival_label(s: float, scheme: str = "main") -> str:
    """The label agents see instead of the number; ``scheme`` "main" (default: Acute < 0.2, Low 0.2-0.5,
    Mid 0.5-0.7, High >= 0.7) or "appendix" (acute / moderate / mild)."""
    return SURVIVAL_LABEL_SCHEMES.get(scheme)(s)


# -- numeric problem --------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class TriageProblem(AllocationProblem):
    """An :class:`AllocationProblem` built from a :class:`Cohort` (kept in ``cohort``)."""

    #: the domain the problem belongs to (what a conflict audit's ``problem`` says)
    domain_name: ClassVar[str] = "triage"
    cohort: Cohort | None = None

    @classmethod
    def from_cohort(cls, cohort: Cohort, *, cnss: str = DEFAULT_CNSS,
                    disadvantage: str = DEFAULT_DISADVANTAGE) -> "TriageProblem":
        """Arrays in file order; resources in :data:`RESOURCES` order; weights from the rules.

        ``cnss`` is the need-satisfaction form (``"indicator"``, the paper's, or ``"fractional"``);
        ``disadvantage`` the DW-ESG weight rule (``"ses-scale"``, the paper's; ``"ses-rank"``; ``"points"``).
        """
        w, v = cohort_weights(cohort, disadvantage)
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
            cnss=cnss,
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
        loc = tuple(err.get("loc", ()))
        if len(loc) == 3 and loc[0] == "patients" and loc[2] in TABLE7_FIELDS:
            return InputError(field, "missing", "a value: every patient gives " + ", ".join(TABLE7_FIELDS)
                              + " (the paper's Table 7; needs from the patient's slot)")
        return InputError(field, "missing", "a value (required field)")
    return InputError(field, value, err.get("msg", "a valid value"))


def parse_cohort(data: Any) -> Cohort:
    """Validate a decoded JSON object as a cohort (InputError naming the field on failure).

    A reference-instance file (``{"cohort": {...}, "allocations": ..., ...}``, such as the packaged
    cohort 32 of :mod:`fairarena.triage.reference`) is accepted too: its ``cohort`` is read, and
    errors name ``cohort.<field>``."""
    root = ""
    if isinstance(data, dict) and "patients" not in data and isinstance(data.get("cohort"), dict):
        data, root = data["cohort"], "cohort"
    try:
        return Cohort.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, root) from None


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
