"""The three CLI forms of the foundation issue, on hand-made files, and their bad-input contract."""

import json
import subprocess
import sys

import pytest


def run(*args, check_rc=0):
    proc = subprocess.run([sys.executable, "-m", "fairarena.cli", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == check_rc, (proc.returncode, proc.stdout, proc.stderr)
    return proc


@pytest.fixture()
def files(tmp_path):
    r = tmp_path / "rewards.json"
    r.write_text(json.dumps({"rewards": [[0.9, 0.1], [0.9, 0.1], [0.1, 0.9]]}))
    rc = tmp_path / "rewards.csv"
    rc.write_text("0.9,0.1\n0.8,0.2\n0.1,0.9\n")
    p = tmp_path / "policy.json"
    p.write_text(json.dumps({"policy": [0.5, 0.5]}))
    pb = tmp_path / "bare.json"
    pb.write_text("[0.6666666666666666, 0.3333333333333333]")
    return {"r": r, "rc": rc, "p": p, "pb": pb, "dir": tmp_path}


def test_policy_json(files):
    out = json.loads(run("policy", "--notion", "pf", "--rewards", str(files["r"]), "--json").stdout)
    assert out["notion"] == "pf"
    assert out["policy"] == pytest.approx([2 / 3, 1 / 3])
    assert out["utilities"] == pytest.approx([0.9 * 2 / 3 + 0.1 / 3, 0.9 * 2 / 3 + 0.1 / 3, 0.1 * 2 / 3 + 0.9 / 3])
    assert out["decision_shares"] == pytest.approx([2 / 3, 2 / 3, 1 / 3])
    out = json.loads(run("policy", "--notion", "ef", "--rewards", str(files["r"]), "--json").stdout)
    assert out["policy"] == pytest.approx([0.5, 0.5], abs=1e-7)


def test_score_json_csv_rewards(files):
    out = json.loads(run("score", "--rewards", str(files["rc"]), "--policy", str(files["p"]), "--json").stdout)
    assert set(out) >= {"pf", "ef", "uf", "nsw", "ggi", "maximin", "utilities", "decision_shares"}
    assert out["pf"] == pytest.approx(5 / 6)
    assert out["uf"] == pytest.approx(1.5 / 1.8)
    assert out["decision_shares"] == pytest.approx([0.5, 0.5, 0.5])


def test_check_json(files):
    out = json.loads(run("check", "--rewards", str(files["r"]), "--policy", str(files["p"]), "--json").stdout)
    assert out["procedural_core"] is False and out["proportional"] is True
    assert out["blocking"]["coalition"] == [0, 1]
    out = json.loads(run("check", "--rewards", str(files["r"]), "--policy", str(files["pb"]), "--json").stdout)
    assert out["procedural_core"] is True and out["outcome_core"] is True and out["blocking"] is None


def test_check_json_is_the_library_check_policy_report(files):
    """The check command renders bandit.properties.check_policy (no assembly of its own): the JSON is
    the report's to_dict plus whether the policy file was renormalised, and the blocking coalition
    is a real witness (each member gains by deviating)."""
    from fairarena.bandit.display import clean_numbers
    from fairarena.bandit.properties import check_policy, procedural_core

    mu = [[0.9, 0.1], [0.9, 0.1], [0.1, 0.9]]
    report = check_policy(mu, [0.5, 0.5])
    doc = report.to_dict()
    assert doc["blocking"]["core"] == "procedural" and doc["blocking"]["coalition"] == [0, 1]
    assert doc["blocking"]["policy"] == procedural_core(mu, [0.5, 0.5]).blocking.policy
    assert min(doc["blocking"]["gains"]) >= 0 and max(doc["blocking"]["gains"]) > 0
    out = json.loads(run("check", "--rewards", str(files["r"]), "--policy", str(files["p"]), "--json").stdout)
    assert out == {**clean_numbers(doc), "renormalised": False}


BAD_REWARDS = {
    "outside": ({"rewards": [[0.5, 1.5]]}, "rewards[0][1]"),
    "nan": ('{"rewards": [[0.5, NaN]]}', "rewards[0][1]"),
    "ragged": ({"rewards": [[0.5, 0.5], [0.5]]}, "rewards[1]"),
    "no agents": ({"rewards": []}, "rewards"),
    "no arms": ({"rewards": [[]]}, "rewards.K"),
    "not json": ("{rewards: oops", "rewards"),
}


@pytest.mark.parametrize("case", list(BAD_REWARDS))
def test_bad_rewards_exit_2(files, case):
    payload, field = BAD_REWARDS[case]
    f = files["dir"] / "bad.json"
    f.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    proc = run("policy", "--notion", "pf", "--rewards", str(f), "--json", check_rc=2)
    assert field in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


BAD_POLICIES = {
    "wrong length": ([0.2, 0.3, 0.5], "has length 3"),
    "negative": ([1.5, -0.5], "policy[1]"),
    "not summing to 1": ([0.5, 0.4], "sum(policy)"),
    "nan": ('[0.5, NaN]', "policy[1]"),
}


@pytest.mark.parametrize("case", list(BAD_POLICIES))
def test_bad_policy_exit_2(files, case):
    payload, needle = BAD_POLICIES[case]
    f = files["dir"] / "badp.json"
    f.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    for cmd in ("score", "check"):
        proc = run(cmd, "--rewards", str(files["r"]), "--policy", str(f), "--json", check_rc=2)
        assert needle in proc.stderr and "Traceback" not in proc.stderr


def test_unknown_notion_and_missing_file_exit_2(files):
    proc = run("policy", "--notion", "fair", "--rewards", str(files["r"]), check_rc=2)
    assert "notion" in proc.stderr and "pf" in proc.stderr
    proc = run("policy", "--notion", "pf", "--rewards", str(files["dir"] / "nope.json"), check_rc=2)
    assert "file not found" in proc.stderr


def test_policy_sum_within_1e6_is_renormalised_and_said_so(files):
    """Issue 11.7: policies from other solvers (accurate to ~1e-8) are accepted and renormalised;
    within 1e-9 nothing changes; beyond 1e-6 the file is still rejected with exit 2."""
    f = files["dir"] / "near.json"
    f.write_text(json.dumps([0.5, 0.5 + 5e-10]))
    out = json.loads(run("score", "--rewards", str(files["r"]), "--policy", str(f), "--json").stdout)
    assert out["renormalised"] is False
    f.write_text(json.dumps([0.5, 0.5 + 8e-7]))
    for cmd in ("score", "check"):
        out = json.loads(run(cmd, "--rewards", str(files["r"]), "--policy", str(f), "--json").stdout)
        assert out["renormalised"] is True
    f.write_text(json.dumps([0.5, 0.5 + 2e-6]))
    for cmd in ("score", "check"):
        proc = run(cmd, "--rewards", str(files["r"]), "--policy", str(f), "--json", check_rc=2)
        assert "sum(policy)" in proc.stderr and "1e-06" in proc.stderr


def test_notions_listing_loads_no_numerical_code_and_equals_the_registry():
    """`fairarena notions` in a fresh process lists the built-ins from their descriptions without
    importing numpy or the notion modules; what it prints is exactly the registry's entries."""
    code = ("import sys, io, contextlib; sys.argv = ['fairarena', 'notions', '--json']\n"
            "from fairarena.cli import main\n"
            "buf = io.StringIO()\n"
            "try:\n    with contextlib.redirect_stdout(buf): main()\nexcept SystemExit: pass\n"
            "print(sorted(m for m in ('numpy', 'pydantic', 'fairarena.bandit.notions') if m in sys.modules))\n"
            "print(buf.getvalue())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded, listing = proc.stdout.split("\n", 1)
    assert loaded == "[]"
    from fairarena.bandit.notions import NOTIONS
    from fairarena.bandit.vocabulary import BUILTIN_NOTIONS

    assert json.loads(listing) == [{"name": e.name, "title": e.title, "summary": e.description, "source": e.citation,
                                    "direction": e.direction} for e in NOTIONS.entries() if e.name in BUILTIN_NOTIONS]
    assert [n for n in NOTIONS if n in BUILTIN_NOTIONS] == list(BUILTIN_NOTIONS)
    assert {n: NOTIONS.entry(n).meta["label"] for n in BUILTIN_NOTIONS} == {n: d["label"] for n, d in BUILTIN_NOTIONS.items()}
