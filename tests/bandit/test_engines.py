"""The solver's two engines run the same algorithm: the numba-compiled kernels (large batches) and
the kernels' source run as plain Python (single small instances, no compilation on a fresh
install). Both must give the same optimal values and policies; small instances must not load numba."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from fairarena.bandit import solver
from fairarena.bandit.notions import NOTIONS, evaluate_batch, optimal_policies, pf_score_batch
from fairarena.bandit.notions.pf import pf_scores_numpy
from fairarena.bandit.problem import favourites


def test_kernel_constants_are_mirrored():
    from fairarena.bandit import _kernels as K

    assert (solver.LINEAR, solver.QUADRATIC, solver.NEGLOGSUM, solver.OWA) == (K.LINEAR, K.QUADRATIC, K.NEGLOGSUM, K.OWA)
    assert (solver.OK, solver.FELL_BACK, solver.FAILED, solver.BAD_START) == (K.OK, K.FELL_BACK, K.FAILED, K.BAD_START)


def test_engine_choice_by_size():
    assert solver.engine_for(1, 3, 3) == "interpreted"
    assert solver.engine_for(1, 10, 10) == "interpreted"
    assert solver.engine_for(1, 50, 4) == "compiled"  # the Dots instance: learners keep the compiled path
    assert solver.engine_for(64, 3, 3) == "compiled"


@pytest.mark.parametrize("seed", range(4))
def test_interpreted_and_compiled_engines_agree(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    n, k = rng.integers(2, 6, size=2)
    mus = rng.uniform(0.05, 0.95, (3, n, k))
    mus[0, :, 1] = mus[0, :, 0]  # duplicated arm: a non-unique optimum, the tie-breaks matter
    opts = [{}, {"ef_kind": "absolute"}, {"tie_break": "central"}]
    for o in opts:
        monkeypatch.setattr(solver, "SMALL_WORK", 10**9)
        slow = optimal_policies(mus, opts=o)
        monkeypatch.setattr(solver, "SMALL_WORK", -1)
        fast = optimal_policies(mus, opts=o)
        for name in NOTIONS:
            v1 = NOTIONS[name].value_batch(mus, slow[name], o)
            v2 = NOTIONS[name].value_batch(mus, fast[name], o)
            np.testing.assert_allclose(v1, v2, atol=1e-9, err_msg=f"{name} {o}")
            np.testing.assert_allclose(slow[name], fast[name], atol=1e-6, err_msg=f"{name} {o}")


def test_numpy_pf_scores_equal_the_compiled_enumeration():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n, k = rng.integers(1, 7), rng.integers(1, 9)
        mu = rng.integers(0, 3, size=(5, n, k)).astype(float)  # many ties: large favourite sets
        ps = rng.dirichlet(np.ones(k), size=5)
        fav = favourites(mu)
        masks = (fav * (1 << np.arange(k))).sum(axis=2).astype(np.int64)
        np.testing.assert_array_equal(pf_scores_numpy(masks, ps), solver.pf_scores(masks, ps))
        np.testing.assert_array_equal(pf_score_batch(fav, ps), solver.pf_scores(masks, ps))


def test_a_small_instance_loads_neither_numba_nor_scipy():
    code = ("import sys, numpy as np\n"
            "from fairarena.bandit.notions import NOTIONS, evaluate_batch, optimal_policies\n"
            "mu = np.array([[[0.9, 0.5, 0.1], [0.2, 0.8, 0.4], [0.3, 0.3, 0.9]]])\n"
            "evaluate_batch(mu, optimal_policies(mu))\n"
            "print('numba' in sys.modules, 'scipy.optimize' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_worked_example_values_on_the_small_path():
    """The foundation issue's first worked example (3 agents, 2 arms): PF = (2/3, 1/3), EF = UF-most
    equalising point (1/2, 1/2), UF = arm 1; on the uncompiled path."""
    mu = np.array([[[0.9, 0.1], [0.9, 0.1], [0.1, 0.9]]])
    pols = optimal_policies(mu)
    np.testing.assert_allclose(pols["pf"][0], [2 / 3, 1 / 3], atol=1e-9)
    np.testing.assert_allclose(pols["ef"][0], [0.5, 0.5], atol=1e-7)
    np.testing.assert_allclose(pols["uf"][0], [1.0, 0.0])
    ev = evaluate_batch(mu, pols)
    assert ev["pf"]["pf"][0] == pytest.approx(1.0)


def test_compile_notice_shown_once_when_the_cache_is_empty(monkeypatch):
    """Where compilation happens (a large problem, nothing in the on-disk cache) the front end's notice
    is shown around it, once per process; with a cache it is not shown at all."""
    import contextlib

    shown: list[int] = []

    @contextlib.contextmanager
    def notice():
        shown.append(1)
        yield

    monkeypatch.setattr(solver, "compile_notice", notice)
    monkeypatch.setattr(solver, "_notice_checked", False)
    monkeypatch.setattr(solver, "_cached", lambda kernels: False)
    solver.compiled_kernels()
    solver.compiled_kernels()
    assert shown == [1]
    monkeypatch.setattr(solver, "_notice_checked", False)
    monkeypatch.setattr(solver, "_cached", lambda kernels: True)
    solver.compiled_kernels()
    assert shown == [1]
