"""The destination model: points of interest (POIs), tourist groups with personas, time slots.

A :class:`Destination` is validated once (pydantic) and exposes numpy views of what the metrics and the
decisions need (:meth:`Destination.arrays`). It is generated from a seed (:func:`generate`, the synthetic
model documented in docs/tourism.md) or loaded from a user's CSV of POIs (:func:`from_csv`).

Nothing here claims to describe a real city: the generator is a stylised, seeded model (heavy-tailed
popularity concentrated in the centre, capacities by category, small providers over-represented among
restaurants, shops and markets, emissions growing with distance from the visitor hub).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from fairarena.errors import InputError
from fairarena.registry import Registry

__all__ = ["CATEGORIES", "NEIGHBOURHOODS", "PROVIDERS", "TRANSPORT", "PERSONAS", "SLOTS", "POI", "Group",
           "Destination", "Persona", "generate", "from_csv", "load_destination", "parse_destination",
           "CSV_COLUMNS", "POIS_RANGE", "check_pois"]

CATEGORIES = ("museum", "landmark", "park", "beach", "restaurant", "market", "shop", "nightlife")
NEIGHBOURHOODS = ("centre", "residential", "periphery")
PROVIDERS = ("local", "chain", "public")          # local = local small business
#: kg CO2e per visitor-km for each transport mode (return trip counted: 2 x distance); stylised values of
#: the order of magnitude used in transport footprint tables (walking 0; public transport ~0.04; car ~0.17)
TRANSPORT: dict[str, float] = {"walk": 0.0, "bike": 0.0, "public": 0.04, "car": 0.17}
SLOTS = ("morning", "afternoon", "evening")


@dataclass(frozen=True)
class Persona:
    """A tourist persona: weights over categories (0..1), the highest comfortable price level (1..4),
    how fast interest decays with distance (per km), whether step-free access is required."""

    name: str
    categories: dict[str, float]
    max_price: int
    distance_decay: float
    needs_access: bool = False
    default_size: int = 100


PERSONAS: Registry[Persona] = Registry("persona")
for _p in (
    Persona("family", {"park": 1.0, "beach": 1.0, "museum": 0.6, "landmark": 0.7, "restaurant": 0.5, "market": 0.4,
                       "shop": 0.3, "nightlife": 0.0}, 2, 0.15, default_size=120),
    Persona("culture", {"museum": 1.0, "landmark": 1.0, "market": 0.5, "restaurant": 0.5, "park": 0.3, "shop": 0.2,
                        "beach": 0.1, "nightlife": 0.2}, 3, 0.05, default_size=90),
    Persona("budget", {"park": 0.8, "market": 0.9, "landmark": 0.8, "beach": 0.8, "museum": 0.5, "restaurant": 0.4,
                       "shop": 0.2, "nightlife": 0.4}, 1, 0.10, default_size=150),
    Persona("nightlife", {"nightlife": 1.0, "restaurant": 0.8, "beach": 0.6, "landmark": 0.3, "shop": 0.3,
                          "market": 0.3, "museum": 0.1, "park": 0.1}, 3, 0.08, default_size=80),
    Persona("accessibility", {"museum": 0.9, "landmark": 0.8, "park": 0.7, "restaurant": 0.7, "market": 0.4,
                              "shop": 0.5, "beach": 0.3, "nightlife": 0.2}, 3, 0.20, needs_access=True,
            default_size=30),
):
    PERSONAS.add(_p.name, _p, title=_p.name, description=(
        f"likes {', '.join(c for c, w in sorted(_p.categories.items(), key=lambda t: -t[1])[:3])}; price <= "
        f"{_p.max_price}; distance decay {_p.distance_decay}/km" + ("; needs step-free access" if _p.needs_access
                                                                    else "")))


class POI(BaseModel):
    """One point of interest (see docs/tourism.md for every field's meaning and unit)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=64)
    name: str = Field(default="", max_length=200)
    category: Literal[CATEGORIES]  # type: ignore[valid-type]
    neighbourhood: Literal[NEIGHBOURHOODS]  # type: ignore[valid-type]
    popularity: float = Field(gt=0.0, le=1.0, allow_inf_nan=False)
    capacity: int = Field(ge=1, le=10**7)               # visitors per slot
    baseline_load: list[float]                           # visitors per slot already there (one per slot)
    price_level: int = Field(ge=0, le=4)
    provider: Literal[PROVIDERS]  # type: ignore[valid-type]
    distance_km: float = Field(ge=0.0, le=500.0, allow_inf_nan=False)
    transport: Literal[tuple(TRANSPORT)]  # type: ignore[valid-type]
    accessible: bool = True

    @field_validator("baseline_load")
    @classmethod
    def _load(cls, v: list[float]) -> list[float]:
        if not v or any((not isinstance(x, (int, float))) or isinstance(x, bool) or not math.isfinite(x) or x < 0
                        for x in v):
            raise ValueError("non-negative finite numbers, one per slot")
        return [float(x) for x in v]

    @property
    def env_cost(self) -> float:
        """kg CO2e per visit: return trip from the visitor hub, ``2 x distance_km x TRANSPORT[mode]``."""
        return 2.0 * self.distance_km * TRANSPORT[self.transport]


class Group(BaseModel):
    """A tourist group (a segment of visitors sharing a persona): ``size`` visitors, each making one visit
    per slot."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=64)
    persona: str
    size: int = Field(ge=1, le=10**7)

    @field_validator("persona")
    @classmethod
    def _persona(cls, v: str) -> str:
        if v not in PERSONAS:
            raise ValueError(f"one of {PERSONAS.choices()}")
        return v


class Destination(BaseModel):
    """POIs, tourist groups and slots. ``comfort`` is the share of capacity above which a POI counts as
    over capacity for the environment metric (carrying capacity); ``seed`` records how it was made."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "synthetic destination"
    slots: list[str] = Field(default_factory=lambda: list(SLOTS), min_length=1, max_length=24)
    pois: list[POI] = Field(min_length=2, max_length=5000)
    groups: list[Group] = Field(min_length=1, max_length=100)
    comfort: float = Field(default=0.8, gt=0.0, le=1.0)
    seed: int | None = None

    @model_validator(mode="after")
    def _check(self) -> "Destination":
        ids = [p.id for p in self.pois]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate POI ids {sorted({i for i in ids if ids.count(i) > 1})[:5]}")
        gids = [g.id for g in self.groups]
        if len(set(gids)) != len(gids):
            raise ValueError("duplicate group ids")
        for k, p in enumerate(self.pois):
            if len(p.baseline_load) != len(self.slots):
                raise ValueError(f"pois[{k}].baseline_load has {len(p.baseline_load)} values; expected one per slot "
                                 f"({len(self.slots)})")
        free = sum(max(0.0, p.capacity - b) for p in self.pois for b in p.baseline_load) / len(self.slots)
        total = sum(g.size for g in self.groups)
        if total > free + 1e-9:
            raise ValueError(f"{total} visitors per slot exceed the free capacity per slot ({free:g})")
        return self

    # -- numpy views -----------------------------------------------------------------------
    @cached_property
    def arrays(self) -> "Arrays":
        return Arrays.of(self)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


@dataclass(frozen=True)
class Arrays:
    """Arrays of a destination (P POIs, G groups, S slots)."""

    pois: tuple[str, ...]
    groups: tuple[str, ...]
    popularity: np.ndarray        # (P,)
    capacity: np.ndarray          # (P,)
    baseline: np.ndarray          # (P, S)
    env: np.ndarray               # (P,) kg CO2e per visit
    small: np.ndarray             # (P,) bool: local small business
    residential: np.ndarray       # (P,) bool
    size: np.ndarray              # (G,)
    relevance: np.ndarray         # (G, P) in [0, 1]
    personas: tuple[str, ...]     # (G,)
    long_tail: np.ndarray         # (P,) bool: outside the popularity head (module doc of metrics)

    @staticmethod
    def of(d: Destination) -> "Arrays":
        pop = np.array([p.popularity for p in d.pois])
        return Arrays(
            pois=tuple(p.id for p in d.pois), groups=tuple(g.id for g in d.groups), popularity=pop,
            capacity=np.array([float(p.capacity) for p in d.pois]),
            baseline=np.array([p.baseline_load for p in d.pois], dtype=float),
            env=np.array([p.env_cost for p in d.pois]),
            small=np.array([p.provider == "local" for p in d.pois]),
            residential=np.array([p.neighbourhood == "residential" for p in d.pois]),
            size=np.array([float(g.size) for g in d.groups]),
            relevance=np.stack([relevance(PERSONAS.get(g.persona), d.pois) for g in d.groups]),
            personas=tuple(g.persona for g in d.groups), long_tail=long_tail_mask(pop))


def long_tail_mask(popularity: np.ndarray, head_share: float = 0.2) -> np.ndarray:
    """True for POIs outside the head: the head is the ``ceil(head_share x P)`` most popular POIs (ties by
    order), the long tail everything else (the 20/80 convention of popularity-bias studies)."""
    P = len(popularity)
    head = np.argsort(-popularity, kind="stable")[: max(1, math.ceil(head_share * P))]
    mask = np.ones(P, dtype=bool)
    mask[head] = False
    return mask


def relevance(persona: Persona, pois: list[POI]) -> np.ndarray:
    """A persona's relevance of each POI, in [0, 1]:

    ``rel = category_weight x price_fit x exp(-decay x distance_km) x access``, where ``price_fit = 1`` when
    the price level is at most the persona's maximum and ``0.5 ** (level - max)`` above it, and ``access``
    is 0 for a POI without step-free access when the persona needs it (else 1)."""
    out = np.empty(len(pois))
    for k, p in enumerate(pois):
        w = persona.categories.get(p.category, 0.0)
        price = 1.0 if p.price_level <= persona.max_price else 0.5 ** (p.price_level - persona.max_price)
        access = 0.0 if (persona.needs_access and not p.accessible) else 1.0
        out[k] = w * price * math.exp(-persona.distance_decay * p.distance_km) * access
    return out


# -- generation --------------------------------------------------------------------------------
_CAPACITY = {"museum": 200, "landmark": 300, "park": 500, "beach": 800, "restaurant": 60, "market": 150,
             "shop": 40, "nightlife": 120}
_CAT_P = np.array([0.12, 0.10, 0.10, 0.06, 0.22, 0.08, 0.18, 0.14])
# share of each slot's demand a category sees (morning, afternoon, evening)
_SLOT_SHAPE = {"nightlife": (0.05, 0.2, 1.0), "restaurant": (0.3, 0.7, 1.0), "beach": (0.7, 1.0, 0.3),
               "museum": (1.0, 0.9, 0.2), "market": (1.0, 0.6, 0.1), "shop": (0.6, 1.0, 0.5),
               "landmark": (0.8, 1.0, 0.6), "park": (0.8, 1.0, 0.4)}
_PROVIDER_P = {"restaurant": (0.65, 0.35, 0.0), "shop": (0.6, 0.4, 0.0), "market": (0.8, 0.0, 0.2),
               "nightlife": (0.6, 0.4, 0.0), "museum": (0.1, 0.1, 0.8), "landmark": (0.0, 0.1, 0.9),
               "park": (0.0, 0.0, 1.0), "beach": (0.1, 0.1, 0.8)}


#: the number of POIs a synthetic destination may have (``tourism destination --pois``)
POIS_RANGE = (2, 5000)


def check_pois(n_pois: Any, field: str = "pois") -> int:
    """``n_pois`` if it is an integer in :data:`POIS_RANGE`, else InputError naming ``field``."""
    lo, hi = POIS_RANGE
    if not isinstance(n_pois, int) or isinstance(n_pois, bool) or not lo <= n_pois <= hi:
        raise InputError(field, n_pois, f"an integer in {lo}..{hi}")
    return n_pois


def generate(seed: int = 0, n_pois: int = 40, groups: dict[str, int] | None = None, *,
             slots: tuple[str, ...] = SLOTS, zipf: float = 1.1, comfort: float = 0.8) -> Destination:
    """A seeded synthetic destination (docs/tourism.md, "The synthetic destination").

    * category ~ fixed mix; neighbourhood: 40% centre, 35% residential, 25% periphery;
    * popularity: a Zipf law ``rank^-zipf`` over a random order, scaled so the top POI has 1, with centre
      POIs drawn to the head (their order key is halved);
    * capacity per slot: the category's typical value x lognormal(0, 0.4);
    * distance from the hub: centre U(0.2, 2) km on foot; residential U(2, 6) km by public transport;
      periphery U(5, 25) km, by car with probability 0.6 else public transport;
    * baseline load per slot: ``capacity x min(0.9, 0.15 + 0.7 x popularity) x slot shape``;
    * price level 0..4 (public POIs 0-1); provider by category; 85% of POIs step-free;
    * groups: one per persona (``groups`` maps persona -> size, default sizes of :data:`PERSONAS`),
      rescaled down if they would exceed the free capacity.
    """
    check_pois(n_pois)
    rng = np.random.default_rng(seed)
    P = n_pois
    cats = rng.choice(len(CATEGORIES), size=P, p=_CAT_P / _CAT_P.sum())
    hood = rng.choice(3, size=P, p=[0.4, 0.35, 0.25])
    key = rng.random(P) * np.where(hood == 0, 0.5, 1.0)
    rank = np.empty(P, dtype=int)
    rank[np.argsort(key)] = np.arange(1, P + 1)
    pop = rank.astype(float) ** -zipf
    pois = []
    for k in range(P):
        cat = CATEGORIES[cats[k]]
        nb = NEIGHBOURHOODS[hood[k]]
        cap = max(5, int(round(_CAPACITY[cat] * rng.lognormal(0.0, 0.4))))
        if nb == "centre":
            dist, mode = rng.uniform(0.2, 2.0), "walk"
        elif nb == "residential":
            dist, mode = rng.uniform(2.0, 6.0), "public"
        else:
            dist, mode = rng.uniform(5.0, 25.0), ("car" if rng.random() < 0.6 else "public")
        prov = PROVIDERS[rng.choice(3, p=_PROVIDER_P[cat])]
        price = int(rng.integers(0, 2)) if prov == "public" else int(rng.integers(1, 5))
        occ = min(0.9, 0.15 + 0.7 * pop[k])
        shape = _SLOT_SHAPE[cat]
        base = [round(cap * occ * shape[s % 3], 1) for s in range(len(slots))]
        pois.append(POI(id=f"P{k + 1:02d}", name=f"{cat} {k + 1}", category=cat, neighbourhood=nb,
                        popularity=round(float(pop[k]), 6), capacity=cap, baseline_load=base, price_level=price,
                        provider=prov, distance_km=round(float(dist), 2), transport=mode,
                        accessible=bool(rng.random() < 0.85)))
    sizes = dict(groups) if groups else {p: PERSONAS[p].default_size for p in PERSONAS}
    for name in sizes:
        if name not in PERSONAS:
            raise InputError("groups", name, f"a persona, one of {PERSONAS.choices()}")
    free = sum(max(0.0, p.capacity - b) for p in pois for b in p.baseline_load) / len(slots)
    total = sum(sizes.values())
    scale = min(1.0, 0.5 * free / total) if total else 1.0   # at most half the free capacity, so flows fit
    gs = [Group(id=name, persona=name, size=max(1, int(s * scale))) for name, s in sizes.items()]
    return Destination(name=f"synthetic destination (seed {seed})", slots=list(slots), pois=pois, groups=gs,
                       comfort=comfort, seed=seed)


# -- files -------------------------------------------------------------------------------------
def _first_error(exc: ValidationError, prefix: str) -> InputError:
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err["loc"])
    where = f"{prefix}.{loc}" if loc else prefix
    return InputError(where, err.get("input"), err["msg"])


def parse_destination(data: Any, field: str = "destination") -> Destination:
    """A destination from decoded JSON, with strict types (:func:`fairarena.inputs.validate_model`):
    ``"capacity": "177"``, ``true`` for a number or ``"yes"`` for ``accessible`` are refused, naming the
    entry (``destination.pois[0].capacity``), not converted."""
    from fairarena.inputs import validate_model

    if not isinstance(data, dict):
        raise InputError(field, type(data).__name__, "a JSON object with pois and groups")
    return validate_model(Destination, data, field)


def load_destination(path: str | os.PathLike[str], field: str = "destination") -> Destination:
    from fairarena.inputs import load_json

    return parse_destination(load_json(path, field), field)


#: CSV columns (header line required; ``name``, ``accessible`` optional): baseline_load is one number
#: (the same every slot) or one per slot separated by ``;``
CSV_COLUMNS = ("id", "category", "neighbourhood", "popularity", "capacity", "baseline_load", "price_level",
               "provider", "distance_km", "transport")
_CSV_OPTIONAL = ("name", "accessible")


def from_csv(path: str | os.PathLike[str], groups: dict[str, int] | None = None, *, slots: tuple[str, ...] = SLOTS,
             field: str = "--from-csv") -> Destination:
    """A destination from a CSV of POIs (columns :data:`CSV_COLUMNS`); groups as in :func:`generate`.

    A bad row is rejected naming the line and the column (``--from-csv line 4 capacity``)."""
    from fairarena.inputs import parse_csv_rows, read_text

    rows = parse_csv_rows(read_text(path, field), field)
    if not rows:
        raise InputError(field, str(path), "at least one POI row after the header")
    missing = [c for c in CSV_COLUMNS if c not in rows[0]]
    if missing:
        raise InputError(f"{field} header", list(rows[0]), f"columns {list(CSV_COLUMNS)} (missing {missing})")
    unknown = [c for c in rows[0] if c not in CSV_COLUMNS + _CSV_OPTIONAL]
    if unknown:
        raise InputError(f"{field} header", unknown, f"only columns {list(CSV_COLUMNS + _CSV_OPTIONAL)}")
    pois = []
    for line, row in enumerate(rows, start=2):
        where = f"{field} line {line}"
        rec: dict[str, Any] = {}
        for col in CSV_COLUMNS + _CSV_OPTIONAL:
            if col not in row:
                continue
            v = row[col]
            try:
                if col in ("popularity", "distance_km"):
                    rec[col] = float(v)
                elif col in ("capacity", "price_level"):
                    rec[col] = int(v)
                elif col == "baseline_load":
                    vals = [float(t) for t in v.split(";")]
                    rec[col] = vals * len(slots) if len(vals) == 1 else vals
                elif col == "accessible":
                    if v.lower() not in ("true", "false", "1", "0", "yes", "no", ""):
                        raise ValueError
                    rec[col] = v.lower() in ("true", "1", "yes", "")
                else:
                    rec[col] = v
            except ValueError:
                raise InputError(f"{where} {col}", v, "a number" if col != "accessible" else "true/false") from None
            if col in ("popularity", "distance_km", "baseline_load") and not all(
                    math.isfinite(x) for x in (rec[col] if isinstance(rec[col], list) else [rec[col]])):
                raise InputError(f"{where} {col}", v, "a finite number")
        try:
            pois.append(POI.model_validate(rec))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InputError(f"{where} {'.'.join(str(x) for x in err['loc'])}", err.get("input"), err["msg"]) from None
        if len(pois[-1].baseline_load) != len(slots):
            raise InputError(f"{where} baseline_load", row["baseline_load"], f"one number or {len(slots)} separated by ';'")
    sizes = dict(groups) if groups else {p: PERSONAS[p].default_size for p in PERSONAS}
    free = sum(max(0.0, p.capacity - b) for p in pois for b in p.baseline_load) / len(slots)
    scale = min(1.0, 0.5 * free / max(1, sum(sizes.values())))
    gs = [Group(id=n, persona=n, size=max(1, int(s * scale))) for n, s in sizes.items()]
    try:
        return Destination(name=f"from {os.path.basename(str(path))}", slots=list(slots), pois=pois, groups=gs)
    except ValidationError as exc:
        raise _first_error(exc, field) from None
