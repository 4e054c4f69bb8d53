"""docs/domains.md's "A domain in a file" and the README's problem-file subsection run as written."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import tomllib
from pathlib import Path

import pytest

from fairarena.errors import InputError
from fairarena.problems.schema import parse_problem

from .conftest import ROOT, SEATS, cli

DOC = ROOT / "docs" / "domains.md"
README = ROOT / "README.md"


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start:end]


def doc_parts() -> tuple[str, str, str, list[str]]:
    """(the problem file, the python block, its shown output, the shown error lines) of the section."""
    sec = section(DOC.read_text(encoding="utf-8"), "## A domain in a file")
    toml = re.search(r"<!-- problem-file -->\n```toml\n(.*?)```", sec, flags=re.S).group(1)
    code, shown = re.search(r"```python\n(.*?)```\n\n```\n(.*?)```", sec, flags=re.S).groups()
    errors = re.findall(r"^error: (.*)$", sec, flags=re.M)
    return toml, code, shown, errors


def test_the_file_and_the_python_block_run_as_shown(tmp_path, monkeypatch):
    toml, code, shown, _ = doc_parts()
    (tmp_path / "clinic.toml").write_text(toml, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, str(DOC), "exec"), {})    # noqa: S102 - the document's own example
    assert buf.getvalue() == shown


def test_the_shown_errors_are_the_validators():
    toml, _, _, errors = doc_parts()
    edits = [lambda d: d["recipients"][3]["needs"].update(Nursing=1),
             lambda d: d["resources"]["Morning"].update(capacity=-1),
             lambda d: d["metrics"]["towns"].update(kind="utility"),
             lambda d: d["recipients"][4].update(id="A"),
             lambda d: d["metrics"]["towns"].update(groups=["North", "East"])]
    assert len(errors) == len(edits)
    for edit, shown in zip(edits, errors):
        data = tomllib.loads(toml)
        edit(data)
        with pytest.raises(InputError) as exc:
            parse_problem(data, "clinic.toml")
        assert str(exc.value) == shown


def test_the_commands_of_the_section_run(tmp_path):
    toml, _, _, _ = doc_parts()
    (tmp_path / "clinic.toml").write_text(toml, encoding="utf-8")
    sec = section(DOC.read_text(encoding="utf-8"), "## A domain in a file")
    block = re.search(r"### The commands\n\n```console\n(.*?)```", sec, flags=re.S).group(1)
    for line in block.splitlines():
        args = line.split("#")[0].split()
        assert args[0] == "fairarena"
        if any(a.startswith("openai:") for a in args):   # a language model: run with the scripted default here
            args = [a for a in args if a not in ("--model",) and not a.startswith("openai:")]
        proc = cli(*args[1:], cwd=tmp_path)
        assert proc.returncode == 0, (line, proc.stderr)


def test_the_readme_example_runs_as_a_new_user_would(tmp_path):
    sec = section(README.read_text(encoding="utf-8"), "### Your own allocation problem in a file")
    block = re.search(r"```console\n(.*?)```", sec, flags=re.S).group(1)
    lines = [ln.split("#")[0].strip() for ln in block.splitlines()]
    assert lines[0] == "cp src/fairarena/data/problems/school_seats.toml seats.toml"
    shutil.copy(SEATS, tmp_path / "seats.toml")
    for line in lines[1:]:
        args = line.split()
        assert args[0] == "fairarena"
        proc = cli(*args[1:], cwd=tmp_path)
        assert proc.returncode == 0, (line, proc.stderr)
    assert (tmp_path / "out" / "seats" / "transcript.jsonl").is_file()
