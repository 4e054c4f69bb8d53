"""fairarena.problems is a domain package: no other package imports it (function-local imports included; the
commands reach its --problem forms through the domain registry's strings), and it imports no other domain,
no study code and not the conformance kit."""

from __future__ import annotations

from import_scan import SRC, imports_of


def test_no_other_package_imports_the_problems_package():
    users = sorted(mod for pkg in (p.name for p in SRC.iterdir() if p.is_dir() and p.name != "problems")
                   for mod, names in imports_of(pkg).items() if any(n.startswith("fairarena.problems") for n in names))
    assert users == []


def test_the_problems_package_imports_no_other_domain_and_no_study_code():
    used = {n.split(".")[1] for names in imports_of("problems").values() for n in names}
    assert not used & {"triage", "tourism", "conformance", "experiments", "study"}, used
    assert {"allocation", "arena", "aggregation", "domains"} <= used     # the scan sees the function-local imports
