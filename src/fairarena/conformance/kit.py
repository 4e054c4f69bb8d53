"""The conformance kit: does a domain keep the protocol (:mod:`fairarena.domains.protocol`)?

:func:`check` runs every check of :data:`CHECKS` on one sampled instance and returns a
:class:`CheckReport` (one row per check: ``pass``, ``fail`` with the reason, or ``skip`` with why). The
command line is ``fairarena domain check NAME|MODULE:OBJECT`` (exit 0: every check passed or was skipped;
1: a check failed, with the table; 2: bad input such as an unimportable MODULE:OBJECT).

    from fairarena.domains import DOMAINS, check
    report = check(DOMAINS.get("tourism"), studies=False)
    assert report.ok, report.table()

What each check does (``seed``: the kit's seed, default 0; the instance is ``domain.sample(seed)``):

* ``protocol``: every required member is there; a domain checked by its registered name has that name.
* ``round-trip``: ``to_dict`` is JSON data; ``from_dict`` of it (through JSON text) and ``load`` of what
  ``save`` wrote give the same data, digest, problem (every array and field) and rendering.
* ``seed-determinism``: ``sample(seed)`` again, after sampling another seed and reseeding Python's and
  numpy's global generators, has the same digest.
* ``presentation``: ``render``, ``rules`` and ``retrieval_query`` give text, every item id appears in the
  rendering.
* ``feasibility``: the zero allocation is within every capacity, an allocation one unit over a capacity is
  refused, and every participant's optimum is a valid allocation (capacities, integrality and the domain's
  own ``violations``).
* ``metrics``: distinct keys, each with a direction ``max`` or ``min``; every participant weighs declared
  metrics with the sign of their direction (positive for ``max``); ``evaluate`` gives exactly the declared
  metrics on every optimum; a linear form, where declared, equals the metric on every optimum.
* ``debate``: the domain's scripted agents (``scripted_agents``, else :func:`fairarena.arena.optimum.
  optimum_agents`) debate 2 rounds closed by ``joint-draft``; the status is ``ok``, the joint is valid, and
  the transcript is re-scored from its own header (:func:`fairarena.arena.transcript.recompute_metrics`).
* ``council``: every aggregation rule the participants' profile accepts (``council_profile``, else
  :func:`fairarena.aggregation.council.candidate_profile`) decides: utilities in [0, 1], a winner or a lottery
  over the candidates, and the chosen allocation valid.
* ``duel-study`` and ``council-study``: a study of that kind on two instances (the domain's ``study_design``,
  which may set ``cohorts``; 1 round) runs through the study runner and its statistics, when the runner
  accepts the design; otherwise ``skip: not supported by the study runner yet`` with the runner's reason. A
  duel on any domain pits its participants two by two, played by its scripted agents
  (:mod:`fairarena.study.duel`).
"""

from __future__ import annotations

import json
import math
import random
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from fairarena.domains.protocol import (
    OPTIONAL, REQUIRED, Participant, canonical_json, instance_digest, load_instance, metric_specs, missing_members,
    save_instance, violations_of,
)
from fairarena.errors import InputError

__all__ = ["CHECKS", "CheckResult", "CheckReport", "check", "CheckFailed", "Skipped"]

#: every check, in the order run, with what it checks
CHECKS: dict[str, str] = {
    "protocol": "every required member; a registered domain carries its registered name",
    "round-trip": "to_dict/from_dict and save/load keep the instance (data, digest, problem, rendering)",
    "seed-determinism": "the same seed samples the same instance, whatever was sampled or seeded before",
    "presentation": "render, rules and the retrieval query are text; every item id is in the rendering",
    "feasibility": "zero allocation within capacities, over-capacity refused, every participant's optimum valid",
    "metrics": "directions max/min, objectives signed as their metrics' directions, evaluate and linear forms agree",
    "debate": "a scripted debate (2 rounds, joint-draft) ends ok with a valid joint; its transcript is re-scored",
    "council": "every aggregation rule the participants' profile accepts decides a valid candidate or lottery",
    "duel-study": "a two-instance duel study runs end to end (run, statistics) if the study runner supports it",
    "council-study": "a two-instance council study runs end to end (run, statistics) if the study runner supports it",
}
STUDY_CHECKS = ("duel-study", "council-study")
#: not supported by the study runner: the reason starts so
UNSUPPORTED = "not supported by the study runner yet"
TOL = 1e-6


class CheckFailed(Exception):
    """A check's property does not hold (the message says which and where)."""


class Skipped(Exception):
    """A check that cannot run here (the message says why)."""


@dataclass
class CheckResult:
    name: str
    status: str          # pass | fail | skip
    detail: str
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.name, "status": self.status, "detail": self.detail, "seconds": round(self.seconds, 3)}


@dataclass
class CheckReport:
    """Every check's result for one domain (``domain``: its name; ``target``: what was asked for)."""

    domain: str
    target: str
    seed: int
    results: list[CheckResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no check failed (skipped checks do not fail a domain)."""
        return not self.failed

    @property
    def failed(self) -> list[str]:
        return [r.name for r in self.results if r.status == "fail"]

    def status(self, name: str) -> str:
        return next(r.status for r in self.results if r.name == name)

    def result(self, name: str) -> CheckResult:
        return next(r for r in self.results if r.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {"domain": self.domain, "target": self.target, "seed": self.seed, "ok": self.ok,
                "failed": self.failed, "checks": [r.to_dict() for r in self.results]}

    def table(self, width: int = 100) -> str:
        """A plain-text table: check, status, seconds and the detail (wrapped at ``width``)."""
        import textwrap

        w = max(len(r.name) for r in self.results) if self.results else 5
        head = f"{'check':<{w}}  status  seconds  detail"
        lines = [f"domain {self.domain} ({self.target}), seed {self.seed}", head, "-" * len(head)]
        indent = " " * (w + 2 + 6 + 2 + 7 + 2)
        for r in self.results:
            first = f"{r.name:<{w}}  {r.status:<6}  {r.seconds:>7.2f}  "
            body = textwrap.wrap(r.detail, max(20, width - len(first))) or [""]
            lines.append(first + body[0])
            lines += [indent + b for b in body[1:]]
        summary = (f"{len(self.results) - len(self.failed)} of {len(self.results)} checks passed or skipped"
                   + (f"; failed: {', '.join(self.failed)}" if self.failed else ""))
        return "\n".join(lines + [summary])


# -- the context shared by the checks -----------------------------------------------------------------

class _Context:
    def __init__(self, domain: Any, target: str, seed: int, workdir: Path) -> None:
        self.domain, self.target, self.seed, self.workdir = domain, target, seed, workdir
        self._cache: dict[str, Any] = {}

    def _get(self, key: str, make: Callable[[], Any], what: str) -> Any:
        """A shared piece (the instance, its problem, the participants, their optima), made once: the
        first check that needs a piece the domain fails to make fails with the reason, later ones skip."""
        if key not in self._cache:
            try:
                self._cache[key] = (True, make())
            except (CheckFailed, Skipped) as exc:   # a piece it is made from failed: the same reason
                self._cache[key] = (False, str(exc))
                raise
            except Exception as exc:  # noqa: BLE001 - any failure of the domain is reported
                self._cache[key] = (False, f"{what} failed: {_one_line(exc)}")
                raise CheckFailed(self._cache[key][1]) from None
        ok, value = self._cache[key]
        if not ok:
            raise Skipped(value)
        return value

    @property
    def instance(self) -> Any:
        return self._get("instance", lambda: self.domain.sample(self.seed), f"sample({self.seed})")

    @property
    def problem(self) -> Any:
        return self._get("problem", lambda: self.domain.problem(self.instance), "problem(instance)")

    @property
    def participants(self) -> list[Participant]:
        def make() -> list[Participant]:
            ps = list(self.domain.participants(self.instance))
            if len(ps) < 2:
                raise CheckFailed(f"{len(ps)} participant(s): a debate and a council need two")
            names = [p.name for p in ps]
            if len(set(names)) != len(names):
                raise CheckFailed(f"participant names repeat: {names}")
            return ps
        return self._get("participants", make, "participants(instance)")  # type: ignore[no-any-return]

    @property
    def optima(self) -> dict[str, Any]:
        import numpy as np

        return self._get("optima", lambda: {p.name: np.asarray(self.domain.optimum(self.instance, p), dtype=float)
                                            for p in self.participants}, "optimum(instance, participant)")  # type: ignore[no-any-return]


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    msg = text[0] if text else ""
    name = type(exc).__name__
    return msg if isinstance(exc, (CheckFailed, Skipped)) else (f"{name}: {msg}" if msg else name)


def _short(items: Sequence[Any], n: int = 3) -> str:
    items = [str(i) for i in items]
    return "; ".join(items[:n]) + (f" (and {len(items) - n} more)" if len(items) > n else "")


# -- the checks ---------------------------------------------------------------------------------------

def _protocol(ctx: _Context) -> str:
    missing = missing_members(ctx.domain, REQUIRED)
    if missing:
        raise CheckFailed(f"missing or not callable: {', '.join(missing)}")
    name = ctx.domain.name
    if name != name.strip() or not name:
        raise CheckFailed(f"name {name!r}: a non-empty name without surrounding spaces")
    if ":" not in ctx.target and not _is_object_target(ctx.target) and ctx.target != name:
        raise CheckFailed(f"registered as {ctx.target!r} but named {name!r}: a transcript names its domain and "
                          "is read back by that name")
    present = [m for m in OPTIONAL if callable(getattr(ctx.domain, m, None))]
    return f"{len(REQUIRED)} required members; optional: {', '.join(present) or 'none'}"


def _is_object_target(target: str) -> bool:
    return target.startswith("<")


def _same_problem(a: Any, b: Any) -> list[str]:
    import dataclasses

    import numpy as np

    out = []
    for f in dataclasses.fields(a):
        u, v = getattr(a, f.name), getattr(b, f.name)
        same = (np.array_equal(u, v) if isinstance(u, np.ndarray) or isinstance(v, np.ndarray) else u == v)
        if not same:
            out.append(f.name)
    return out


def _round_trip(ctx: _Context) -> str:
    d, inst = ctx.domain, ctx.instance
    data = d.to_dict(inst)
    try:
        text = json.dumps(data)
    except (TypeError, ValueError) as exc:
        raise CheckFailed(f"to_dict is not JSON data: {_one_line(exc)}") from None
    digest = instance_digest(d, inst)
    if instance_digest(d, inst) != digest:
        raise CheckFailed("the digest of one instance changes from call to call")
    path = ctx.workdir / "instance.json"
    save_instance(d, inst, path)
    copies = {"from_dict": d.from_dict(json.loads(text)), "save/load": load_instance(d, path)}
    problem, shown = d.problem(inst), d.render(inst)
    for how, other in copies.items():
        lost = []
        if canonical_json(d.to_dict(other)) != canonical_json(data):
            a, b = d.to_dict(other), data
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)) if isinstance(a, dict) and isinstance(b, dict) else []
            lost.append("its data" + (f" (keys {', '.join(map(str, keys[:5]))})" if keys else ""))
        if instance_digest(d, other) != digest:
            lost.append("its digest")
        if diff := _same_problem(problem, d.problem(other)):
            lost.append(f"its problem ({', '.join(diff)})")
        if d.render(other) != shown:
            lost.append("its rendering")
        if lost:
            raise CheckFailed(f"{how} changes {', '.join(lost)}")
    return f"to_dict/from_dict and save/load keep data, digest {digest[:12]}, problem and rendering"


def _seed_determinism(ctx: _Context) -> str:
    import numpy as np

    d = ctx.domain
    first = instance_digest(d, ctx.instance)
    other = instance_digest(d, d.sample(ctx.seed + 1))
    random.seed(ctx.seed + 12345)
    np.random.seed((ctx.seed + 54321) % 2**32)
    random.random()
    np.random.random()
    again = instance_digest(d, d.sample(ctx.seed))
    if again != first:
        raise CheckFailed(f"sample({ctx.seed}) gave two different instances (digests {first[:12]} and {again[:12]}): "
                          "sampling must depend on the seed only (use numpy.random.default_rng(seed))")
    return (f"sample({ctx.seed}) twice: digest {first[:12]}; seed {ctx.seed + 1}: "
            + ("a different instance" if other != first else "the same instance (one instance for every seed)"))


def _presentation(ctx: _Context) -> str:
    d, inst, problem = ctx.domain, ctx.instance, ctx.problem
    shown = d.render(inst)
    rules = d.rules(problem)
    query = d.retrieval_query(inst, "fairness")
    for what, v in (("render", shown), ("rules", rules), ("retrieval_query", query)):
        if not isinstance(v, str) or not v.strip():
            raise CheckFailed(f"{what} gives {type(v).__name__} {v!r:.40}: non-empty text")
    absent = [i for i in problem.ids if i not in shown]
    if absent:
        raise CheckFailed(f"the rendering does not name {len(absent)} of {problem.n} {d.item}(s) agents must "
                          f"allocate to: {_short(absent)}")
    return (f"{problem.n} {d.item}(s) x {problem.n_resources} resource(s), every {d.item} named in a "
            f"{len(shown)}-character rendering; rules {len(rules)} characters")


def _feasibility(ctx: _Context) -> str:
    import numpy as np

    from fairarena.allocation.problem import check_feasibility

    d, inst, problem = ctx.domain, ctx.instance, ctx.problem
    zero = problem.zeros()
    if bad := check_feasibility(problem, zero):
        raise CheckFailed(f"the zero allocation breaks the problem: {_short(bad)}")
    own = violations_of(d, inst, zero, problem)
    r = int(np.argmin(problem.capacity))
    over = problem.zeros()
    over[0, r] = math.floor(problem.capacity[r]) + 1
    if not violations_of(d, inst, over, problem):
        raise CheckFailed(f"{problem.ids[0]} given {over[0, r]:g} {problem.resources[r]} (capacity "
                          f"{problem.capacity[r]:g}) is accepted")
    for name, x in ctx.optima.items():
        if x.shape != (problem.n, problem.n_resources):
            raise CheckFailed(f"the optimum of {name} has shape {x.shape}, expected {(problem.n, problem.n_resources)}")
        if bad := violations_of(d, inst, x, problem):
            raise CheckFailed(f"the optimum of {name} is not valid: {_short(bad, 2)}")
    return (f"zero within capacities" + (" (the domain's own rules refuse it: " + _short(own, 1) + ")" if own else "")
            + f"; over {problem.resources[r]} capacity refused; {len(ctx.optima)} optima valid")


def _metrics(ctx: _Context) -> str:
    import numpy as np

    d = ctx.domain
    try:
        specs = metric_specs(d)
    except InputError as exc:
        raise CheckFailed(str(exc)) from None
    if not specs:
        raise CheckFailed("metrics() is empty")
    for k, m in specs.items():
        if not isinstance(getattr(m, "label", None), str) or not m.label:
            raise CheckFailed(f"metric {k} has no label")
        hi, lo = (1.0, 0.0)
        if m.better(hi, lo) != (m.direction == "max"):
            raise CheckFailed(f"metric {k}: better() disagrees with its direction {m.direction}")
    for p in ctx.participants:
        if not p.objective:
            raise CheckFailed(f"participant {p.name} has an empty objective")
        for k, w in p.objective.items():
            if k not in specs:
                raise CheckFailed(f"participant {p.name} weighs {k!r}, not a declared metric ({', '.join(specs)})")
            if not isinstance(w, (int, float)) or not math.isfinite(w) or w == 0:
                raise CheckFailed(f"participant {p.name} weighs {k} by {w!r}: a finite non-zero number")
            if (w > 0) != (specs[k].direction == "max"):
                raise CheckFailed(f"participant {p.name} weighs {k} (direction {specs[k].direction}) by {w:g}: the "
                                  f"sign says {'more' if w > 0 else 'less'} is better, the direction the opposite")
    linear = 0
    nan = set()
    for name, x in ctx.optima.items():
        values = d.evaluate(ctx.instance, x)
        if set(values) != set(specs):
            extra, missing = sorted(set(values) - set(specs)), sorted(set(specs) - set(values))
            raise CheckFailed(f"evaluate on {name}'s optimum: " + "; ".join(
                ([f"undeclared {', '.join(extra)}"] if extra else []) + ([f"missing {', '.join(missing)}"] if missing else [])))
        for k, v in values.items():
            if not isinstance(v, (int, float)) or math.isinf(v):
                raise CheckFailed(f"evaluate gives {k} = {v!r} on {name}'s optimum: a float (NaN when undefined)")
            if math.isnan(v):
                nan.add(k)
        for p in ctx.participants:
            v = float(d.value(ctx.instance, p, x))
            if not math.isfinite(v):
                raise CheckFailed(f"value of {p.name} on {name}'s optimum is {v}")
        for k, m in specs.items():
            form = m.linear(ctx.instance) if m.linear is not None else None
            if form is None:
                continue
            coef, const = form
            lin = float((np.asarray(coef, dtype=float) * x).sum() + const)
            if not math.isclose(lin, values[k], rel_tol=TOL, abs_tol=TOL):
                raise CheckFailed(f"the linear form of {k} gives {lin:.6g} on {name}'s optimum, the metric {values[k]:.6g}")
            linear += 1
    n_lin = sum(1 for m in specs.values() if m.linear is not None)
    return (f"{len(specs)} metrics ({sum(m.direction == 'max' for m in specs.values())} max, "
            f"{sum(m.direction == 'min' for m in specs.values())} min), {len(ctx.participants)} objectives signed as "
            f"their directions; {n_lin} linear form(s), {linear} evaluation(s) equal"
            + (f"; undefined on some optimum: {', '.join(sorted(nan))}" if nan else ""))


@contextmanager
def _registered(domain: Any) -> Iterator[str | None]:
    """The domain registered under its name while the transcript is re-scored (a note when another domain
    holds the name)."""
    from fairarena.domains.registry import DOMAINS

    name = domain.name
    if name not in DOMAINS:
        DOMAINS.add(name, domain)
        try:
            yield None
        finally:
            DOMAINS.remove(name)
        return
    if DOMAINS.get(name) is not domain:
        yield f"another domain is registered as {name!r}"
        return
    yield None


def _debate(ctx: _Context) -> str:
    from fairarena.allocation.problem import allocation_from_mapping
    from fairarena.arena.protocol import DebateConfig
    from fairarena.arena.result import run_debate
    from fairarena.arena.transcript import read_transcript, recompute_metrics
    from fairarena.arena.optimum import optimum_agents

    d, inst, problem = ctx.domain, ctx.instance, ctx.problem
    own = getattr(d, "scripted_agents", None)
    agents = own(inst, ctx.participants) if callable(own) else optimum_agents(d, inst, ctx.participants)
    path = ctx.workdir / "debate.jsonl"
    res = run_debate(inst, agents, config=DebateConfig(rounds=2, closing="joint-draft", seed=ctx.seed),
                     transcript=path, domain=d)
    if res.status != "ok":
        raise CheckFailed(f"status {res.status}: {res.error}")
    joint = res.final.get("joint") or {}
    if not joint.get("allocation"):
        raise CheckFailed(f"no joint allocation ({joint.get('note')})")
    x = allocation_from_mapping(problem, joint["allocation"], "joint")
    if bad := violations_of(d, inst, x, problem):
        raise CheckFailed(f"the joint is not valid: {_short(bad, 2)}")
    with _registered(d) as note:
        if note:
            rescored = f"transcript not re-scored ({note})"
        else:
            checks = recompute_metrics(read_transcript(path))
            same = [json.dumps(c["recorded"], sort_keys=True) == json.dumps(c["recomputed"], sort_keys=True)
                    for c in checks]
            if not checks or not all(same):
                raise CheckFailed(f"the transcript re-scores {sum(same)} of {len(checks)} scored events as recorded")
            rescored = f"transcript re-scored ({len(checks)} events)"
    how = (joint.get("details") or {}).get("final_draft_by")
    kind = "its own scripted agents" if callable(own) else "optimum agents (the kit's default)"
    return f"{len(agents)} {kind}, 2 rounds: ok, joint drafted by {how}, valid; {rescored}"


def _council(ctx: _Context) -> str:
    import numpy as np

    from fairarena.aggregation.rules import aggregate
    from fairarena.aggregation.council import domain_profile, profile_rules

    d, inst, problem = ctx.domain, ctx.instance, ctx.problem
    profile = domain_profile(d, inst, ctx.participants)
    rules = profile_rules(profile)
    if not rules:
        raise CheckFailed("no aggregation rule accepts the profile")
    lotteries = 0
    for rule in rules:
        try:
            dec = aggregate(profile, rule, seed=ctx.seed)
        except Exception as exc:  # noqa: BLE001
            raise CheckFailed(f"rule {rule}: {_one_line(exc)}") from None
        u = np.asarray(dec.utilities, dtype=float)
        if u.shape != (len(profile.agents),) or not np.all(np.isfinite(u)) or u.min() < -TOL or u.max() > 1 + TOL:
            raise CheckFailed(f"rule {rule}: utilities {np.round(u, 4).tolist()} outside [0, 1]")
        if dec.lottery is not None:
            lotteries += 1
            if set(dec.lottery) - set(profile.candidates) or not math.isclose(sum(dec.lottery.values()), 1, abs_tol=TOL):
                raise CheckFailed(f"rule {rule}: the lottery {dec.lottery} is no distribution over the candidates")
        chosen = dec.winner or dec.draw
        if chosen is not None and chosen not in profile.candidates:
            raise CheckFailed(f"rule {rule} chose {chosen!r}, not a candidate")
        x = dec.drawn_allocation(profile) if profile.X is not None else dec.allocation
        if x is not None and (bad := violations_of(d, inst, x, problem)):
            raise CheckFailed(f"rule {rule}: its decision is not valid: {_short(bad, 2)}")
    kind = "the domain's council profile" if callable(getattr(d, "council_profile", None)) else "the optima"
    return (f"{len(rules)} rules over {len(profile.agents)} participants x {len(profile.candidates)} candidates "
            f"({kind}): every decision valid, {lotteries} lotteries")


def _study(kind: str) -> Callable[[_Context], str]:
    def run_one(ctx: _Context) -> Any:
        from fairarena.study.design import from_dict, to_toml
        from fairarena.study.analysis import analyse_study
        from fairarena.study.store import run_study

        d = ctx.domain
        own = getattr(d, "study_design", None)
        design = own(kind) if callable(own) else {"kind": kind, "domain": d.name}
        if design is None:
            raise Skipped(f"the domain declares no {kind} study")
        # scripted models, written out: a design that leaves model_a/model_b at their default is stored with
        # the canonical spec and read back as another design (its records count as stale)
        # two instances unless the domain's design says otherwise (a problem file has one)
        design = {"model_a": "scripted", "model_b": "scripted", "cohorts": 2, **design,
                  "name": f"check-{d.name}-{kind}", "first_cohort_seed": ctx.seed, "rounds": 1}
        try:
            cfg = from_dict(design, "study.")
        except InputError as exc:
            if exc.field in ("study.domain", "study.kind"):
                raise Skipped(f"{UNSUPPORTED} ({exc})") from None
            raise CheckFailed(f"the runner refuses the domain's {kind} design: {exc}") from None
        out = ctx.workdir / f"{kind}-study"
        summary = run_study(cfg, to_toml(cfg), out)
        if summary.failed or summary.ok != summary.total:
            first = summary.failed_now[0]["error"] if summary.failed_now else "pending debates"
            raise CheckFailed(f"{summary.ok} of {summary.total} debates ok: {first}")
        analysis = analyse_study(out)
        return (summary, analysis, cfg)

    def run(ctx: _Context) -> str:
        from fairarena.study import instances

        own = getattr(ctx.domain, "study_design", None)
        bound = callable(own) and bool((own(kind) or {}).get("problem"))
        with _registered(ctx.domain) as note:   # a design names its domain: an object is registered meanwhile
            if note and not bound:   # (a design with a problem file reaches it as the registered domain bound to it)
                raise Skipped(f"the study runner finds domains by name: {note}")
            try:
                summary, analysis, cfg = run_one(ctx)
            finally:
                instances.clear()                 # the runner's cached domain objects and instances
        n = cfg.cohorts
        return (f"{summary.total} debates on {n} instance{'s' if n != 1 else ''} ok ({summary.seconds:.1f} s), statistics: "
                f"{type(analysis).__name__}; run by the study runner's code for domain {cfg.domain!r}")
    return run


_FUNCS: dict[str, Callable[[_Context], str]] = {
    "protocol": _protocol, "round-trip": _round_trip, "seed-determinism": _seed_determinism,
    "presentation": _presentation, "feasibility": _feasibility, "metrics": _metrics, "debate": _debate,
    "council": _council, "duel-study": _study("duel"), "council-study": _study("council"),
}


def check_names(names: Any, field: str = "checks") -> list[str]:
    """``names`` (a list or a comma-separated string) if every one is a check, else InputError naming it."""
    items = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    for n in items:
        if n not in CHECKS:
            raise InputError(field, n, f"one of {', '.join(CHECKS)}")
    return items


def check(domain: Any, *, seed: int = 0, studies: bool = True, checks: Sequence[str] | str | None = None,
          workdir: str | Path | None = None) -> CheckReport:
    """Run the conformance checks (:data:`CHECKS`; module doc) on ``domain``: a domain object, a registered
    name or ``"MODULE:OBJECT"``. ``studies=False`` skips the two study checks; ``checks`` runs only those
    named; ``workdir`` keeps the files (instance, transcript, study folders) instead of a temporary folder.
    A bad target, seed or check name raises :class:`InputError` before any check runs."""
    from fairarena.domains.registry import resolve

    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError("seed", seed, "a non-negative integer")
    wanted = check_names(checks) if checks is not None else list(CHECKS)
    target = domain if isinstance(domain, str) else f"<{type(domain).__name__} object>"
    obj = resolve(domain)
    name = str(getattr(obj, "name", "") or "?")
    report = CheckReport(name, target, seed)
    with tempfile.TemporaryDirectory(prefix="fairarena-check-") as tmp:
        root = Path(workdir) if workdir is not None else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        ctx = _Context(obj, target, seed, root)
        for n in CHECKS:
            if n not in wanted:
                continue
            t0 = time.perf_counter()
            if n in STUDY_CHECKS and not studies:
                status, detail = "skip", "studies not asked for"
            else:
                try:
                    status, detail = "pass", _FUNCS[n](ctx)
                except Skipped as exc:
                    status, detail = "skip", str(exc)
                except Exception as exc:  # noqa: BLE001 - a domain's failure is a failed check, never a crash
                    status, detail = "fail", _one_line(exc)
            if n == "protocol" and status == "fail":
                report.results.append(CheckResult(n, status, detail, time.perf_counter() - t0))
                for rest in [m for m in CHECKS if m in wanted and m != n]:
                    report.results.append(CheckResult(rest, "skip", "the protocol check failed"))
                return report
            report.results.append(CheckResult(n, status, detail, time.perf_counter() - t0))
    return report
