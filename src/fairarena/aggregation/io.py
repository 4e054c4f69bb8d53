"""Proposal files: ``{"agents": [{"name", "objective", "allocation": {PATIENT: {RESOURCE: amount}},
"group"?, "weight"?}, ...], "candidates"?: {NAME: allocation}}`` for an allocation problem, or a bare
utility profile ``{"candidates": [NAMES], "agents": [{"name", "utilities": [numbers]}]}`` (what the
audit writes as witnesses). Read through :mod:`fairarena.inputs`; every error names the field.
Utilities and weights must be numbers (not text, not booleans), finite and of magnitude at most
:data:`fairarena.inputs.MAX_MAGNITUDE` (1e12): beyond it the metrics overflow."""

from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np

from fairarena.aggregation.objectives import OBJECTIVES
from fairarena.aggregation.rules import Profile, Voter
from fairarena.allocation.problem import AllocationProblem, allocation_from_mapping, allocation_to_mapping
from fairarena.errors import InputError
from fairarena.inputs import MAX_MAGNITUDE, check_magnitude, require_numbers

__all__ = ["read_proposals", "parse_proposals", "is_utility_profile", "profile_to_json"]


def read_proposals(path: str | os.PathLike[str], field: str = "proposals") -> Any:
    from fairarena.inputs import load_json

    return load_json(path, field)


def is_utility_profile(data: Any) -> bool:
    return (isinstance(data, Mapping) and isinstance(data.get("candidates"), list)
            and isinstance(data.get("agents"), list)
            and all(isinstance(a, Mapping) and "utilities" in a for a in data["agents"]))


def _agents_list(data: Any) -> list[Any]:
    if not isinstance(data, Mapping) or "agents" not in data:
        raise InputError("proposals", type(data).__name__, 'an object {"agents": [...]}')
    agents = data["agents"]
    if not isinstance(agents, list):
        raise InputError("agents", agents, "a list of agents")
    if len(agents) < 2:
        raise InputError("agents", len(agents), "at least two agents")
    for a, ag in enumerate(agents):
        if not isinstance(ag, Mapping):
            raise InputError(f"agents[{a}]", ag, "an object with name, objective and allocation")
        if not isinstance(ag.get("name"), str) or not ag["name"].strip():
            raise InputError(f"agents[{a}].name", ag.get("name"), "a non-empty name")
        w = ag.get("weight")
        if w is not None and (isinstance(w, bool) or not isinstance(w, (int, float)) or not np.isfinite(w) or w < 0):
            raise InputError(f"agents[{a}].weight", w, "a non-negative number")
        if w is not None:
            check_magnitude(w, f"agents[{a}].weight")
        g = ag.get("group")
        if g is not None and not isinstance(g, str):
            raise InputError(f"agents[{a}].group", g, "a group name (string)")
    return agents


def parse_proposals(data: Any, problem: AllocationProblem | None, *, normalise: str = "range") -> Profile:
    """A :class:`Profile` from decoded JSON (see module doc). A utility profile needs no problem."""
    agents = _agents_list(data)
    if is_utility_profile(data):
        cands = data["candidates"]
        if not all(isinstance(c, str) for c in cands):
            raise InputError("candidates", cands, "a list of candidate names")
        rows = []
        for a, ag in enumerate(agents):
            u = ag["utilities"]
            if not isinstance(u, list) or len(u) != len(cands):
                raise InputError(f"agents[{a}].utilities", u, f"{len(cands)} numbers, one per candidate")
            # numbers only (not "0.5", not true), finite and at most MAX_MAGNITUDE: larger ones overflow
            require_numbers(u, f"agents[{a}].utilities", limit=MAX_MAGNITUDE)
            rows.append(u)
        return Profile.from_utilities([Voter(ag["name"], group=ag.get("group"), weight=ag.get("weight"))
                                       for ag in agents], cands, rows)
    if problem is None:
        raise InputError("problem", None, "an allocation problem (--problem) for proposals with allocations")
    out = []
    for a, ag in enumerate(agents):
        obj = ag.get("objective")
        if obj not in OBJECTIVES:
            raise InputError(f"agents[{a}].objective", obj, f"one of {OBJECTIVES.choices()}")
        if "allocation" not in ag:
            raise InputError(f"agents[{a}].allocation", None, "a proposal {PATIENT: {RESOURCE: amount}}")
        x = allocation_from_mapping(problem, ag["allocation"], f"agents[{a}].allocation")
        out.append(Voter(ag["name"], obj, x, ag.get("group"), ag.get("weight")))
    extra = data.get("candidates") or {}
    if not isinstance(extra, Mapping):
        raise InputError("candidates", extra, "an object {NAME: allocation} of extra candidates")
    ex = {str(k): allocation_from_mapping(problem, v, f"candidates.{k}") for k, v in extra.items()}
    return Profile.from_proposals(problem, out, extra=ex, normalise=normalise)


def profile_to_json(profile: Profile) -> dict[str, Any]:
    """The file form of a profile (round-trips through :func:`parse_proposals`)."""
    if profile.problem is None or profile.X is None:
        return {"candidates": list(profile.candidates),
                "agents": [{"name": a.name, "utilities": [float(v) for v in profile.U[i]]}
                           for i, a in enumerate(profile.agents)]}
    return {"agents": [{"name": a.name, "objective": a.objective,
                        "allocation": allocation_to_mapping(profile.problem, profile.X[i]),
                        **({"group": a.group} if a.group else {})} for i, a in enumerate(profile.agents)]}
