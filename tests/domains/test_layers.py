"""fairarena.domains (protocol and registry) sits below every layer that uses it: it imports no package that
runs debates, councils or studies, function-local imports included; the kit that runs them
(fairarena.conformance) is imported by nothing in the package but the CLI's command table, and the defaults
it gives a domain (the optimum agents, the candidate council) live in the arena and aggregation, below the
studies that use them too."""

from __future__ import annotations

from import_scan import SRC, imports_of


def packages_imported(package: str) -> set[str]:
    return {n.split(".")[1] for names in imports_of(package).values() for n in names} - {package}


def test_domains_imports_only_the_core_modules():
    # allocation: the AllocationProblem's feasibility check; the rest are top-level modules, not packages
    assert packages_imported("domains") <= {"allocation", "errors", "registry", "fsutil", "inputs", "lazy"}


def test_no_package_imports_the_kit():
    users = sorted(mod for pkg in (p.name for p in SRC.iterdir() if p.is_dir() and p.name != "conformance")
                   for mod, names in imports_of(pkg).items()
                   if any(n.startswith("fairarena.conformance") for n in names))
    assert users == []


def test_the_kits_defaults_import_no_study_and_no_kit():
    for pkg, mod in (("arena", "arena/optimum.py"), ("aggregation", "aggregation/council.py")):
        names = imports_of(pkg)[mod]
        assert not {n for n in names if n.startswith(("fairarena.study", "fairarena.experiments",
                                                      "fairarena.conformance"))}, mod


def test_the_scan_sees_function_local_imports():
    assert "fairarena.aggregation.rules" in imports_of("aggregation")["aggregation/council.py"]
    assert "fairarena.allocation.problem" in imports_of("domains")["domains/protocol.py"]
