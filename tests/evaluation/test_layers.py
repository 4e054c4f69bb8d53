"""The evaluation package sits above aggregation and below the domains: aggregation never imports it and
it imports no domain package but the triage cohort reader, function-local imports included (these two
cycles, aggregation <-> evaluation and tourism <-> evaluation, were hidden inside functions)."""

from __future__ import annotations

from import_scan import imports_of


def imported(package: str) -> dict[str, set[str]]:
    """Each module of ``package`` -> the modules and the ``module.name``s it imports."""
    return imports_of(package, names=True)


def offenders(package: str, forbidden: str) -> list[str]:
    return sorted(f"{mod}: {name}" for mod, names in imported(package).items() for name in names
                  if name == forbidden or name.startswith(forbidden + "."))


def test_aggregation_never_imports_evaluation():
    assert not offenders("aggregation", "fairarena.evaluation")


def test_evaluation_never_imports_tourism():
    assert not offenders("evaluation", "fairarena.tourism")


def test_the_scan_sees_function_local_imports():
    # the conflict audit reads triage cohorts inside a function: the scan must see it
    assert any(n.startswith("fairarena.triage") for n in imported("evaluation")["evaluation/conflict.py"])


def test_triage_never_imports_aggregation():
    # aggregation reads and samples triage cohorts; triage's optimal command took the --egalitarian help
    # and warning from aggregation's CLI (a cycle through triage/cli.py): both live in cli_common now
    assert not offenders("triage", "fairarena.aggregation")
