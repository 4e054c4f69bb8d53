"""``fairarena debate``: one debate between two or more agents on a cohort. One call into :mod:`fairarena.arena`."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from fairarena.cli_common import cli_errors, console, emit_json, fail



def row_metrics(domain: Any = None) -> tuple[tuple[str, str, str], ...]:
    """The table's metric columns, ``(key, label, direction)``: every metric of the domain's specs, in its
    order (default: the registry's default domain)."""
    from fairarena.arena.domain import default_domain
    from fairarena.domains.protocol import metric_specs

    specs = metric_specs(default_domain() if domain is None else domain)
    return tuple((k, m.label, m.direction) for k, m in specs.items())


RagMode = Enum("RagMode", {k: k for k in ("auto", "on", "off")}, type=str)  # type: ignore[misc]


def prepare_debate(*, cohort_file: Path | None, seed: int, capacity: str, agents: list[str] = (),
                   agent_a: str | None = None, agent_b: str | None = None, models: list[str] = (),
                   model_b: str | None = None, rounds: int = 3, closing: str = "joint-draft", max_repairs: int = 2,
                   rag: str = "auto", max_calls: int | None = None, temperature: float = 0.0,
                   max_tokens: int = 900, share: float = 0.8, revisions: int = 3,
                   proposal_format: str = "allocation") -> dict[str, Any]:
    """Validate every option and read the cohort; nothing is built or written (runs before the output folder)."""
    from fairarena.arena import DebateConfig
    from fairarena.arena.agents import RAG_MODES, rag_unavailable, resolve_participants
    from fairarena.cli_common import check_seed
    from fairarena.errors import InputError
    from fairarena.arena.domain import default_domain
    from fairarena.domains.protocol import load_instance

    check_seed(seed)
    config = DebateConfig(rounds=rounds, max_repairs=max_repairs, closing=closing, seed=seed,
                          temperature=temperature, max_tokens=max_tokens, share=share, revisions=revisions,
                          proposal_format=proposal_format)
    participants = resolve_participants(list(agents), agent_a=agent_a, agent_b=agent_b, models=list(models),
                                        model_b=model_b)
    if rag not in RAG_MODES:
        raise InputError("rag", rag, f"one of {', '.join(RAG_MODES)}")
    if rag == "on" and (missing := rag_unavailable()):
        raise InputError("rag", rag, f"the rag extra: pip install 'fairarena[rag]' ({missing})")
    if max_calls is not None and (isinstance(max_calls, bool) or not isinstance(max_calls, int) or max_calls < 1):
        raise InputError("max-calls", max_calls, "a positive integer")
    domain = default_domain()   # a cohort file or a sampled cohort: the default domain's instance
    cohort = load_instance(domain, cohort_file) if cohort_file is not None else domain.sample(seed, capacity)
    return {"config": config, "participants": participants, "cohort": cohort, "cohort_file": cohort_file,
            "seed": seed, "capacity": capacity, "rag": rag, "max_calls": max_calls}


def execute_debate(plan: dict[str, Any], *, out: Path | None, rag_dir: Path | None = None,
                   corpus_dir: list[Path] = (), cache: Path | None = None, offline: bool = False) -> dict[str, Any]:
    """Build the agents and run the debate of a :func:`prepare_debate` plan; writes into ``out`` when given."""
    from fairarena.arena import build_agent, run_debate
    from fairarena.arena.result import result_keys
    from fairarena.fsutil import atomic_write_json

    cohort, participants = plan["cohort"], plan["participants"]
    shared: dict[str, Any] = {}
    common = dict(cache=cache, offline=offline, rag=plan["rag"], rag_dir=rag_dir, corpus_dirs=list(corpus_dir),
                  models=shared, max_calls=plan["max_calls"])
    built = [build_agent(p["name"], p["profile"], p["model"], cohort, **common) for p in participants]
    transcript = None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        transcript = out / "transcript.jsonl"
        atomic_write_json(out / "cohort.json", cohort.to_dict())
    cohort_file = plan["cohort_file"]
    result = run_debate(cohort, built, plan["config"], transcript=transcript,
                        header={"command": "debate",
                                "cohort_source": str(cohort_file) if cohort_file else f"seed {plan['seed']}",
                                "capacity": plan["capacity"] if cohort_file is None else None})
    keys = result_keys([a.name for a in built])
    doc = {"status": result.status, "error": result.error,
           "agents": [{"name": a.name, "profile": a.profile.name, "model": a.model_spec} for a in built],
           "rag_notes": {keys[a.name]: a.rag_note for a in built},
           "rounds": result.rounds, "final": result.final, "feasible": result.feasible, "metrics": result.metrics,
           "usage": result.usage, "timing": result.timing, "transcript": result.transcript}
    if out is not None:
        atomic_write_json(out / "result.json", doc)
    return doc


def check_paths(rag_dir: Path | None, corpus_dir: list[Path] = (), cache: Path | None = None) -> None:
    """The store, corpus and cache paths, checked before any work or write: the retrieval store a
    folder (or not there yet), every corpus folder an existing folder, the cache not a folder."""
    from fairarena.errors import InputError

    if rag_dir is not None and rag_dir.exists() and not rag_dir.is_dir():
        raise InputError("rag-dir", str(rag_dir), "exists and is a file; expected a folder for the retrieval store")
    for d in corpus_dir:
        if not Path(d).is_dir():
            raise InputError("corpus-dir", str(d), "expected an existing folder of documents")
    if cache is not None and cache.is_dir():
        raise InputError("cache", str(cache), "is a folder; expected a file name for the response cache")


def run_cli_debate(*, out: Path | None = None, rag_dir: Path | None = None, corpus_dir: list[Path] = (),
                   cache: Path | None = None, offline: bool = False, **options: Any) -> dict[str, Any]:
    """Everything the command does, as one function (a notebook gets the same): validate, then run."""
    check_paths(rag_dir, corpus_dir, cache)
    return execute_debate(prepare_debate(**options), out=out, rag_dir=rag_dir, corpus_dir=corpus_dir, cache=cache,
                          offline=offline)


def _fmt(m: dict[str, Any] | None, key: str) -> str:
    return "-" if not m or key not in m else f"{m[key]:.3f}"


def _keyed(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(result key, participant) in speaking order."""
    from fairarena.arena.result import result_keys
    keys = result_keys([a["name"] for a in doc["agents"]])
    return [(keys[a["name"]], a) for a in doc["agents"]]


def print_table(doc: dict[str, Any]) -> None:
    keyed = _keyed(doc)
    title = ", ".join(f"{a['name']} = {a['profile']} ({a['model']})" for _, a in keyed)
    table = Table(title=f"debate: {title}")
    table.add_column("round", no_wrap=True)
    table.add_column("agent", no_wrap=True)
    columns = row_metrics()
    for _, label, _ in columns:
        table.add_column(label, justify="right", no_wrap=True)
    table.add_column("ok", no_wrap=True)
    table.add_column("rep", justify="right", no_wrap=True)
    for row in doc["rounds"]:
        for k, a in keyed:
            if k not in row:
                continue
            s = row[k]
            table.add_row(str(row["round"]), a["name"], *(_fmt(s["metrics"], key) for key, _, _ in columns),
                          "yes" if s["feasible"] else "[red]no[/]", str(s["repairs"]))
    for k, label in [(k, a["name"]) for k, a in keyed] + [("joint", "joint")]:
        if k in doc["final"]:
            m = doc["metrics"].get(k)
            table.add_row("final", label, *(_fmt(m, key) for key, _, _ in columns),
                          "yes" if doc["feasible"].get(k) else "[red]no[/]",
                          str(doc["final"][k].get("repairs", "")))
    console.print(table)
    higher = ", ".join(label for _, label, d in columns if d == "max")
    lower = ", ".join(label for _, label, d in columns if d == "min")
    console.print(f"{higher}: higher is better; {lower}: lower is better.")
    j = doc["final"].get("joint")
    if j:
        console.print(f"joint ({j['rule']}): {j['note']}")
        for v in j["violations"]:
            console.print(f"  [red]- {v}[/]")
    for k, a in keyed:
        if doc["rag_notes"].get(k):
            console.print(f"agent {a['name']}: {doc['rag_notes'][k]}")
    u = doc["usage"]
    calls = ", ".join(f"{a['name']} {u[k]['calls']} (repairs {u[k]['repair_turns']})" for k, a in keyed if k in u)
    console.print(f"calls {calls}; wall {doc['timing']['wall_s']:.3f} s")
    if doc["transcript"]:
        console.print(f"transcript: {doc['transcript']}")


def register(app: typer.Typer) -> None:
    @app.command("debate")
    @cli_errors
    def debate_cmd(
        agent: list[str] = typer.Option([], "--agent",
                                        help="A participant: PROFILE or NAME=PROFILE (repeat; names default A, B, C...). "
                                             "PROFILE: aligned:<framework> | baseline | adversarial | adversarial-rag"),
        agent_a: Optional[str] = typer.Option(None, "--agent-a",
                                              help="Two-agent form: profile of agent A (default aligned:rawlsian)."),
        agent_b: Optional[str] = typer.Option(None, "--agent-b", help="Two-agent form: profile of agent B (default baseline)."),
        model: list[str] = typer.Option([], "--model",
                                        help="Model spec of every participant (default scripted), or NAME=SPEC for one: "
                                             "scripted | openai:MODEL@URL | llamacpp:PATH.gguf|smollm2"),
        model_b: Optional[str] = typer.Option(None, "--model-b", help="Model spec of the second participant."),
        cohort_file: Optional[Path] = typer.Option(None, "--cohort", help="Cohort JSON file (else sampled with --seed)."),
        problem: Optional[Path] = typer.Option(None, "--problem", help="A problem file (TOML or JSON) instead of a "
                                               "cohort: --agent aligned:<stakeholder> | baseline (default: every "
                                               "stakeholder); docs/domains.md, 'A domain in a file'."),
        seed: int = typer.Option(0, "--seed", help="Cohort seed (when no --cohort) and debate seed."),
        capacity: str = typer.Option("tight", "--capacity", help="Capacity variant for a sampled cohort "
                                     "(see the cohort command's --help)."),
        rounds: int = typer.Option(3, "--rounds", help="Debate rounds (1-50)."),
        closing: str = typer.Option("joint-draft", "--closing", help="Closing rule: joint-draft, mean-repair, dialectical, "
                                    "or any aggregation rule (fairarena aggregate rules); see fairarena.arena.CLOSING_RULES."),
        share: float = typer.Option(0.8, "--share", help="Dialectical closing: share of its own ideal (0-1) each agent "
                                    "must keep in every other agent's position."),
        revisions: int = typer.Option(3, "--revisions", help="Dialectical closing: revision rounds after the finals (0-50)."),
        max_repairs: int = typer.Option(2, "--max-repairs", help="Repair turns for an invalid proposal (0-5)."),
        proposal_format: str = typer.Option("allocation", "--proposal-format", help="How agents state proposals: "
                                            "allocation (free-form, the paper's) or priorities (ordered patient lists "
                                            "per resource, realised feasibly); see fairarena.arena.PROPOSAL_FORMATS."),
        rag: RagMode = typer.Option("auto", "--rag", help="Retrieval for aligned agents: auto | on | off."),  # type: ignore[valid-type]
        rag_dir: Optional[Path] = typer.Option(None, "--rag-dir", help="Chroma store (default ~/.cache/fairarena/rag)."),
        corpus_dir: list[Path] = typer.Option([], "--corpus-dir", help="Extra documents: DIR/<framework>/*.md|txt."),
        cache: Optional[Path] = typer.Option(None, "--cache", help="SQLite response cache (replay/resume)."),
        offline: bool = typer.Option(False, "--offline", help="Replay from --cache only; never call a model."),
        max_calls: Optional[int] = typer.Option(None, "--max-calls", help="Call budget per model."),
        temperature: float = typer.Option(0.0, "--temperature", help="Sampling temperature (0-2)."),
        max_tokens: int = typer.Option(900, "--max-tokens", help="Max completion tokens per call (1-32768)."),
        out: Optional[Path] = typer.Option(None, "--out", help="Directory for transcript.jsonl, result.json, cohort.json."),
        force: bool = typer.Option(False, "--force", help="Replace an earlier run's files in --out."),
        as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    ) -> None:
        """Two or more agents negotiate an allocation of a cohort over rounds; prints each round's metrics and the joint final."""
        import contextlib

        from fairarena.fsutil import output_folder

        from fairarena.arena.domain import default_domain
        from fairarena.errors import InputError

        for spec in model:   # an empty default spec would otherwise fall back to the scripted model
            if not spec.strip():
                raise InputError("model", spec, "an empty model spec: omit --model for the scripted model, or give "
                                 "scripted | openai:MODEL@URL | llamacpp:PATH.gguf")
        if problem is not None:   # a problem file: its domain's debate (fairarena.domains.registry.PROBLEM_FILE_FORMS)
            from fairarena.domains.registry import problem_file_form

            problem_file_form("refuse")({
                "cohort": cohort_file, "agent-a": agent_a, "agent-b": agent_b, "model-b": model_b, "rag-dir": rag_dir,
                "corpus-dir": corpus_dir, "rag": rag.value if rag.value == "on" else None,
                "proposal-format": None if proposal_format == "allocation" else proposal_format})
            return problem_file_form("debate")(problem, agents=agent, models=model, rounds=rounds, closing=closing,
                                               share=share, revisions=revisions, max_repairs=max_repairs, seed=seed,
                                               temperature=temperature, max_tokens=max_tokens, max_calls=max_calls,
                                               cache=cache, offline=offline, out=out, force=force, as_json=as_json)
        variants = tuple(getattr(default_domain(), "variants", ()))
        if capacity not in variants:  # checked here too: with --cohort it is otherwise unused
            raise InputError("capacity", capacity, f"one of {', '.join(variants)}")
        # every option is validated (and the cohort read) before the output folder is touched
        plan = prepare_debate(cohort_file=cohort_file, seed=seed, capacity=capacity, agents=agent,
                              agent_a=agent_a, agent_b=agent_b, models=model, model_b=model_b, rounds=rounds,
                              closing=closing, max_repairs=max_repairs, rag=rag.value, max_calls=max_calls,
                              temperature=temperature, max_tokens=max_tokens, share=share, revisions=revisions,
                              proposal_format=proposal_format)
        check_paths(rag_dir, corpus_dir, cache)
        guard = output_folder(out, "debate", force=force) if out is not None else contextlib.nullcontext()
        with guard as folder:
            doc = execute_debate(plan, out=out, rag_dir=rag_dir, corpus_dir=corpus_dir, cache=cache, offline=offline)
            if as_json:
                emit_json(doc)
            elif doc["rounds"] or doc["status"] == "ok":
                print_table(doc)
            if doc["status"] != "ok":
                where = f" (partial transcript: {doc['transcript']})" if doc["transcript"] else ""
                if folder is not None:
                    folder.note(reason=str(doc["error"])[:500])
                raise fail(f"debate failed: {doc['error']}{where}")
