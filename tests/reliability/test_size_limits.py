"""Sizes bounded before any work: ``aggregate audit`` options and sweep grids beyond their documented
limits are one line naming the field, exit 2, before any work, lock or write. (No timing here: the
refusals are immediate because nothing runs; the limits' costs are in docs/reliability.md.)"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fairarena.cli import app
from fairarena.errors import InputError

runner = CliRunner()


def one_line(r, *needles):
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr, r.exception)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in r.stderr, r.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])


@pytest.mark.parametrize("option, value", [
    ("--cohorts", "1000000"), ("--cohorts", "1001"), ("--search", "1000000000"), ("--search", "10001"),
    ("--profiles", "100001"), ("--profiles", "0"), ("--instances", "10001"), ("--instances", "-1"),
])
def test_audit_sizes_are_bounded(tmp_path, option, value):
    witness = tmp_path / "w"
    r = runner.invoke(app, ["aggregate", "audit", option, value, "--witness", str(witness)])
    one_line(r, f"{option} = {value}", "expected an integer from")
    assert not witness.exists()


def test_audit_limits_cover_the_documented_sizes():
    from fairarena.aggregation.cli import AUDIT_LIMITS

    # the defaults and the documented runs (500 profiles, 10 instances, 30 steps, 3 and 50 cohorts) fit
    assert AUDIT_LIMITS["--profiles"][0] >= 500 and AUDIT_LIMITS["--instances"][0] >= 10
    assert AUDIT_LIMITS["--search"][0] >= 30 and AUDIT_LIMITS["--cohorts"][0] >= 50


@pytest.mark.parametrize("body, field", [
    ('base = "paper"\nN = [100000000000000000000]\n', "config.N"),
    ('base = "paper"\nN = [501]\n', "config.N"),
    ('base = "paper"\nK = [1001]\n', "config.K"),
    ('base = "paper"\nf = [5000]\n', "config.f"),
])
def test_sweep_agents_and_arms_are_bounded_before_the_lock(tmp_path, body, field):
    p = tmp_path / "grid.toml"
    p.write_text(body)
    out = tmp_path / "out"
    r = runner.invoke(app, ["sweep", "--config", str(p), "--out", str(out), "--backend", "serial"])
    one_line(r, f"{field} = ", "at most")
    assert not out.exists()          # no lock taken, nothing written


def test_sweep_grid_size_is_counted_before_settings_are_made(tmp_path):
    from fairarena.sweep.config import MAX_SETTINGS, grid_size, load_config

    p = tmp_path / "grid.toml"
    ks = list(range(2, 101))
    p.write_text(f'base = "paper"\nN = {list(range(2, 42))}\nK = {ks}\nf = {list(range(1, 100))}\n'
                 'phi = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]\n')
    cfg = load_config(p)
    n = 40 * 13 * (sum(k - 1 for k in ks) + len(ks))    # N x culture configurations x (fixed f < K + random)
    assert grid_size(cfg) == n > MAX_SETTINGS
    out = tmp_path / "out"
    r = runner.invoke(app, ["sweep", "--config", str(p), "--out", str(out), "--backend", "serial"])
    one_line(r, f"grid = '{n:,} settings'", f"at most {MAX_SETTINGS:,}")
    assert not out.exists()


def test_grid_size_equals_the_expanded_grid_for_every_preset():
    from fairarena.sweep.config import PRESETS, expand, grid_size, preset

    for name in PRESETS.names():
        cfg = preset(name)
        assert grid_size(cfg) == len(expand(cfg))
    assert grid_size(preset("paper")) == 7776


def test_library_preset_overrides_are_bounded_too():
    from fairarena.sweep.config import preset

    with pytest.raises(InputError) as exc:
        preset("tiny", N=[10**20])
    assert exc.value.field == "N"


@pytest.mark.parametrize("backend, field_text", [
    ("processes", "worker processes"), ("dask", "worker processes"), ("threads", "4,096 threads"),
])
@pytest.mark.parametrize("command", ["study", "sweep"])
def test_worker_counts_are_bounded_before_the_lock(tmp_path, backend, field_text, command):
    # --workers 1000000000 was taken as given: a dask LocalCluster was asked for that many processes (the
    # processes and threads backends only took min(workers, tasks), so a large study started one per debate)
    from fairarena.execution import max_workers

    out = tmp_path / "out"
    if command == "study":
        toml = tmp_path / "s.toml"
        assert runner.invoke(app, ["study", "init", "--preset", "tiny", "--out", str(toml)]).exit_code == 0
        args = ["study", "run", str(toml)]
    else:
        args = ["sweep", "--preset", "paper", "--limit", "5"]
    r = runner.invoke(app, [*args, "--out", str(out), "--backend", backend, "--workers", "1000000000"])
    one_line(r, "workers = 1000000000", f"at most {max_workers(backend):,} ", field_text, f"{backend} backend")
    assert not out.exists()


def test_worker_limits_and_what_they_leave_alone():
    from fairarena.execution import MAX_THREADS, check_workers, default_workers, map_tasks, max_workers

    procs = max(32, 4 * default_workers())
    assert max_workers("processes") == max_workers("loky") == max_workers("dask") == procs
    assert max_workers("threads") == max_workers("threading") == MAX_THREADS == 4096
    assert max_workers("serial") is None                           # serial ignores the count
    assert max_workers("dask", "tcp://10.0.0.1:8786") is None     # an external cluster's workers are not ours
    assert check_workers(procs, "processes") == procs and check_workers(10**9, "serial") == 10**9
    assert check_workers(10**9) == 10**9                           # no backend: only a positive integer
    # the documented uses fit: 650 threads against a model server (docs/performance.md), the default threads
    from fairarena.study.store import MAX_DEFAULT_THREADS

    assert check_workers(650, "threads") == 650 and MAX_DEFAULT_THREADS <= MAX_THREADS
    with pytest.raises(InputError, match="at most"):
        map_tasks(abs, [1, -2], backend="processes", workers=procs + 1)
    assert map_tasks(abs, [1, -2], backend="threads", workers=MAX_THREADS) == [1, 2]
