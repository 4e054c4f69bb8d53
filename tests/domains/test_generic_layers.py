"""The generic layers name no domain, and the packages import each other without a cycle (issue 21).

1. **No module outside a domain's package names a domain.** The domain packages are ``triage``,
   ``tourism``, ``pb`` and ``problems`` (the declared-file domain); ``data/`` holds files only. In every
   other module of ``src/fairarena`` the scan (an AST walk, function-local code included) flags:

   * an import of a domain package (``import fairarena.triage...``, ``from fairarena.tourism... import``),
     or a string naming one of its modules (``"fairarena.triage.cohort"``, ``"fairarena.pb.domain:PB"``:
     a lazy import by name is still an import);
   * a string literal (docstrings and comments are not literals) equal to a registered domain name:
     ``triage``, ``tourism``, ``tourism-lists`` and ``pb`` wherever they appear; ``file`` (also a common
     word) only where it is used as a domain -- compared with (or tested for membership against) an
     expression whose name mentions ``domain`` (``domain == "file"``, ``cfg.domain in ("a", "file")``), as
     the value of a ``domain=`` keyword, a ``"domain":`` key, an assignment to or a parameter default of a
     name mentioning ``domain``, or the argument of ``resolve(...)`` / a call on a ``DOMAINS`` registry.

   The allowed places, listed in :data:`ALLOWED`: the registry entries (``domains/registry.py``, the one
   place the package's domains are named), the top-level CLI's command table (``cli.py`` registers the
   domains' command groups) and the top-level demo table (``demo.py``: ``make demo``'s sections, one per
   domain, as ``module:function`` strings imported when run). A domain is reached everywhere else through the registry
   (``fairarena.domains.registry.resolve``, ``DEFAULT_DOMAIN``) and the protocol.

2. **No import cycle between packages, function-local imports included.** The graph's nodes are the
   packages of ``src/fairarena`` and its top-level modules (``errors``, ``inputs``, ``fsutil``,
   ``registry``, ``lazy``, ``cli_common``, ...); an edge ``a -> b`` is any import statement in a file of
   ``a`` naming a module of ``b``, wherever the statement is, in every file (none is left out). The
   roots, which import much and which nothing imports, are the top-level ``cli.py`` (the command table)
   and the conformance kit (``conformance/kit.py`` and its command, ``conformance/cli.py``); the defaults
   the kit gives a domain live below the studies that use them too (``arena/optimum.py``,
   ``aggregation/council.py``). The test checks that nothing imports a root, then that the whole graph is
   acyclic, printing every cycle with the files and lines behind each edge.
"""

from __future__ import annotations

import pytest

from import_scan import (SRC, all_cycles, in_domain_context, module_of, package_graph, sites_of_imports,
                         string_literals)

#: the packages that are domains (their own code may name themselves and each other's data)
DOMAIN_PACKAGES = ("triage", "tourism", "pb", "problems")
#: folders of data files, not code
DATA = ("data",)
#: the registered names of the package's domains (the registry's entries; checked below)
DOMAIN_NAMES = ("triage", "tourism", "tourism-lists", "pb", "file")
#: names that are also common words: flagged only where used as a domain (module doc)
COMMON_WORDS = ("file",)
#: the only modules outside the domain packages that may name a domain
ALLOWED = {
    "domains/registry.py": "the registry entries: the one place the package's domains are named",
    "cli.py": "the top-level command table: registers the domains' command groups",
    "demo.py": "the top-level demo table (make demo): one section per domain, named as the command table does",
}
#: the roots of the import graph: they import anything, nothing imports them
ROOTS = {
    "cli.py": "the top-level command table",
    "conformance/kit.py": "the conformance kit: runs debates, councils and studies on any domain",
    "conformance/cli.py": "fairarena domain check (the kit's command)",
}


def generic_files() -> list:
    return sorted(p for p in SRC.rglob("*.py")
                  if module_of(p).split("/")[0] not in DOMAIN_PACKAGES + DATA and module_of(p) not in ALLOWED)


def names_domain_module(text: str) -> bool:
    return any(text == f"fairarena.{pkg}" or text.startswith((f"fairarena.{pkg}.", f"fairarena.{pkg}:"))
               for pkg in DOMAIN_PACKAGES)


def domain_sites(path) -> list[str]:
    """Every place ``path`` names a domain (module doc), as ``"file:line: what"``."""
    name = module_of(path)
    out = [f"{name}:{line}: imports {mod}" for line, mod in sites_of_imports(path)
           if mod.split(".")[1] in DOMAIN_PACKAGES]
    for node, parents in string_literals(path):
        text = node.value
        if names_domain_module(text):
            out.append(f"{name}:{node.lineno}: names the module {text!r}")
        elif text in DOMAIN_NAMES and (text not in COMMON_WORDS or in_domain_context(node, parents)):
            out.append(f"{name}:{node.lineno}: the domain name {text!r}")
    return sorted(set(out), key=lambda s: (s.split(":")[0], int(s.split(":")[1]), s))


def test_the_domain_names_are_the_registrys():
    from fairarena.domains.registry import DOMAINS

    own = [e.name for e in DOMAINS.entries() if str(getattr(e, "path", "") or "").startswith("fairarena.")
           or e.name in DOMAIN_NAMES]
    assert set(DOMAIN_NAMES) <= set(DOMAINS.names())
    assert set(own) <= set(DOMAIN_NAMES), "a new package domain: add its name (and package) above"


def test_no_generic_module_names_a_domain():
    sites = [s for p in generic_files() for s in domain_sites(p)]
    print("\n".join(sites))          # the full list (pytest shortens a long assertion message)
    assert not sites, f"{len(sites)} places outside the domain packages name a domain:\n" + "\n".join(sites)


# -- the scan itself (each rule can fire, each exemption holds) ----------------------------------------

def _scan(tmp_path, source: str) -> list[str]:
    import import_scan

    root = tmp_path / "fairarena"
    (root / "generic").mkdir(parents=True)
    path = root / "generic" / "mod.py"
    path.write_text(source, encoding="utf-8")
    old = import_scan.SRC
    import_scan.SRC = root
    try:
        return [s.split(": ", 1)[1] for s in domain_sites(path)]
    finally:
        import_scan.SRC = old


def test_the_scan_flags_imports_names_and_module_strings(tmp_path):
    src = '''"""A docstring naming triage and 'tourism' is fine."""
def f(domain):
    """triage"""
    from fairarena.triage.cohort import load_cohort   # function-local
    import fairarena.pb.domain
    x = "tourism-lists"
    if domain == "file":
        return resolve("file")
    return lazy("fairarena.tourism.domain:TOURISM"), {"domain": "file"}, g(domain="file")
def g(path="file", domain_name="file"):
    return open(path), "pb" + "x"
'''
    assert _scan(tmp_path, src) == [
        "imports fairarena.triage.cohort", "imports fairarena.pb.domain", "the domain name 'tourism-lists'",
        "the domain name 'file'", "the domain name 'file'",
        "names the module 'fairarena.tourism.domain:TOURISM'", "the domain name 'file'",   # line 9 (both, once)
        "the domain name 'file'", "the domain name 'pb'"]                                    # domain_name=, "pb"


def test_the_word_file_alone_is_not_a_domain(tmp_path):
    src = '''def f(kind, path):
    if kind == "file":
        return {"source": "file", "name": "file"}
    return open(path, mode="r"), ["file", "folder"], key("file")
'''
    assert _scan(tmp_path, src) == []


# -- the package import graph ----------------------------------------------------------------------

def test_nothing_imports_a_root():
    importers = []
    for path in sorted(SRC.rglob("*.py")):
        for line, mod in sites_of_imports(path):
            target = mod.removeprefix("fairarena.").replace(".", "/") + ".py"
            if target in ROOTS and module_of(path) not in ROOTS:
                importers.append(f"{module_of(path)}:{line} imports {mod}")
    assert not importers, "\n".join(importers)


def describe(graph: dict, parts: list[str]) -> str:
    lines = [f"cycle among {', '.join(parts)}:"]
    for a in parts:
        for b in parts:
            if b in graph.get(a, {}):
                where = graph[a][b]
                lines.append(f"  {a} -> {b}: {', '.join(where[:4])}{' ...' if len(where) > 4 else ''}")
    return "\n".join(lines)


def test_no_import_cycle_between_packages():
    graph = package_graph()
    cycles = all_cycles(graph)
    print("\n".join(describe(graph, c) for c in cycles))
    assert not cycles, "\n".join(describe(graph, c) for c in cycles)


def test_the_graph_sees_function_local_imports_and_the_cycle_finder_finds_one():
    graph = package_graph()
    # the CLI table imports the command modules inside functions or at the top: either way an edge
    assert "aggregation" in graph["cli"] or "aggregation" in graph["fairarena"] or any(
        "aggregation" in e for e in graph.values())
    # domains/protocol.py imports the allocation problem inside a function
    assert any(w.startswith("domains/protocol.py") for w in graph["domains"]["allocation"])
    toy = {"a": {"b": ["a/x.py:1"]}, "b": {"c": ["b/y.py:2"]}, "c": {"a": ["c/z.py:3"]}, "d": {"a": ["d/w.py:4"]}}
    assert all_cycles(toy) == [["a", "b", "c"]]
    assert all_cycles({"a": {"b": []}, "b": {}}) == []


@pytest.mark.parametrize("root", sorted(ROOTS))
def test_the_roots_exist(root):
    assert (SRC / root).is_file()


# -- the generic allocation problem knows nothing of survival or urgency -------------------------------

def seats(**welfare):
    """5 students, 3 seats of 2 kinds (the issue's new user): no welfare data unless given."""
    import numpy as np

    from fairarena.allocation.problem import AllocationProblem

    return AllocationProblem(ids=[f"s{i}" for i in range(5)], resources=["STEM", "Arts"], capacity=[2, 1],
                             need=np.array([[1, 0], [1, 1], [0, 1], [1, 0], [1, 1]], float),
                             indivisible=[True, True], **welfare)


def neutral(n: int) -> dict:
    """The neutral values domains used to pass (survival 1, urgency 0, uniform weights)."""
    import numpy as np

    return dict(survival=np.ones(n), urgency=np.zeros(n), disadvantage=np.full(n, 1 / n),
                vulnerability=np.full(n, 1 / n))


def test_a_generic_problem_needs_no_welfare_data_and_no_gini_resource():
    p = seats()
    assert (p.survival, p.urgency, p.disadvantage, p.vulnerability, p.gini_resource) == (None,) * 5
    assert not p.has_welfare and seats(**neutral(5)).has_welfare


@pytest.mark.parametrize("metric, field", [("esg", "survival"), ("dw_esg", "disadvantage"),
                                           ("vwci", "vulnerability"), ("gini", "gini_resource")])
def test_the_metrics_that_read_welfare_data_refuse_a_problem_without_it(metric, field):
    import numpy as np

    from fairarena.allocation.metrics import METRICS, need_satisfaction
    from fairarena.errors import InputError

    p = seats()
    x = p.zeros()[None]
    with pytest.raises(InputError) as e:
        METRICS.get(metric).fn(p, x, need_satisfaction(p, x))
    assert e.value.field == field and "\n" not in str(e.value)
    # with the data the same metric is a number
    q = seats(**neutral(5), gini_resource="STEM")
    assert np.isfinite(METRICS.get(metric).fn(q, q.need[None], need_satisfaction(q, q.need[None]))).all()


def test_compute_metrics_and_the_welfare_frameworks_refuse_with_one_line():
    from fairarena.allocation.frameworks import FRAMEWORKS
    from fairarena.allocation.metrics import compute_metrics
    from fairarena.errors import InputError

    p = seats()
    with pytest.raises(InputError, match=r"^survival = None: a problem with survival data"):
        compute_metrics(p, p.zeros())
    for f, field in (("utilitarian", "survival"), ("prioritarian", "disadvantage"), ("care", "vulnerability"),
                     ("libertarian", "urgency")):
        with pytest.raises(InputError) as e:
            FRAMEWORKS.get(f).solve(p)
        assert e.value.field == field, f


@pytest.mark.parametrize("framework", ["rawlsian", "egalitarian"])
def test_the_cnss_frameworks_solve_a_generic_problem_as_they_did_with_neutral_values(framework):
    # their ESG tie-break is the plain sum of CNSS without survival: what it was with every survival 1
    import numpy as np

    from fairarena.allocation.frameworks import FRAMEWORKS

    x = FRAMEWORKS.get(framework).solve(seats())
    y = FRAMEWORKS.get(framework).solve(seats(**neutral(5)))
    assert np.array_equal(x, y)
    assert x.sum(axis=0).tolist() <= [2.0, 1.0] and x.sum() > 0


def test_the_old_default_gini_resource_and_bad_welfare_values_still_hold():
    import numpy as np

    from fairarena.allocation.problem import AllocationProblem
    from fairarena.errors import InputError

    p = AllocationProblem(ids=["a", "b"], resources=["ICU", "Nursing"], capacity=[1, 2],
                          need=np.ones((2, 2)), indivisible=[True, False])
    assert p.gini_resource == "Nursing" and p.gini_index == 1
    with pytest.raises(InputError, match="gini_resource = 'Nursing'"):
        seats(gini_resource="Nursing")
    with pytest.raises(InputError, match="^survival = "):
        seats(survival=[2.0] * 5)
    with pytest.raises(InputError, match="^disadvantage = .*summing to 1"):
        seats(disadvantage=[1.0] * 5)
