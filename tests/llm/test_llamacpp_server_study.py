"""A tiny study against a real llama.cpp server with 2 parallel slots (native ``llama-server``, the real
SmolLM2-135M GGUF): ``fairarena study run`` in a subprocess with concurrency 2 on threads, killed with
SIGKILL once its first debate is on disk, then resumed to completion by a second ``study run``. Every
debate is there once, none that was on disk is run again, and the records show what the server did: the
prompt tokens it reused from its prefix cache (``serving.prompt_reuse``) and the server key and
concurrency the runner used (``serving.servers``). The study is a language-model study, so its
baseline-vs-baseline control is on by default and runs too.

Skipped like tests/llm/test_llamacpp_server.py (whose server fixture it shares) when no native
``llama-server`` is found ($FAIRARENA_LLAMA_SERVER or PATH) or the GGUF package is missing. A 135M model's
proposals are nonsense: structure and serving are asserted, never values."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openai")

from fairarena.study.design import expand, load_study, preset, to_toml  # noqa: E402
from fairarena.study.store import finished_keys, load_results, record_path  # noqa: E402

pytestmark = [pytest.mark.llm, pytest.mark.slow]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


_here = Path(__file__).resolve().parent
_server = _load(_here / "test_llamacpp_server.py", "_llamacpp_server_for_study")
run_and_kill = _load(_here.parent / "study" / "conftest.py", "_study_conftest_for_llamacpp").run_and_kill
server = _server.server          # the module-scoped fixture: llama-server --parallel 2 (or skip)
SLOTS = _server.SLOTS


def test_study_on_a_two_slot_llama_server_killed_resumed_with_reuse_and_concurrency_in_records(server, tmp_path):
    base = f"{server}/v1"
    spec = f"openai:smollm2@{base}?context_window=4096"
    cfg = preset("tiny", cohorts=1, agent_a=["aligned:care"], opponents=["baseline", "adversarial"],
                 model_a=spec, model_b=spec, rag="off", rounds=1, max_repairs=0, max_tokens=32,
                 closing=["mean-repair"], proposal_format="priorities", concurrency={base: SLOTS})
    study = tmp_path / "study.toml"
    study.write_text(to_toml(cfg))
    assert "\nbaseline_control = true\n" in study.read_text()     # stated in the file a model study writes
    cfg, _ = load_study(study)
    tasks = expand(cfg)
    assert [t.opponent_role for t in tasks] == ["B", "C", "control"]   # the control is on by default
    root = tmp_path / "st"

    run_and_kill(study, root, after=1, timeout=900, poll=0.05, extra=("--backend", "threads"))
    before = finished_keys(root)
    assert 1 <= len(before) < len(tasks)
    on_disk = {k: record_path(root, k).read_bytes() for k in before}

    r = subprocess.run([sys.executable, "-m", "fairarena.cli", "study", "run", str(study), "--out", str(root),
                        "--backend", "threads", "--json"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = json.loads(r.stdout)
    assert summary["skipped"] == len(before) and summary["ran"] == len(tasks) - len(before)
    assert summary["ok"] == len(tasks) and summary["failed"] == 0
    assert {k: record_path(root, k).read_bytes() for k in before} == on_disk    # nothing on disk was rerun

    rows = load_results(root)
    assert [x["key"] for x in rows] == [t.key for t in tasks]
    for x in rows:
        assert x["status"] == "ok", x.get("error")
        serve = x["serving"]
        # the runner's concurrency, keyed by the server's base URL (the spec's ?context_window= is not in it)
        assert list(serve["servers"]) == [base]
        assert serve["servers"][base]["limit"] == SLOTS
        assert 1 <= serve["servers"][base]["lowest"] <= serve["servers"][base]["current"] <= SLOTS
        # what the server reported reusing from its prefix cache, over both agents' calls
        assert isinstance(serve["cached_prompt_tokens"], int) and serve["prompt_tokens"] > 0
        assert serve["prompt_reuse"] == round(serve["cached_prompt_tokens"] / serve["prompt_tokens"], 4)
        # the per-agent figures add up to it (an agent whose every call came from the study's response
        # cache, e.g. the baseline's opening replayed in the control debate, reports none)
        assert serve["cached_prompt_tokens"] == sum(x["usage"][w].get("cached_prompt_tokens", 0) for w in "ab")
    # each agent's second call reuses its first prompt's slot: the server reused prompt tokens in every debate
    assert all(x["serving"]["cached_prompt_tokens"] > 0 for x in rows)
    print("\nllama-server study serving:", [(x["task"]["opponent_role"], x["serving"]) for x in rows])
