"""Stakeholder groups of an election's voters, each with a utility over project sets.

Group schemes (``--groups``):

* ``age`` — age bands of the ballots' ``age`` field: under 30, 30-44, 45-59, 60 and over (voters without an
  age: ``age unknown``);
* ``sex`` — the ballots' ``sex`` field (``K``/``F``: women, ``M``: men; otherwise ``sex unknown``);
* ``neighbourhood`` — where the voters live or the projects are: the ballots' own ``neighbourhood``,
  ``neighborhood``, ``district`` or ``subunit`` field when they carry one (the first present; Zabrze 2021's
  ballots record the voter's district; a ballot without it: ``<field> unknown``), else the projects'
  ``subunit``, ``neighbourhood``, ``neighborhood`` or ``district`` tag, a voter in the one most represented
  among the projects it supports (Toulouse 2019's projects carry their neighbourhood as ``subunit``); groups
  under 2% of the voters are pooled as ``other``;
* ``category`` — the projects' ``subunit``, ``neighbourhood``, ``neighborhood``, ``district``, ``category`` or
  ``categories`` (the first present; a project with several categories counts for each): a voter belongs to
  the one most represented among the projects it supports (ties: the first in name order); groups under 2% of
  the voters are pooled as ``other``;
* ``clusters:K`` — K clusters of the ballots (k-means on the rows of the support matrix scaled to unit length,
  k-means++ seeding with ``numpy.random.default_rng(seed)``, 50 Lloyd iterations, seed 0 unless given);
* ``auto`` — ``age`` where ballots record an age, else ``neighbourhood`` where ballots record one, else
  ``category`` where projects carry one, else ``clusters:3``.

Groups with fewer than ``min_size`` voters (:data:`MIN_GROUP_SIZE` = 10 by default, ``--min-group``) are left out
of the stakeholder groups (their voters still vote: rules, approvals and the axioms count them) and listed in
``left_out``: a group of one voter (``age unknown`` in Warsaw-Wesoła 2023) would otherwise weigh as much as 500
in the group max-min, leximin and Nash rules, one person choosing the leximin set. When fewer than two groups
reach the size, the two largest are kept. ``min_size=1`` keeps every group.

A group's utility for a project set ``S`` is linear, ``sum_{j in S} C[g, j]``, with ``C`` by satisfaction:
``approval`` (default) — the share of the group's approval mass (approvals, points) that ``S`` funds;
``cost`` — the mean over members of the share of the cost of its supported projects that ``S`` funds
(pabutools' ``Cost_Sat`` normalised per voter); ``cardinality`` — the mean over members of the share of its
supported projects that ``S`` funds (``Cardinality_Sat`` normalised per voter). Each is in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairarena.errors import InputError
from fairarena.pb.election import Election

__all__ = ["Groups", "make_groups", "GROUP_UTILITIES", "parse_scheme", "MIN_GROUP_SIZE"]

#: groups with fewer voters are left out of the stakeholder groups (module doc)
MIN_GROUP_SIZE = 10

GROUP_UTILITIES = ("approval", "cost", "cardinality")
AGE_BANDS = ((0, 30, "age <30"), (30, 45, "age 30-44"), (45, 60, "age 45-59"), (60, 200, "age 60+"))


@dataclass(frozen=True)
class Groups:
    """Stakeholder groups: names, each voter's group index, and the utility coefficients ``C (G, projects)``."""

    scheme: str
    names: tuple[str, ...]
    member: np.ndarray
    sizes: np.ndarray
    coef: np.ndarray
    mass: np.ndarray
    utility: str
    left_out: tuple[tuple[str, int], ...] = ()


def parse_scheme(scheme: str, field: str = "--groups") -> tuple[str, int]:
    s = (scheme or "auto").strip().lower()
    if s in ("neighborhood", "subunit", "district"):
        s = "neighbourhood"
    if s in ("age", "sex", "category", "neighbourhood", "auto"):
        return s, 0
    if s.startswith("clusters:"):
        try:
            k = int(s.split(":", 1)[1])
        except ValueError:
            k = 0
        if k >= 2:
            return "clusters", k
    raise InputError(field, scheme, "age, sex, neighbourhood, category, clusters:K (K >= 2) or auto")


def _has(e: Election, key: str) -> bool:
    return any((v.get(key) or "").strip() not in ("", "NA", "na", "None") for v in e.voters)


#: where a voter lives (ballot fields) or a project is (project fields), in the order looked for
VOTER_AREA = ("neighbourhood", "neighborhood", "district", "subunit")
PROJECT_AREA = ("subunit", "neighbourhood", "neighborhood", "district")


def _project_tag(e: Election, keys: tuple[str, ...] = (*PROJECT_AREA, "category", "categories")) -> str | None:
    for key in keys:
        if any((p.get(key) or "").strip() for p in e.projects):
            return key
    return None


def _voter_area(e: Election) -> str | None:
    return next((key for key in VOTER_AREA if _has(e, key)), None)


def _pool_small(labels: list[str]) -> list[str]:
    """Labels held by under 2% of the voters pooled as ``other``."""
    n = len(labels)
    small = {t for t in set(labels) if labels.count(t) < 0.02 * n}
    return ["other" if t in small else t for t in labels]


def _labels_voter_area(e: Election, key: str) -> list[str]:
    return _pool_small([(v.get(key) or "").strip() or f"{key} unknown" for v in e.voters])


def _labels_age(e: Election) -> list[str]:
    out = []
    for v in e.voters:
        try:
            a = float(v.get("age", ""))
        except ValueError:
            out.append("age unknown")
            continue
        out.append(next((name for lo, hi, name in AGE_BANDS if lo <= a < hi), "age unknown"))
    return out


def _labels_sex(e: Election) -> list[str]:
    m = {"K": "women", "F": "women", "M": "men"}
    return [m.get((v.get("sex") or "").strip().upper(), "sex unknown") for v in e.voters]


def _labels_category(e: Election, key: str) -> list[str]:
    tags = [[t.strip() for t in (p.get(key) or "").split(",") if t.strip()] for p in e.projects]
    names = sorted({t for ts in tags for t in ts})
    T = np.zeros((e.n_projects, len(names)))
    for j, ts in enumerate(tags):
        for t in ts:
            T[j, names.index(t)] = 1
    counts = e.approvals.astype(float) @ T
    labels = [names[int(np.argmax(c))] if c.max() > 0 else "other" for c in counts]
    return _pool_small(labels)


def _labels_clusters(e: Election, k: int, seed: int) -> list[str]:
    X = e.approvals.astype(float)
    norm = np.linalg.norm(X, axis=1, keepdims=True)
    X = X / np.where(norm > 0, norm, 1)
    rng = np.random.default_rng(seed)
    k = min(k, len(X))
    centres = [X[rng.integers(len(X))]]
    for _ in range(1, k):
        d = np.min([((X - c) ** 2).sum(axis=1) for c in centres], axis=0)
        centres.append(X[rng.choice(len(X), p=d / d.sum())] if d.sum() > 0 else X[rng.integers(len(X))])
    C = np.array(centres)
    lab = np.zeros(len(X), dtype=int)
    for _ in range(50):
        lab = np.argmin(((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2), axis=1)
        newC = np.array([X[lab == c].mean(axis=0) if np.any(lab == c) else C[c] for c in range(k)])
        if np.allclose(newC, C):
            break
        C = newC
    # clusters named by size (cluster 1 the largest), then by index
    sizes = np.bincount(lab, minlength=k)
    order = sorted(range(k), key=lambda c: (-sizes[c], c))
    name = {c: f"cluster {r + 1}" for r, c in enumerate(order)}
    return [name[int(c)] for c in lab]


def make_groups(e: Election, scheme: str = "auto", utility: str = "approval", seed: int = 0,
                field: str = "--groups", min_size: int = MIN_GROUP_SIZE) -> Groups:
    """The election's voters in groups (module doc); ``member`` is -1 for a voter of a group left out."""
    kind, k = parse_scheme(scheme, field)
    if isinstance(min_size, bool) or not isinstance(min_size, (int, np.integer)) or min_size < 1:
        raise InputError("--min-group", min_size, "a whole number of voters >= 1")
    if utility not in GROUP_UTILITIES:
        raise InputError("--utility", utility, f"one of {', '.join(GROUP_UTILITIES)}")
    tag = _project_tag(e)
    area = _voter_area(e)
    if kind == "auto":
        kind, k = (("age", 0) if _has(e, "age") else ("neighbourhood", 0) if area else ("category", 0) if tag
                   else ("clusters", 3))
    if kind in ("age", "sex") and not _has(e, kind):
        raise InputError(field, scheme, f"a field the ballots of {e.name} record (they have no {kind})")
    if kind == "category" and tag is None:
        raise InputError(field, scheme, f"a field the projects of {e.name} carry (no subunit or category)")
    project_area = _project_tag(e, PROJECT_AREA)
    if kind == "neighbourhood" and area is None and project_area is None:
        raise InputError(field, scheme, f"a field the ballots or projects of {e.name} carry (no neighbourhood, "
                                        "district or subunit)")
    labels = (_labels_age(e) if kind == "age" else _labels_sex(e) if kind == "sex"
              else _labels_category(e, tag) if kind == "category"
              else (_labels_voter_area(e, area) if area else _labels_category(e, project_area))
              if kind == "neighbourhood" else _labels_clusters(e, k, seed))
    names = sorted(set(labels), key=lambda t: (t == "other" or t.endswith(" unknown"), t))
    if kind == "age":
        names = [n for _, _, n in AGE_BANDS if n in labels] + (["age unknown"] if "age unknown" in labels else [])
    counts = {n: labels.count(n) for n in names}
    kept = [n for n in names if counts[n] >= min_size]
    if len(kept) < 2:
        big = sorted(names, key=lambda n: (-counts[n], names.index(n)))[:2]
        kept = [n for n in names if n in big]
    left_out = tuple((n, counts[n]) for n in names if n not in kept)
    names = kept
    pos = {n: g for g, n in enumerate(names)}
    member = np.array([pos.get(t, -1) for t in labels])
    G = len(names)
    S = e.scores
    sizes = np.bincount(member[member >= 0], minlength=G)
    mass = np.zeros((G, e.n_projects))
    coef = np.zeros((G, e.n_projects))
    if utility == "approval":
        per = S
    elif utility == "cost":
        w = S * e.costs[None, :]
        per = w / np.maximum(w.sum(axis=1, keepdims=True), 1e-300)
    else:
        per = S / np.maximum(S.sum(axis=1, keepdims=True), 1e-300)
    for g in range(G):
        rows = member == g
        mass[g] = S[rows].sum(axis=0)
        if utility == "approval":
            tot = mass[g].sum()
            coef[g] = mass[g] / tot if tot > 0 else 0.0
        else:
            coef[g] = per[rows].sum(axis=0) / max(1, rows.sum())
    label = kind if kind != "clusters" else f"clusters:{k}"
    return Groups(label, tuple(names), member, sizes, coef, mass, utility, left_out)
