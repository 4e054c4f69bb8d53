"""The audit at scale (fairarena.pb.audit, `fairarena pb audit`), the minimum group size, and Phragmén on
distinct ballots against pabutools on the plain profile."""

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fairarena.cli import app
from fairarena.pb import rules
from fairarena.pb.audit import _tradeoffs, audit, audit_election, collect_files
from fairarena.pb.axioms import check_election
from fairarena.pb.domain import example_path
from fairarena.pb.election import read_election
from fairarena.pb.fair import feasible_sets
from fairarena.pb.groups import make_groups

SMALL = Path("/work/shared/data/pabulib/small")
runner = CliRunner()


def test_phragmen_distinct_ballots_equal_plain_profile():
    from pabutools.election import ApprovalBallot, ApprovalProfile
    from pabutools.rules import sequential_phragmen

    for name in ("falenica", "gdansk", "wesola"):
        e = read_election(example_path(name))
        inst, _ = e.pabutools()
        prof = ApprovalProfile([ApprovalBallot(p for j, p in enumerate(sorted(inst, key=lambda p: e.project_ids.index(p.name)))
                                               if row[j]) for row in e.approvals], instance=inst)
        theirs = e.index(p.name for p in sequential_phragmen(inst, prof))
        assert (rules.phragmen(e) == theirs).all(), name


def test_min_group_leaves_out_the_one_voter_group():
    e = read_election(example_path("wesola"))
    every = make_groups(e, "age", min_size=1)
    assert "age unknown" in every.names and every.sizes[every.names.index("age unknown")] == 1
    g = make_groups(e, "age")                                        # default 10 voters
    assert "age unknown" not in g.names and g.left_out == (("age unknown", 1),)
    assert g.sizes.sum() == e.n_voters - 1 and (g.member == -1).sum() == 1
    # the one-voter group's utility is that one ballot's approvals, normalised
    one = e.approvals[every.member == every.names.index("age unknown")][0]
    coef = every.coef[every.names.index("age unknown")]
    assert np.allclose(coef, one / one.sum())
    # fewer than two groups reach the size: the two largest stay
    two = make_groups(e, "age", min_size=10**6)
    # (sizes: <30 247, 30-44 527, 45-59 290, 60+ 116, unknown 1)
    assert two.names == ("age 30-44", "age 45-59") and [n for n, _ in two.left_out] == ["age <30", "age 60+", "age unknown"]


def test_tradeoffs_against_slow_enumeration():
    e = read_election(example_path("falenica"))
    g = make_groups(e, "age")
    t = _tradeoffs(e, g.coef)
    support = e.scores.sum(axis=0)
    best_a, best_w = -1.0, -1.0
    pairs = []
    for S in feasible_sets(e.costs, e.budget):
        a = support[S].sum() / support.sum()
        w = min(g.coef[k][S].sum() for k in range(len(g.names)))
        pairs.append((a, w))
        best_a, best_w = max(best_a, a), max(best_w, w)
    a_at_w = max(a for a, w in pairs if w >= best_w - 1e-9)
    w_at_a = max(w for a, w in pairs if a >= best_a - 1e-9)
    assert t["real"]["approvals_given_up"] == pytest.approx(best_a - a_at_w)
    assert t["real"]["worst_gained"] == pytest.approx(best_w - w_at_a)
    assert t["real"]["tradeoff"] == (best_a - a_at_w > 1e-9)
    front = {p for p in pairs if not any(q[0] >= p[0] and q[1] >= p[1] and q != p for q in pairs)}
    assert t["real"]["frontier_points"] == len(front)


def test_audit_election_rows_and_axioms():
    out = audit_election(example_path("falenica"), "age")
    assert out["axioms_checked"] and set(out["rows"]) >= {"greedy", "equal-shares", "leximin", "actual"}
    e = read_election(example_path("falenica"))
    for rule, row in out["rows"].items():
        mask = e.index(row["projects"])
        assert row["EJR1-cost"] == check_election(e, mask, "cost")["EJR"]
    assert out["rows"]["equal-shares"]["EJR1-cost"] and out["rows"]["equal-shares"]["PJR1-card"]


def test_audit_counts_priceability_with_the_smallest_election_as_witness(tmp_path):
    """Priceability per row (our LP, is_priceable_election), counted per rule; the witness of a rule that is not
    priceable somewhere is the smallest such election. Greedy funding the whole-budget project A leaves the five
    B-and-C voters' money unspent (tests/pb/test_pb_domain.py): not priceable; Equal Shares is."""
    from fairarena.pb.axioms import is_priceable_election
    from tests.pb.test_pb_domain import GREEDY_BREAKS_EJR

    (tmp_path / "b.pb").write_text(GREEDY_BREAKS_EJR, encoding="utf-8")
    files = [example_path("falenica"), tmp_path / "b.pb"]
    res = audit(files, "clusters:2", min_group=1)
    for el, f in zip(res["elections"], files):
        e = read_election(f)
        for row in el["rows"].values():
            assert row["priceable"] == is_priceable_election(e, e.index(row["projects"]))
    ax = res["summary"]["axioms"]
    assert ax["greedy"]["priceable"]["violations"] == 1 and ax["greedy"]["priceable"]["checked"] == 2
    assert ax["greedy"]["priceable"]["witness"] == {"file": "b.pb", "projects": 3, "voters": 11, "funded": ["A"]}
    assert ax["equal-shares"]["priceable"] == {"violations": 0, "checked": 2, "witness": None}
    from fairarena.pb.audit import report_text

    text = report_text(res)
    assert "not priced" in text and "greedy not priceable: b.pb (3 projects, 11 voters; funded {A})" in text


def test_audit_cli_writes_json_and_refuses_bad_input(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    for n in ("falenica", "gdansk"):
        (d / example_path(n).name).write_bytes(example_path(n).read_bytes())
    out = tmp_path / "audit.json"
    r = runner.invoke(app, ["pb", "audit", str(d), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "2 elections" in r.output and "real trade-off" in r.output
    data = json.loads(out.read_text())
    assert [el["file"] for el in data["elections"]] == sorted(p.name for p in d.iterdir())
    # a bad file among good ones: one line naming file, line and field; nothing written
    (d / "z_bad.pb").write_text("META\nkey;value\nbudget;100\nPROJECTS\nproject_id;cost\n1;-5\nVOTES\nvoter_id;vote\n1;1\n")
    out2 = tmp_path / "audit2.json"
    r = runner.invoke(app, ["pb", "audit", str(d), "--out", str(out2)])
    assert r.exit_code == 2 and "z_bad.pb:6: cost" in r.output and len(r.output.strip().splitlines()) == 1
    assert not out2.exists()
    for bad in (["--jobs", "0"], ["--min-group", "0"], ["--groups", "nope"]):
        r = runner.invoke(app, ["pb", "audit", str(d)] + bad)
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    r = runner.invoke(app, ["pb", "audit", str(tmp_path / "missing")])
    assert r.exit_code == 2 and "DIR_OR_FILES" in r.output


def test_jobs_do_not_change_the_report():
    files = [example_path("falenica"), example_path("gdansk"), example_path("krakow")]
    one, two = audit(files, "auto", jobs=1), audit(files, "auto", jobs=2)
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)


@pytest.mark.skipif(not SMALL.is_dir(), reason="the 272 small Pabulib files are not here")
def test_known_witness_on_real_small_file():
    """Greedy on Lodz-Gorniak 2020 violates EJR up to one project: pinned witness (the audit's minimal one)."""
    f = SMALL / "poland_lodz_2020_gorniak.pb"
    e = read_election(f)
    out = check_election(e, rules.greedy(e), "cost")
    w = out["witness"]["EJR"]
    assert not out["EJR"] and w["T"] == ["G060GO", "G080GO"] or w["T"] == ["G080GO", "G060GO"]
    assert w["size"] == 22 and w["cost"] == 15400
    assert len(collect_files([str(SMALL)])) == 272


def test_compare_aggregation_rows_are_lotteries_over_the_groups_proposals(tmp_path):
    from fairarena.pb.compare import compare
    from fairarena.pb.domain import domain_for

    f = example_path("wesola")
    out = compare(f, "age", debate=False)
    agg = [r for r in out["rows"] if r["rule"].startswith("agg:")]
    assert {"agg:utilitarian", "agg:leximin", "agg:plurality", "agg:pf-lottery"} <= {r["rule"] for r in agg}
    d = domain_for(f, "age")
    inst = d.instance
    optima = {k: [p for p, s in zip(inst.project_ids, inst.mask(d.optimum(inst, part))) if s]
              for k, part in zip(inst.keys, d.participants(inst))}
    for r in agg:
        assert sum(r["lottery"].values()) == pytest.approx(1.0)
        for c, ids in r["sets"].items():
            assert ids == optima[c]                       # every candidate is a group's own optimum
        exp = sum(p * d.evaluate_set(inst, inst.mask(inst.x(np.isin(inst.project_ids, r["sets"][c]))))["approvals"]
                  for c, p in r["lottery"].items())
        assert r["metrics"]["approvals"] == pytest.approx(exp)
    plurality = next(r for r in agg if r["rule"] == "agg:plurality")
    assert len(plurality["lottery"]) == 4 and set(plurality["lottery"].values()) == {0.25}   # one favourite each
    png = tmp_path / "w.png"
    r = runner.invoke(app, ["pb", "compare", "--file", str(f), "--groups", "age", "--no-debate", "--plot", str(png)])
    assert r.exit_code == 0 and png.read_bytes()[:4] == b"\x89PNG" and "agg:borda" in r.output
    r = runner.invoke(app, ["pb", "compare", "--file", str(f), "--plot", str(tmp_path / "w.txt")])
    assert r.exit_code == 2 and "--plot" in r.output


def test_demo_section_registered_and_writes(tmp_path):
    import importlib

    from fairarena.demo import SECTIONS

    target = next(t for _, t in SECTIONS if t.startswith("fairarena.pb."))
    mod, fn = target.split(":")
    getattr(importlib.import_module(mod), fn)(tmp_path)
    data = json.loads((tmp_path / "pb" / "wesola_2023_age.json").read_text())
    assert data["groups"]["scheme"] == "age" and data["groups"]["left_out"] == [["age unknown", 1]]
    actual = next(r for r in data["rows"] if r["rule"] == "actual")
    greedy = next(r for r in data["rows"] if r["rule"] == "greedy")
    assert actual["projects"] == greedy["projects"]            # Warsaw 2023 ran the greedy rule
    assert (tmp_path / "pb" / "wesola_2023_age.png").read_bytes()[:4] == b"\x89PNG"


def test_audit_prints_progress_off_a_terminal_and_none_with_json(tmp_path):
    import subprocess
    import sys

    files = [str(example_path(n)) for n in ("falenica", "gdansk")]
    cmd = [sys.executable, "-c", "import sys; from fairarena.cli import main; sys.exit(main())", "pb", "audit", *files]
    r = subprocess.run([*cmd, "--progress-every", "0", "--out", str(tmp_path / "a.json")], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.startswith("progress pb audit: ")]
    assert [x.split()[3] for x in lines] == ["1/2", "2/2"] and "elections" in lines[-1]
    r = subprocess.run([*cmd, "--progress-every", "0", "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "progress" not in r.stderr and json.loads(r.stdout)["summary"]
    r = subprocess.run([*cmd, "--progress-every", "-1"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "progress-every" in r.stderr and len(r.stderr.strip().splitlines()) == 1
