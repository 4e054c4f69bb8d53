"""The thin, fast CLI: what `fairarena --help` and importing a package load, and the command table."""

from __future__ import annotations

import os
import subprocess
import sys

import typer

from fairarena import cli

HEAVY = ("numpy", "numba", "scipy", "pandas", "pyarrow", "pydantic", "torch", "chromadb", "llama_cpp",
         "matplotlib", "typer.rich_utils")
ENTRY = "import sys; sys.argv[0] = 'fairarena'; from fairarena.cli import main; main()"


def _loaded_modules(code: str, *args: str) -> tuple[set[str], str]:
    probe = code
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", probe, *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    names = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return names, proc.stdout


def test_command_table_matches_the_modules():
    """COMMANDS (used for the top-level --help without importing anything) says what the modules register."""
    seen: dict[str, str] = {}
    for module in cli.COMMAND_MODULES:
        sub = typer.Typer()
        __import__(module, fromlist=["register"]).register(sub)
        for name, cmd in typer.main.get_group(sub).commands.items():
            assert name not in seen, f"{name} registered by {seen.get(name)} and {module}"
            seen[name] = module
            first = (cmd.help or "").strip().splitlines()[0].strip()
            assert cli.COMMANDS.get(name, ("", ""))[1] == first, f"update cli.COMMANDS[{name!r}]: {first!r}"
    assert {k: v[0] for k, v in cli.COMMANDS.items()} == seen


def test_help_lists_every_command_and_imports_nothing_heavy():
    names, out = _loaded_modules(ENTRY, "--help")
    for name in cli.COMMANDS:
        assert f"  {name} " in out
    assert not [m for m in names if m.split(".")[0] in HEAVY or m in HEAVY]
    assert not [m for m in names if m.startswith("fairarena.") and m not in ("fairarena.cli", "fairarena.errors")]


PACKAGES = ("bandit", "triage", "arena", "allocation", "llm", "rag", "preferences", "learners", "experiments", "sweep",
            "report")


def test_importing_the_packages_loads_nothing_heavy():
    names, _ = _loaded_modules("; ".join(f"import fairarena.{p}" for p in PACKAGES))
    assert not sorted(m for m in names if m.split(".")[0] in HEAVY)


def test_unknown_command_is_a_usage_error():
    proc = subprocess.run([sys.executable, "-c", ENTRY, "nosuch"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 2 and "nosuch" in proc.stderr
