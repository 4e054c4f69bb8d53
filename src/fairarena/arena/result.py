"""Running one debate and assembling its result; the transcript's header and footer.

The footer's ``status`` is one of

* ``ok`` — the debate finished (every round, every final, the closing decision);
* ``failed`` — it stopped on an error: a model failure after retries (the result says so, nothing is
  raised), or a late input error or an unexpected exception (re-raised after the footer is written);
* ``interrupted`` — Ctrl-C / SIGINT (or SIGTERM where the CLI maps it to ``KeyboardInterrupt``);
  re-raised after the footer is written.

``reason`` says why for anything but ``ok``. Readers (``recompute_metrics``, studies) treat only ``ok``
as finished (:func:`fairarena.arena.transcript.transcript_status`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fairarena.arena.domain import Domain, default_domain
from fairarena.arena.protocol import Agent, Debate, DebateConfig, DebateFailed, check_agents, default_names
from fairarena.arena.transcript import SCHEMA_VERSION, Closing, TranscriptWriter, Turn, prompt_reuse
from fairarena.errors import InputError


@dataclass
class DebateResult:
    status: str                                  # ok | failed | interrupted
    rounds: list[dict[str, Any]]
    final: dict[str, Any]
    feasible: dict[str, bool]
    metrics: dict[str, Any]
    usage: dict[str, Any]
    timing: dict[str, float]
    error: str | None = None
    transcript: str | None = None
    agents: list[dict[str, Any]] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list, repr=False)
    metric_keys: tuple[str, ...] = field(default=(), repr=False)   # the domain's metrics (to_frame's columns)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("turns")
        d.pop("metric_keys")
        return d

    def to_frame(self) -> Any:
        """The per-round metrics as a pandas DataFrame: one row per (round, participant) -- its proposal of
        that round, after repairs -- then one row per participant's final (``round`` = ``"final"``) and the
        joint decision (``participant`` = ``"joint"``). Columns: ``round``, ``participant`` (its name;
        ``joint``), ``phase`` (``round``, ``final`` or ``joint``), ``valid``, ``feasible``, ``repairs`` and
        EVERY metric of the debate's domain (its metric specs, in their order: for triage the allocation
        metrics including ``gini_cnss``, the Gini of need satisfaction); a proposal without metrics (no
        allocation could be read) has NaN metrics. The values are the ones the transcript records."""
        import pandas as pd

        names = [a["name"] for a in self.agents]
        keys = result_keys(names)
        metric_cols: list[str] = list(self.metric_keys)
        rows: list[dict[str, Any]] = []

        def add(t: Any, phase: str, who: str, valid: Any, feasible: Any, repairs: Any, m: dict[str, Any] | None) -> None:
            rows.append({"round": t, "participant": who, "phase": phase, "valid": valid, "feasible": feasible,
                         "repairs": repairs, **{k: (float(m[k]) if m and m.get(k) is not None else float("nan"))
                                                 for k in metric_cols}})

        for r in self.rounds:
            for n in names:
                s = r.get(keys[n])
                if s is not None:
                    add(r["round"], "round", n, s["valid"], s["feasible"], s["repairs"], s["metrics"])
        for n in names:
            f = self.final.get(keys[n])
            if f is not None:
                add("final", "final", n, f["valid"], self.feasible.get(keys[n]), f["repairs"], self.metrics.get(keys[n]))
        if "joint" in self.final:
            add("final", "joint", "joint", self.final["joint"].get("allocation") is not None, self.feasible.get("joint"),
                None, self.metrics.get("joint"))
        return pd.DataFrame(rows, columns=["round", "participant", "phase", "valid", "feasible", "repairs", *metric_cols])


def result_keys(names: list[str]) -> dict[str, str]:
    """Participant name -> key in results: ``a``/``b`` for two participants (as before the arena took any
    number), the names themselves otherwise."""
    return {n: k for n, k in zip(names, ("a", "b"))} if len(names) == 2 else {n: n for n in names}


def _usage(turns: list[Turn], name: str) -> dict[str, Any]:
    mine = [t for t in turns if t.agent == name]
    live = [t for t in mine if not t.cached and t.raw is not None]
    comp = sum(int(t.usage.get("completion_tokens", 0)) for t in live)
    lat = sum(t.latency_s for t in live)
    out = {"calls": len(mine), "cached_calls": sum(t.cached for t in mine),
           "repair_turns": sum(1 for t in mine if t.attempt > 0),
           "prompt_tokens": sum(int(t.usage.get("prompt_tokens", 0)) for t in live), "completion_tokens": comp,
           "model_latency_s": round(lat, 6), "completion_tokens_per_s": round(comp / lat, 3) if lat > 0 else None,
           "budgeted_prompts": sum(1 for t in mine if t.budget)}
    reuse = prompt_reuse(mine)
    if reuse["server"] is not None:   # the server said how much of the prompts it reused from its prefix cache
        out["cached_prompt_tokens"], out["prompt_reuse"] = reuse["server_cached_tokens"], reuse["server"]
    return out


def _split_args(args: tuple[Any, ...], config: DebateConfig | None) -> tuple[list[Agent], DebateConfig]:
    """``(agents_list[, config])`` or the two-agent form ``(a, b[, config])``."""
    rest = list(args)
    if rest and isinstance(rest[-1], DebateConfig):
        if config is not None:
            raise InputError("config", "given twice", "one DebateConfig")
        config = rest.pop()
    if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
        agents = list(rest[0])
    else:
        agents = rest
    if not all(isinstance(a, (Agent, str)) for a in agents):
        raise InputError("agents", [type(a).__name__ for a in agents],
                         "Agent objects (build_agent) or profile strings ('aligned:rawlsian', 'baseline', ...)")
    return agents, config or DebateConfig()


def _built(instance: Any, agents: list[Any], model: str, domain: Domain) -> list[Agent]:
    """Profile strings become agents named by position (A, B, C, ...) on ``model``; Agent objects stay."""
    if all(isinstance(a, Agent) for a in agents):
        return agents
    from fairarena.arena.agents import build_agent
    from fairarena.arena.profiles import participant_profile

    default = domain is default_domain()

    names = default_names(len(agents))
    taken = {a.name for a in agents if isinstance(a, Agent)}
    models: dict[str, Any] = {}
    out = []
    for name, a in zip(names, agents):
        if isinstance(a, str):
            if name in taken:
                raise InputError("agents", name, "distinct names (a profile string is named by its position)")
            profile = a if default else participant_profile(domain, instance, a, "agents")
            a = build_agent(name, profile, model, instance, models=models, domain=domain)
        out.append(a)
    return out


def run_debate(instance: Any, *args: Any, config: DebateConfig | None = None, transcript: str | Path | None = None,
               header: dict[str, Any] | None = None, domain: Domain | None = None, model: str = "scripted") -> DebateResult:
    """Run one debate; write the JSONL transcript as it goes when ``transcript`` is given.

    ``run_debate(cohort, [a, b, c], config)`` or the two-agent form ``run_debate(cohort, a, b, config)``.
    An agent may be a profile string (``run_debate(cohort, "aligned:rawlsian", "baseline")``): it is built
    on ``model`` (default the scripted negotiator) and named by its position (A, B, C, ...); on a domain other
    than the default one ``aligned:<participant>`` names one of the domain's participants.
    ``domain``: the instance's domain (default: the registry's default domain).
    Model failures (after retries) do not raise: the result has ``status="failed"`` and ``error``, and the
    transcript keeps every event up to the failure plus a ``footer`` saying so. Ctrl-C and any other
    exception write the footer (``interrupted`` / ``failed`` with the reason) and propagate.
    """
    from fairarena.provenance import run_record

    agents, config = _split_args(args, config)
    domain = default_domain() if domain is None else domain
    agents = _built(instance, agents, model, domain)
    check_agents(agents)
    t0 = time.perf_counter()
    debate = Debate(instance, agents, config, None, domain=domain)   # validates before anything is written
    writer = TranscriptWriter(transcript) if transcript is not None else None
    debate.writer = writer
    if writer is not None:
        rec = run_record(asdict(config), config.seed, schema_version=SCHEMA_VERSION, domain=domain.name,
                         agents={a.name: {"profile": a.profile.name, "model": a.model_spec, "rag_note": a.rag_note}
                                 for a in agents},
                         **(header or {}))
        writer.write({"type": "header", **rec, getattr(domain, "instance_key", "instance"): domain.to_dict(instance),
                      "proposal_schema": debate.format.schema(debate.problem)})
    status, error, reason = "ok", None, None
    out: dict[str, Any] | None = None
    try:
        out = debate.run()
    except DebateFailed as exc:
        status, error, reason = "failed", str(exc), str(exc)
    except KeyboardInterrupt:
        status, reason = "interrupted", "interrupted by the user (SIGINT/Ctrl-C)"
        error = reason
        raise
    except SystemExit as exc:  # the CLI turns SIGTERM into SystemExit(128 + 15)
        status, reason = "interrupted", f"terminated (exit {exc.code}; SIGTERM or sys.exit)"
        error = reason
        raise
    except BaseException as exc:
        from fairarena.errors import interrupt_of

        sig = interrupt_of(exc)          # a signal that landed inside C code (a SystemError caused by it)
        status, reason = (("interrupted", f"interrupted ({type(sig).__name__})") if sig is not None
                          else ("failed", f"{type(exc).__name__}: {exc}"))
        error = reason
        raise
    finally:
        wall = time.perf_counter() - t0
        timing = {"wall_s": round(wall, 6), "model_s": round(debate.model_time, 6),
                  "overhead_s": round(wall - debate.model_time, 6)}
        if writer is not None:
            writer.write({"type": "footer", "status": status, "reason": reason, "error": error, "timing": timing})
            writer.close()
    names = debate.names
    keys = result_keys(names)
    rounds = [{"round": r["round"], **{keys[n]: r[n] for n in names if n in r}} for r in out["rounds"]] if out \
        else _partial_rounds(debate, keys)
    final: dict[str, Any] = {}
    feasible: dict[str, bool] = {}
    metrics: dict[str, Any] = {}
    if out:
        for name, step in out["finals"].items():
            k = keys[name]
            final[k] = {"allocation": step.proposal.mapping, "valid": step.proposal.valid,
                        "violations": list(step.proposal.violations), "repairs": step.repairs,
                        "justification": step.proposal.justification}
            feasible[k] = step.summary()["feasible"]
            metrics[k] = step.metrics
        j: Closing = out["joint"]
        final["joint"] = {"allocation": j.allocation, "rule": j.rule, "violations": j.violations, "note": j.note}
        if j.details is not None:
            final["joint"]["details"] = j.details
        feasible["joint"] = j.feasible
        metrics["joint"] = j.metrics
    return DebateResult(status, rounds, final, feasible, metrics, {keys[n]: _usage(debate.turns, n) for n in names},
                        timing, error, str(transcript) if transcript is not None else None,
                        [{"name": a.name, "profile": a.profile.name, "model": a.model_spec} for a in agents],
                        debate.turns, debate.metric_keys)


def _partial_rounds(debate: Debate, keys: dict[str, str]) -> list[dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = {}
    for t, phase, who, step in debate.history:
        if phase == "round":
            rows.setdefault(t, {"round": t})[keys[who]] = step.summary()
    return [rows[t] for t in sorted(rows)]
