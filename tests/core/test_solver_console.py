"""HiGHS's console never reaches stdout: ``fairarena.solver_console`` silences file descriptor 1 around
every solve. ``data/highs_console_model.npz`` is the negotiator's MILP that printed HiGHS's stray
``transformNewIntegerFeasibleSolution`` line from C++ in the issue's reproduction (standard cohort of
seed 154, egalitarian vs baseline, scripted, 3 rounds; captured from that debate): scipy's ``milp`` prints
it on every solve, the wrapper does not. The reproduction itself must print one JSON document."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from fairarena.solver_console import milp, quiet_solver

DATA = Path(__file__).parent / "data" / "highs_console_model.npz"

FAIRARENA = str(Path(sys.executable).with_name("fairarena"))
DEBATE = ["debate", "--seed", "0", "--agent-a", "aligned:egalitarian", "--agent-b", "baseline", "--model", "scripted",
          "--rounds", "3", "--json"]


def test_fd1_is_silenced_inside_and_restored_after(capfd):
    os.write(1, b"before\n")
    with quiet_solver():
        os.write(1, b"from C\n")          # what a C library's printf amounts to
        with quiet_solver():              # nested: still silenced, nothing restored early
            os.write(1, b"nested\n")
        os.write(1, b"still inside\n")
    os.write(1, b"after\n")
    assert capfd.readouterr().out == "before\nafter\n"


def test_solves_in_threads_share_one_redirection(capfd):
    from fairarena.allocation.frameworks import solve_utilitarian
    from fairarena.triage import sample_cohort

    problems = [sample_cohort(s, "standard").to_problem() for s in range(6)]
    errors: list[BaseException] = []

    def solve(p):
        try:
            with quiet_solver():
                os.write(1, b"noise\n")
                solve_utilitarian(p)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=solve, args=(p,)) for p in problems]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    os.write(1, b"restored\n")
    assert not errors and capfd.readouterr().out == "restored\n"


def test_debate_json_on_the_issue_cohort_is_one_json_document(tmp_path):
    cohort = tmp_path / "c154.json"
    subprocess.run([FAIRARENA, "triage", "cohort", "--seed", "154", "--capacity", "standard", "--out", str(cohort)],
                   check=True, capture_output=True, timeout=120)
    args = [*DEBATE, "--cohort", str(cohort)]
    p = subprocess.run([FAIRARENA, *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-1500:]
    assert json.loads(p.stdout)["status"] == "ok"
    assert "Highs" not in p.stdout + p.stderr


def _pinned_model() -> tuple[tuple, dict]:
    from scipy.optimize import Bounds, LinearConstraint

    d = np.load(DATA)
    A = sp.csr_array((d["A_data"], d["A_indices"], d["A_indptr"]), shape=tuple(d["A_shape"]))
    return (d["c"],), dict(constraints=[LinearConstraint(A, d["lo"], d["hi"])], integrality=d["integrality"],
                           bounds=Bounds(d["lb"], d["ub"]), options={"mip_rel_gap": float(d["mip_rel_gap"])})


def test_the_pinned_model_prints_from_c_and_the_wrapper_silences_it(capfd):
    from scipy.optimize import milp as scipy_milp

    args, kw = _pinned_model()
    loud = scipy_milp(*args, **kw)
    assert "HighsMipSolverData::transformNewIntegerFeasibleSolution" in capfd.readouterr().out  # the print is live
    quiet = milp(*args, **kw)
    assert capfd.readouterr().out == ""
    assert quiet.status == loud.status == 0 and quiet.fun == loud.fun and np.array_equal(quiet.x, loud.x)
