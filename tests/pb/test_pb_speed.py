"""Equal Shares' batched add1 (fairarena.pb.rules._mes_batch: several budgets per voter at once, on the distinct
ballots with multiplicities) against the one-run-per-step path (batch=False, itself checked against pabutools
in test_pb_cities.py): the same funded sets and the same add1 traces. And the solver's console kept quiet."""

from pathlib import Path

import numpy as np
import pytest

from fairarena.pb import rules
from fairarena.pb.domain import example_path
from fairarena.pb.election import Election, read_election

SMALL = Path("/work/shared/data/pabulib/small")
VARIANTS = [("cost", "add1"), ("cardinality", "add1"), ("cost", "add1-exhaustive"), ("cost", "none")]


def _same(e, satisfaction, completion):
    slow_trace, fast_trace = [], []
    slow = rules.equal_shares(e, satisfaction, completion, trace=slow_trace, batch=False)
    fast = rules.equal_shares(e, satisfaction, completion, trace=fast_trace, batch=True)
    assert np.array_equal(slow, fast), (e.name, satisfaction, completion)
    assert len(slow_trace) == len(fast_trace)
    assert all(np.array_equal(a, b) for a, b in zip(slow_trace, fast_trace))
    return len(slow_trace)


def _election(scores, costs, budget):
    n, m = scores.shape
    return Election(path="random.pb", meta={}, project_ids=tuple(str(j) for j in range(m)), costs=np.asarray(costs, float),
                    projects=tuple({} for _ in range(m)), voter_ids=tuple(str(i) for i in range(n)),
                    voters=tuple({} for _ in range(n)), scores=np.asarray(scores, float), budget=float(budget),
                    vote_type="approval")


def test_batched_equals_one_by_one_on_random_elections_with_ties():
    rng = np.random.default_rng(3)
    steps = 0
    for _ in range(60):
        n, m = int(rng.integers(3, 40)), int(rng.integers(2, 8))
        scores = (rng.random((n, m)) < 0.4).astype(float)
        if rng.random() < 0.3:                       # cumulative points
            scores *= rng.integers(1, 4, size=(n, m))
        costs = rng.choice([10, 20, 30, 50], size=m)   # equal costs: ties, broken by project id
        budget = int(costs.sum() * rng.uniform(0.3, 0.8))
        e = _election(scores, costs, budget)
        for sat, comp in VARIANTS:
            steps += _same(e, sat, comp)
    assert steps > 500                               # the completion really ran many steps


def test_batched_equals_one_by_one_on_shipped_files():
    for name in ("falenica", "krakow", "gdansk"):
        e = read_election(example_path(name))
        assert e.n_projects <= rules.BATCH_MAX_PROJECTS
        for sat, comp in VARIANTS:
            _same(e, sat, comp)


@pytest.mark.skipif(not SMALL.is_dir(), reason="the 272 small Pabulib files are not here")
def test_batched_equals_one_by_one_on_a_sample_of_the_small_files():
    files = sorted(SMALL.glob("*.pb"))
    assert len(files) == 272
    for f in files[::17]:                            # 16 files across the set
        e = read_election(f)
        _same(e, "cost", "add1")


def test_default_is_batched_only_on_small_elections():
    e = read_election(example_path("wieliczka"))      # 64 projects: one run per step
    assert e.n_projects > rules.BATCH_MAX_PROJECTS
    assert set(e.ids(rules.equal_shares(e, "cost", "add1"))) == set(e.selected)


@pytest.mark.skipif(not (SMALL.parent / "poland_warszawa_2023_rembertow.pb").is_file(),
                    reason="Warsaw-Rembertow 2023 is not here")
def test_feasible_set_milp_keeps_highs_console_quiet(capfd):
    # HiGHS printed 'HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();' on this file
    # by age (one of the feasible-set MILPs; not by sex) straight to file descriptor 1, before the solves went through
    # fairarena.solver_console
    from fairarena.pb.compare import compare

    compare(SMALL.parent / "poland_warszawa_2023_rembertow.pb", groups="age", debate=False, aggregation=False)
    out, err = capfd.readouterr()
    assert "Highs" not in out and "Highs" not in err
