"""The runner against loopback OpenAI-compatible fake servers: many debates in flight with an adaptive
per-server limit, no small last wave of debates, back-off on 429, replicas sharing one study, progress lines
off a terminal, and a design that only adds samples or changes concurrency adopted without --force, rerunning
nothing."""

from __future__ import annotations

import pytest

from fairarena.study.design import expand, to_toml
from fairarena.study.store import load_results, run_study

from .conftest import ZeroServer, tiny_design


def _design(url, **kw):
    return tiny_design(model_a=f"openai:m@{url}", model_b=f"openai:m@{url}", rag="off", **kw)


def test_many_debates_in_flight_and_the_limit_grows_to_keep_the_server_busy(zero_server, tmp_path):
    from fairarena.llm.wrappers import server_limits

    zero_server.delay = 0.05
    url = zero_server.base_url
    cfg = _design(url, cohorts=4, concurrency={url: {"start": 2, "max": 6}})
    s = run_study(cfg, to_toml(cfg), tmp_path / "st", backend="threads")
    # 4 cohorts x (4 debates + the baseline-vs-baseline control, on by default with a model); ceil(2.5 x 6) in flight
    assert s.ok == len(expand(cfg)) == 20 and s.workers == 15
    assert 2 < zero_server.max_in_flight <= 6                         # grew beyond its start, never past max
    lim = server_limits()[url]
    assert lim["highest"] > 2 and lim["limit"] == 6


def test_a_small_last_wave_of_debates_starts_with_the_others(zero_server, tmp_path):
    """Debates started together advance together, so a few left over for a last wave would start near the
    end and run alone on an idle server: up to a quarter more than the default, all start at once."""
    url = zero_server.base_url
    cfg = _design(url, cohorts=4, concurrency={url: 7})     # ceil(2.5 x 7) = 18 threads for 20 debates
    s = run_study(cfg, to_toml(cfg), tmp_path / "st", backend="threads")
    assert s.ok == len(expand(cfg)) == 20 and s.workers == 20
    assert zero_server.max_in_flight <= 7                     # the server's limit is unchanged
    told = run_study(cfg, to_toml(cfg), tmp_path / "told", backend="threads", workers=18)
    assert told.ok == 20 and told.workers == 18               # a number given is kept


def test_429s_make_the_server_limit_back_off(tmp_path):
    pytest.importorskip("openai")
    from fairarena.llm.wrappers import server_limits

    srv = ZeroServer(delay=0.01)
    try:
        srv.plan = [429] * 6
        url = srv.base_url
        cfg = _design(url, cohorts=1, concurrency={url: {"start": 4, "max": 8, "cooldown_s": 0.0}})
        s = run_study(cfg, to_toml(cfg), tmp_path / "st", backend="threads")
        assert s.ok == len(expand(cfg)) and s.failed == 0
        lim = server_limits()[url]
        assert lim["congestion"] >= 1 and lim["decreases"] >= 1 and lim["lowest"] < 4
    finally:
        srv.close()


def test_replicas_share_one_study(tmp_path):
    pytest.importorskip("openai")
    a, b = ZeroServer(delay=0.02), ZeroServer(delay=0.02)
    try:
        cfg = _design(a.base_url, replicas={a.base_url: [a.base_url, b.base_url]},
                      concurrency={a.base_url: 2, b.base_url: 2})
        s = run_study(cfg, to_toml(cfg), tmp_path / "st", backend="threads")
        assert s.ok == len(expand(cfg)) and s.workers == 10             # two servers of 2: ceil(2.5 x 4)
        assert a.requests > 0 and b.requests > 0                          # both replicas answered
        assert a.max_in_flight <= 2 and b.max_in_flight <= 2
        keys = [r["key"] for r in load_results(tmp_path / "st")]
        assert keys == [t.key for t in expand(_design(a.base_url))]       # replicas change no key
    finally:
        a.close()
        b.close()


def test_progress_lines_off_a_terminal_show_rates_and_servers(zero_server, tmp_path):
    from fairarena.study.cli import RunProgress

    url = zero_server.base_url
    cfg = _design(url, cohorts=1, concurrency={url: 3})
    with RunProgress(cfg.name, "threads", terminal=False, every=0.0) as progress:
        run_study(cfg, to_toml(cfg), tmp_path / "st", backend="threads", progress=progress)
    last = progress.lines[-1]
    assert "5/5 debates" in last and "debates/s" in last and "calls/s" in last and "tok/s" in last
    assert f"{url} x" in last and "call errors 0.0%" in last


def test_adding_samples_or_changing_concurrency_reruns_nothing(tmp_path):
    root = tmp_path / "st"
    cfg = tiny_design(cohorts=1, rounds=1)
    first = run_study(cfg, to_toml(cfg), root)
    assert first.ran == 4
    more = tiny_design(cohorts=1, rounds=1, samples=2, default_concurrency=8)   # no --force needed
    again = run_study(more, to_toml(more), root)
    assert again.skipped == 4 and again.ran == 4 and again.ok == 8
    recs = load_results(root)
    assert sorted(r["task"]["sample"] for r in recs) == [0, 0, 0, 0, 1, 1, 1, 1]
    assert len({r["task"]["seed"] for r in recs}) == 2
    from fairarena.errors import InputError

    with pytest.raises(InputError) as exc:                       # any other change still needs --force
        other = tiny_design(cohorts=1, rounds=2)
        run_study(other, to_toml(other), root)
    assert exc.value.field == "out"
