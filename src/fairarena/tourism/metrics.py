"""Per-stakeholder metrics of a tourism decision (formulas in docs/tourism.md, "Metrics").

Two decisions:

* **lists** ``L (G, k)``: for each tourist group a ranked list of ``k`` POI indices;
* **flows** ``F (G, P, S)``: visitors of each group at each POI in each slot.

A list becomes visits through an *attention model* (:data:`ATTENTION`): position ``r = 1..k`` receives
attention ``a_r``; POI ``j``'s exposure is ``E_j = sum_g size_g a_{rank_g(j)}``, and each visitor makes one
visit per slot, spread over the list in proportion to ``a_r``: expected visitors of group ``g`` at the POI
at rank ``r`` in every slot ``= size_g a_r / sum_r a_r``. For flows, exposure is the number of visits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairarena.errors import InputError
from fairarena.inequality import gini  # the one Gini (0 for all zeros); re-exported
from fairarena.registry import Registry
from fairarena.tourism.destination import Arrays, Destination

__all__ = ["ATTENTION", "attention", "ndcg", "gini", "list_metrics", "flow_metrics", "METRICS", "METRIC_KEYS",
           "lists_load", "flow_feasibility"]


@dataclass(frozen=True)
class Attention:
    name: str
    budget: int | None  # positions beyond the budget get no attention (None: every position)


ATTENTION: Registry[Attention] = Registry("attention")
ATTENTION.add("full-list", Attention("full-list", None), title="Full-list attention",
              description="every recommended item is examined: a_r = 1 for r = 1..k")
ATTENTION.add("position", Attention("position", 3), title="Position-based attention with a visit budget",
              description="a_r = 1 / log2(r + 1) for r <= b (visit budget, default 3), 0 beyond",
              citation="the logarithmic position discount of DCG (Jarvelin and Kekalainen 2002)")


def attention(name: str, k: int, budget: int | None = None) -> np.ndarray:
    """Attention weights ``a_r`` for positions ``1..k`` under model ``name``."""
    model = ATTENTION.get(name)
    if model.budget is None:
        return np.ones(k)
    b = model.budget if budget is None else budget
    r = np.arange(1, k + 1)
    return np.where(r <= b, 1.0 / np.log2(r + 1.0), 0.0)


def ndcg(rel: np.ndarray, ranking: np.ndarray) -> float:
    """nDCG@k of ``ranking`` (k POI indices) for relevance ``rel (P,)``:
    ``DCG = sum_r rel_{L_r} / log2(r + 1)``, divided by the DCG of the k most relevant POIs (1 when no POI
    is relevant)."""
    k = len(ranking)
    disc = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = float(np.sum(rel[np.asarray(ranking, dtype=int)] * disc))
    ideal = float(np.sum(np.sort(rel)[::-1][:k] * disc))
    return 1.0 if ideal <= 0 else dcg / ideal


def lists_load(a: Arrays, L: np.ndarray, model: str = "position", budget: int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """``(exposure (P,), tourist visitors per slot (P,))`` of lists ``L (G, k)`` under an attention model."""
    L = np.asarray(L, dtype=int)
    G, k = L.shape
    w = attention(model, k, budget)
    exposure = np.zeros(len(a.pois))
    np.add.at(exposure, L.ravel(), (a.size[:, None] * w[None, :]).ravel())
    share = w / w.sum() if w.sum() > 0 else np.full(k, 1.0 / k)
    visitors = np.zeros(len(a.pois))
    np.add.at(visitors, L.ravel(), (a.size[:, None] * share[None, :]).ravel())
    return exposure, visitors


def _common(d: Destination, a: Arrays, exposure: np.ndarray, visits: np.ndarray, load: np.ndarray,
            shown: np.ndarray, shown_weight: np.ndarray) -> dict[str, float]:
    """Metrics shared by both decisions. ``visits (P,)`` tourist visits over all slots, ``load (P, S)``
    total load (baseline + tourists), ``shown`` POI indices recommended (with multiplicity weights)."""
    cap = a.capacity[:, None]
    res = a.residential
    out: dict[str, float] = {}
    if res.any():
        out["crowding_residential"] = float(load[res].sum() / (cap[res].sum() * load.shape[1]))
        out["crowding_residential_max"] = float((load[res] / cap[res]).max())
    else:
        out["crowding_residential"] = 0.0
        out["crowding_residential_max"] = 0.0
    total_e = exposure.sum()
    out["small_exposure_share"] = float(exposure[a.small].sum() / total_e) if total_e > 0 else 0.0
    out["exposure_gini"] = gini(exposure)        # over the whole catalogue: unseen POIs count as 0
    tv = visits.sum()
    out["emissions_per_visit"] = float(visits @ a.env / tv) if tv > 0 else 0.0
    envmax = float(a.env.max()) if a.env.max() > 0 else 1.0
    out["emissions_norm"] = out["emissions_per_visit"] / envmax
    over = np.maximum(load - d.comfort * cap, 0.0)
    base_over = np.maximum(a.baseline - d.comfort * cap, 0.0)
    out["visits_above_capacity"] = float(over.sum())
    out["tourist_visits_above_capacity"] = float((over - base_over).sum())
    out["over_capacity_share"] = float((over - base_over).sum() / tv) if tv > 0 else 0.0
    sw = shown_weight.sum()
    out["popularity_mean"] = float(a.popularity[shown] @ shown_weight / sw) if sw > 0 else 0.0
    out["long_tail_share"] = float(a.long_tail[shown] @ shown_weight / sw) if sw > 0 else 0.0
    return out


def list_metrics(d: Destination, L: np.ndarray, *, model: str = "position", budget: int | None = None
                 ) -> dict[str, Any]:
    """Every metric of lists ``L (G, k)`` (module doc); per-group nDCG under ``ndcg``."""
    a = d.arrays
    L = np.asarray(L, dtype=int)
    if L.ndim != 2 or L.shape[0] != len(a.groups) or L.min(initial=0) < 0 or L.max(initial=0) >= len(a.pois):
        raise InputError("lists", L.shape, f"one list of POI indices per group ({len(a.groups)} groups)")
    for g in range(L.shape[0]):
        if len(set(L[g].tolist())) != L.shape[1]:
            raise InputError(f"lists.{a.groups[g]}", [a.pois[j] for j in L[g]], "distinct POIs")
    exposure, per_slot = lists_load(a, L, model, budget)
    S = a.baseline.shape[1]
    load = a.baseline + per_slot[:, None]
    out = _common(d, a, exposure, per_slot * S, load, L.ravel(), np.repeat(a.size, L.shape[1]))
    out["ndcg"] = {a.groups[g]: ndcg(a.relevance[g], L[g]) for g in range(L.shape[0])}
    return out


def flow_feasibility(d: Destination, F: np.ndarray, atol: float = 1e-6) -> list[str]:
    """Every way flows ``F (G, P, S)`` break the rules: negative or fractional visitors, a group not placed
    in full in a slot (each visitor makes one visit per slot), a POI above its free capacity
    ``capacity - baseline`` in a slot."""
    a = d.arrays
    F = np.asarray(F, dtype=float)
    out = []
    if F.shape != (len(a.groups), len(a.pois), a.baseline.shape[1]):
        return [f"flows have shape {F.shape}, expected {(len(a.groups), len(a.pois), a.baseline.shape[1])}"]
    if (F < -atol).any():
        out.append("negative visitors")
    if (np.abs(F - np.round(F)) > atol).any():
        out.append("fractional visitors")
    placed = F.sum(axis=1)
    for g, s in zip(*np.nonzero(np.abs(placed - a.size[:, None]) > atol)):
        out.append(f"group {a.groups[g]} places {placed[g, s]:g} of {a.size[g]:g} visitors in slot {d.slots[s]}")
    free = np.maximum(a.capacity[:, None] - a.baseline, 0.0)
    tot = F.sum(axis=0)
    for j, s in zip(*np.nonzero(tot > np.floor(free) + atol)):
        out.append(f"{a.pois[j]} gets {tot[j, s]:g} visitors in slot {d.slots[s]}, free capacity {np.floor(free[j, s]):g}")
    return out


def flow_metrics(d: Destination, F: np.ndarray) -> dict[str, Any]:
    """Every metric of flows ``F (G, P, S)``; per-group flow utility under ``flow_utility``:
    ``U_g = sum_{j,s} rel_{g j} F_{g j s} / (size_g S)`` (mean relevance of the group's visits)."""
    a = d.arrays
    F = np.asarray(F, dtype=float)
    S = a.baseline.shape[1]
    visits = F.sum(axis=(0, 2))
    load = a.baseline + F.sum(axis=0)
    shown_w = visits
    out = _common(d, a, visits, visits, load, np.arange(len(a.pois)), shown_w)
    util = np.einsum("gp,gps->g", a.relevance, F) / (a.size * S)
    out["flow_utility"] = {a.groups[g]: float(util[g]) for g in range(len(a.groups))}
    return out


#: every tourism metric with its description and direction (``max``: higher is better, ``min``: lower is better)
METRICS: Registry[str] = Registry("metric")
for _name, _dir, _desc in (
    ("satisfaction", "max", "tourists: size-weighted mean nDCG@k (lists) or flow utility (flows) of the persona's "
     "groups (all groups for the decision as a whole)"),
    ("crowding_residential", "min", "residents: total load / total capacity over residential POIs and slots"),
    ("crowding_residential_max", "min", "residents: the largest load / capacity of a residential POI in a slot"),
    ("small_exposure_share", "max", "local businesses: share of exposure (visits for flows) going to local small "
     "businesses"),
    ("exposure_gini", "min", "local businesses: Gini of exposure over the whole catalogue (POIs never shown count as 0)"),
    ("emissions_per_visit", "min", "environment: kg CO2e per tourist visit (return trip from the hub)"),
    ("emissions_norm", "min", "environment: emissions per visit / the largest per-visit cost in the destination"),
    ("visits_above_capacity", "min", "environment: visitors above comfort x capacity, summed over POIs and slots"),
    ("tourist_visits_above_capacity", "min", "environment: the part of visits_above_capacity the tourists add"),
    ("over_capacity_share", "min", "environment: tourist_visits_above_capacity / tourist visits"),
    ("popularity_mean", "min", "popularity bias: mean popularity of recommended POIs (visit-weighted for flows); "
     "lower = less popularity bias"),
    ("long_tail_share", "max", "popularity bias: share of recommendations (visits) going to long-tail POIs"),
):
    METRICS.add(_name, _name, title=_name, description=_desc, direction=_dir)

#: the scalar metric keys (both decisions) -> description (derived from :data:`METRICS`)
METRIC_KEYS: dict[str, str] = {n: METRICS.entry(n).description for n in METRICS}


def satisfaction(d: Destination, m: dict[str, Any], persona: str | None, decision: str) -> float:
    """Size-weighted mean of nDCG (lists) or flow utility (flows) over the groups of ``persona`` (all
    groups when None)."""
    a = d.arrays
    per = m["ndcg"] if decision == "lists" else m["flow_utility"]
    idx = [g for g in range(len(a.groups)) if persona is None or a.personas[g] == persona]
    if not idx:
        return math.nan
    w = a.size[idx]
    return float(np.dot([per[a.groups[g]] for g in idx], w) / w.sum())
