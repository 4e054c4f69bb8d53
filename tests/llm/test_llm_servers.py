"""Servers as servers: what the study and tourism commands do when the server is not there, or the
response cache is not one (loopback only: port 9 on 127.0.0.1 is the discard port nobody listens on)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fairarena.errors import InputError
from fairarena.llm import ServerUnavailableError
from fairarena.llm.spec import check_reachable

FAIRARENA = str(Path(sys.executable).with_name("fairarena"))
DOWN = "http://127.0.0.1:9/v1"


def _study(tmp_path, url: str) -> Path:
    from fairarena.experiments.study import preset, to_toml

    spec = f"openai:m@{url}"
    study = tmp_path / "study.toml"
    study.write_text(to_toml(preset("tiny", model_a=spec, model_b=spec, rag="off", cohorts=1)))
    return study


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([FAIRARENA, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "FAIRARENA_API_KEY": ""})


def test_preflight_names_the_unreachable_server_once(fake_server):
    check_reachable([f"openai:m@{fake_server.base_url}", "scripted", "llamacpp:smollm2"])  # answers: no error
    with pytest.raises(ServerUnavailableError, match=r"no LLM server answers at http://127.0.0.1:9/v1 .*\[") as exc:
        check_reachable([f"openai:m@{fake_server.base_url}", f"openai:m@{DOWN}?timeout=5"])
    assert "\n" not in str(exc.value)
    assert fake_server.requests == []   # a connection only: nothing was sent


def test_study_run_against_an_unreachable_server_is_one_line_exit_2(tmp_path):
    out = tmp_path / "st"
    p = _cli("study", "run", str(_study(tmp_path, DOWN)), "--out", str(out))
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and "no LLM server answers at http://127.0.0.1:9/v1" in p.stderr
    assert "Traceback" not in p.stderr and not out.exists()


@pytest.mark.parametrize("kind", ["folder", "text"])
def test_a_cache_that_is_a_folder_or_not_sqlite_is_refused_up_front(fake_server, tmp_path, kind):
    from fairarena.experiments.study import preset, to_toml
    from fairarena.experiments.study_store import run_study

    cache = tmp_path / "cache"
    if kind == "folder":
        cache.mkdir()
    else:
        cache.write_text("not a database\n")
    spec = f"openai:m@{fake_server.base_url}"
    cfg = preset("tiny", model_a=spec, model_b=spec, rag="off", cohorts=1)
    with pytest.raises(InputError) as exc:
        run_study(cfg, to_toml(cfg), tmp_path / "st", cache=cache)
    assert exc.value.field == "cache" and ("folder" if kind == "folder" else "not SQLite") in exc.value.expected
    assert not (tmp_path / "st").exists() and fake_server.requests == []
    p = _cli("study", "run", str(_study(tmp_path, fake_server.base_url)), "--out", str(tmp_path / "st2"),
             "--cache", str(cache))
    assert p.returncode == 2 and p.stderr.startswith("error: cache = ") and "Traceback" not in p.stderr, p.stderr
    assert not (tmp_path / "st2").exists()


def test_an_empty_or_new_cache_file_is_accepted(tmp_path):
    from fairarena.llm.wrappers import check_cache_file

    (tmp_path / "empty.sqlite").write_bytes(b"")
    assert check_cache_file(tmp_path / "empty.sqlite") == tmp_path / "empty.sqlite"
    assert check_cache_file(tmp_path / "new.sqlite") == tmp_path / "new.sqlite"


def test_tourism_run_against_an_unreachable_model_exits_non_zero(tmp_path):
    dest = tmp_path / "d.json"
    assert _cli("tourism", "destination", "--seed", "0", "--pois", "12", "--out", str(dest)).returncode == 0
    p = _cli("tourism", "run", "--destination", str(dest), "--decision", "flows", "--model", f"openai:m@{DOWN}",
             "--rounds", "1")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "debate failed" in p.stderr and "127.0.0.1:9" in p.stderr and "Traceback" not in p.stderr
