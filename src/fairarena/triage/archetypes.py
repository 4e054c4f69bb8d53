"""The eight archetype slots of a triage cohort and the seeded sampler that draws one patient per slot.

The slot definitions are data, not code: :func:`load_archetypes` reads and validates a JSON file (a
packaged set by name, :data:`ARCHETYPE_SETS`, or any file of the same format a user supplies),
:func:`sample_cohort` draws from them. ``"paper"`` (default, ``data/triage/archetypes.json``) follows the
paper's Table 1, Table 7 and Appendix D.1-D.2; ``"reconstructed"``
(``data/triage/archetypes_reconstructed.json``) is the former reconstruction, kept as an option.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from fairarena.errors import InputError
from fairarena.triage.cohort import CAPACITY_VARIANTS, RESOURCES, SES_LEVELS, URGENCY_LEVELS, Cohort, parse_cohort

__all__ = ["ConditionVariant", "Archetype", "Archetypes", "ARCHETYPES", "ARCHETYPE_SETS", "DEFAULT_ARCHETYPES",
           "load_archetypes", "sample_cohort", "draw_patient"]

#: packaged archetype sets: name -> data file under ``fairarena/data/triage/``
ARCHETYPE_SETS: dict[str, str] = {"paper": "archetypes.json", "reconstructed": "archetypes_reconstructed.json"}
DEFAULT_ARCHETYPES = "paper"
_PROFILE = ("age", "gender", "race", "ses", "citizenship", "occupation", "family")
_RESAMPLE = ("slot", "cohort")

Options = tuple[tuple[str, ...], tuple[float, ...]]  # (values, probabilities)


@dataclass(frozen=True)
class ConditionVariant:
    """A condition, its urgency, integer ranges (inclusive) for each needed resource, and optionally an
    age range narrower than the slot's (e.g. a paediatric condition)."""

    condition: str
    urgency: str
    needs: Mapping[str, tuple[int, int]]
    age: tuple[int, int] | None = None


@dataclass(frozen=True)
class Archetype:
    """One slot of every cohort, encoding one ethical tension.

    Categorical fields are ``(values, probabilities)``; ``retired_from_age`` (optional) prefixes the
    occupation with ``"retired "`` for patients at least that old.
    """

    key: str
    tension: str
    age: tuple[int, int]
    gender: Options
    race: Options
    ses: Options
    citizenship: Options
    occupation: Options
    family: Options
    conditions: tuple[ConditionVariant, ...]
    survival: tuple[float, float]
    retired_from_age: int | None = None
    slot: int | None = None
    minor_below_age: int | None = None
    isolation: tuple[str, ...] = ()

    def admits(self, patient: Mapping[str, Any], *, refugee_ses: bool = False) -> bool:
        """True when ``patient`` (a cohort-file patient dict) is a possible draw of this slot. Citizenship,
        occupation and family are checked only when the dict gives them (the paper's Table 7 does not);
        ``refugee_ses``: a refugee's SES reads "refugee" (the paper set's rule)."""
        age = int(patient["age"])
        if not self.age[0] <= age <= self.age[1]:
            return False
        occupation = str(patient.get("occupation", ""))
        if self.retired_from_age is not None and age >= self.retired_from_age:
            occupation = occupation.removeprefix("retired ")
        if self.minor_below_age is not None and age < self.minor_below_age and occupation == _MINOR:
            occupation = ""
        ses = patient["ses"]
        if refugee_ses and patient.get("citizenship") == "refugee":
            if ses != "refugee":
                return False
            ses = self.ses[0][0]  # any listed level: the drawn SES was replaced
        checks = [("gender", patient["gender"]), ("race", patient["race"]), ("ses", ses),
                  ("citizenship", patient.get("citizenship", "")), ("occupation", occupation),
                  ("family", patient.get("family", ""))]
        for name, value in checks:
            if name in ("citizenship", "occupation", "family") and value == "":
                continue
            if value not in getattr(self, name)[0]:
                return False
        if not self.survival[0] <= float(patient["survival"]) <= self.survival[1]:
            return False
        variant = next((v for v in self.conditions if v.condition == patient["condition"]), None)
        if variant is None or variant.urgency != patient["urgency"]:
            return False
        if variant.age is not None and not variant.age[0] <= age <= variant.age[1]:
            return False
        needs = {r: v for r, v in patient["needs"].items() if v > 0}
        return set(needs) == set(variant.needs) and all(
            variant.needs[r][0] <= needs[r] <= variant.needs[r][1] for r in needs)


_MINOR = "minor (no occupation)"


class Archetypes(tuple):
    """The slots of one archetype file (a tuple of :class:`Archetype`) with the file's sampling rules:
    ``refugee_ses`` (a refugee's SES is "refugee"), ``resample`` ("slot": redraw a slot whose profile
    repeats an earlier one; "cohort": reject the whole cohort and draw it again, the paper's) and
    ``profile`` (the attributes that make a demographic profile)."""

    name: str
    refugee_ses: bool
    resample: str
    profile: tuple[str, ...]

    def __new__(cls, slots: tuple[Archetype, ...], *, name: str = "custom", refugee_ses: bool = False,
                resample: str = "slot", profile: tuple[str, ...] = _PROFILE) -> "Archetypes":
        obj = super().__new__(cls, slots)
        obj.name, obj.refugee_ses, obj.resample, obj.profile = name, refugee_ses, resample, tuple(profile)
        return obj


def _options(spec: Any, shared: Mapping[str, Any], where: str) -> Options:
    if isinstance(spec, str) and spec.startswith("$"):
        if spec[1:] not in shared:
            raise InputError(where, spec, f"a shared option list, one of {sorted(shared)}")
        spec = shared[spec[1:]]
    if isinstance(spec, list) and spec and all(isinstance(s, str) for s in spec):
        return tuple(spec), tuple(1.0 / len(spec) for _ in spec)
    if isinstance(spec, dict) and spec and all(isinstance(v, (int, float)) and v > 0 for v in spec.values()):
        total = float(sum(spec.values()))
        return tuple(spec), tuple(float(v) / total for v in spec.values())
    raise InputError(where, spec, "a non-empty list of strings or an object {option: positive weight}")


def _range(spec: Any, where: str, kind: type = int) -> tuple[Any, Any]:
    if not (isinstance(spec, list) and len(spec) == 2 and all(isinstance(v, (int, float)) for v in spec)
            and spec[0] <= spec[1]):
        raise InputError(where, spec, "[lo, hi] with lo <= hi")
    return kind(spec[0]), kind(spec[1])


def _parse(data: Any, source: str) -> Archetypes:
    if not isinstance(data, dict) or not isinstance(data.get("archetypes"), list):
        raise InputError(source, type(data).__name__, 'an object with an "archetypes" list')
    shared = data.get("shared", {})
    diversity = data.get("diversity", {})
    resample = diversity.get("resample", "slot") if isinstance(diversity, dict) else diversity
    if resample not in _RESAMPLE:
        raise InputError("diversity.resample", resample, f"one of {list(_RESAMPLE)}")
    profile = diversity.get("profile", list(_PROFILE)) if isinstance(diversity, dict) else list(_PROFILE)
    if not (isinstance(profile, list) and profile and all(f in _PROFILE for f in profile)):
        raise InputError("diversity.profile", profile, f"a non-empty list of {list(_PROFILE)}")
    out = []
    for k, a in enumerate(data["archetypes"]):
        where = f"archetypes[{k}]"
        try:
            conditions = []
            for j, c in enumerate(a["conditions"]):
                cw = f"{where}.conditions[{j}]"
                if c["urgency"] not in URGENCY_LEVELS:
                    raise InputError(f"{cw}.urgency", c["urgency"], f"one of {list(URGENCY_LEVELS)}")
                for r in c["needs"]:
                    if r not in RESOURCES:
                        raise InputError(f"{cw}.needs", r, f"a resource, one of {list(RESOURCES)}")
                conditions.append(ConditionVariant(
                    c["condition"], c["urgency"], {r: _range(v, f"{cw}.needs.{r}") for r, v in c["needs"].items()},
                    _range(c["age"], f"{cw}.age") if "age" in c else None))
            ses = _options(a["ses"], shared, f"{where}.ses")
            bad = [s for s in ses[0] if s not in SES_LEVELS]
            if bad:
                raise InputError(f"{where}.ses", bad[0], f"one of {list(SES_LEVELS)}")
            survival = _range(a["survival"], f"{where}.survival", float)
            if not 0.0 <= survival[0] <= survival[1] <= 1.0:
                raise InputError(f"{where}.survival", a["survival"], "a range within [0, 1]")
            out.append(Archetype(
                key=str(a["key"]), tension=str(a["tension"]), age=_range(a["age"], f"{where}.age"),
                gender=_options(a["gender"], shared, f"{where}.gender"),
                race=_options(a["race"], shared, f"{where}.race"), ses=ses,
                citizenship=_options(a["citizenship"], shared, f"{where}.citizenship"),
                occupation=_options(a["occupation"], shared, f"{where}.occupation"),
                family=_options(a["family"], shared, f"{where}.family"),
                conditions=tuple(conditions), survival=survival,
                retired_from_age=a.get("retired_from_age"), slot=a.get("slot"),
                minor_below_age=a.get("minor_below_age"), isolation=tuple(a.get("isolation", ()))))
        except KeyError as exc:
            raise InputError(f"{where}.{exc.args[0]}", None, "a required archetype field") from None
    keys = [a.key for a in out]
    if len(set(keys)) != len(keys) or not keys:
        raise InputError(source, keys, "a non-empty list of archetypes with distinct keys")
    return Archetypes(tuple(out), name=source, refugee_ses=bool(data.get("refugee_ses", False)),
                      resample=resample, profile=tuple(profile))


def load_archetypes(path: str | Path | None = None) -> Archetypes:
    """Read archetype slots from a JSON file, or a packaged set by name (:data:`ARCHETYPE_SETS`: "paper",
    the default, or "reconstructed")."""
    if path is None or (isinstance(path, str) and path in ARCHETYPE_SETS):
        name = DEFAULT_ARCHETYPES if path is None else str(path)
        text = resources.files("fairarena").joinpath(f"data/triage/{ARCHETYPE_SETS[name]}").read_text(encoding="utf-8")
        source = name
    else:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError("archetypes", str(path),
                             f"a set name ({', '.join(ARCHETYPE_SETS)}) or a readable file ({exc.strerror})") from None
        source = str(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(source, f"line {exc.lineno} column {exc.colno}", f"valid JSON ({exc.msg})") from None
    return _parse(data, source)


ARCHETYPES: Archetypes = load_archetypes()


def _pick(rng: np.random.Generator, options: Options) -> str:
    values, probs = options
    k = int(np.searchsorted(np.cumsum(probs), rng.random(), side="right"))
    return values[min(k, len(values) - 1)]


def draw_patient(rng: np.random.Generator, a: Archetype, *, refugee_ses: bool = False) -> dict[str, Any]:
    """One patient drawn from slot ``a`` (a cohort-file patient dict without ``id``); ``refugee_ses``:
    a refugee's SES is "refugee" (the paper's tables show Refugee in the SES column)."""
    variant = a.conditions[int(rng.integers(len(a.conditions)))]
    lo, hi = a.age if variant.age is None else variant.age
    age = int(rng.integers(lo, hi + 1))
    occupation = _pick(rng, a.occupation)
    if a.retired_from_age is not None and age >= a.retired_from_age:
        occupation = f"retired {occupation}"
    if a.minor_below_age is not None and age < a.minor_below_age:
        occupation = _MINOR
    d = {
        "age": age,
        "gender": _pick(rng, a.gender),
        "race": _pick(rng, a.race),
        "ses": _pick(rng, a.ses),
        "citizenship": _pick(rng, a.citizenship),
        "occupation": occupation,
        "family": _pick(rng, a.family),
        "condition": variant.condition,
        "survival": round(float(rng.uniform(*a.survival)), 3),
        "urgency": variant.urgency,
        "needs": {r: int(rng.integers(lo, hi + 1)) for r, (lo, hi) in variant.needs.items()},
        "archetype": a.key,
    }
    if refugee_ses and d["citizenship"] == "refugee":
        d["ses"] = "refugee"
    if a.slot is not None:
        d["slot"] = a.slot
    return d


def _draw_slots(rng: np.random.Generator, slots: Archetypes, max_resample: int) -> list[dict[str, Any]]:
    """One patient per slot with pairwise different demographic profiles (``slots.profile``): per slot
    (``resample == "slot"``) or by rejecting the whole cohort (``"cohort"``, Appendix D.2)."""
    if slots.resample == "cohort":
        for _ in range(max_resample):
            drawn = [draw_patient(rng, a, refugee_ses=slots.refugee_ses) for a in slots]
            if len({tuple(d[k] for k in slots.profile) for d in drawn}) == len(drawn):
                return drawn
        raise InputError("archetypes", slots.name, "enough demographic options to avoid identical profiles")
    drawn = []
    profiles: set[tuple[Any, ...]] = set()
    for a in slots:
        for _ in range(max_resample):
            d = draw_patient(rng, a, refugee_ses=slots.refugee_ses)
            key = tuple(d[k] for k in slots.profile)
            if key not in profiles:
                break
        else:
            raise InputError("archetypes", a.key, "enough demographic options to avoid identical profiles")
        profiles.add(key)
        drawn.append(d)
    return drawn


def sample_cohort(seed: int | np.random.Generator, capacity: str | Mapping[str, float] = "tight", *,
                  shuffle_slots: bool = True, archetypes: "str | tuple[Archetype, ...] | None" = None,
                  max_resample: int = 1000) -> Cohort:
    """Draw one cohort: one patient per archetype slot, uniform draws per slot (weighted where the data
    file gives weights), survival ``U(slot range)`` rounded to 3 decimals, ids ``P1..Pn`` assigned to
    slots in shuffled order (when ``shuffle_slots``), demographic profiles all different (the set's
    resampling rule). ``capacity`` is a variant name (``tight``/``standard``/``high``) or an explicit
    mapping; ``archetypes`` a set name (:data:`ARCHETYPE_SETS`, default "paper"), loaded slots, or a
    plain tuple of :class:`Archetype` (per-slot resampling).
    """
    if archetypes is None:
        slots = ARCHETYPES
    elif isinstance(archetypes, str):
        if archetypes not in ARCHETYPE_SETS:
            raise InputError("archetypes", archetypes, f"one of {', '.join(ARCHETYPE_SETS)}")
        slots = ARCHETYPES if archetypes == DEFAULT_ARCHETYPES else load_archetypes(archetypes)
    elif isinstance(archetypes, Archetypes):
        slots = archetypes
    else:
        slots = Archetypes(tuple(archetypes))
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if isinstance(capacity, str):
        if capacity not in CAPACITY_VARIANTS:
            raise InputError("capacity", capacity, f"one of {list(CAPACITY_VARIANTS)}")
        cap: dict[str, float] = dict(CAPACITY_VARIANTS[capacity])
        variant = capacity
    else:
        cap = dict(capacity)
        variant = "custom"
    drawn = _draw_slots(rng, slots, max_resample)
    order = rng.permutation(len(drawn)) if shuffle_slots else np.arange(len(drawn))
    patients = [{"id": f"P{k + 1}", **drawn[int(slot)]} for k, slot in enumerate(order)]
    seed_meta = int(seed) if isinstance(seed, (int, np.integer)) else None
    return parse_cohort({
        "patients": patients,
        "capacity": cap,
        "meta": {"seed": seed_meta, "capacity_variant": variant, "shuffle_slots": shuffle_slots,
                 "archetypes": slots.name, "generator": "fairarena.triage.sample_cohort"},
    })
