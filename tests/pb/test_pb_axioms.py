"""Our EJR/PJR checks (fairarena.pb.axioms) against hand examples and against pabutools' own checks, which
enumerate every subset of voters (so only on a handful of voters: random tiny elections and the first voters of
real Pabulib files)."""

from pathlib import Path

import numpy as np
import pytest

from fairarena.errors import InputError
from fairarena.pb import rules
from fairarena.pb.axioms import MAX_PROJECTS, check, check_election, is_priceable, is_priceable_election, priceable
from fairarena.pb.domain import example_path
from fairarena.pb.election import read_election

SMALL = Path("/work/shared/data/pabulib/small")


def pabutools_checks(A, costs, budget, W, satisfaction, up_to_one):
    from pabutools.analysis.justifiedrepresentation import is_EJR_approval, is_PJR_approval
    from pabutools.election import ApprovalBallot, ApprovalProfile, Cardinality_Sat, Cost_Sat, Instance, Project

    ps = [Project(str(j), int(c)) for j, c in enumerate(costs)]
    inst = Instance(ps, budget_limit=int(budget))
    prof = ApprovalProfile([ApprovalBallot(ps[j] for j in np.nonzero(r)[0]) for r in A], instance=inst)
    chosen = [ps[j] for j in np.nonzero(W)[0]]
    sat = Cost_Sat if satisfaction == "cost" else Cardinality_Sat
    up = (lambda x: max(x, default=0)) if up_to_one else None
    return is_EJR_approval(inst, prof, sat, chosen, up), is_PJR_approval(inst, prof, sat, chosen, up)


def test_hand_example_strict_and_up_to_one():
    # voters 0,1 approve a,b; voters 2,3 approve c; all cost 2, budget 4; the funded set is {c}
    A = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 1]], dtype=bool)
    costs, W = np.array([2.0, 2.0, 2.0]), np.array([False, False, True])
    strict = check(A, costs, 4, W, "cost", up_to_one=False, project_ids=["a", "b", "c"])
    assert not strict["EJR"] and not strict["PJR"]
    assert strict["witness"]["EJR"] == {"T": ["a"], "cost": 2.0, "size": 2, "voters": ["0", "1"], "qualifying": 2}
    assert strict["witness"]["PJR"]["X"] == [] and strict["witness"]["PJR"]["voters"] == ["0", "1"]
    one = check(A, costs, 4, W, "cost", up_to_one=True)
    assert one["EJR"] and one["PJR"] and one["witness"] == {"EJR": None, "PJR": None}
    # {a, c} is fine for everyone: voters 0,1 get a
    assert check(A, costs, 4, np.array([True, False, True]), "cost", up_to_one=False)["EJR"]


def test_up_to_one_violation_needs_two_projects():
    # 4 voters approve a and b (cost 1 each); the city funds c (cost 2, no supporter) with budget 2
    A = np.array([[1, 1, 0]] * 4, dtype=bool)
    out = check(A, np.array([1.0, 1.0, 2.0]), 2, np.array([False, False, True]), "cost", True, project_ids="abc")
    assert not out["EJR"] and not out["PJR"]
    assert out["witness"]["EJR"]["T"] == ["a", "b"] and out["witness"]["EJR"]["size"] == 4
    # cardinality satisfaction: the same (T = {a, b} worth 2, the surplus 1)
    assert not check(A, np.array([1.0, 1.0, 2.0]), 2, np.array([False, False, True]), "cardinality", True)["EJR"]


def test_agrees_with_pabutools_on_random_tiny_elections():
    rng = np.random.default_rng(7)
    seen = set()
    for _ in range(120):
        n, m = int(rng.integers(2, 7)), int(rng.integers(2, 6))
        A = rng.random((n, m)) < rng.uniform(0.3, 0.9)
        costs = rng.integers(1, 10, m).astype(float)
        budget = int(rng.integers(costs.min(), costs.sum() + 1))
        W = np.zeros(m, dtype=bool)
        for j in rng.permutation(m):
            if rng.random() < 0.6 and costs[W].sum() + costs[j] <= budget:
                W[j] = True
        for sat in ("cost", "cardinality"):
            for one in (True, False):
                ours = check(A, costs, budget, W, sat, one)
                theirs = pabutools_checks(A, costs, budget, W, sat, one)
                assert (ours["EJR"], ours["PJR"]) == theirs, (A.tolist(), costs, budget, W, sat, one)
                seen.add(theirs)
    # the sample holds every kind of answer, including EJR failing while PJR holds
    assert seen == {(True, True), (False, False), (False, True)}


@pytest.mark.parametrize("name", ["falenica", "gdansk"])
def test_agrees_with_pabutools_on_real_files_first_voters(name):
    e = read_election(example_path(name))
    A = e.approvals[:6]
    keep = A.any(axis=0)
    keep[np.argsort(-e.scores.sum(axis=0))[:6]] = True    # the six most supported projects and the 6 voters' ones
    A, costs = A[:, keep], e.costs[keep]
    budget = e.budget
    for W in [rules.greedy(e)[keep], rules.equal_shares(e)[keep], np.zeros(len(costs), dtype=bool)]:
        if costs[W].sum() > budget:
            continue
        for sat in ("cost", "cardinality"):
            for one in (True, False):
                ours = check(A, costs, budget, W, sat, one)
                assert (ours["EJR"], ours["PJR"]) == pabutools_checks(A, costs, budget, W, sat, one)


def test_witness_is_a_real_violation():
    """On a real election: the witness group has l(T) voters approving all of T, none satisfied (EJR)."""
    e = read_election(example_path("falenica"))
    empty = np.zeros(e.n_projects, dtype=bool)
    out = check_election(e, empty, "cost", up_to_one=False)
    w = out["witness"]["EJR"]
    assert not out["EJR"] and len(w["voters"]) == w["size"]
    T = e.index(w["T"])
    rows = [e.voter_ids.index(v) for v in w["voters"]]
    assert e.approvals[np.ix_(rows, np.nonzero(T)[0])].all()
    assert w["size"] * e.budget >= w["cost"] * e.n_voters > (w["size"] - 1) * e.budget
    assert len(w["T"]) == 1       # the empty set: a single affordable project with enough supporters is a witness


def test_equal_shares_satisfies_ejr_up_to_one_on_real_files():
    """MES with cost utilities satisfies EJR up to one project (Peters, Pierczynski, Skowron 2021)."""
    files = [example_path("falenica"), example_path("gdansk")] + sorted(SMALL.glob("poland_*.pb"))[:20]
    for f in files:
        e = read_election(f)
        if e.vote_type != "approval":
            continue
        out = check_election(e, rules.equal_shares(e, "cost", "none"), "cost", up_to_one=True)
        assert out["EJR"] and out["PJR"], (f, out["witness"])


def test_too_many_projects_refused():
    A = np.ones((2, MAX_PROJECTS + 1), dtype=bool)
    with pytest.raises(InputError, match="projects"):
        check(A, np.ones(MAX_PROJECTS + 1), 3, np.zeros(MAX_PROJECTS + 1, dtype=bool))


def test_priceability_through_pabutools():
    """Equal Shares' outcome is priceable by construction (its voter budgets and payments are a price system)."""
    e = read_election(example_path("gdansk"))
    assert priceable(e, rules.equal_shares(e, "cost", "none")) is True
    # funding only the 255,000 project (82 supporters) while the 250,000 one (285 supporters) waits: not priceable
    only = np.zeros(e.n_projects, dtype=bool)
    only[int(np.argmax(e.costs))] = True
    assert priceable(e, only) is False


def test_our_priceability_lp_equals_pabutools_on_random_tiny_elections():
    """is_priceable (one LP over the distinct ballots) against pabutools' priceable (an LP over every voter,
    exhaustive=False): the same answer on random tiny elections, both answers occurring."""
    from pabutools.analysis.priceability import priceable as pabutools_priceable
    from pabutools.election import ApprovalBallot, ApprovalProfile, Instance, Project

    rng = np.random.default_rng(1)
    seen = {True: 0, False: 0}
    for _ in range(80):
        n, m = int(rng.integers(2, 9)), int(rng.integers(2, 6))
        A = rng.random((n, m)) < 0.5
        costs = rng.integers(1, 10, m).astype(float)
        budget = float(rng.integers(int(costs.min()), int(costs.sum()) + 1))
        W = rng.random(m) < 0.5
        if costs[W].sum() > budget:
            continue
        ps = [Project(str(j), int(c)) for j, c in enumerate(costs)]
        inst = Instance(ps, budget_limit=int(budget))
        prof = ApprovalProfile([ApprovalBallot(ps[j] for j in np.nonzero(r)[0]) for r in A], instance=inst)
        res = pabutools_priceable(inst, prof, [ps[j] for j in np.nonzero(W)[0]], exhaustive=False)
        theirs = bool(res.validate())
        assert is_priceable(A, costs, budget, W) == theirs, (A.astype(int).tolist(), costs, budget, W)
        seen[theirs] += 1
    assert min(seen.values()) >= 10, seen


def test_our_priceability_on_real_files():
    """Gdansk-Aniolki 2020 (343 voters; cumulative ballots read as approvals of the projects given points): the
    same answer as pabutools for every PB rule's set and for funding only the dearest project (not priceable);
    Equal Shares' outcome without completion is priceable (its own price system); on Falenica (652 voters) too."""
    e = read_election(example_path("gdansk"))
    only = np.zeros(e.n_projects, dtype=bool)
    only[int(np.argmax(e.costs))] = True
    sets = [rules.pb_rule(e, r) for r in rules.PB_RULES] + [only]
    ours = [is_priceable_election(e, m) for m in sets]
    assert ours == [priceable(e, m) for m in sets] and ours[-1] is False
    f = read_election(example_path("falenica"))
    assert is_priceable_election(f, rules.equal_shares(f, "cost", "none"))
