"""``fairarena debate``: one debate between two agents on a cohort. One call into :mod:`fairarena.arena`."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from fairarena.cli_common import cli_errors, console, emit_json, fail
from fairarena.errors import InputError

ROW_METRICS = (("esg", "ESG"), ("rmg", "RMG"), ("var", "Var"), ("dw_esg", "DW-ESG"), ("vwci", "VWCI"), ("gini", "Gini"))


def _capacities() -> Enum:
    from fairarena.triage.cohort import CAPACITY_VARIANTS
    return Enum("CapacityVariant", {k: k for k in CAPACITY_VARIANTS}, type=str)  # type: ignore[return-value]


CapacityVariant = _capacities()
RagMode = Enum("RagMode", {k: k for k in ("auto", "on", "off")}, type=str)  # type: ignore[misc]


def run_cli_debate(*, cohort_file: Path | None, seed: int, capacity: str, agent_a: str, agent_b: str, model: str,
                   model_b: str | None, rounds: int, out: Path | None, closing: str, max_repairs: int, rag: str,
                   rag_dir: Path | None, corpus_dir: list[Path], cache: Path | None, offline: bool,
                   max_calls: int | None, temperature: float, max_tokens: int) -> dict[str, Any]:
    """Everything the command does, as one function (a notebook gets the same)."""
    from fairarena.arena import DebateConfig, build_agent, run_debate
    from fairarena.fsutil import atomic_write_json
    from fairarena.triage import load_cohort, sample_cohort

    cohort = load_cohort(cohort_file) if cohort_file is not None else sample_cohort(seed, capacity)
    config = DebateConfig(rounds=rounds, max_repairs=max_repairs, closing=closing, seed=seed,
                          temperature=temperature, max_tokens=max_tokens)
    models: dict[str, Any] = {}
    common = dict(cache=cache, offline=offline, rag=rag, rag_dir=rag_dir, corpus_dirs=list(corpus_dir),
                  models=models, max_calls=max_calls)
    a = build_agent("A", agent_a, model, cohort, **common)
    b = build_agent("B", agent_b, model_b or model, cohort, **common)
    transcript = None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        transcript = out / "transcript.jsonl"
        atomic_write_json(out / "cohort.json", cohort.to_dict())
    result = run_debate(cohort, a, b, config, transcript=transcript,
                        header={"command": "debate", "cohort_source": str(cohort_file) if cohort_file else f"seed {seed}",
                                "capacity": capacity if cohort_file is None else None})
    doc = {"status": result.status, "error": result.error, "agents": {"a": agent_a, "b": agent_b},
           "models": {"a": a.model_spec, "b": b.model_spec}, "rag_notes": {"a": a.rag_note, "b": b.rag_note},
           "rounds": result.rounds, "final": result.final, "feasible": result.feasible, "metrics": result.metrics,
           "usage": result.usage, "timing": result.timing, "transcript": result.transcript}
    if out is not None:
        atomic_write_json(out / "result.json", doc)
    return doc


def _fmt(m: dict[str, Any] | None, key: str) -> str:
    return "-" if not m else f"{m[key]:.3f}"


def print_table(doc: dict[str, Any]) -> None:
    table = Table(title=f"debate: A = {doc['agents']['a']} ({doc['models']['a']}), "
                        f"B = {doc['agents']['b']} ({doc['models']['b']})")
    table.add_column("round", no_wrap=True)
    table.add_column("agent", no_wrap=True)
    for _, label in ROW_METRICS:
        table.add_column(label, justify="right", no_wrap=True)
    table.add_column("ok", no_wrap=True)
    table.add_column("rep", justify="right", no_wrap=True)
    for row in doc["rounds"]:
        for k in ("a", "b"):
            if k not in row:
                continue
            s = row[k]
            table.add_row(str(row["round"]), k.upper(), *(_fmt(s["metrics"], key) for key, _ in ROW_METRICS),
                          "yes" if s["feasible"] else "[red]no[/]", str(s["repairs"]))
    for k, label in (("a", "A"), ("b", "B"), ("joint", "joint")):
        if k in doc["final"]:
            m = doc["metrics"].get(k)
            table.add_row("final", label, *(_fmt(m, key) for key, _ in ROW_METRICS),
                          "yes" if doc["feasible"].get(k) else "[red]no[/]",
                          str(doc["final"][k].get("repairs", "")))
    console.print(table)
    console.print("ESG, RMG, DW-ESG, VWCI: higher is better; Var, Gini: lower is better.")
    j = doc["final"].get("joint")
    if j:
        console.print(f"joint ({j['rule']}): {j['note']}")
        for v in j["violations"]:
            console.print(f"  [red]- {v}[/]")
    for k in ("a", "b"):
        if doc["rag_notes"].get(k):
            console.print(f"agent {k.upper()}: {doc['rag_notes'][k]}")
    u = doc["usage"]
    console.print(f"calls A {u['a']['calls']} (repairs {u['a']['repair_turns']}), B {u['b']['calls']} "
                  f"(repairs {u['b']['repair_turns']}); wall {doc['timing']['wall_s']:.3f} s")
    if doc["transcript"]:
        console.print(f"transcript: {doc['transcript']}")


def register(app: typer.Typer) -> None:
    @app.command("debate")
    @cli_errors
    def debate_cmd(
        agent_a: str = typer.Option("aligned:rawlsian", "--agent-a",
                                    help="aligned:<framework> | baseline | adversarial | adversarial-rag"),
        agent_b: str = typer.Option("baseline", "--agent-b", help="Profile of agent B (same choices)."),
        model: str = typer.Option("scripted", "--model",
                                  help="Model spec: scripted | openai:MODEL@URL | llamacpp:PATH.gguf|smollm2"),
        model_b: Optional[str] = typer.Option(None, "--model-b", help="Model spec of agent B (default: --model)."),
        cohort_file: Optional[Path] = typer.Option(None, "--cohort", help="Cohort JSON file (else sampled with --seed)."),
        seed: int = typer.Option(0, "--seed", help="Cohort seed (when no --cohort) and debate seed."),
        capacity: CapacityVariant = typer.Option("tight", "--capacity", help="Capacity variant for a sampled cohort."),  # type: ignore[valid-type]
        rounds: int = typer.Option(3, "--rounds", help="Debate rounds."),
        closing: str = typer.Option("joint-draft", "--closing", help="Closing rule: joint-draft | mean-repair | ..."),
        max_repairs: int = typer.Option(2, "--max-repairs", help="Repair turns for an invalid proposal."),
        rag: RagMode = typer.Option("auto", "--rag", help="Retrieval for aligned agents: auto | on | off."),  # type: ignore[valid-type]
        rag_dir: Optional[Path] = typer.Option(None, "--rag-dir", help="Chroma store (default ~/.cache/fairarena/rag)."),
        corpus_dir: list[Path] = typer.Option([], "--corpus-dir", help="Extra documents: DIR/<framework>/*.md|txt."),
        cache: Optional[Path] = typer.Option(None, "--cache", help="SQLite response cache (replay/resume)."),
        offline: bool = typer.Option(False, "--offline", help="Replay from --cache only; never call a model."),
        max_calls: Optional[int] = typer.Option(None, "--max-calls", help="Call budget per model."),
        temperature: float = typer.Option(0.0, "--temperature"),
        max_tokens: int = typer.Option(900, "--max-tokens", help="Max completion tokens per call."),
        out: Optional[Path] = typer.Option(None, "--out", help="Directory for transcript.jsonl, result.json, cohort.json."),
        force: bool = typer.Option(False, "--force", help="Replace an earlier run's files in --out."),
        as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    ) -> None:
        """Two agents negotiate a triage allocation over rounds; prints each round's metrics and the joint final."""
        import contextlib

        from fairarena.cli_common import check_seed
        from fairarena.fsutil import output_folder

        if rounds < 1:
            raise InputError("rounds", rounds, "a positive integer")
        check_seed(seed)
        guard = output_folder(out, "debate", force=force) if out is not None else contextlib.nullcontext()
        with guard as folder:
            doc = run_cli_debate(cohort_file=cohort_file, seed=seed, capacity=capacity.value, agent_a=agent_a,
                                 agent_b=agent_b, model=model, model_b=model_b, rounds=rounds, out=out, closing=closing,
                                 max_repairs=max_repairs, rag=rag.value, rag_dir=rag_dir, corpus_dir=corpus_dir,
                                 cache=cache, offline=offline, max_calls=max_calls, temperature=temperature,
                                 max_tokens=max_tokens)
            if as_json:
                emit_json(doc)
            elif doc["rounds"] or doc["status"] == "ok":
                print_table(doc)
            if doc["status"] != "ok":
                where = f" (partial transcript: {doc['transcript']})" if doc["transcript"] else ""
                if folder is not None:
                    folder.note(reason=str(doc["error"])[:500])
                raise fail(f"debate failed: {doc['error']}{where}")
