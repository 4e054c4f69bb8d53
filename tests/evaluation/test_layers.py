"""The evaluation package sits above aggregation and below the domains: aggregation never imports it and
it imports no domain package, function-local imports included (these two cycles, aggregation <->
evaluation and tourism <-> evaluation, were hidden inside functions; the conflict audit reads a triage
cohort through the domain registry)."""

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
    # the conflict audit reaches the domain registry inside a function: the scan must see it
    assert "fairarena.domains.registry" in imported("evaluation")["evaluation/conflict.py"]


def test_evaluation_imports_no_domain_package():
    for pkg in ("fairarena.triage", "fairarena.tourism", "fairarena.pb", "fairarena.problems"):
        assert not offenders("evaluation", pkg), pkg


def test_aggregation_imports_no_domain_package():
    # the domains sit above aggregation (triage's domain builds its council profile with it), so the
    # generic layer must not import them back: it reaches a cohort through the domain registry. (Before
    # issue 21 the rule ran the other way, triage never importing aggregation, to break the same cycle.)
    for pkg in ("fairarena.triage", "fairarena.tourism", "fairarena.pb", "fairarena.problems"):
        assert not offenders("aggregation", pkg), pkg
