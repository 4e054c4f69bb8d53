"""A study against a real local LLM: SmolLM2-135M-Instruct behind ``python -m llama_cpp.server`` through
the ``openai`` backend (2 cohorts, 1 framework, both opponents, 1 round, no repair turns, 48-token replies,
concurrency 2). The runner is killed with SIGKILL once a debate is finished, then resumed; every debate
must be there exactly once, and ``study stats`` and ``study report`` run on the folder. A 135M model's
allocations are nonsense: this asserts structure, never values."""

from __future__ import annotations


import pytest

pytest.importorskip("llama_cpp")
pytest.importorskip("openai")

from fairarena.study.design import expand, load_study, preset, to_toml  # noqa: E402
from fairarena.study.store import finished_keys, load_results, run_study  # noqa: E402

from .conftest import run_and_kill  # noqa: E402

pytestmark = [pytest.mark.llm, pytest.mark.slow]


def test_smollm2_study_killed_and_resumed(tmp_path):
    from fairarena.llm.llamacpp_backend import bundled_gguf
    from fairarena.llm.server import llama_server

    try:
        gguf = bundled_gguf("smollm2")
    except Exception as exc:
        pytest.skip(f"SmolLM2 GGUF not installed: {exc}")
    with llama_server(gguf, n_ctx=4096) as url:
        cfg = preset("tiny", cohorts=2, agent_a=["aligned:rawlsian"], model_a=f"openai:smollm2@{url}", rag="off",
                     max_repairs=0, max_tokens=48, concurrency={url: 2})
        study = tmp_path / "study.toml"
        study.write_text(to_toml(cfg))
        cfg, text = load_study(study)
        tasks = expand(cfg)
        assert len(tasks) == 2 * (1 * 2 + 1)   # cohorts x (A x opponents + the baseline-vs-baseline control)
        root = tmp_path / "st"
        run_and_kill(study, root, after=1, timeout=1200, poll=0.05, extra=("--backend", "threads"))
        before = finished_keys(root)
        s = run_study(cfg, text, root, backend="threads")
        assert s.ran == len(tasks) - len(before)
    rows = load_results(root)
    assert [r["key"] for r in rows] == [t.key for t in tasks]
    assert finished_keys(root) == {t.key for t in tasks}
    for r in rows:   # structure: a status, and for finished debates a round with both agents and a usage count
        assert r["status"] in ("ok", "failed")
        if r["status"] == "ok":
            assert r["rounds"][0]["a"] is not None and r["usage"]["a"]["calls"] >= 3
    # stats and report on it (debates the model failed are left out: --allow-partial)
    from fairarena.study.analysis import analyse_study, write_study_report

    an = analyse_study(root, allow_partial=True)
    assert an.status["total"] == len(tasks) and an.status["ok"] + an.status["failed"] == len(tasks)
    cells = an.stats.cells
    assert {c.framework for c in cells} <= {"rawlsian"} and {c.opponent for c in cells} <= {"baseline", "adversarial"}
    html = write_study_report(root, tmp_path / "report.html", allow_partial=True)
    text = html.read_text(encoding="utf-8")
    n_ok = sum(r["status"] == "ok" and not r["task"]["control"] for r in rows)   # the drill-down's debates
    assert "<table" in text and "<svg" in text and text.count("<details") >= n_ok   # a drill-down per ok debate
