"""The domain registry: lazy entries, the entry-point group, and domains found in a fresh process."""

from __future__ import annotations

import doctest
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fairarena.errors import InputError
from fairarena.registry import LazyObject, Registry, load_object

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def _run(code: str, *args: str, extra_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(ENV)
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(extra_path), env["PYTHONPATH"]])
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300)


# -- a fresh process finds every built-in domain ---------------------------------------------------------

def test_a_tourism_transcript_is_rescored_in_a_fresh_process(tmp_path):
    """The transcript names its domain; recompute_metrics in a process that never imported tourism finds it
    (it failed with "domain = 'tourism': expected one of triage" when tourism registered on import)."""
    from fairarena.tourism.destination import generate
    from fairarena.tourism.decisions import candidates
    from fairarena.tourism.negotiator import scripted_negotiate
    from fairarena.tourism.stakeholders import parse_stakeholders

    d = generate(0, 12)
    ss = parse_stakeholders(["tourists:family", "residents", "local-business", "destination"])
    res = scripted_negotiate(d, ss, candidates(d, ss, "flows"), "flows", rounds=1, transcript=tmp_path / "t.jsonl")
    assert res.status == "ok"
    code = ("import json, sys; from fairarena.arena.transcript import read_transcript, recompute_metrics; "
            "checks = recompute_metrics(read_transcript(sys.argv[1])); "   # NaN == NaN through JSON
            "print(len(checks), all(json.dumps(c['recorded'], sort_keys=True) == json.dumps(c['recomputed'], "
            "sort_keys=True) for c in checks))")
    proc = _run(code, str(tmp_path / "t.jsonl"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    n, same = proc.stdout.split()
    assert int(n) >= 4 + 1 and same == "True"     # every round proposal, final and the joint


def test_registered_names_are_listed_without_importing_them():
    code = ("import sys; from fairarena.domains import DOMAINS; names = DOMAINS.names(); "
            "print(','.join(names)); print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pydantic') "
            "or m.startswith(('fairarena.tourism', 'fairarena.triage', 'fairarena.arena')))); "
            "t = DOMAINS.get('tourism'); print(t.name, type(t).__module__, 'fairarena.tourism.domain' in sys.modules)")
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    names, heavy, loaded = proc.stdout.splitlines()
    assert names.split(",")[:3] == ["triage", "tourism", "tourism-lists"]
    assert heavy == "[]"
    assert loaded == "tourism fairarena.tourism.domain True"


def test_arena_registry_is_the_domains_registry():
    from fairarena.arena.domain import DOMAINS as arena_domains
    from fairarena.arena.domain import TRIAGE
    from fairarena.domains import DOMAINS

    assert arena_domains is DOMAINS
    assert DOMAINS.get("triage") is TRIAGE
    assert DOMAINS.get("tourism").name == "tourism" and DOMAINS.get("tourism-lists").decision == "lists"
    with pytest.raises(InputError, match="domain = 'nosuch': expected one of triage, tourism, tourism-lists"):
        DOMAINS.get("nosuch")


# -- lazy entries ---------------------------------------------------------------------------------------

def test_a_lazy_entry_is_imported_on_first_use_and_then_kept():
    reg: Registry = Registry("thing")
    reg.add_lazy("join", "os.path:join", title="join", kind="function")
    reg.add("two", 2)
    assert reg.names() == ("join", "two") and reg.names(kind="function") == ("join",)
    assert isinstance(reg.entry("join").obj, LazyObject) and not reg.is_loaded("join") and reg.is_loaded("two")
    assert reg["join"] is os.path.join and reg.get("join") is os.path.join and reg.is_loaded("join")
    assert reg.entry("join").title == "join" and reg.entry("join").kind == "function"
    with pytest.raises(ValueError, match="already registered"):
        reg.add_lazy("join", "os.path:split")


@pytest.mark.parametrize("path, expected", [
    ("os.path", "MODULE:OBJECT"),
    ("a:b:c", "MODULE:OBJECT"),
    ("no_such_module_xyz:THING", "an importable module (ModuleNotFoundError: No module named 'no_such_module_xyz')"),
    ("os.path:no_such_thing", "an object 'no_such_thing' in module 'os.path' (it has no 'no_such_thing')"),
])
def test_a_bad_path_is_an_input_error_naming_the_field(path, expected):
    with pytest.raises(InputError) as exc:
        load_object(path, "target")
    assert exc.value.field == "target" and exc.value.value == path and expected in exc.value.expected


def test_a_lazy_entry_that_fails_to_import_names_its_entry():
    reg: Registry = Registry("domain")
    reg.add_lazy("broken", "no_such_module_xyz:DOMAIN")
    with pytest.raises(InputError) as exc:
        reg.get("broken")
    assert str(exc.value).startswith("domain 'broken' = 'no_such_module_xyz:DOMAIN': an importable module")
    assert not reg.is_loaded("broken")   # still lazy: a later fix (e.g. an installed package) is picked up


def test_the_registry_module_examples_run():
    import fairarena.registry as module

    result = doctest.testmod(module)
    assert result.attempted >= 8 and result.failed == 0


# -- the entry-point group, with a real installed distribution -----------------------------------------------

PLUGIN = '''
class Toy:
    name = "toyplug"

DOMAIN = Toy()
HIDDEN = Toy()
'''


def _install(site: Path, entry_points: str, module: str = PLUGIN, dist: str = "toyplug") -> None:
    site.mkdir(exist_ok=True)
    (site / "toyplug.py").write_text(textwrap.dedent(module))
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))


def test_an_installed_distribution_registers_a_domain_through_the_entry_point_group(tmp_path):
    _install(tmp_path, """
        [fairarena.domains]
        toyplug = toyplug:DOMAIN
        triage = toyplug:HIDDEN
        """)
    code = ("import sys, warnings; warnings.simplefilter('error'); from fairarena.domains import DOMAINS; "
            "print('toyplug' in sys.modules); d = DOMAINS.get('toyplug'); print(d.name, 'toyplug' in sys.modules); "
            "print(DOMAINS.entry('toyplug').meta['source'], ','.join(DOMAINS.names()))")
    proc = _run(code, extra_path=tmp_path)
    # a distribution cannot replace a built-in domain: listing warns about the hidden entry point
    assert proc.returncode == 1 and "'triage' of entry point toyplug:HIDDEN (toyplug) is hidden" in proc.stderr
    code = code.replace("warnings.simplefilter('error')", "warnings.simplefilter('ignore')")
    proc = _run(code + "; print(type(DOMAINS.get('triage')).__name__, DOMAINS.shadowed)", extra_path=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["False", "toyplug True", "toyplug triage,tourism,tourism-lists,file,pb,toyplug",
                                        "TriageDomain [('triage', 'toyplug:HIDDEN')]"]
