"""``fairarena sweep`` and ``fairarena preflib`` end to end: outputs, JSON, and bad input (exit 2,
field named, nothing written to --out)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from fairarena.cli import app
from fairarena.sweep.preflib_example import PACKAGED_DOTS

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def test_sweep_writes_every_artefact_and_json_summary(tmp_path):
    out = tmp_path / "sweep"
    res = run("sweep", "--preset", "tiny", "--limit", "12", "--workers", "1", "--out", str(out), "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["n_settings"] == 12 and summary["seconds"] > 0
    assert set(summary["table"]) == {"pf", "ef", "uf", "nsw", "ggi"}
    assert summary["config"]["seed"] == 42 and "numpy" in summary["versions"]
    for name in ("settings.parquet", "summary.json", "run.json", "table1.md", "table1.tex",
                 "figure1.png", "figure1.svg"):
        assert (out / name).stat().st_size > 0, name
    df = pd.read_parquet(out / "settings.parquet")
    assert len(df) == 60 and {"N", "K", "culture", "phi", "fav_mode", "f", "seed", "policy", "pf", "ef",
                              "uf", "nsw_value", "ggi_value", "maximin_value"} <= set(df.columns)
    pf_mean = df[df.policy == "ef"]["pf"].mean()
    assert summary["table"]["ef"]["pf"][0] == pytest.approx(pf_mean)
    md = (out / "table1.md").read_text()
    assert f"| EF | {summary['table']['ef']['pf'][0]:.2f} ± " in md
    assert json.loads((out / "summary.json").read_text())["table"] == summary["table"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary leftovers


def test_sweep_from_a_config_file_for_people(tmp_path):
    cfg = tmp_path / "g.toml"
    cfg.write_text('N = [3]\nK = [3]\ncultures = ["mallows"]\nphi = [0.0, 1.0]\nfavourites = ["strict"]\n')
    res = run("sweep", "--config", str(cfg), "--out", str(tmp_path / "o"), "--workers", "1")
    assert res.exit_code == 0, res.output
    assert "Table 1" in res.stdout and "| PF |" in res.stdout
    df = pd.read_parquet(tmp_path / "o" / "settings.parquet")
    assert sorted(df.phi.unique()) == [0.0, 1.0] and (df.f == 0).all()


BAD_GRIDS = [
    ('N = [2]\nK = [2]\ncultures = ["ic"]\nfavourites = ["fixed"]\nf = [2]\n', "grid"),
    ('N = [2]\nK = []\ncultures = ["ic"]\n', "config.K"),
    ('N = [0]\nK = [2]\ncultures = ["ic"]\n', "config.N"),
    ('N = [2]\nK = [0]\ncultures = ["ic"]\n', "config.K"),
    ('N = [2]\nK = [2]\ncultures = ["polya"]\n', "config.cultures"),
    ('N = [2]\nK = [2]\ncultures = ["mallows"]\nphi = [-0.5]\n', "config.phi"),
]


@pytest.mark.parametrize("body, field", BAD_GRIDS)
def test_bad_grid_exits_2_naming_the_field_and_writes_nothing(tmp_path, body, field):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(body)
    out = tmp_path / "out"
    res = run("sweep", "--config", str(cfg), "--out", str(out))
    assert res.exit_code == 2, res.output
    assert f"{field} = " in res.output and "Traceback" not in res.output
    assert not out.exists()


@pytest.mark.parametrize("args, field", [
    (["--preset", "enormous"], "preset"),
    (["--preset", "tiny", "--limit", "0"], "limit"),
    (["--preset", "tiny", "--workers", "0"], "workers"),
    (["--preset", "tiny", "--backend", "ray"], "backend"),
    (["--preset", "tiny", "--address", "tcp://127.0.0.1:1"], "address"),
])
def test_bad_sweep_options_exit_2(tmp_path, args, field):
    out = tmp_path / "out"
    res = run("sweep", *args, "--out", str(out), "--json")
    assert res.exit_code == 2, res.output
    assert f"{field} = " in res.output
    assert not out.exists()


def test_failed_run_keeps_an_existing_out_folder_untouched(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("old")
    import fairarena.sweep.store as store

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(store, "table_latex", boom)
    res = run("sweep", "--preset", "tiny", "--limit", "3", "--workers", "1", "--out", str(out), "--json")
    assert res.exit_code != 0
    # the output-folder guard's lock file (fsutil.output_folder: an flock on out/.lock, kept by design) is
    # the only addition; no result file was written or replaced
    assert sorted(p.name for p in out.iterdir() if p.name != ".lock") == ["summary.json"]
    assert (out / "summary.json").read_text() == "old"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_preflib_json_lets_anyone_recompute_the_scores(tmp_path):
    from fairarena.bandit.notions import score_all

    out = tmp_path / "dots"
    res = run("preflib", "--file", str(PACKAGED_DOTS), "--voters", "50", "--seed", "42", "--out", str(out), "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    mu = np.array(data["rewards"])
    assert mu.shape == (50, 4)
    assert set(data["policies"]) >= {"pf", "ef", "uf", "nsw", "ggi"}
    for name, r in data["policies"].items():
        s = score_all(mu, r["policy"])
        for key in ("pf", "ef", "uf"):  # printed policies and scores are snapped to 8 decimals
            assert r[key] == pytest.approx(s[key], abs=1e-7), (name, key)
        assert sum(r["policy"]) == pytest.approx(1.0, abs=1e-12)
    assert data["policies"]["pf"]["pf"] == pytest.approx(1.0)
    # the PF policy gives each first choice its share of voters
    firsts = np.bincount(mu.argmax(axis=1), minlength=4) / 50
    assert np.allclose(data["policies"]["pf"]["policy"], firsts)
    for name in ("preflib.json", "table2.md", "figure2.png", "figure2.svg", "run.json"):
        assert (out / name).stat().st_size > 0


@pytest.mark.parametrize("content, voters, field", [
    (None, "801", "voters"),
    ("# DATA TYPE: soc\n# NUMBER ALTERNATIVES: 3\nhello\n", "2", "file"),
    ("", "2", "file"),
])
def test_preflib_bad_input_exits_2(tmp_path, content, voters, field):
    path = PACKAGED_DOTS
    if content is not None:
        path = tmp_path / "bad.soc"
        path.write_text(content)
    out = tmp_path / "out"
    res = run("preflib", "--file", str(path), "--voters", voters, "--out", str(out))
    assert res.exit_code == 2, res.output
    assert f"{field} = " in res.output
    assert not out.exists()


def test_preflib_missing_file_exits_2(tmp_path):
    res = run("preflib", "--file", str(tmp_path / "none.soc"), "--out", str(tmp_path / "o"))
    assert res.exit_code == 2 and "file = " in res.output
