"""The examples of README.md and docs/ run as written and print what they show, so they cannot rot.

The convention (also for new documents):

* every ```` ```python ```` block runs, in document order, in one namespace per document, in a fresh process
  whose working folder is an empty temporary one; a block may use what an earlier block of the same
  document defined;
* a ```` ```text ```` block right after a python block (only blank lines between) is that block's printed
  output: compared line by line (trailing spaces ignored; ``...`` in a shown line matches anything);
* a ```` ```console ```` block whose lines start with ``$ `` runs: each ``$ fairarena ...`` command through
  the real command line (exit code 0), the lines up to the next ``$`` its output: each shown line must
  appear in the output, in order (``...`` matches anything; a shown JSON object with ``...`` is checked
  for its keys). A console block without ``$`` lines (a list of commands to read) does not run;
* ``<!-- not-run: REASON -->`` on the line before a block's fence skips it (a sketch with placeholders, a
  model server, minutes of work); the reason is required;
* a block starting with ``>>>`` is a doctest (ELLIPSIS, NORMALIZE_WHITESPACE) in the document's namespace.

Sections already run by their own tests are left to them (``COVERED``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "notions").glob("*.md"))]
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(\S.*?)\s*-->$")
FENCE = re.compile(r"^```(\w*)\s*$")

# (document, marker): the blocks from the marker to the next "## " heading are run by another test
COVERED = {"docs/domains.md": ["<!-- seats-domain -->",     # tests/domains/test_docs.py (its conftest extracts them)
                                "<!-- problem-file -->"]}     # tests/problems/test_docs.py

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "200"}
for _k in ("FORCE_COLOR", "FORCE_TERMINAL"):
    ENV.pop(_k, None)


@dataclass
class Block:
    lang: str
    code: str
    line: int                  # 1-based line of the opening fence
    skip: str | None = None    # the not-run reason
    output: "Block | None" = None


def blocks_of(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, with its not-run reason and its shown output (a text block
    right after a python block)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rel = path.relative_to(ROOT).as_posix()
    covered: list[tuple[int, int]] = []
    for marker in COVERED.get(rel, []):
        start = next(i for i, x in enumerate(lines) if x.strip() == marker)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        covered.append((start, end))
    out: list[Block] = []
    i = 0
    prev_end = -10
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        note = NOT_RUN.match(lines[k].strip()) if k >= 0 else None
        block = Block(m.group(1), "\n".join(lines[i + 1:j]) + "\n", i + 1, note.group(1) if note else None)
        if any(a <= i < b for a, b in covered):
            block.skip = "covered by its own test"
        if (block.lang == "text" and out and out[-1].lang == "python" and k == prev_end
                and out[-1].output is None):
            out[-1].output = block
        else:
            out.append(block)
        prev_end = j
        i = j + 1
    return out


def runnable(block: Block) -> bool:
    if block.skip:
        return False
    if block.lang == "python":
        return True
    return block.lang == "console" and block.code.lstrip().startswith("$ ")


RUNNER = textwrap.dedent(r'''
    import contextlib, doctest, io, json, os, shlex, subprocess, sys, traceback
    steps = json.load(open(sys.argv[1], encoding="utf-8"))
    ns = {"__name__": "__docs__"}
    results = []
    entry = "import sys; sys.argv[0] = 'fairarena'; from fairarena.cli import main; main()"
    for step in steps:
        if step["lang"] == "python":
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf):
                    if step["code"].lstrip().startswith(">>>"):
                        test = doctest.DocTestParser().get_doctest(step["code"], ns, step["where"], None, 0)
                        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
                        runner.run(test, out=buf.write, clear_globs=False)
                        if runner.failures:
                            raise AssertionError("doctest failed:\n" + buf.getvalue())
                    else:
                        exec(compile(step["code"], step["where"], "exec"), ns)
                results.append({"ok": True, "out": buf.getvalue()})
            except BaseException:
                results.append({"ok": False, "out": buf.getvalue(), "error": traceback.format_exc()})
                break
        else:
            outs = []
            for cmd in step["commands"]:
                args = shlex.split(cmd)
                p = subprocess.run([sys.executable, "-c", entry, *args[1:]], capture_output=True, text=True)
                outs.append({"cmd": cmd, "code": p.returncode, "out": p.stdout, "err": p.stderr})
                if p.returncode:
                    break
            results.append({"ok": all(o["code"] == 0 for o in outs) and len(outs) == len(step["commands"]),
                            "runs": outs})
            if not results[-1]["ok"]:
                break
    json.dump(results, open(sys.argv[2], "w", encoding="utf-8"))
''')


def _console_steps(code: str) -> tuple[list[str], list[list[str]]]:
    """The ``$`` commands of a console block and the lines shown after each."""
    cmds: list[str] = []
    shown: list[list[str]] = []
    for line in code.splitlines():
        if line.startswith("$ "):
            cmds.append(line[2:].split("  #")[0].strip())
            shown.append([])
        elif line.strip() and cmds:
            shown[-1].append(line.rstrip())
    return cmds, shown


def _ellipsis(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(p) for p in pattern.split("...")), flags=re.S)


def _keys(obj) -> set[str]:
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in _keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in _keys(v)}
    return set()


def check_output(shown: list[str], actual: str, where: str) -> None:
    """Python block: every line as shown (``...`` matches anything), nothing more, nothing less."""
    got = [x.rstrip() for x in actual.rstrip("\n").splitlines()]
    assert len(got) == len(shown), f"{where}: shows {len(shown)} lines, printed {len(got)}:\n{actual}"
    for s, g in zip(shown, got):
        assert _ellipsis(s).fullmatch(g), f"{where}: shows\n  {s}\nprinted\n  {g}"


def check_console(shown: list[str], run: dict, where: str) -> None:
    """Console command: each shown line appears in the output, in order."""
    text = run["out"] + run["err"]
    lines = [x.rstrip() for x in text.splitlines()]
    pos = 0
    for s in shown:
        if s.startswith("{") and "..." in s:
            doc = json.loads(run["out"])
            missing = set(re.findall(r'"([\w:-]+)":', s)) - _keys(doc)
            assert not missing, f"{where}: `{run['cmd']}` shows keys its JSON lacks: {sorted(missing)}"
            continue
        pat = _ellipsis(s)
        hit = next((i for i in range(pos, len(lines)) if pat.fullmatch(lines[i])), None)
        assert hit is not None, f"{where}: `{run['cmd']}` shows\n  {s}\nnot in its output:\n{text}"
        pos = hit + 1


@pytest.mark.parametrize("doc", DOCS, ids=[d.relative_to(ROOT).as_posix() for d in DOCS])
def test_the_examples_run_as_shown(doc: Path, tmp_path: Path) -> None:
    rel = doc.relative_to(ROOT).as_posix()
    blocks = [b for b in blocks_of(doc) if runnable(b)]
    if not blocks:
        pytest.skip(f"{rel}: no runnable example")
    steps = []
    for b in blocks:
        where = f"{rel}:{b.line}"
        if b.lang == "python":
            steps.append({"lang": "python", "code": b.code, "where": where})
        else:
            steps.append({"lang": "console", "commands": _console_steps(b.code)[0], "where": where})
    for s in steps:
        if s["lang"] == "console":
            bad = [c for c in s["commands"] if not c.startswith("fairarena ")]
            assert not bad, f"{s['where']}: only `$ fairarena ...` commands run; mark the block not-run: {bad}"
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "steps.json").write_text(json.dumps(steps), encoding="utf-8")
    (tmp_path / "runner.py").write_text(RUNNER, encoding="utf-8")
    subprocess.run([sys.executable, str(tmp_path / "runner.py"), str(tmp_path / "steps.json"),
                    str(tmp_path / "results.json")], cwd=work, env=ENV, check=True, timeout=300)
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    for b, s, r in zip(blocks, steps, results):
        if s["lang"] == "python":
            assert r["ok"], f"{s['where']} failed:\n{r['error']}"
            if b.output is not None:
                check_output([x.rstrip() for x in b.output.code.rstrip("\n").splitlines()], r["out"], s["where"])
        else:
            for run in r["runs"]:
                assert run["code"] == 0, f"{s['where']}: `{run['cmd']}` exit {run['code']}:\n{run['err']}"
            for shown, run in zip(_console_steps(b.code)[1], r["runs"]):
                check_console(shown, run, s["where"])
    assert len(results) == len(steps)


def test_the_convention_is_applied():
    """The parser sees what the documents hold: README's library examples run and show their output, a
    not-run block names its reason, and the seats section is left to its own test."""
    readme = blocks_of(ROOT / "README.md")
    py = [b for b in readme if b.lang == "python"]
    assert len(py) >= 4 and all(runnable(b) for b in py)
    assert sum(b.output is not None for b in py) >= 3
    assert any(b.lang == "console" and runnable(b) for b in readme)       # the tiny study, made by the CLI
    assert not [b for b in readme if b.lang == "console" and "make demo" in b.code and runnable(b)]
    seats = [b for b in blocks_of(ROOT / "docs" / "domains.md") if "class Seats" in b.code]
    assert seats and seats[0].skip == "covered by its own test"
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        assert not re.search(r"<!--\s*not-run\s*(:\s*)?-->", text), f"{doc}: a not-run block without its reason"
