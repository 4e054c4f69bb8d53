"""Reading .pb files: the three vote types, attributes, and bad files refused one line naming file, line, field."""


import numpy as np
import pytest

from fairarena.errors import InputError
from fairarena.pb.domain import example_path
from fairarena.pb.election import read_election

GOOD = """META
key;value
budget;100
vote_type;approval
PROJECTS
project_id;cost;name;selected
1;60;A;1
2;50;B;0
3;30;C;1
VOTES
voter_id;age;sex;vote
1;25;K;1,3
2;70;M;2
"""


def test_reads_approval_with_attributes(pb_file):
    e = read_election(pb_file(GOOD))
    assert e.project_ids == ("1", "2", "3") and e.budget == 100 and e.selected == ("1", "3")
    assert e.scores.tolist() == [[1, 0, 1], [0, 1, 0]]
    assert e.voters[0] == {"age": "25", "sex": "K"} and e.projects[0]["name"] == "A"


def test_shipped_vote_types():
    w = read_election(example_path("wieliczka"))
    assert (w.n_projects, w.n_voters, w.budget, w.rule) == (64, 6586, 1_000_000, "equalshares/add1")
    k = read_election(example_path("krakow"))          # ordinal: positional points 3, 2, 1
    assert k.vote_type == "ordinal" and sorted(set(k.scores[k.scores > 0].tolist())) == [1, 2, 3]
    # Krakow's own score column is the sum of these points
    assert [int(p["score"]) for p in k.projects] == k.scores.sum(axis=0).astype(int).tolist()
    g = read_election(example_path("gdansk"))
    assert g.vote_type == "cumulative" and g.scores.max() > 1
    f = read_election(example_path("falenica"))
    assert {"age", "sex"} <= set(f.voters[0])


BAD = [
    (lambda t: t.replace("VOTES\n", "BALLOTS\nx;y\nVOTES\n"), "e.pb:10: section = 'BALLOTS': one of META, PROJECTS, VOTES"),
    (lambda t: t.replace("2;70;M;2", "2;70;M;2,9"), "e.pb:13: vote = '9': a project of the PROJECTS section"),
    (lambda t: t.replace("2;50;B;0", "2;-50;B;0"), "e.pb:8: cost = '-50': a non-negative cost (project 2)"),
    (lambda t: t.replace("budget;100", "budget;20"), "e.pb:3: budget = '20': at least the cheapest project's cost "
                                                    "(3 costs 30, line 9): a valid but empty problem"),
    (lambda t: t.split("VOTES\n")[0] + "VOTES\nvoter_id;vote\n", "e.pb:10: VOTES = 0: at least one vote"),
]


@pytest.mark.parametrize("edit, where", BAD)
def test_bad_files_one_line(pb_file, edit, where):
    with pytest.raises(InputError) as exc:
        read_election(pb_file(edit(GOOD)))
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(where), msg


@pytest.mark.parametrize("edit, where", BAD)
def test_cli_bad_file_exit_2_nothing_written(pb_file, tmp_path, edit, where):
    """Each bad file of the issue through `pb compare --out --plot` and `pb audit --out` (the bad file beside a
    good one): one line naming the file, the line and the field, exit 2, nothing written."""
    from typer.testing import CliRunner

    from fairarena.cli import app

    d = tmp_path / "in"
    d.mkdir()
    (d / "a_good.pb").write_text(GOOD, encoding="utf-8")
    bad = d / "e.pb"
    bad.write_text(edit(GOOD), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    runner = CliRunner()
    for args in (["pb", "compare", "--file", str(bad), "--out", str(out / "c.json"), "--plot", str(out / "c.png")],
                 ["pb", "audit", str(d), "--out", str(out / "a.json")]):
        r = runner.invoke(app, args)
        lines = r.output.strip().splitlines()
        assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {where}"), (args, r.output)
        assert list(out.iterdir()) == []
