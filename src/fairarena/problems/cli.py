"""The ``--problem FILE`` forms of three commands, called from their command functions:

* ``fairarena debate --problem FILE [--agent PROFILE ...]`` -> :func:`debate_command`;
* ``fairarena aggregate council --problem FILE`` -> :func:`council_command`;
* ``fairarena audit conflict --problem FILE --x M --y M`` -> :func:`conflict_command`.

Each reads and validates the file and every option before any work or write (an InputError: one line
naming the file and the field, exit 2), then runs and renders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from fairarena.errors import InputError

__all__ = ["debate_command", "council_command", "conflict_command", "refuse"]


def refuse(given: dict[str, Any]) -> None:
    """An option the ``--problem`` form does not take, given anyway: InputError naming it."""
    for option, value in given.items():
        if value not in (None, False, [], ()):
            raise InputError(option, value, "not with --problem (a problem file declares its own recipients, "
                                            "resources and stakeholders)")


def debate_command(path: Path, *, agents: Sequence[str], models: Sequence[str], rounds: int, closing: str,
                   share: float, revisions: int, max_repairs: int, seed: int, temperature: float, max_tokens: int,
                   max_calls: int | None, cache: Path | None, offline: bool, out: Path | None, force: bool,
                   as_json: bool) -> None:
    """``fairarena debate --problem FILE``: validate, run, render (:mod:`fairarena.problems.run`)."""
    import contextlib

    from fairarena.cli_common import emit_json, fail
    from fairarena.fsutil import output_folder
    from fairarena.problems.domain import load_problem_domain
    from fairarena.problems.run import prepare_debate, print_debate, run_debate_on

    domain = load_problem_domain(path)
    plan = prepare_debate(domain, agents=agents, models=models, rounds=rounds, closing=closing, max_repairs=max_repairs,
                          seed=seed, temperature=temperature, max_tokens=max_tokens, share=share, revisions=revisions,
                          max_calls=max_calls)
    if cache is not None and cache.is_dir():
        raise InputError("cache", str(cache), "is a folder; expected a file name for the response cache")
    guard = output_folder(out, "debate", force=force) if out is not None else contextlib.nullcontext()
    with guard as folder:
        doc = run_debate_on(plan, out=out, cache=cache, offline=offline)
        if as_json:
            emit_json(doc)
        elif doc["rounds"] or doc["status"] == "ok":
            print_debate(doc)
        if doc["status"] != "ok":
            if folder is not None:
                folder.note(reason=str(doc["error"])[:500])
            raise fail(f"debate failed: {doc['error']}")


def council_command(path: Path, rules: Sequence[str], seed: int, out: Path | None, force: bool, as_json: bool) -> None:
    """``fairarena aggregate council --problem FILE``: every candidate-set rule over the stakeholders' optima."""
    from fairarena.cli_common import check_seed, emit_json
    from fairarena.problems.domain import load_problem_domain
    from fairarena.problems.run import candidate_rules, council, print_council

    check_seed(seed)
    domain = load_problem_domain(path)
    names = candidate_rules(list(rules) or None)
    if out is not None:
        from fairarena.fsutil import check_out_dir

        check_out_dir(out, "out")
    doc = council(domain, domain.sample(seed), names, seed=seed)
    if out is not None:
        from fairarena.fsutil import atomic_write_json, output_folder

        config = {"problem": str(path), "rules": list(rules), "seed": seed}
        with output_folder(out, "aggregate council", force=force, config=config) as folder:
            atomic_write_json(folder.path / "council.json", doc)
            atomic_write_json(folder.path / "problem.json", domain.to_dict(domain.sample(seed)))
    if as_json:
        emit_json(doc)
        return
    print_council(doc)


def conflict_command(path: Path, x: str, y: str, points: int, seed: int, out: Path | None, force: bool,
                     as_json: bool) -> None:
    """``fairarena audit conflict --problem FILE``: the frontier between two of the file's metrics."""
    from fairarena.cli_common import check_seed, console, emit_json
    from fairarena.problems.conflict import audit_problem, check_metrics
    from fairarena.problems.domain import load_problem_domain

    check_seed(seed)
    domain = load_problem_domain(path)
    instance = domain.sample(seed)
    check_metrics(instance, x, y, points)

    def work() -> dict[str, Any]:
        return {**audit_problem(instance, x, y, points, seed=seed), "seed": seed}

    if out is None:
        result = work()
    else:
        from fairarena.evaluation.conflict import plot_frontier
        from fairarena.fsutil import atomic_write_json, output_folder
        from fairarena.provenance import run_record

        config = {"command": "audit conflict", "problem": str(path), "x": x, "y": y, "points": points, "seed": seed}
        with output_folder(out, "audit conflict", force=force, config=config) as folder:
            result = work()
            atomic_write_json(folder.path / "result.json", {**result, "provenance": run_record(config, seed)})
            plot_frontier(result, str(folder.path / "frontier.png"))
    if as_json:
        emit_json(result)
        return
    console.print(f"{result['problem']}: {result['x']} vs {result['y']} ({result['method']}), "
                  f"{len(result['points'])} frontier points", highlight=False, markup=False)
    console.print(f"no conflict: {result['no_conflict']}; price of fairness: {result['x']} "
                  f"{result['price_of_fairness_x']:.3f}, {result['y']} {result['price_of_fairness_y']:.3f}",
                  highlight=False, markup=False)
