"""`fairarena triage ...` end to end through typer's CliRunner on generated cohorts."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from fairarena.triage import FRAMEWORKS, load_cohort
from fairarena.triage.cli import register
from fairarena.cli_common import standalone_app

app = standalone_app(register)

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["triage", *args])


@pytest.fixture(scope="module")
def cohort_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "cohort.json"
    res = run("cohort", "--seed", "7", "--capacity", "tight", "--out", str(path))
    assert res.exit_code == 0, res.output
    return path


def test_cohort_command_writes_a_valid_seeded_cohort(cohort_file, tmp_path):
    c = load_cohort(cohort_file)
    assert len(c.patients) == 8 and c.meta["seed"] == 7 and c.meta["capacity_variant"] == "tight"
    assert c.meta["provenance"]["seed"] == 7
    again = tmp_path / "again.json"
    assert run("cohort", "--seed", "7", "--capacity", "tight", "--out", str(again)).exit_code == 0
    assert load_cohort(again).patients == c.patients
    res = run("cohort", "--seed", "3", "--capacity", "high")
    assert res.exit_code == 0 and json.loads(res.stdout)["capacity"]["ICU"] == 5
    assert {p.slot for p in c.patients} == set(range(1, 9)) and c.meta["archetypes"] == "paper"
    res = run("cohort", "--seed", "7", "--capacity", "tight", "--archetypes", "reconstructed")
    assert res.exit_code == 0
    from fairarena.triage import sample_cohort

    former = json.loads(res.stdout)
    assert former["patients"] == sample_cohort(7, "tight", archetypes="reconstructed").to_dict()["patients"]
    assert all("slot" not in pat for pat in former["patients"])
    res = run("cohort", "--seed", "7", "--archetypes", "invented")
    assert res.exit_code == 2 and "archetypes" in res.output and "paper, reconstructed" in res.output


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_optimal_then_metrics_round_trip(cohort_file, tmp_path, framework):
    out = tmp_path / "alloc.json"
    res = run("optimal", "--cohort", str(cohort_file), "--framework", framework, "--json", "--out", str(out))
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert set(data) >= {"allocation", "metrics"}
    assert set(data["metrics"]) >= {"esg", "rmg", "var", "dw_esg", "vwci", "gini", "cnss", "feasible", "violations"}
    assert data["metrics"]["feasible"] is True
    res2 = run("metrics", "--cohort", str(cohort_file), "--allocation", str(out), "--json")
    assert res2.exit_code == 0, res2.output
    m = json.loads(res2.stdout)
    for k in ("esg", "rmg", "var", "dw_esg", "vwci", "gini"):
        assert m[k] == pytest.approx(data["metrics"][k], abs=1e-5)


def test_metrics_reports_infeasible_allocation_without_error(cohort_file, tmp_path):
    c = load_cohort(cohort_file)
    alloc = {p.id: dict(p.needs) for p in c.patients}  # everybody gets everything: far over capacity
    path = tmp_path / "greedy.json"
    path.write_text(json.dumps({"allocation": alloc}))
    res = run("metrics", "--cohort", str(cohort_file), "--allocation", str(path), "--json")
    assert res.exit_code == 0, res.output
    m = json.loads(res.stdout)
    assert m["feasible"] is False
    assert m["cnss"] == [1.0] * 8 and m["rmg"] == 1.0 and m["var"] == 0.0
    total_icu = sum(p.needs.get("ICU", 0) for p in c.patients)
    assert f"ICU total {total_icu:g} exceeds capacity 2" in m["violations"]
    human = run("metrics", "--cohort", str(cohort_file), "--allocation", str(path))
    assert human.exit_code == 0 and "feasible: no" in human.stdout


def test_nondegenerate_command(cohort_file):
    res = run("nondegenerate", "--cohort", str(cohort_file), "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["nondegenerate"] is True
    assert {"a": "utilitarian", "b": "rawlsian"} in [{"a": c["a"], "b": c["b"]} for c in d["conflicts"]]
    assert set(d["loss"]["utilitarian"]) == set(FRAMEWORKS)
    human = run("nondegenerate", "--cohort", str(cohort_file))
    assert human.exit_code == 0 and "non-degenerate: yes" in human.stdout


def _write(tmp_path, name, obj):
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return str(path)


def _cohort_dict(cohort_file):
    return json.loads(cohort_file.read_text())


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["patients"][3].__setitem__("survival", 1.2), "patients[3].survival"),
    (lambda d: d["patients"][3].__setitem__("survival", -0.1), "patients[3].survival"),
    (lambda d: d["patients"][1]["needs"].__setitem__("Dialysis", 2), "patients[1].needs.Dialysis"),
    (lambda d: d["patients"][1]["needs"].__setitem__("Nursing", -3), "patients[1].needs.Nursing"),
    (lambda d: d["patients"][2].__setitem__("id", d["patients"][0]["id"]), "patients[2].id"),
    (lambda d: d["capacity"].pop("Surgery"), "capacity.Surgery"),
    (lambda d: d.pop("capacity"), "capacity"),
])
def test_bad_cohort_exit_2_naming_field(cohort_file, tmp_path, mutate, field):
    d = _cohort_dict(cohort_file)
    mutate(d)
    bad = _write(tmp_path, "bad.json", d)
    alloc = _write(tmp_path, "a.json", {"allocation": {}})
    for args in (["metrics", "--cohort", bad, "--allocation", alloc, "--json"],
                 ["optimal", "--cohort", bad, "--framework", "care", "--json"],
                 ["nondegenerate", "--cohort", bad, "--json"]):
        res = run(*args)
        assert res.exit_code == 2, res.output
        assert field in res.stderr
        assert "Traceback" not in res.output and res.stdout == ""


def test_nan_survival_in_file(cohort_file, tmp_path):
    text = re.sub(r'"survival": [0-9.]+', '"survival": NaN', cohort_file.read_text(), count=1)
    assert "NaN" in text
    bad = _write(tmp_path, "nan.json", text)
    res = run("optimal", "--cohort", bad, "--framework", "care")
    assert res.exit_code == 2 and "patients[0].survival" in res.stderr


@pytest.mark.parametrize("alloc, field", [
    ({"allocation": {"P99": {"ICU": 1}}}, "allocation.P99"),
    ({"allocation": {"P1": {"Dialysis": 1}}}, "allocation.P1.Dialysis"),
    ({"allocation": {"P1": {"Nursing": -2}}}, "allocation.P1.Nursing"),
    ('{"allocation": {"P1": {"Nursing": NaN}}}', "allocation.P1.Nursing"),
    ({"allocation": {"P1": {"Nursing": "lots"}}}, "allocation.P1.Nursing"),
    ({"P1": {"Nursing": 2}}, "allocation"),
    ('{"allocation": ', "valid JSON"),
])
def test_bad_allocation_exit_2_naming_field(cohort_file, tmp_path, alloc, field):
    path = _write(tmp_path, "alloc.json", alloc)
    res = run("metrics", "--cohort", str(cohort_file), "--allocation", path, "--json")
    assert res.exit_code == 2, res.output
    assert field in res.stderr and res.stdout == ""


def test_missing_file_and_bad_choices(tmp_path, cohort_file):
    res = run("metrics", "--cohort", str(tmp_path / "nope.json"), "--allocation", str(tmp_path / "a.json"))
    assert res.exit_code == 2 and "nope.json" in res.stderr
    assert run("optimal", "--cohort", str(cohort_file), "--framework", "stoic").exit_code == 2
    assert run("cohort", "--seed", "1", "--capacity", "lavish").exit_code == 2


def test_cnss_and_weights_options(cohort_file, tmp_path):
    alloc = tmp_path / "a.json"
    alloc.write_text(json.dumps({"allocation": {"P1": {"Nursing": 0.5}, "P2": {"Nursing": 1}}}))
    ind = json.loads(run("metrics", "--cohort", str(cohort_file), "--allocation", str(alloc), "--json").stdout)
    frac = json.loads(run("metrics", "--cohort", str(cohort_file), "--allocation", str(alloc), "--json",
                          "--cnss", "fractional").stdout)
    cohort = load_cohort(cohort_file)
    n1, n2 = (len([v for v in p.needs.values() if v > 0]) for p in cohort.patients[:2])
    assert ind["cnss"][:2] == pytest.approx([0.0, 1 / n2])  # half an hour is below the one-hour minimum
    assert frac["cnss"][0] == pytest.approx(0.5 / cohort.patients[0].needs["Nursing"] / n1)
    pts = json.loads(run("metrics", "--cohort", str(cohort_file), "--allocation", str(alloc), "--json",
                         "--weights", "points").stdout)
    assert pts["dw_esg"] != pytest.approx(ind["dw_esg"])
    opt = json.loads(run("optimal", "--cohort", str(cohort_file), "--framework", "utilitarian", "--json",
                         "--cnss", "fractional").stdout)
    assert opt["cnss"] == "fractional" and opt["weights"] == "ses-scale"
    for flag, bad in (("--cnss", "binary"), ("--weights", "wealth")):
        res = run("optimal", "--cohort", str(cohort_file), "--framework", "care", flag, bad)
        assert res.exit_code == 2 and bad in res.output and "Traceback" not in res.output


def test_cli_module_builds_nothing_from_the_registries_at_import_and_help_lists_them():
    """triage/cli.py imports no numerical module (its options are plain strings checked against the
    registries when a command runs); the help's lists and defaults equal the registries'."""
    import subprocess
    import sys

    code = ("import sys, fairarena.triage.cli as c; import enum;"
            "print(sorted(m for m in ('numpy', 'scipy', 'fairarena.triage.cohort', 'fairarena.allocation.frameworks')"
            " if m in sys.modules)); print([n for n, v in vars(c).items() if isinstance(v, type) and issubclass(v, enum.Enum)])")
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert lines[:2] == ["[]", "[]"]
    from fairarena.allocation.problem import DEFAULT_CNSS
    from fairarena.triage import cli
    from fairarena.triage.cohort import CAPACITY_VARIANTS, DEFAULT_DISADVANTAGE

    assert (cli.DEFAULT_CNSS, cli.DEFAULT_DISADVANTAGE) == (DEFAULT_CNSS, DEFAULT_DISADVANTAGE)
    cohort_help = re.sub(r"\s+", " ", run("cohort", "--help").output.replace("│", " "))
    assert re.search(r"CAPACITY_VARIANTS: (.*?)\)", cohort_help).group(1).split(", ") == list(CAPACITY_VARIANTS)
    optimal_help = re.sub(r"\s+", " ", run("optimal", "--help").output.replace("│", " "))
    assert re.search(r"registry: (.*?)\)", optimal_help).group(1).split(", ") == list(FRAMEWORKS)
    res = run("cohort", "--seed", "1", "--capacity", "lavish")
    assert res.exit_code == 2 and "capacity = 'lavish'" in res.stderr and "tight, standard, high" in res.stderr
    res = run("optimal", "--cohort", "x.json", "--framework", "stoic")
    assert res.exit_code == 2 and "framework = 'stoic'" in res.stderr and "Traceback" not in res.output


def test_strict_egalitarian_table_says_undefined_gini(tmp_path):
    # strict egalitarianism levels down to the empty allocation: nobody gets nursing, so its Gini is
    # undefined; the plain table must say so (it crashed formatting the JSON-safe None)
    path = tmp_path / "c3.json"
    assert run("cohort", "--seed", "3", "--out", str(path)).exit_code == 0
    res = run("optimal", "--cohort", str(path), "--framework", "egalitarian", "--egalitarian", "strict")
    assert res.exit_code == 0, res.output
    assert re.search(r"Gini[^\n]*undefined", res.output), res.output


def test_survival_labels_option_reaches_what_agents_see(tmp_path):
    # the paper labels survival two ways (Section 4.2: Acute/Low/Mid/High; Appendix D.2: acute/moderate/mild):
    # the main text's is the default, the appendix's an option written into the cohort file
    from fairarena.arena.domain import DOMAINS

    main, appx = tmp_path / "main.json", tmp_path / "appx.json"
    assert run("cohort", "--seed", "3", "--out", str(main)).exit_code == 0
    assert run("cohort", "--seed", "3", "--out", str(appx), "--survival-labels", "appendix").exit_code == 0
    assert "survival_labels" not in json.loads(main.read_text())["meta"]   # default left out: files unchanged
    c_main, c_appx = load_cohort(main), load_cohort(appx)
    assert c_appx.survival_labels == "appendix" and c_main.survival_labels == "main"
    shown_main, shown_appx = DOMAINS["triage"].render(c_main), DOMAINS["triage"].render(c_appx)
    assert "Acute < 0.2, Low 0.2-0.5" in shown_main and "moderate 0.2-0.7" in shown_appx
    rows = [ln for ln in shown_appx.splitlines() if ln.startswith("| P")]
    assert rows and all(any(f"| {w} |" in ln for w in ("acute", "moderate", "mild")) for ln in rows)
    bad = run("cohort", "--seed", "3", "--survival-labels", "coarse")
    assert bad.exit_code == 2 and "survival-labels" in bad.output
    data = json.loads(appx.read_text())
    data["meta"]["survival_labels"] = "coarse"
    appx.write_text(json.dumps(data))
    res = run("optimal", "--cohort", str(appx), "--framework", "utilitarian")
    assert res.exit_code == 2 and "meta.survival_labels" in res.output
