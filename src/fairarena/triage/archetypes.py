"""The eight archetype slots of a triage cohort (data file ``fairarena/data/triage/archetypes.json``)
and the seeded sampler that draws one patient per slot.

The slot definitions are data, not code: :func:`load_archetypes` reads and validates the JSON file
(or any file of the same format a user supplies), :func:`sample_cohort` draws from them.
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

__all__ = ["ConditionVariant", "Archetype", "ARCHETYPES", "load_archetypes", "sample_cohort", "draw_patient"]

Options = tuple[tuple[str, ...], tuple[float, ...]]  # (values, probabilities)


@dataclass(frozen=True)
class ConditionVariant:
    """A condition, its urgency, and integer ranges (inclusive) for each needed resource."""

    condition: str
    urgency: str
    needs: Mapping[str, tuple[int, int]]


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

    def admits(self, patient: Mapping[str, Any]) -> bool:
        """True when ``patient`` (a cohort-file patient dict) is a possible draw of this slot."""
        age = int(patient["age"])
        if not self.age[0] <= age <= self.age[1]:
            return False
        occupation = str(patient["occupation"])
        if self.retired_from_age is not None and age >= self.retired_from_age:
            occupation = occupation.removeprefix("retired ")
        for name, value in (("gender", patient["gender"]), ("race", patient["race"]), ("ses", patient["ses"]),
                            ("citizenship", patient["citizenship"]), ("occupation", occupation),
                            ("family", patient["family"])):
            if value not in getattr(self, name)[0]:
                return False
        if not self.survival[0] <= float(patient["survival"]) <= self.survival[1]:
            return False
        variant = next((v for v in self.conditions if v.condition == patient["condition"]), None)
        if variant is None or variant.urgency != patient["urgency"]:
            return False
        needs = {r: v for r, v in patient["needs"].items() if v > 0}
        return set(needs) == set(variant.needs) and all(
            variant.needs[r][0] <= needs[r] <= variant.needs[r][1] for r in needs)


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


def _parse(data: Any, source: str) -> tuple[Archetype, ...]:
    if not isinstance(data, dict) or not isinstance(data.get("archetypes"), list):
        raise InputError(source, type(data).__name__, 'an object with an "archetypes" list')
    shared = data.get("shared", {})
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
                conditions.append(ConditionVariant(c["condition"], c["urgency"],
                                                   {r: _range(v, f"{cw}.needs.{r}") for r, v in c["needs"].items()}))
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
                retired_from_age=a.get("retired_from_age")))
        except KeyError as exc:
            raise InputError(f"{where}.{exc.args[0]}", None, "a required archetype field") from None
    keys = [a.key for a in out]
    if len(set(keys)) != len(keys) or not keys:
        raise InputError(source, keys, "a non-empty list of archetypes with distinct keys")
    return tuple(out)


def load_archetypes(path: str | Path | None = None) -> tuple[Archetype, ...]:
    """Read archetype slots from a JSON file (default: the packaged ``data/triage/archetypes.json``)."""
    if path is None:
        text = resources.files("fairarena").joinpath("data/triage/archetypes.json").read_text(encoding="utf-8")
        source = "archetypes.json"
    else:
        text = Path(path).read_text(encoding="utf-8")
        source = str(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(source, f"line {exc.lineno} column {exc.colno}", f"valid JSON ({exc.msg})") from None
    return _parse(data, source)


ARCHETYPES: tuple[Archetype, ...] = load_archetypes()

_PROFILE = ("age", "gender", "race", "ses", "citizenship", "occupation", "family")


def _pick(rng: np.random.Generator, options: Options) -> str:
    values, probs = options
    k = int(np.searchsorted(np.cumsum(probs), rng.random(), side="right"))
    return values[min(k, len(values) - 1)]


def draw_patient(rng: np.random.Generator, a: Archetype) -> dict[str, Any]:
    """One patient drawn from slot ``a`` (a cohort-file patient dict without ``id``)."""
    variant = a.conditions[int(rng.integers(len(a.conditions)))]
    age = int(rng.integers(a.age[0], a.age[1] + 1))
    occupation = _pick(rng, a.occupation)
    if a.retired_from_age is not None and age >= a.retired_from_age:
        occupation = f"retired {occupation}"
    return {
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


def sample_cohort(seed: int | np.random.Generator, capacity: str | Mapping[str, float] = "tight", *,
                  shuffle_slots: bool = True, archetypes: tuple[Archetype, ...] | None = None,
                  max_resample: int = 1000) -> Cohort:
    """Draw one cohort: one patient per archetype slot, uniform draws per slot (weighted where the data
    file gives weights), survival ``U(slot range)`` rounded to 3 decimals, ids ``P1..Pn`` assigned to
    slots in shuffled order (when ``shuffle_slots``), demographic profiles resampled until all differ.
    ``capacity`` is a variant name (``tight``/``standard``/``high``) or an explicit mapping.
    """
    slots = ARCHETYPES if archetypes is None else archetypes
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
    for a in slots:
        for _ in range(max_resample):
            d = draw_patient(rng, a)
            key = tuple(d[k] for k in _PROFILE)
            if key not in profiles:
                break
        else:
            raise InputError("archetypes", a.key, "enough demographic options to avoid identical profiles")
        profiles.add(key)
        drawn.append(d)
    order = rng.permutation(len(drawn)) if shuffle_slots else np.arange(len(drawn))
    patients = [{"id": f"P{k + 1}", **drawn[int(slot)]} for k, slot in enumerate(order)]
    seed_meta = int(seed) if isinstance(seed, (int, np.integer)) else None
    return parse_cohort({
        "patients": patients,
        "capacity": cap,
        "meta": {"seed": seed_meta, "capacity_variant": variant, "shuffle_slots": shuffle_slots,
                 "generator": "fairarena.triage.sample_cohort"},
    })
