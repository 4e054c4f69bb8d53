"""Multi-resource allocation problems: individuals x resources, capacities, needs.

An :class:`AllocationProblem` is validated once, immutable, and holds everything the metrics and the
solvers need as numpy arrays. The generic problem is feasibility only (ids, resources, capacities, needs,
divisibility, the need-satisfaction form); the *welfare data* (:data:`WELFARE_FIELDS`: survival, urgency,
disadvantage and vulnerability per individual) and the Gini's resource are optional: the triage cohorts
supply them, and the metrics and frameworks that read them (``esg``, ``dw_esg``, ``vwci``, ``gini``, the
entitlement order) refuse a problem without them (:meth:`AllocationProblem.welfare`, one-line
:class:`InputError` naming the field). An allocation is an array ``x`` of shape ``(n, R)`` (or a stack
``(B, n, R)``); ``x[i, r]`` is the amount of resource ``r`` given to individual ``i``.

Feasibility: ``sum_i x[i, r] <= capacity[r]``, ``x >= 0``, and ``x[:, r]`` integral for every
indivisible resource. Giving a resource to someone who does not need it (or more than they need) is
feasible but reported as *waste*.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from fairarena.errors import InputError

__all__ = [
    "CNSS_FORMS",
    "DEFAULT_CNSS",
    "WELFARE_FIELDS",
    "AllocationProblem",
    "allocation_from_mapping",
    "allocation_to_mapping",
    "check_feasibility",
    "is_feasible",
    "waste",
]

_INT_ATOL = 1e-9

#: the two forms of need satisfaction (``CNSS``); see docs/triage.md
CNSS_FORMS: dict[str, str] = {
    "indicator": "a need counts as met when the patient receives at least the clinical minimum of the "
                 "resource (default one unit, never more than the need): sat = [x >= min(minimum, need)]; "
                 "the paper's (arXiv 2604.13705, cohort 32 of its Appendix E)",
    "fractional": "sat = min(1, x / need): partial amounts count in proportion",
}
DEFAULT_CNSS = "indicator"
#: the optional per-individual welfare data (None on a generic problem) and what each is
WELFARE_FIELDS: dict[str, str] = {
    "survival": "probability of survival given adequate care, in [0, 1] (esg, dw_esg, the entitlement order)",
    "urgency": "urgency rank, higher is more urgent (the entitlement order)",
    "disadvantage": "disadvantage weights, non-negative, summing to 1 (dw_esg)",
    "vulnerability": "vulnerability weights, non-negative, summing to 1 (vwci)",
}
#: the Gini resource a problem gets when it names none and has a resource of this name (the paper's)
DEFAULT_GINI_RESOURCE = "Nursing"


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float if a.dtype != bool else bool, copy=True)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class AllocationProblem:
    """A validated multi-resource allocation problem (immutable arrays).

    Attributes:
        ids: individual (patient) ids, length ``n``.
        resources: resource names, length ``R``.
        capacity: ``(R,)`` available amount of each resource.
        need: ``(n, R)`` required amount; 0 where the resource is not needed.
        indivisible: ``(R,)`` True for integer resources (beds, ventilators, surgery slots).
        survival: ``(n,)`` probability of survival given adequate care, in [0, 1]; optional (None).
        urgency: ``(n,)`` urgency rank, higher is more urgent (used by entitlement/priority rules); optional.
        disadvantage: ``(n,)`` disadvantage weights ``w`` (non-negative, sum 1); optional.
        vulnerability: ``(n,)`` vulnerability weights ``v`` (non-negative, sum 1); optional.
            The four are the welfare data (:data:`WELFARE_FIELDS`): a generic problem leaves them None and
            the metrics reading them refuse it (:meth:`welfare`).
        gini_resource: the resource whose per-individual amounts the ``gini`` metric measures; None (the
            default) means :data:`DEFAULT_GINI_RESOURCE` when the problem has that resource, else no Gini
            resource (the ``gini`` metric refuses the problem).
        cnss: the need-satisfaction form, ``"indicator"`` (default, the paper's) or ``"fractional"``
            (:data:`CNSS_FORMS`).
        cnss_minimum: ``(R,)`` clinical minimum amount of each resource that counts as meeting a need
            under the indicator form (default 1 unit of every resource); per patient it is capped at
            the need, ``threshold[i, r] = min(cnss_minimum[r], need[i, r])``.
    """

    ids: tuple[str, ...]
    resources: tuple[str, ...]
    capacity: np.ndarray
    need: np.ndarray
    indivisible: np.ndarray
    survival: np.ndarray | None = None
    urgency: np.ndarray | None = None
    disadvantage: np.ndarray | None = None
    vulnerability: np.ndarray | None = None
    gini_resource: str | None = None
    cnss: str = DEFAULT_CNSS
    cnss_minimum: Any = None
    needed: np.ndarray = field(init=False, repr=False)
    n_needed: np.ndarray = field(init=False, repr=False)
    threshold: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        ids = tuple(str(i) for i in self.ids)
        resources = tuple(str(r) for r in self.resources)
        n, R = len(ids), len(resources)
        if n == 0:
            raise InputError("ids", ids, "at least one individual")
        if len(set(ids)) != n:
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise InputError("ids", dup, "unique individual ids (duplicates found)")
        if R == 0 or len(set(resources)) != R:
            raise InputError("resources", resources, "a non-empty list of distinct resource names")
        gini_resource = self.gini_resource
        if gini_resource is None:
            gini_resource = DEFAULT_GINI_RESOURCE if DEFAULT_GINI_RESOURCE in resources else None
        elif gini_resource not in resources:
            raise InputError("gini_resource", gini_resource, f"one of {list(resources)}")

        def arr(name: str, value: Any, shape: tuple[int, ...], *, lo: float | None = 0.0,
                hi: float | None = None) -> np.ndarray:
            a = np.asarray(value, dtype=float)
            if a.shape != shape:
                raise InputError(name, a.shape, f"shape {shape}")
            if not np.all(np.isfinite(a)):
                raise InputError(name, a.tolist(), "finite numbers (no NaN or infinity)")
            if lo is not None and np.any(a < lo):
                raise InputError(name, a.tolist(), f"values >= {lo:g}")
            if hi is not None and np.any(a > hi):
                raise InputError(name, a.tolist(), f"values <= {hi:g}")
            return a

        capacity = arr("capacity", self.capacity, (R,))
        need = arr("need", self.need, (n, R))
        indivisible = np.asarray(self.indivisible, dtype=bool)
        if indivisible.shape != (R,):
            raise InputError("indivisible", indivisible.shape, f"shape {(R,)}")
        survival = None if self.survival is None else arr("survival", self.survival, (n,), hi=1.0)
        urgency = None if self.urgency is None else arr("urgency", self.urgency, (n,), lo=None)
        weights: dict[str, np.ndarray | None] = {}
        for name in ("disadvantage", "vulnerability"):
            if getattr(self, name) is None:
                weights[name] = None
                continue
            w = arr(name, getattr(self, name), (n,))
            if not np.isclose(w.sum(), 1.0, atol=1e-9):
                raise InputError(name, w.tolist(), "weights summing to 1")
            weights[name] = w
        for r in np.flatnonzero(indivisible):
            if abs(capacity[r] - round(capacity[r])) > _INT_ATOL:
                raise InputError(f"capacity.{resources[r]}", capacity[r], "an integer (indivisible resource)")
            bad = np.flatnonzero(np.abs(need[:, r] - np.round(need[:, r])) > _INT_ATOL)
            if bad.size:
                i = int(bad[0])
                raise InputError(f"need[{ids[i]}].{resources[r]}", need[i, r],
                                 "an integer (indivisible resource)")
        if self.cnss not in CNSS_FORMS:
            raise InputError("cnss", self.cnss, f"one of {list(CNSS_FORMS)}")
        minimum = (np.ones(R) if self.cnss_minimum is None
                   else arr("cnss_minimum", self.cnss_minimum, (R,)))
        if np.any(minimum <= 0):
            raise InputError("cnss_minimum", minimum.tolist(), "amounts > 0")
        needed = need > 0
        n_needed = needed.sum(axis=1)
        threshold = np.where(needed, np.minimum(minimum[None, :], need), 0.0)
        if np.any(n_needed == 0):
            i = int(np.flatnonzero(n_needed == 0)[0])
            raise InputError(f"need[{ids[i]}]", {}, "at least one needed resource per individual")

        set_ = object.__setattr__
        set_(self, "ids", ids)
        set_(self, "resources", resources)
        set_(self, "capacity", _readonly(capacity))
        set_(self, "need", _readonly(need))
        set_(self, "indivisible", _readonly(indivisible))
        for name, value in (("survival", survival), ("urgency", urgency), ("disadvantage", weights["disadvantage"]),
                            ("vulnerability", weights["vulnerability"])):
            set_(self, name, None if value is None else _readonly(value))
        set_(self, "gini_resource", gini_resource)
        set_(self, "needed", _readonly(needed))
        set_(self, "n_needed", _readonly(n_needed.astype(float)))
        set_(self, "cnss_minimum", _readonly(minimum))
        set_(self, "threshold", _readonly(threshold))

    # -- shape helpers -----------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of individuals."""
        return len(self.ids)

    @property
    def n_resources(self) -> int:
        """Number of resources."""
        return len(self.resources)

    @property
    def has_welfare(self) -> bool:
        """True when every welfare field (:data:`WELFARE_FIELDS`) is given."""
        return all(getattr(self, f) is not None for f in WELFARE_FIELDS)

    def welfare(self, name: str) -> np.ndarray:
        """The welfare field ``name`` (:data:`WELFARE_FIELDS`); a problem without it: InputError naming it."""
        if name not in WELFARE_FIELDS:
            raise InputError("welfare", name, f"one of {', '.join(WELFARE_FIELDS)}")
        value = getattr(self, name)
        if value is None:
            raise InputError(name, None, f"a problem with {name} data ({WELFARE_FIELDS[name]}); this allocation "
                                         "problem has no welfare data")
        return value

    @property
    def gini_index(self) -> int:
        """Column index of :attr:`gini_resource` (a problem without one: InputError naming it)."""
        if self.gini_resource is None:
            raise InputError("gini_resource", None, f"one of {list(self.resources)} (the gini metric measures "
                                                    "one resource's amounts; this problem names none)")
        return self.resources.index(self.gini_resource)

    def with_options(self, **changes: Any) -> "AllocationProblem":
        """A copy with some fields changed, e.g. ``problem.with_options(cnss="fractional")``."""
        import dataclasses

        return dataclasses.replace(self, **changes)

    def zeros(self) -> np.ndarray:
        """The empty allocation (always feasible)."""
        return np.zeros((self.n, self.n_resources))


# -- allocations as mappings (file format) ------------------------------------------------------

def allocation_from_mapping(problem: AllocationProblem, mapping: Mapping[str, Mapping[str, Any]],
                            field_name: str = "allocation") -> np.ndarray:
    """Turn ``{id: {resource: amount}}`` into an ``(n, R)`` array, validating every entry.

    Missing individuals or resources mean 0. Unknown ids/resources, non-numeric, negative or
    non-finite amounts raise :class:`InputError` naming ``allocation.ID.RESOURCE``.
    Integrality and capacity are *not* checked here: an infeasible allocation is a valid input to
    scoring (see :func:`check_feasibility`).
    """
    if not isinstance(mapping, Mapping):
        raise InputError(field_name, mapping, "an object {PATIENT_ID: {RESOURCE: amount}}")
    index = {pid: k for k, pid in enumerate(problem.ids)}
    rindex = {r: k for k, r in enumerate(problem.resources)}
    x = problem.zeros()
    for pid, row in mapping.items():
        if pid not in index:
            raise InputError(f"{field_name}.{pid}", pid, f"a known patient id, one of {list(problem.ids)}")
        if not isinstance(row, Mapping):
            raise InputError(f"{field_name}.{pid}", row, "an object {RESOURCE: amount}")
        for res, amount in row.items():
            if res not in rindex:
                raise InputError(f"{field_name}.{pid}.{res}", res,
                                 f"a known resource, one of {list(problem.resources)}")
            if isinstance(amount, bool) or not isinstance(amount, (int, float)):
                raise InputError(f"{field_name}.{pid}.{res}", amount, "a number")
            value = float(amount)
            if not np.isfinite(value):
                raise InputError(f"{field_name}.{pid}.{res}", amount, "a finite number (no NaN or infinity)")
            if value < 0:
                raise InputError(f"{field_name}.{pid}.{res}", amount, "an amount >= 0")
            x[index[pid], rindex[res]] = value
    return x


def _num(value: float, integral: bool) -> int | float:
    if integral or abs(value - round(value)) <= 1e-9:
        return int(round(value))
    return float(round(value, 9))


def allocation_to_mapping(problem: AllocationProblem, x: np.ndarray) -> dict[str, dict[str, int | float]]:
    """``(n, R)`` array -> ``{id: {resource: amount}}`` listing every needed or non-zero entry.

    Integral amounts are written as ints; others rounded to 9 decimals (solver noise).
    """
    x = np.asarray(x, dtype=float)
    out: dict[str, dict[str, int | float]] = {}
    for i, pid in enumerate(problem.ids):
        row: dict[str, int | float] = {}
        for r, res in enumerate(problem.resources):
            if problem.needed[i, r] or abs(x[i, r]) > 1e-12:
                row[res] = _num(float(x[i, r]), bool(problem.indivisible[r]))
        out[pid] = row
    return out


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def check_feasibility(problem: AllocationProblem, x: np.ndarray, atol: float = 1e-6) -> list[str]:
    """Every way ``x`` breaks the problem's constraints, as readable strings (empty = feasible).

    E.g. ``"MedA total 50 exceeds capacity 45"``, ``"ICU for P3 is 0.5, not an integer"``,
    ``"Nursing for P1 is negative (-2)"``.
    """
    x = np.asarray(x, dtype=float)
    if x.shape != (problem.n, problem.n_resources):
        raise InputError("allocation", x.shape, f"shape {(problem.n, problem.n_resources)}")
    out: list[str] = []
    for i, pid in enumerate(problem.ids):
        for r, res in enumerate(problem.resources):
            v = x[i, r]
            if not np.isfinite(v):
                out.append(f"{res} for {pid} is {v}, not a finite number")
            elif v < -atol:
                out.append(f"{res} for {pid} is negative ({_fmt(v)})")
            elif problem.indivisible[r] and abs(v - round(v)) > atol:
                out.append(f"{res} for {pid} is {_fmt(v)}, not an integer (indivisible resource)")
    totals = np.nansum(x, axis=0)
    for r, res in enumerate(problem.resources):
        if totals[r] > problem.capacity[r] + atol:
            out.append(f"{res} total {_fmt(totals[r])} exceeds capacity {_fmt(problem.capacity[r])}")
    return out


def is_feasible(problem: AllocationProblem, x: np.ndarray, atol: float = 1e-6) -> np.ndarray | bool:
    """Vectorised feasibility for ``x`` of shape ``(n, R)`` or ``(B, n, R)`` (bool or ``(B,)`` bools)."""
    x = np.asarray(x, dtype=float)
    finite = np.all(np.isfinite(x), axis=(-2, -1))
    xs = np.where(np.isfinite(x), x, 0.0)
    nonneg = np.all(xs >= -atol, axis=(-2, -1))
    ind = problem.indivisible
    integral = np.all(np.abs(xs[..., ind] - np.round(xs[..., ind])) <= atol, axis=(-2, -1))
    within = np.all(xs.sum(axis=-2) <= problem.capacity + atol, axis=-1)
    ok = finite & nonneg & integral & within
    return bool(ok) if np.ndim(ok) == 0 else ok


def waste(problem: AllocationProblem, x: np.ndarray) -> dict[str, float]:
    """Total amount per resource allocated beyond need (including to individuals who need none)."""
    x = np.asarray(x, dtype=float)
    extra = np.maximum(x - problem.need, 0.0).sum(axis=-2)
    return {res: float(extra[r]) for r, res in enumerate(problem.resources) if extra[r] > 1e-12}


def stack(allocations: Sequence[np.ndarray]) -> np.ndarray:
    """Stack allocations into ``(B, n, R)``."""
    return np.stack([np.asarray(a, dtype=float) for a in allocations])
