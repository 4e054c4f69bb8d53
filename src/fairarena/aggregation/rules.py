"""One registry of aggregation rules and one call shape.

Input: a :class:`Profile` (a problem, N >= 2 named agents each with an objective and a proposal; or a
bare utility profile over named candidates). Output: a :class:`Decision` (an allocation, or a lottery
over candidates with its expected allocation and a seeded draw) plus a note.

>>> from fairarena.aggregation.rules import RULES
>>> RULES.entry("schulze").kind, RULES.entry("nash-bargaining").kind
('candidates', 'feasible')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from fairarena.aggregation import candidates as C
from fairarena.aggregation.objectives import OBJECTIVES, utilities
from fairarena.allocation.problem import AllocationProblem, check_feasibility
from fairarena.errors import InputError
from fairarena.registry import Registry

__all__ = ["Voter", "Agent", "Profile", "Decision", "Rule", "RULES", "KINDS", "PARETO_SCREENS", "aggregate"]

KINDS = {
    "candidates": "chooses among the candidates (the agents' proposals, optionally extra ones)",
    "feasible": "optimises over every feasible allocation (exact MILP, HiGHS)",
    "repair": "combines the proposals coordinate-wise, then repairs the result to feasibility",
}


@dataclass(frozen=True)
class Voter:
    """A named agent as a voter of a profile: its objective (a registered objective), its proposal,
    optional group and weight. (``Agent`` is the same class under its earlier name; the arena's
    :class:`fairarena.arena.protocol.Agent` is a debating agent, a different thing.)"""

    name: str
    objective: str = ""
    allocation: np.ndarray | None = None
    group: str | None = None
    weight: float | None = None


Agent = Voter   # the earlier name (public API): fairarena.aggregation.Agent, aggregation.rules.Agent


@dataclass
class Profile:
    """Voters, candidates and the utility matrix ``U (N, K)`` (voter x candidate): a social-choice profile.
    (The arena's :class:`fairarena.arena.profiles.Profile` is an agent's persona, a different thing.)"""

    agents: list[Voter]
    candidates: list[str]
    U: np.ndarray
    problem: AllocationProblem | None = None
    X: np.ndarray | None = None          # (K, n, R) candidate allocations
    normalise: str = "range"

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.agents]

    @classmethod
    def from_proposals(cls, problem: AllocationProblem, agents: Sequence[Voter], *,
                       extra: dict[str, np.ndarray] | None = None, normalise: str = "range") -> "Profile":
        """Candidates = every agent's proposal (named after the agent), then ``extra`` ones.

        Raises :class:`InputError` for fewer than two agents, duplicate names, unknown objectives, a
        missing or infeasible proposal (reported, never repaired)."""
        agents = list(agents)
        _check_agents(agents)
        xs: list[np.ndarray] = []
        for a, ag in enumerate(agents):
            if ag.objective not in OBJECTIVES:
                _bad_objective(a, ag.objective)
            if ag.allocation is None:
                raise InputError(f"agents[{a}].allocation", None, "a proposal (an allocation)")
            x = np.asarray(ag.allocation, dtype=float)
            if x.shape != (problem.n, problem.n_resources):
                raise InputError(f"agents[{a}].allocation", x.shape,
                                 f"an allocation for this problem, shape {(problem.n, problem.n_resources)}")
            bad = check_feasibility(problem, x)
            if bad:
                raise InputError(f"agents[{a}].allocation", ag.name, "a feasible proposal: " + "; ".join(bad[:3]))
            xs.append(x)
        names = [ag.name for ag in agents]
        for nm, x in (extra or {}).items():
            names.append(nm)
            xs.append(np.asarray(x, dtype=float))
        X = np.stack(xs)
        U = utilities(problem, [ag.objective for ag in agents], X, normalise)
        return cls(agents, names, U, problem, X, normalise)

    @classmethod
    def from_utilities(cls, agents: Sequence[Voter | str], candidates: Sequence[str], U: Any) -> "Profile":
        """A bare utility profile (no allocation problem): candidate-set rules only."""
        ags = [a if isinstance(a, Voter) else Voter(str(a)) for a in agents]
        _check_agents(ags)
        U = np.asarray(U, dtype=float)
        if U.shape != (len(ags), len(candidates)):
            raise InputError("utilities", U.shape, f"shape (agents, candidates) = {(len(ags), len(candidates))}")
        if not np.all(np.isfinite(U)):
            raise InputError("utilities", U.tolist(), "finite numbers")
        if len(set(candidates)) != len(candidates) or len(candidates) < 1:
            raise InputError("candidates", list(candidates), "one or more distinct names")
        return cls(ags, list(candidates), U)


def _bad_objective(a: int, name: str) -> None:
    raise InputError(f"agents[{a}].objective", name, f"one of {OBJECTIVES.choices()}")


def _check_agents(agents: list[Voter]) -> None:
    if len(agents) < 2:
        raise InputError("agents", [a.name for a in agents], "at least two agents")
    names = [a.name for a in agents]
    if len(set(names)) != len(names):
        raise InputError("agents", names, "distinct agent names")


@dataclass
class Decision:
    """A rule's decision: ``allocation`` (for a lottery: its expected allocation), ``lottery`` (``None``
    for a single outcome, else candidates -> probabilities), ``draw`` (the seeded draw's candidate),
    ``utilities`` (each agent's expected utility), ``note``."""

    rule: str
    kind: str
    utilities: np.ndarray
    note: str
    allocation: np.ndarray | None = None
    lottery: dict[str, float] | None = None
    draw: str | None = None
    winner: str | None = None
    seed: int | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def drawn_allocation(self, profile: Profile) -> np.ndarray | None:
        if profile.X is None:
            return None
        name = self.winner or self.draw
        if name is None:
            return self.allocation
        return profile.X[profile.candidates.index(name)]


@dataclass(frozen=True)
class Rule:
    name: str
    kind: str
    fn: Callable[..., Any]


RULES: Registry[Rule] = Registry("rule")


def _candidate_decision(name: str, profile: Profile, p: np.ndarray, seed: int | None, note: str) -> Decision:
    p = np.where(p < 1e-12, 0.0, p)
    p = p / p.sum()
    K = len(profile.candidates)
    util = profile.U @ p
    alloc = None if profile.X is None else np.einsum("k,knr->nr", p, profile.X)
    support = [k for k in range(K) if p[k] > 0]
    if len(support) == 1:
        w = profile.candidates[support[0]]
        return Decision(name, "candidates", util, f"{note}; chooses {w}", alloc, None, None, w, seed)
    rng = np.random.default_rng(seed)
    k = int(rng.choice(K, p=p))
    lot = {profile.candidates[j]: float(p[j]) for j in support}
    kind = "a tie among" if np.allclose(p[support], p[support[0]]) and name != "pf-lottery" else "a lottery over"
    return Decision(name, "candidates", util,
                    f"{note}; {kind} {', '.join(lot)} (expected allocation; seeded draw: {profile.candidates[k]})",
                    alloc, lot, profile.candidates[k], None, seed)


PARETO_SCREENS: dict[str, str] = {
    "screen": "a candidate allocation that some feasible allocation Pareto-dominates in CNSS (the empty one "
              "whenever a patient can be treated) is set aside before the rule runs, unless every candidate "
              "is dominated (default; no levelling down)",
    "off": "every candidate is eligible (the rule as defined on the bare utility profile)",
}


def _screen(profile: Profile, pareto: str) -> tuple[np.ndarray | None, str]:
    """The eligible candidates under Pareto screen ``pareto`` (``None``: all) and a note."""
    if pareto not in PARETO_SCREENS:
        raise InputError("pareto", pareto, f"one of {', '.join(PARETO_SCREENS)}")
    if pareto == "off" or profile.problem is None or profile.X is None:
        return None, ""
    from fairarena.allocation.pareto import dominated_mask

    dom = dominated_mask(profile.problem, profile.X)
    if not dom.any():
        return None, ""
    names = ", ".join(c for c, d in zip(profile.candidates, dom) if d)
    if dom.all():
        return None, f"every candidate is Pareto-dominated in CNSS ({names}): none set aside"
    return ~dom, f"Pareto-dominated in CNSS, set aside: {names}"


def _screened(fn: Callable[[np.ndarray], np.ndarray], profile: Profile, pareto: str) -> tuple[np.ndarray, str]:
    """``fn``'s lottery over the eligible candidates (:func:`_screen`), zero on the others."""
    keep, note = _screen(profile, pareto)
    if keep is None:
        return fn(profile.U), note
    p = np.zeros(len(profile.candidates))
    p[keep] = fn(profile.U[:, keep])
    return p, note


def _cand(name: str, fn: Callable[[np.ndarray], np.ndarray], title: str, citation: str, description: str,
          family: str) -> None:
    def rule(profile: Profile, seed: int | None = 0, pareto: str = "screen", **opts: Any) -> Decision:
        p, note = _screened(fn, profile, pareto)
        return _candidate_decision(name, profile, p, seed, description + (f" ({note})" if note else ""))

    RULES.add(name, Rule(name, "candidates", rule), title=title, description=description, citation=citation,
              kind="candidates", family=family, batched=fn)


_cand("utilitarian", C.utilitarian, "Utilitarian", "Harsanyi (1955); Bentham", "maximise the sum of utilities", "cardinal")
_cand("maximin", C.maximin, "Maximin (egalitarian)", "Rawls (1971)", "maximise the smallest utility", "cardinal")
_cand("leximin", C.leximin, "Leximin", "Sen (1970); d'Aspremont & Gevers (1977)",
      "maximise the sorted utility vector lexicographically", "cardinal")
_cand("nash", C.nash, "Nash product", "Nash (1950); Caragiannis et al. (2019) for zero utilities",
      "maximise the number of agents with positive utility, then the product of utilities", "cardinal")
_cand("ks", C.kalai_smorodinsky, "Kalai-Smorodinsky", "Kalai & Smorodinsky (1975)",
      "maximise the smallest utility relative to each agent's worst and best candidate", "cardinal")
_cand("plurality", C.plurality, "Plurality", "pref_voting: plurality (Holliday & Pacuit)",
      "most first places (a tied first place split equally)", "ranking")
_cand("borda", C.borda, "Borda count", "Borda (1781); pref_voting: borda",
      "largest Borda score (candidates beaten minus candidates preferred, summed over agents)", "ranking")
_cand("copeland", C.copeland, "Copeland", "Copeland (1951); pref_voting: copeland",
      "most pairwise majority wins minus losses", "ranking")
_cand("schulze", C.schulze, "Schulze (beat path)", "Schulze (2011); pref_voting: beat_path",
      "unbeaten by strongest paths of majority margins", "ranking")
_cand("pf-lottery", C.pf_lottery, "Procedural-fairness lottery",
      "the procedural-fairness paper on multi-agent bandits; Bogomolnaia, Moulin & Stong (2005)",
      "each agent an equal 1/N decision share on its favourite candidates; Nash welfare of the shares, "
      "then the utilitarian tie-break (the bandit core's pf notion)", "lottery")
_cand("variance-weighted", lambda U: C.weighted(U, C.variance_weights(U)), "Variance-weighted scalarisation",
      "data-driven weights (each objective's variance across the candidates)",
      "maximise sum_i w_i u_i with w_i proportional to agent i's utility variance across the candidates",
      "cardinal")


def _fixed(profile: Profile, seed: int | None = 0, weights: Sequence[float] | None = None, pareto: str = "screen",
           **opts: Any) -> Decision:
    w = weights
    if w is None and any(a.weight is not None for a in profile.agents):
        w = [1.0 if a.weight is None else float(a.weight) for a in profile.agents]
    w_arr = np.full(len(profile.agents), 1.0 / len(profile.agents)) if w is None else np.asarray(w, float)
    if w_arr.shape != (len(profile.agents),) or np.any(w_arr < 0) or not np.all(np.isfinite(w_arr)):
        raise InputError("weights", list(np.atleast_1d(w_arr)), "one non-negative weight per agent")
    p, note = _screened(lambda U: C.weighted(U, w_arr), profile, pareto)
    return _candidate_decision("fixed-weighted", profile, p, seed,
                               "maximise sum_i w_i u_i with fixed weights " + ", ".join(f"{x:g}" for x in w_arr)
                               + (f" ({note})" if note else ""))


RULES.add("fixed-weighted", Rule("fixed-weighted", "candidates", _fixed), title="Fixed-weight scalarisation",
          description="maximise sum_i w_i u_i with fixed weights (the agents' 'weight', default equal)",
          citation="weighted-sum scalarisation (e.g. Ehrgott 2005)", kind="candidates", family="cardinal",
          batched=C.weighted)


def _feasible_rule(name: str, key: str, title: str, citation: str, description: str) -> None:
    def rule(profile: Profile, seed: int | None = 0, disagreement: str = "zero", tol: float | None = None,
             time_limit: float | None = None, **opts: Any) -> Decision:
        from fairarena.aggregation.feasible import NASH_TOL, solve_feasible

        problem = _need_problem(profile, name)
        d = _disagreement(profile, disagreement)
        x, info = solve_feasible(key, problem, [a.objective for a in profile.agents], profile.names,
                                 groups=[a.group or a.name for a in profile.agents], disagreement=d,
                                 tol=NASH_TOL if tol is None else tol, time_limit=time_limit, candidates=profile.X)
        util = utilities(problem, [a.objective for a in profile.agents], x[None], profile.normalise)[:, 0]
        if profile.normalise != "range":
            info["note"] = "the MILP optimises range-normalised utilities; utilities shown raw"
        note = description
        if key in ("nash", "ks"):
            note += f"; disagreement point {disagreement} ({', '.join(f'{v:.3g}' for v in d)})"
        if key == "nash":
            note += f"; log by tangent cuts, gap {info['gap']:.1e} <= {info['tol']:g} after {info['iterations']} solves"
        return Decision(name, "feasible", util, note, x, None, None, None, seed, info)

    RULES.add(name, Rule(name, "feasible", rule), title=title, description=description, citation=citation,
              kind="feasible", family="cardinal")


def _need_problem(profile: Profile, name: str) -> AllocationProblem:
    if profile.problem is None or profile.X is None:
        raise InputError("rule", name, "a profile with an allocation problem and proposals (this rule builds "
                                       "an allocation)")
    return profile.problem


DISAGREEMENTS = {
    "zero": "each agent's worst achievable value (normalised utility 0; the empty allocation for the "
            "maximised metrics)",
    "proposals": "each agent's worst utility among the candidates (what it gets if the least favourable "
                 "proposal for it were imposed)",
}


def _disagreement(profile: Profile, how: str) -> np.ndarray:
    if how not in DISAGREEMENTS:
        raise InputError("disagreement", how, f"one of {', '.join(DISAGREEMENTS)}")
    if how == "zero":
        return np.zeros(len(profile.agents))
    return profile.U.min(axis=1).clip(0.0, 1.0)


_feasible_rule("utilitarian-feasible", "utilitarian", "Utilitarian (feasible set)", "Harsanyi (1955)",
               "maximise the sum of normalised utilities over every feasible allocation")
_feasible_rule("leximin-feasible", "leximin", "Leximin (feasible set)",
               "Sen (1970); Ogryczak & Sliwinski (2006) for the sums of the k smallest",
               "maximise the sorted normalised utilities lexicographically over every feasible allocation")
_feasible_rule("nash-bargaining", "nash", "Nash bargaining (feasible set)", "Nash (1950)",
               "maximise sum_i log(u_i - d_i) over every feasible allocation")
_feasible_rule("ks-feasible", "ks", "Kalai-Smorodinsky (feasible set)", "Kalai & Smorodinsky (1975)",
               "maximise lambda with u_i - d_i >= lambda (1 - d_i) (ideal point 1), then the sum")
_feasible_rule("maxmin-groups", "groups", "Maxmin over groups", "Chakraborty et al., MaxMin-RLHF (2024)",
               "maximise the smallest mean normalised utility of a group of agents (agents' 'group'; "
               "default one group per agent), then the sum")


def _repair_rule(name: str, how: str) -> None:
    def rule(profile: Profile, seed: int | None = 0, **opts: Any) -> Decision:
        from fairarena.aggregation.repair import mean_repair, median_repair

        problem = _need_problem(profile, name)
        assert profile.X is not None
        props = [profile.X[k] for k in range(len(profile.agents))]
        x = (mean_repair if how == "mean" else median_repair)(problem, props)
        util = utilities(problem, [a.objective for a in profile.agents], x[None], profile.normalise)[:, 0]
        return Decision(name, "repair", util, f"coordinate-wise {how} of the proposals, repaired to feasibility",
                        x, None, None, None, seed)

    RULES.add(name, Rule(name, "repair", rule), title=f"Coordinate-wise {how} (repaired)",
              description=f"coordinate-wise {how} of the proposals; indivisible amounts rounded down and leftover "
                          "units handed out by largest remainder, divisible ones scaled into capacity",
              citation="the arena's mean-repair mechanism", kind="repair", family="cardinal")


_repair_rule("mean", "mean")
_repair_rule("median", "median")


def aggregate(profile: Profile, rule: str, *, seed: int | None = 0, **options: Any) -> Decision:
    """Apply registered rule ``rule`` to ``profile`` (unknown names: InputError listing the rules)."""
    return RULES.get(rule).fn(profile, seed=seed, **options)
