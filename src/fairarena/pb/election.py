"""A Pabulib ``.pb`` election: projects, costs, the budget and every ballot, read through pabutools.

:func:`read_election` pre-scans the file itself (pabutools' parser gives no line numbers) and refuses a bad
file with one line naming the file, the line and the field, before any work: an unknown section, a vote
naming a project that does not exist, a negative or non-numeric cost, a budget below every project's cost (a
valid but empty problem: every rule funds nothing, and the message says so), an empty ``VOTES`` section.
Then pabutools parses it (:func:`pabutools.election.parse_pabulib`) and the election keeps:

* projects: ids, costs, and their attributes (name, category, subunit, target, ``selected``, ...);
* voters: their attributes (age, sex, ...) and a score matrix ``scores (voters x projects)``: approval 1 for an
  approved project; cumulative the points given; ordinal the positional points ``k..1`` of a ballot of ``k``
  ranked projects (the Borda-like score Pabulib's ``score`` column records for Krakow);
* the city's actual outcome: the projects with ``selected`` = 1 (None when the file has no such column).

An allocation is a set of projects whose costs sum to at most the budget.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from fairarena.errors import InputError

__all__ = ["Election", "read_election", "SECTIONS", "VOTE_TYPES"]

SECTIONS = ("META", "PROJECTS", "VOTES")
VOTE_TYPES = ("approval", "cumulative", "ordinal", "scoring")


@dataclass(frozen=True, eq=False)
class Election:
    """One PB election (module doc). ``scores[i, j] > 0`` when voter ``i`` supports project ``j``."""

    path: str
    meta: dict[str, str]
    project_ids: tuple[str, ...]
    costs: np.ndarray
    projects: tuple[dict[str, str], ...]
    voter_ids: tuple[str, ...]
    voters: tuple[dict[str, str], ...]
    scores: np.ndarray
    budget: float
    vote_type: str
    selected: tuple[str, ...] | None = None
    _pabutools: list[Any] = field(default_factory=list, repr=False)

    @property
    def name(self) -> str:
        return Path(self.path).stem

    @property
    def title(self) -> str:
        m = self.meta
        parts = [m.get("unit", ""), m.get("subunit", "") or m.get("district", ""), m.get("instance", "")]
        return " ".join(p for p in parts if p) or self.name

    @property
    def n_voters(self) -> int:
        return len(self.voter_ids)

    @property
    def n_projects(self) -> int:
        return len(self.project_ids)

    @property
    def rule(self) -> str:
        return self.meta.get("rule", "")

    @cached_property
    def approvals(self) -> np.ndarray:
        """``(voters, projects)`` bool: the voter supports the project (a positive score)."""
        return self.scores > 0

    def index(self, projects: Any) -> np.ndarray:
        """A bool mask over the projects from project ids."""
        pos = {p: j for j, p in enumerate(self.project_ids)}
        mask = np.zeros(self.n_projects, dtype=bool)
        for p in projects:
            mask[pos[str(p)]] = True
        return mask

    def ids(self, mask: Any) -> tuple[str, ...]:
        return tuple(p for p, s in zip(self.project_ids, np.asarray(mask, dtype=bool)) if s)

    def cost(self, mask: Any) -> float:
        return float(self.costs[np.asarray(mask, dtype=bool)].sum())

    def feasible(self, mask: Any) -> bool:
        return self.cost(mask) <= self.budget + 1e-9

    def pabutools(self) -> tuple[Any, Any]:
        """pabutools' ``(instance, profile)`` of the file (parsed once)."""
        if not self._pabutools:
            from pabutools.election import parse_pabulib

            self._pabutools.extend(parse_pabulib(self.path))
        return self._pabutools[0], self._pabutools[1]


def _rows(lines: list[tuple[int, str]]) -> list[tuple[int, list[str]]]:
    text = "\n".join(t for _, t in lines)
    out = []
    for (ln, _), row in zip(lines, csv.reader(io.StringIO(text), delimiter=";")):
        out.append((ln, [c.strip() for c in row]))
    return out


def _number(where: str, name: str, value: str, expected: str) -> float:
    try:
        v = float(value.replace(",", "."))
    except ValueError:
        raise InputError(f"{where}: {name}", value, expected) from None
    if not np.isfinite(v):
        raise InputError(f"{where}: {name}", value, expected)
    return v


def read_election(path: str | Path, field_name: str = "--file") -> Election:
    """The election in the ``.pb`` file at ``path`` (module doc); InputError naming the file, line and field."""
    p = Path(path)
    if not p.is_file():
        raise InputError(field_name, str(path), "an existing Pabulib .pb file")
    try:
        raw = p.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(field_name, str(path), f"a readable UTF-8 .pb file ({exc.__class__.__name__})") from None
    f = p.name
    sections: dict[str, tuple[int, list[tuple[int, str]]]] = {}
    current: str | None = None
    for n, line in enumerate(raw, 1):
        s = line.strip()
        if not s:
            continue
        if ";" not in s:
            key = s.upper()
            if key not in SECTIONS:
                raise InputError(f"{f}:{n}: section", s, f"one of {', '.join(SECTIONS)}")
            if key in sections:
                raise InputError(f"{f}:{n}: section", s, f"once (already at line {sections[key][0]})")
            current = key
            sections[key] = (n, [])
            continue
        if current is None:
            raise InputError(f"{f}:{n}: section", s[:40], "a section header first (META, PROJECTS or VOTES)")
        sections[current][1].append((n, line))
    for key in SECTIONS:
        if key not in sections:
            raise InputError(f"{f}: section", key, "present (the file has none)")

    # META
    meta: dict[str, str] = {}
    for ln, row in _rows(sections["META"][1])[1:]:
        if len(row) >= 2:
            meta[row[0]] = row[1]
    head = sections["META"][0]
    meta_line = {row[0]: ln for ln, row in _rows(sections["META"][1])[1:] if row}
    if "budget" not in meta:
        raise InputError(f"{f}:{head}: META budget", None, "a budget")
    budget = _number(f"{f}:{meta_line['budget']}", "budget", meta["budget"], "a non-negative number")
    if budget < 0:
        raise InputError(f"{f}:{meta_line['budget']}: budget", meta["budget"], "a non-negative number")
    vote_type = meta.get("vote_type", "approval").strip().lower()
    if vote_type not in VOTE_TYPES:
        raise InputError(f"{f}:{meta_line.get('vote_type', head)}: vote_type", vote_type, f"one of {', '.join(VOTE_TYPES)}")

    # PROJECTS
    prow = _rows(sections["PROJECTS"][1])
    if not prow:
        raise InputError(f"{f}:{sections['PROJECTS'][0]}: PROJECTS", 0, "a header line and at least one project")
    pcols = prow[0][1]
    for col in ("project_id", "cost"):
        if col not in pcols:
            raise InputError(f"{f}:{prow[0][0]}: PROJECTS header", ";".join(pcols)[:60], f"a {col} column")
    ids: list[str] = []
    costs: list[float] = []
    attrs: list[dict[str, str]] = []
    first_line: dict[str, int] = {}
    for ln, row in prow[1:]:
        rec = dict(zip(pcols, row))
        pid = rec.get("project_id", "")
        if not pid:
            raise InputError(f"{f}:{ln}: project_id", pid, "a project id")
        if pid in first_line:
            raise InputError(f"{f}:{ln}: project_id", pid, f"a unique project id (line {first_line[pid]} has it too)")
        first_line[pid] = ln
        c = _number(f"{f}:{ln}", "cost", rec.get("cost", ""), "a non-negative number")
        if c < 0:
            raise InputError(f"{f}:{ln}: cost", rec.get("cost"), f"a non-negative cost (project {pid})")
        ids.append(pid)
        costs.append(c)
        attrs.append({k: v for k, v in rec.items() if k not in ("project_id", "cost")})
    if not ids:
        raise InputError(f"{f}:{sections['PROJECTS'][0]}: PROJECTS", 0, "at least one project")
    cheapest = int(np.argmin(costs))
    if budget < costs[cheapest]:
        raise InputError(f"{f}:{meta_line['budget']}: budget", meta["budget"],
                         f"at least the cheapest project's cost ({ids[cheapest]} costs {costs[cheapest]:g}, line "
                         f"{first_line[ids[cheapest]]}): a valid but empty problem, every rule funds nothing")

    # VOTES
    vrow = _rows(sections["VOTES"][1])
    if len(vrow) <= 1:
        raise InputError(f"{f}:{sections['VOTES'][0]}: VOTES", len(vrow[1:]) if vrow else 0, "at least one vote (the section is empty)")
    vcols = vrow[0][1]
    if "vote" not in vcols:
        raise InputError(f"{f}:{vrow[0][0]}: VOTES header", ";".join(vcols)[:60], "a vote column")
    pos = {pid: j for j, pid in enumerate(ids)}
    n = len(vrow) - 1
    scores = np.zeros((n, len(ids)))
    vids: list[str] = []
    vattrs: list[dict[str, str]] = []
    for i, (ln, row) in enumerate(vrow[1:]):
        rec = dict(zip(vcols, row))
        vote = [v.strip() for v in rec.get("vote", "").split(",") if v.strip()]
        for v in vote:
            if v not in pos:
                raise InputError(f"{f}:{ln}: vote", v, "a project of the PROJECTS section (no such project)")
        if vote_type in ("cumulative", "scoring"):
            pts = [v.strip() for v in rec.get("points", "").split(",") if v.strip()]
            if len(pts) != len(vote):
                raise InputError(f"{f}:{ln}: points", rec.get("points", ""), f"one number per voted project ({len(vote)})")
            for v, pt in zip(vote, pts):
                x = _number(f"{f}:{ln}", "points", pt, "a non-negative number")
                if x < 0:
                    raise InputError(f"{f}:{ln}: points", pt, "a non-negative number")
                scores[i, pos[v]] += x
        elif vote_type == "ordinal":
            k = len(vote)
            for r, v in enumerate(vote):
                scores[i, pos[v]] = k - r
        else:
            scores[i, [pos[v] for v in vote]] = 1.0
        vids.append(rec.get("voter_id", str(i)))
        vattrs.append({k: v for k, v in rec.items() if k not in ("voter_id", "vote", "points")})
    selected = None
    if "selected" in pcols:
        selected = tuple(pid for pid, a in zip(ids, attrs) if a.get("selected", "").strip() in ("1", "1.0"))
    return Election(path=str(p), meta=meta, project_ids=tuple(ids), costs=np.asarray(costs, dtype=float),
                    projects=tuple(attrs), voter_ids=tuple(vids), voters=tuple(vattrs), scores=scores,
                    budget=float(budget), vote_type=vote_type, selected=selected)
