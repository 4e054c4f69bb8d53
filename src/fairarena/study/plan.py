"""``fairarena study plan``: what a study will cost, before any model call.

For each distinct debate pattern of the design (Agent A's profile, the opponent, the closing rule) one
debate runs on the design's first cohort with a stand-in model in place of each language model: the
arena's own agents and prompt builder build every prompt exactly as they would for the real spec (the
stand-in reports the real model's context window and counts prompts with the real backend's counter,
so prompt fitting is the same), and the stand-in answers every turn with a short valid proposal (nobody
gets anything; the decision turns accept), so no repair turn is needed. Each pattern's calls and
prompt tokens are then multiplied by the number of debates that share it (every cohort has the same
table shape; samples, seeds and capacity variants repeat the pattern). A council study (``kind =
"council"``) has one pattern per closing rule: one council debate with every member in it, built as the
run builds it (the default domain: :func:`fairarena.arena.council.council_agents`; another domain: its own
language-model debate, the protocol's ``study_plan_debate``, e.g. a destination's stakeholder agents with a
stand-in proposing one POI a slot for every group); a scripted council or duel of another domain plays the
domain's scripted agents, which ask no model (no calls, no tokens).

What it cannot know, and how it is stated:

- **Completion tokens.** A real reply's length depends on the model. The plan gives a lower estimate
  (the stand-in's valid reply with a justification of :data:`JUSTIFICATION_TOKENS` tokens) and the upper
  bound (``max_tokens`` per call).
- **Repairs.** An invalid proposal costs up to ``max_repairs`` more calls; the plan counts none and
  states the bound.
- **Cache hits.** Closing the same debate several ways repeats its rounds' requests, which the response
  cache answers: ``cached_calls`` counts the calls of a pattern whose messages and parameters another
  debate on the same cohort already sent.
- **Token counts** are the backend's own (``count_tokens``): the ``llamacpp`` backend's tokenizer when it
  is installed, otherwise the documented estimate of :func:`fairarena.llm.base.estimate_prompt_tokens`
  (about 12 % above a BPE tokenizer on prose); ``method`` says which.

Time: ``total tokens / tokens_per_s`` for a server's aggregate rate, or the rate a short probe
measured (``probe``: one real call per server with the first prompt, completion tokens per second of
that call, multiplied by the server's starting concurrency: an optimistic bound for a batching server).
Cost: prompt and completion tokens times the prices per million tokens.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from typing import Any, Sequence

from fairarena.errors import InputError
from fairarena.study.design import DebateTask, StudyConfig, cohort_of, expand

JUSTIFICATION_TOKENS = 120
"""Tokens of justification and critique added to the stand-in's reply for the lower completion estimate."""

STANDIN = "plan-standin"


class _StandIn:
    """Answers every turn with a valid empty proposal; records each request. Reports the real model's
    context window and prompt counts (``live``: the real backend object, never called)."""

    def __init__(self, reply: str, live: Any, spec: str) -> None:
        self.reply = reply
        self.live = live
        self.spec = spec
        self.backend = getattr(live, "backend", "scripted")
        self.model = getattr(live, "model", spec)
        self.requests: list[tuple[list[dict[str, str]], dict[str, Any]]] = []

    @property
    def context_window(self) -> int | None:
        return getattr(self.live, "context_window", None) if self.live is not None else None

    def count_tokens(self, messages: Any) -> int:
        from fairarena.llm.base import count_tokens, estimate_prompt_tokens, validate_messages

        return count_tokens(self.live, messages) if self.live is not None else \
            estimate_prompt_tokens(validate_messages(messages))

    def max_prompt_tokens(self, max_tokens: int = 512) -> int | None:
        w = self.context_window
        return None if w is None else max(0, int(w) - int(max_tokens))

    def chat(self, messages: Any, *, seed: int | None = None, temperature: float = 0.0, max_tokens: int = 512,
             schema: Any = None) -> Any:
        from fairarena.llm.base import ChatResponse, Usage, estimate_tokens, validate_messages

        msgs = validate_messages(messages)
        params = {"seed": seed, "temperature": temperature, "max_tokens": max_tokens, "schema": schema is not None}
        self.requests.append((msgs, params))
        # a deterministic model: the same request gets the same answer, another request another one (so
        # two debates' histories part where a real model's would, and the cache count is a real model's)
        tag = hashlib.sha256(json.dumps([msgs, params], sort_keys=True).encode()).hexdigest()[:12]
        text = self.reply.replace('"justification": "-"', f'"justification": "{tag}"')
        return ChatResponse(text=text, backend=self.backend, model=self.model,
                            usage=Usage(self.count_tokens(msgs), estimate_tokens(text), estimated=True),
                            latency_s=0.0, finish_reason="stop")


def _live_backend(spec: str) -> tuple[Any, str]:
    """The real backend object of a spec, built without any call (None for scripted), and how it counts."""
    from fairarena.llm.spec import BACKENDS, backend_options, parse_model_spec

    ms = parse_model_spec(spec)
    if ms.backend == "scripted":
        return None, "estimate"
    try:
        live = BACKENDS.get(ms.backend).factory(ms, backend_options(ms))
    except Exception:   # noqa: BLE001 - a missing extra or file: the estimate still plans
        return None, "estimate"
    method = getattr(live, "token_count_method", None) or "estimate"
    return live, str(method)


def _reply(problem: Any) -> str:
    """The stand-in's reply on an instance: a valid proposal giving nobody anything, accepting."""
    from fairarena.allocation.problem import allocation_to_mapping

    return json.dumps({"allocation": allocation_to_mapping(problem, problem.zeros()), "justification": "-",
                       "critique": "-", "accept": True})


def _pattern(t: DebateTask) -> tuple[str, str, str]:
    return (t.agent_a, t.agent_b, t.closing)


def _standin_key(spec: str) -> str:
    """The spec an agent is built with in the plan: the real spec for a language model (the stand-in is
    given under it), a scripted spec that is not the negotiator for a scripted one (never consulted)."""
    return f"scripted:{STANDIN}" if spec.startswith("scripted") else spec


def _duel_runs(cfg: StudyConfig, tasks: Sequence[Any], lives: dict[str, tuple[Any, str]]) -> list[dict[str, Any]]:
    """One stand-in debate per pattern of a duel study (Agent A's profile, the opponent, the closing)."""
    from fairarena.arena import build_agent, run_debate

    counts = Counter(_pattern(t) for t in tasks)
    first: dict[tuple[str, str, str], DebateTask] = {}
    for t in tasks:
        first.setdefault(_pattern(t), t)
    out = []
    for pat, t in first.items():
        if cfg.participant_duel:   # a domain's scripted agents (scripted models only): no model calls
            out.append({"fields": {"agent_a": pat[0], "agent_b": pat[1], "closing": pat[2]}, "debates": counts[pat],
                        "standins": {}, "status": "ok", "reply": "", "instance": (t.cohort_seed, t.capacity),
                        "note": f"scripted {cfg.domain} debate: no model calls"})
            continue
        cohort = cohort_of(t.cohort_seed, t.capacity)
        reply = _reply(cohort.to_problem())
        standins = {s: _StandIn(reply, lives[s][0], s) for s in {t.model_a, t.model_b}}
        agents = []
        for role, prof, spec in (("A", t.agent_a, t.model_a), ("B", t.agent_b, t.model_b)):
            key = _standin_key(spec)
            agents.append(build_agent(role, prof, key, cohort, rag="off" if cfg.rag == "auto" else cfg.rag,
                                      models={key: standins[spec]}))
        res = run_debate(cohort, agents[0], agents[1], t.debate_config())
        out.append({"fields": {"agent_a": pat[0], "agent_b": pat[1], "closing": pat[2]}, "debates": counts[pat],
                    "standins": standins, "status": res.status, "reply": reply,
                    "instance": (t.cohort_seed, t.capacity)})
    return out


def _council_runs(cfg: StudyConfig, tasks: Sequence[Any], lives: dict[str, tuple[Any, str]]) -> list[dict[str, Any]]:
    """One stand-in council debate per closing rule (every member in it, as the run builds them): the default
    domain's :func:`fairarena.arena.council.council_agents`; another domain's own language-model debate
    (its ``study_plan_debate``). A scripted council of another domain asks no model (its scripted agents):
    no calls, no tokens."""
    from fairarena.study.design import study_hook
    from fairarena.study.instances import default_domain

    counts = Counter(t.closing for t in tasks)
    first: dict[str, Any] = {}
    for t in tasks:
        first.setdefault(t.closing, t)
    out = []
    for closing, t in first.items():
        fields = {"members": list(t.members), "closing": closing}
        own_domain = t.domain != default_domain()
        if own_domain and t.model.startswith("scripted"):
            out.append({"fields": fields, "debates": counts[closing], "standins": {}, "status": "ok", "reply": "",
                        "instance": (t.cohort_seed, t.capacity),
                        "note": f"scripted {t.domain} debate: no model calls"})
            continue
        key = _standin_key(t.model)
        if own_domain:
            own = study_hook(t.domain, "study_plan_debate")
            if own is None:
                raise InputError("study.model_a", t.model, f"a scripted model, or a domain that plans language-model "
                                 f"debates (domain {t.domain!r} has no study_plan_debate)")
            status, reply, st = own(t, lambda reply, spec=t.model: _StandIn(reply, lives[spec][0], spec))
        else:
            from fairarena.arena import run_debate
            from fairarena.arena.council import council_agents

            cohort = cohort_of(t.cohort_seed, t.capacity)
            reply = _reply(cohort.to_problem())
            st = _StandIn(reply, lives[t.model][0], t.model)
            agents = council_agents(cohort, key, [m.partition(":")[2] for m in t.members],
                                    rag="off" if cfg.rag == "auto" else cfg.rag, models={key: st})
            status = run_debate(cohort, agents, t.debate_config()).status
        out.append({"fields": fields, "debates": counts[closing], "standins": {t.model: st}, "status": status,
                    "reply": reply, "instance": (t.cohort_seed, t.capacity)})
    return out


def plan_study(cfg: StudyConfig, *, tokens_per_s: float | None = None, price_prompt: float | None = None,
               price_completion: float | None = None, probe: bool = False) -> dict[str, Any]:
    """The plan as plain data (see the module's text). ``tokens_per_s``: the server's aggregate rate
    (prompt and completion tokens a second); ``price_*``: per million tokens."""
    from fairarena.llm.base import estimate_tokens

    for name, v in (("tokens_per_s", tokens_per_s), ("price_prompt", price_prompt),
                    ("price_completion", price_completion)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or v != v
                              or v == float("inf")):
            raise InputError(name.replace("_", "-"), v, "a positive number")
    if probe and not [s for s in cfg.model_specs if not s.startswith("scripted")]:
        raise InputError("probe", True, "a design with a language model (scripted models take no time to probe)")
    t0 = time.perf_counter()
    tasks = expand(cfg)
    lives = {s: _live_backend(s) for s in cfg.model_specs}
    from fairarena.study.kinds import study_kind

    runs = study_kind(cfg.kind).plan(cfg, tasks, lives)
    patterns = []
    seen_requests: dict[tuple[Any, ...], set[str]] = {}
    for run in runs:
        calls = prompt = cached = high = 0
        for spec, st in run["standins"].items():
            seen = seen_requests.setdefault((*run["instance"], spec), set())
            for msgs, params in st.requests:
                calls += 1
                prompt += st.count_tokens(msgs)
                high += int(params["max_tokens"])
                h = json.dumps([msgs, params], sort_keys=True)
                cached += h in seen
                seen.add(h)
        low = calls * (estimate_tokens(run["reply"]) + JUSTIFICATION_TOKENS)
        pat = {**run["fields"], "debates": run["debates"], "calls_per_debate": calls,
               "cached_calls_per_debate": cached, "prompt_tokens_per_debate": prompt, "status": run["status"],
               "completion_tokens_per_debate": {"low": low, "high": high}}
        if "note" in run:
            pat["note"] = run["note"]
        patterns.append(pat)
    debates = len(tasks)
    calls = sum(p["calls_per_debate"] * p["debates"] for p in patterns)
    cached = sum(p["cached_calls_per_debate"] * p["debates"] for p in patterns)
    prompt = sum(p["prompt_tokens_per_debate"] * p["debates"] for p in patterns)
    comp = {k: sum(p["completion_tokens_per_debate"][k] * p["debates"] for p in patterns) for k in ("low", "high")}
    live_calls = max(1, calls - cached)
    out: dict[str, Any] = {
        "study": cfg.name, "kind": cfg.kind, "debates": debates, "calls": calls, "cached_calls": cached,
        "repairs_not_counted": f"up to {cfg.max_repairs} more calls per invalid proposal",
        "prompt_tokens": prompt, "completion_tokens": comp,
        "per_call": {"prompt_tokens": round(prompt / max(1, calls), 1),
                     "completion_tokens": {k: round(v / max(1, calls), 1) for k, v in comp.items()}},
        "token_count": {s: m for s, (_, m) in lives.items()},
        "models": cfg.model_specs, "patterns": patterns,
    }
    out.update(cfg.design.plan_fields())   # a council: its members
    live_share = (calls - cached) / max(1, calls)
    rate, source = tokens_per_s, "given"
    if probe:
        rate, source = _probe(cfg), "probe"
    if rate is not None:
        out["time_s"] = {k: round((prompt + comp[k]) * live_share / rate, 1) for k in ("low", "high")}
        out["rate"] = {"tokens_per_s": round(rate, 2), "source": source}
    if price_prompt is not None or price_completion is not None:
        pp, pc = price_prompt or 0.0, price_completion or 0.0
        out["cost"] = {k: round((prompt * pp + comp[k] * pc) * live_share / 1e6, 4) for k in ("low", "high")}
        out["prices_per_million"] = {"prompt": pp, "completion": pc}
    out["live_calls"] = live_calls
    out["plan_s"] = round(time.perf_counter() - t0, 3)
    return out


def _probe(cfg: StudyConfig) -> float:
    """Tokens a second of one real call per language-model server (the first debate's first prompt),
    times its starting concurrency, summed over servers; scripted-only designs cannot be probed."""
    from fairarena.llm import build_model

    specs = [s for s in cfg.model_specs if not s.startswith("scripted")]
    msgs = [{"role": "user", "content": "Reply with a JSON object listing three patients and a one-sentence "
                                        "justification of your allocation."}]
    total = 0.0
    for s in specs:
        m = build_model(s)
        t0 = time.perf_counter()
        r = m.chat(msgs, max_tokens=min(128, cfg.max_tokens), temperature=cfg.temperature, seed=0)
        dt = max(1e-6, time.perf_counter() - t0)
        pol = cfg.server_policy(s)
        total += (r.usage.prompt_tokens + r.usage.completion_tokens) / dt * (pol.start if pol else 1)
    return total


def format_plan(plan: dict[str, Any]) -> list[str]:
    """The plan as a few lines for a terminal."""
    what = (f"council debates ({len(plan['members'])} members each)" if plan.get("kind") == "council"
            else "debates")
    lines = [f"study {plan['study']}: {plan['debates']} {what}, {plan['calls']} model calls "
             f"({plan['cached_calls']} answered by the response cache; {plan['repairs_not_counted']})",
             f"prompt tokens: {plan['prompt_tokens']:,} in total, {plan['per_call']['prompt_tokens']:,} per call "
             f"({', '.join(f'{k}: {v}' for k, v in plan['token_count'].items())})",
             f"completion tokens: {plan['completion_tokens']['low']:,} - {plan['completion_tokens']['high']:,} "
             f"({plan['per_call']['completion_tokens']['low']} - {plan['per_call']['completion_tokens']['high']} "
             "per call: a short valid reply - max_tokens)"]
    if "time_s" in plan:
        lo, hi = plan["time_s"]["low"], plan["time_s"]["high"]
        lines.append(f"time at {plan['rate']['tokens_per_s']:,} tokens/s ({plan['rate']['source']}): "
                     f"{_hms(lo)} - {_hms(hi)}")
    if "cost" in plan:
        lines.append(f"cost at {plan['prices_per_million']['prompt']} / {plan['prices_per_million']['completion']} "
                     f"per million prompt / completion tokens: {plan['cost']['low']:.2f} - {plan['cost']['high']:.2f}")
    return lines


def _hms(s: float) -> str:
    h, rem = divmod(int(round(s)), 3600)
    return f"{h} h {rem // 60:02d} min" if h else f"{rem // 60} min {rem % 60:02d} s"


__all__: Sequence[str] = ("plan_study", "format_plan", "JUSTIFICATION_TOKENS")
