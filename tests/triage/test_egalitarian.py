"""Egalitarian optimum without levelling down (issue 19, item 2): against an enumeration of every
feasible integer allocation on small problems, and as a property on sampled cohorts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fairarena.allocation.frameworks import (
    EGALITARIAN_FORMS,
    FRAMEWORKS,
    egalitarian_allocation,
    optimal_allocation,
)
from fairarena.allocation.metrics import compute_metrics_batch, gini, need_satisfaction
from fairarena.allocation.pareto import dominating_allocation, dominated_mask, is_dominated, pareto_front_mask
from fairarena.allocation.problem import AllocationProblem, is_feasible
from fairarena.errors import InputError
from fairarena.triage.archetypes import sample_cohort


def small_problem(seed: int, cnss: str = "indicator", mixed: bool = False) -> AllocationProblem:
    """4 patients x 3 resources, needs 0..2 (R1 divisible with needs 0..3 when ``mixed``), capacities
    below the total need: small enough to enumerate every integer allocation within need."""
    rng = np.random.default_rng(1000 + seed)
    n = 4
    need = rng.integers(0, 3, size=(n, 3)).astype(float)
    if mixed:
        need[:, 1] = rng.integers(0, 4, size=n)
    for i in range(n):
        if need[i].sum() == 0:
            need[i, rng.integers(3)] = 1
    cap = np.maximum(1, np.floor(need.sum(axis=0) * rng.uniform(0.25, 0.7, 3)))
    w, v = rng.uniform(0.1, 1, n), rng.uniform(0.1, 1, n)
    return AllocationProblem(ids=[f"p{i}" for i in range(n)], resources=["R0", "R1", "R2"], capacity=cap,
                             need=need, indivisible=[True, not mixed, True],
                             survival=np.round(rng.uniform(0.1, 1, n), 2), urgency=rng.integers(0, 3, n),
                             disadvantage=w / w.sum(), vulnerability=v / v.sum(), gini_resource="R2", cnss=cnss)


def enumerate_allocations(p: AllocationProblem) -> np.ndarray:
    cells = [(i, r) for i in range(p.n) for r in range(p.n_resources) if p.needed[i, r]]
    vals = np.array(list(itertools.product(*(range(int(p.need[i, r]) + 1) for i, r in cells))), dtype=float)
    X = np.zeros((len(vals), p.n, p.n_resources))
    for k, (i, r) in enumerate(cells):
        X[:, i, r] = vals[:, k]
    return X[is_feasible(p, X)]


def brute_force(p: AllocationProblem) -> tuple[float, float, float, np.ndarray]:
    """(least Gini, then max mean, then max ESG) over the Pareto-optimal CNSS vectors; and the front."""
    X = enumerate_allocations(p)
    M = compute_metrics_batch(p, X)
    C = M["cnss"]
    front = pareto_front_mask(C)
    g = gini(C[front])
    gmin = g.min()
    tied = front.copy()
    tied[front] = g <= gmin + 1e-9
    mean = C[tied].mean(axis=1).max()
    tied &= C.mean(axis=1) >= mean - 1e-9
    return float(gmin), float(mean), float(M["esg"][tied].max()), C[front]


FORMS = [("indicator", False), ("indicator", True), ("fractional", False)]


@pytest.mark.parametrize("form,mixed", FORMS)
@pytest.mark.parametrize("seed", range(15))
def test_pareto_egalitarian_matches_enumeration(seed, form, mixed):
    p = small_problem(seed, form, mixed)
    gmin, mean, esg, front = brute_force(p)
    x = egalitarian_allocation(p)
    assert bool(is_feasible(p, x))
    c = need_satisfaction(p, x)
    # undominated: its CNSS vector is on the enumerated front, and the MILP check agrees
    assert np.any(np.all(np.abs(front - c) < 1e-9, axis=1))
    assert not is_dominated(p, x)
    m = compute_metrics_batch(p, x[None])
    assert m["gini_cnss"][0] == pytest.approx(gmin, abs=1e-9)
    assert c.mean() == pytest.approx(mean, abs=1e-9)
    assert m["esg"][0] == pytest.approx(esg, abs=1e-9)


@pytest.mark.parametrize("seed", range(15))
def test_dominance_check_matches_enumeration(seed):
    """Every enumerated CNSS vector is dominated by the MILP check iff it is off the enumerated front."""
    p = small_problem(seed, "indicator", True)
    C = need_satisfaction(p, enumerate_allocations(p))
    C = np.unique(np.round(C, 9), axis=0)
    front = pareto_front_mask(C)
    for k in np.random.default_rng(seed).choice(len(C), size=min(25, len(C)), replace=False):
        y = dominating_allocation(p, C[k])
        assert (y is None) == bool(front[k])
        if y is not None:
            cy = need_satisfaction(p, y)
            assert np.all(cy >= C[k] - 1e-9) and cy.sum() > C[k].sum() + 1e-9


def test_strict_form_levels_down_and_pareto_does_not():
    """Standard cohort 0: the strict form treats nobody; the default treats everyone it can, least unequally
    among the undominated allocations."""
    p = sample_cohort(0, "standard").to_problem()
    strict = egalitarian_allocation(p, "strict")
    assert not strict.any()
    assert is_dominated(p, strict)
    x = optimal_allocation(p, "egalitarian")
    assert x.any() and not is_dominated(p, x)
    assert optimal_allocation(p, "egalitarian", egalitarian="strict").tolist() == strict.tolist()


@pytest.mark.parametrize("variant", ["tight", "standard", "high"])
def test_pareto_egalitarian_property_on_cohorts(variant):
    """On sampled cohorts: feasible, undominated, never empty, and no more unequal than any other
    framework's optimum that is itself undominated (each is a candidate of the same minimisation)."""
    for seed in range(6):
        p = sample_cohort(seed, variant).to_problem()
        info: dict = {}
        x = egalitarian_allocation(p, info=info)
        assert bool(is_feasible(p, x)) and x.any()
        assert not is_dominated(p, x)
        assert info["form"] == "pareto" and info["rounds"] >= 1
        g = gini(need_satisfaction(p, x))
        others = np.stack([optimal_allocation(p, f) for f in FRAMEWORKS if f != "egalitarian"])
        for y, dom in zip(others, dominated_mask(p, others)):
            if not dom:
                assert g <= gini(need_satisfaction(p, y)) + 1e-9, (variant, seed)


def test_unknown_form_and_tolerance_need_strict():
    p = small_problem(0)
    with pytest.raises(InputError) as exc:
        egalitarian_allocation(p, "levelling")
    assert exc.value.field == "egalitarian"
    assert all(f in str(exc.value) for f in EGALITARIAN_FORMS)
    with pytest.raises(InputError) as exc:
        egalitarian_allocation(p, gini_tolerance=0.1)
    assert exc.value.field == "gini_tolerance"
    egalitarian_allocation(p, "strict", gini_tolerance=0.1)


# -- the command line ---------------------------------------------------------------------------

def _cli():
    from typer.testing import CliRunner

    from fairarena.cli_common import standalone_app
    from fairarena.triage.cli import register

    return CliRunner(), standalone_app(register)


@pytest.fixture(scope="module")
def standard_cohort(tmp_path_factory):
    runner, app = _cli()
    path = tmp_path_factory.mktemp("egal") / "cohort.json"
    res = runner.invoke(app, ["triage", "cohort", "--seed", "0", "--capacity", "standard", "--out", str(path)])
    assert res.exit_code == 0, res.output
    return path


def test_cli_optimal_egalitarian_treats_patients_and_strict_warns(standard_cohort):
    import json

    runner, app = _cli()
    base = ["triage", "optimal", "--cohort", str(standard_cohort), "--framework", "egalitarian", "--json"]
    res = runner.invoke(app, base)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["egalitarian"] == "pareto" and min(out["metrics"]["cnss"]) > 0
    res = runner.invoke(app, [*base, "--egalitarian", "strict"])
    assert res.exit_code == 0, res.output
    assert "warning" in res.stderr and "level down" in res.stderr
    assert max(json.loads(res.stdout)["metrics"]["cnss"]) == 0


@pytest.mark.parametrize("args,field", [(["--egalitarian", "levelling"], "egalitarian"),
                                        (["--gini-tolerance", "0.1"], "--gini-tolerance")])
def test_cli_bad_egalitarian_form_is_one_line_exit_2(standard_cohort, args, field):
    runner, app = _cli()
    res = runner.invoke(app, ["triage", "optimal", "--cohort", str(standard_cohort), "--framework", "egalitarian",
                              *args])
    assert res.exit_code == 2
    line = res.stderr.strip()
    assert "\n" not in line and field in line and "Traceback" not in res.output
    if field == "egalitarian":
        assert "pareto" in line and "strict" in line
