"""The PB domain: the conformance kit, groups, metrics and the exact feasible-set rules."""

import itertools
import subprocess
import sys

import numpy as np
import pytest

from fairarena.pb.domain import PB, example_path, instance_of
from fairarena.pb.election import read_election
from fairarena.pb.fair import feasible_set_rule, feasible_sets
from fairarena.pb.groups import make_groups


def test_kit_passes_on_pb():
    from fairarena.domains import check

    report = check("pb", studies=False)
    assert report.ok, report.table()
    assert report.status("debate") == "pass" and report.status("council") == "pass"


def test_domain_check_command():
    r = subprocess.run([sys.executable, "-m", "fairarena.cli", "domain", "check", "pb", "--no-studies"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "10 of 10 checks passed or skipped" in r.stdout


def test_registry_lazy():
    code = ("import sys; from fairarena.domains import DOMAINS; assert 'pb' in DOMAINS.names(); "
            "assert 'fairarena.pb' not in sys.modules; DOMAINS.get('pb'); assert 'fairarena.pb.domain' in sys.modules")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_groups_age_sex_clusters():
    e = read_election(example_path("falenica"))
    age = make_groups(e, "age")
    assert age.names[0] == "age <30" and age.sizes.sum() == e.n_voters
    assert np.allclose(age.coef.sum(axis=1), 1.0)                        # approval shares sum to 1
    sex = make_groups(e, "sex")
    assert set(sex.names) <= {"women", "men", "sex unknown"}
    c1, c2 = make_groups(e, "clusters:3", seed=0), make_groups(e, "clusters:3", seed=0)
    assert c1.names == ("cluster 1", "cluster 2", "cluster 3") and (c1.member == c2.member).all()
    for util in ("cost", "cardinality"):
        g = make_groups(e, "age", util)
        assert (g.coef >= 0).all() and (g.coef.sum(axis=1) <= 1 + 1e-9).all()
    w = read_election(example_path("wieliczka"))
    assert make_groups(w, "auto").scheme == "clusters:3"                  # no age, no project tag


def _area_file(ballot_district: bool = True, tag: str = "subunit") -> str:
    """12 voters of Old Town approve 1 (in North), 18 of Riverside approve 2 and 3 (South), 11 without a
    district approve 3; the ballots carry a district column when ``ballot_district``."""
    rows = [("1", "Old Town")] * 12 + [("2,3", "Riverside")] * 18 + [("3", "")] * 11
    head = "voter_id;vote;district" if ballot_district else "voter_id;vote"
    votes = "".join(f"{i};{v};{d}\n" if ballot_district else f"{i};{v}\n" for i, (v, d) in enumerate(rows))
    return (f"META\nkey;value\nbudget;100\nPROJECTS\nproject_id;cost;{tag};categories\n1;60;North;parks\n"
            f"2;50;South;roads,parks\n3;30;South;roads\nVOTES\n{head}\n{votes}")


def test_groups_neighbourhood_from_ballots_then_projects(pb_file):
    """Ballots that record where the voter lives are grouped by it (a ballot without it: 'district unknown');
    without such a field the projects' subunit places each voter; 'district' and 'subunit' are aliases;
    'auto' takes the ballots' neighbourhood when there is no age."""
    from fairarena.errors import InputError

    e = read_election(pb_file(_area_file()))
    g = make_groups(e, "neighbourhood")
    assert g.scheme == "neighbourhood" and g.names == ("Old Town", "Riverside", "district unknown")
    assert g.sizes.tolist() == [12, 18, 11]
    assert make_groups(e, "district").names == g.names and make_groups(e, "auto").scheme == "neighbourhood"
    assert dict(zip(*(make_groups(e, "category").names, make_groups(e, "category").sizes.tolist()))) == \
        {"North": 12, "South": 29}                                      # the projects' subunit: where they are
    g2 = make_groups(read_election(pb_file(_area_file(False), "e2.pb")), "neighbourhood")
    assert g2.scheme == "neighbourhood" and dict(zip(g2.names, g2.sizes.tolist())) == {"North": 12, "South": 29}
    w = read_election(example_path("wieliczka"))
    with pytest.raises(InputError, match="no neighbourhood, district or subunit"):
        make_groups(w, "neighbourhood")


def test_groups_category_reads_a_categories_column(pb_file):
    """Pabulib files name the column 'category' or 'categories'; both are project tags."""
    g = make_groups(read_election(pb_file(_area_file(False, tag="x"))), "category")
    assert set(g.names) == {"parks", "roads"}


def test_feasible_set_rules_exact_against_brute_force():
    e = read_election(example_path("falenica"))
    g = make_groups(e, "age")
    sets = [np.array(s, dtype=bool) for s in itertools.product([0, 1], repeat=e.n_projects)]
    sets = [s for s in sets if e.feasible(s)]
    U = np.array([g.coef @ s for s in sets])
    best = {"utilitarian": U.sum(1).max(), "maxmin": U.min(1).max()}
    for rule, v in best.items():
        mask, how = feasible_set_rule(rule, g.coef, e.costs, e.budget)
        assert how == "exact: enumeration" and e.feasible(mask)
        got = (g.coef @ mask).sum() if rule == "utilitarian" else (g.coef @ mask).min()
        assert got == pytest.approx(v)
    lex, _ = feasible_set_rule("leximin", g.coef, e.costs, e.budget)
    assert (np.sort(g.coef @ lex) >= np.sort(U, axis=1).max(axis=0)[0] - 1e-12).all()
    assert len(feasible_sets(e.costs, e.budget)) == len(sets)


@pytest.mark.parametrize("rule", ["utilitarian", "maxmin", "leximin"])
def test_milp_equals_enumeration(rule, monkeypatch):
    import fairarena.pb.fair as fair

    e = read_election(example_path("falenica"))
    g = make_groups(e, "age")
    exact, _ = feasible_set_rule(rule, g.coef, e.costs, e.budget)
    monkeypatch.setattr(fair, "ENUMERATE_MAX", 0)
    milp, how = feasible_set_rule(rule, g.coef, e.costs, e.budget)
    assert how == "exact: MILP"
    ue, um = np.sort(g.coef @ exact), np.sort(g.coef @ milp)
    if rule == "utilitarian":
        assert ue.sum() == pytest.approx(um.sum())
    else:
        assert ue[0] == pytest.approx(um[0])
        if rule == "leximin":
            assert np.allclose(ue, um)


def test_metrics_of_the_city_outcome():
    e = read_election(example_path("wesola"))
    inst = instance_of(e, make_groups(e, "age"))
    from fairarena.pb.domain import PBDomain

    d = PBDomain(inst)
    x = inst.x(e.index(e.selected))
    m = d.evaluate(inst, x)
    assert m["budget_used"] == pytest.approx(e.cost(e.index(e.selected)) / e.budget)
    assert sum(m[k] for k in m if k.startswith("share:")) == pytest.approx(m["budget_used"])
    assert 0 <= m["gini"] < 1 and m["worst"] == min(m[k] for k in m if k.startswith("u:"))
    assert not d.violations(inst, x)
    half = x.copy(); half[np.argmax(x[:, 0]), 0] /= 2
    assert d.violations(inst, half)


def test_pb_compare_json_rows():
    import json

    r = subprocess.run([sys.executable, "-m", "fairarena.cli", "pb", "compare", "--file", str(example_path("falenica")),
                        "--groups", "age", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    names = [row["rule"] for row in out["rows"]]
    agg = [n for n in names if n.startswith("agg:")]              # the aggregation rows, after the group rules
    assert agg and names == ["greedy", "equal-shares", "phragmen", "max-utilitarian", "utilitarian", "nash", "leximin",
                             "maxmin"] + agg + ["debate", "actual"]
    assert all(row["axioms_note"].startswith("not checked (a lottery") for row in out["rows"] if row["rule"] in agg)
    out["rows"] = [row for row in out["rows"] if row["rule"] not in agg]
    actual = out["rows"][-1]
    assert actual["distance"]["projects"] == 0 and out["rows"][0]["distance"]["projects"] == 0  # 2019: greedy
    # every rule funds the same set on Falenica by age (the groups' optima coincide): EJR/PJR/priced all hold
    assert all(row["EJR"] is True and row["PJR"] is True and row["priceable"] is True
               and row["axioms_note"] == "EJR/PJR up to one project, Cost_Sat" for row in out["rows"])
    assert len({tuple(row["projects"]) for row in out["rows"]}) == 1
    assert out["rows"][6]["metrics"]["worst"] >= max(row["metrics"]["worst"] for row in out["rows"]) - 1e-12


def test_pb_compare_table_says_what_its_columns_and_dashes_mean():
    """A '-' under EJR1/PJR1/priced is explained under the table (not asked for, a lottery), as are u/share, the
    entitlement and vs city."""
    import json

    from fairarena.pb.compare import table

    r = subprocess.run([sys.executable, "-m", "fairarena.cli", "pb", "compare", "--file", str(example_path("falenica")),
                        "--groups", "age", "--json", "--no-axioms"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    lines = table(out).splitlines()
    assert "voters, entitlement" in lines[1]
    assert lines[-3].startswith("u/share: the group's utility") and "vs city:" in lines[-3] and "entitlement" in lines[-3]
    assert lines[-2].startswith("EJR1/PJR1: EJR/PJR up to one project")
    assert lines[-1] == "-: not checked (--no-axioms); not checked (a lottery over the proposals)"
    for row in out["rows"]:
        row.update(EJR=True, PJR=False, priceable=True)
    assert table(out).splitlines()[-1].startswith("EJR1/PJR1:")       # every row checked: no dash to explain


GREEDY_BREAKS_EJR = """META
key;value
budget;100
PROJECTS
project_id;cost;name
A;100;pool
B;20;bench
C;20;lamp
VOTES
voter_id;vote
""" + "".join(f"{i};A\n" for i in range(1, 7)) + "".join(f"{i};B,C\n" for i in range(7, 12))


def test_pb_compare_checks_the_axioms_with_a_witness(pb_file, tmp_path):
    """Six voters want A (100, the whole budget), five want B and C (20 each). Greedy funds A alone: the five are
    entitled to 5/11 of 100 >= 40 = cost({B, C}) and get nothing, so EJR and PJR fail even up to one project,
    and their unspent money would buy B: not priceable. Equal Shares funds B and C: all three hold. --out writes
    the JSON the command prints; --no-axioms leaves the checks out."""
    import json

    f = pb_file(GREEDY_BREAKS_EJR)
    out = tmp_path / "c.json"
    r = subprocess.run([sys.executable, "-m", "fairarena.cli", "pb", "compare", "--file", str(f), "--groups",
                        "clusters:2", "--min-group", "1", "--json", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert json.loads(out.read_text()) == res
    rows = {row["rule"]: row for row in res["rows"]}
    g, es = rows["greedy"], rows["equal-shares"]
    assert g["projects"] == ["A"] and (g["EJR"], g["PJR"], g["priceable"]) == (False, False, False)
    assert g["witness"]["EJR"]["T"] == ["B", "C"] and g["witness"]["EJR"]["size"] == 5
    assert es["projects"] == ["B", "C"] and (es["EJR"], es["PJR"], es["priceable"]) == (True, True, True)
    assert "witness" not in es
    r = subprocess.run([sys.executable, "-m", "fairarena.cli", "pb", "compare", "--file", str(f), "--groups",
                        "clusters:2", "--min-group", "1", "--json", "--no-axioms"], capture_output=True, text=True)
    assert all(row["EJR"] is None and row["priceable"] is None for row in json.loads(r.stdout)["rows"])


def test_pb_compare_plot_shares_a_point_between_coinciding_rows(tmp_path):
    """Wesola by age: greedy and the city fund the same set (one point, the city named first); the feasible-set
    rules, most aggregation rows and the debate land together; every row is on exactly one point."""
    from fairarena.pb.compare import compare, plot, plot_points

    res = compare(example_path("wesola"), "age", axioms=False)
    pts = plot_points(res)
    names = [[r["rule"] for r in rows] for _, _, rows in pts]
    assert sorted(n for ns in names for n in ns) == sorted(r["rule"] for r in res["rows"])
    assert ["actual", "greedy"] in names
    top = next(ns for ns in names if "leximin" in ns)
    assert top[0] == "debate" and {"utilitarian", "nash", "maxmin", "agg:leximin"} <= set(top)
    assert len(pts) < len(res["rows"]) and plot(res, tmp_path / "w.png").stat().st_size > 10_000
