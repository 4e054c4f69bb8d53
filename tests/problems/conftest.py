"""Problem files for the tests: a tiny one whose optima are known by hand, written as TOML on demand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "src" / "fairarena" / "data" / "problems"
SEATS = EXAMPLES / "school_seats.toml"
VACCINES = EXAMPLES / "vaccine_doses.toml"
ENTRY = "import sys; sys.argv[0] = 'fairarena'; from fairarena.cli import main; main()"

# Four recipients, two groups (A: r1 r2, B: r3 r4), one resource of capacity 2, each needing 1 unit.
TINY = '''
[problem]
title = "Tiny"
satisfaction = "fractional"

[presentation]
item = "pupil"
show = ["score", "team"]

[resources.Seat]
capacity = 2
divisible = {divisible}

[[recipients]]
id = "r1"
score = 10
team = "A"
needs = {{ Seat = 1 }}

[[recipients]]
id = "r2"
score = 40
team = "A"
needs = {{ Seat = 1 }}

[[recipients]]
id = "r3"
score = 30
team = "B"
needs = {{ Seat = 1 }}

[[recipients]]
id = "r4"
score = 20
team = "B"
needs = {{ Seat = 1 }}

[metrics.merit]
kind = "sum"
weights = "score"

[metrics.placed]
kind = "sum"

[metrics.teams]
kind = "group_min"
group = "team"

[metrics.team_a]
kind = "sum"
weights = {{ attribute = "team", values = {{ A = 1 }}, default = 0 }}

[metrics.worst]
kind = "min"

[metrics.inequality]
kind = "gini"

[metrics.spread]
kind = "variance"

{stakeholders}
'''

STAKEHOLDERS = '''
[[stakeholders]]
name = "merit"
objective = "merit"

[[stakeholders]]
name = "teams"
objective = ["teams", "merit"]
'''


def tiny_text(divisible: bool = False, stakeholders: str = STAKEHOLDERS, capacity: float | None = None) -> str:
    text = TINY.format(divisible=str(divisible).lower(), stakeholders=stakeholders)
    if capacity is not None:
        text = text.replace("capacity = 2", f"capacity = {capacity}")
    return text


@pytest.fixture
def tiny(tmp_path):
    """``tiny(divisible=False, stakeholders=..., capacity=None) -> path`` of a written tiny problem file."""
    def write(**kw) -> Path:
        path = tmp_path / f"tiny{len(list(tmp_path.glob('tiny*')))}.toml"
        path.write_text(tiny_text(**kw), encoding="utf-8")
        return path
    return write


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``fairarena ARGS`` in a fresh process."""
    return subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, cwd=cwd, timeout=600)
