"""The baseline-vs-baseline control is on by default when a language model plays a duel, off for scripted
models and councils, resolved when the design is read (scripted digests and every existing key unchanged);
a model study's records say how it was served (``serving``)."""

from __future__ import annotations

from fairarena.study.design import expand, from_dict, load_study, preset, presets, to_toml
from fairarena.study.store import load_results, run_study

MODEL = "openai:m@http://127.0.0.1:9/v1"


def test_the_control_default_follows_the_models():
    assert preset("tiny").baseline_control is False
    assert preset("council-small").baseline_control is False
    assert preset("tiny", model_a=MODEL).baseline_control is True
    assert preset("tiny", model_b=MODEL).baseline_control is True
    assert preset("tiny", model_a=MODEL, baseline_control=False).baseline_control is False   # explicit wins
    assert preset("tiny", baseline_control=True).baseline_control is True
    assert from_dict({**presets()["tiny"], "baseline_control": None}).baseline_control is False
    # a scripted design's digest is the one it had with the explicit false
    assert preset("tiny").digest() == preset("tiny", baseline_control=False).digest()


def test_the_control_adds_debates_and_changes_no_key():
    on, off = preset("tiny", model_a=MODEL), preset("tiny", model_a=MODEL, baseline_control=False)
    t_on, t_off = expand(on), expand(off)
    assert len(t_on) == len(t_off) + on.cohorts                  # one control per cohort, seed and closing
    assert [t.key for t in t_on if not t.control] == [t.key for t in t_off]
    assert [(t.agent_a, t.agent_b) for t in t_on if t.control] == [("baseline", "baseline")] * on.cohorts


def test_design_files_state_the_control_of_a_model_study(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(to_toml(preset("tiny", model_a=MODEL)))
    assert "\nbaseline_control = true\n" in p.read_text()
    # a scripted design leaves the field to its default (commented out): edited to use a model, it gets the control
    text = to_toml(preset("tiny"))
    assert "\n# baseline_control = false\n" in text and "\nbaseline_control =" not in text
    p.write_text(text.replace('model_a = "scripted:negotiator"', f'model_a = "{MODEL}"'))
    cfg, _ = load_study(p)
    assert cfg.baseline_control is True
    p.write_text(text)
    assert load_study(p)[0] == preset("tiny")


def test_a_model_study_without_the_control_adopts_it_and_runs_only_the_controls(zero_server, tmp_path):
    url = zero_server.base_url
    kw = dict(model_a=f"openai:m@{url}", model_b=f"openai:m@{url}", rag="off", cohorts=1, concurrency={url: 3})
    old = preset("tiny", baseline_control=False, **kw)         # as such a study was stored before the default
    root = tmp_path / "st"
    run_study(old, to_toml(old), root, backend="threads")
    new = preset("tiny", **kw)
    s = run_study(new, to_toml(new), root, backend="threads")   # adopted without force
    assert s.skipped == len(expand(old)) and s.ran == 1 and s.ok == len(expand(new))
    rows = load_results(root)
    assert [r["task"]["control"] for r in rows] == [False] * 4 + [True]
    for r in rows:   # the server key and its concurrency; this server reports no prompt reuse
        assert r["serving"] == {"prompt_reuse": None, "cached_prompt_tokens": None, "prompt_tokens": None,
                                "servers": {url: {"limit": 3, "current": 3, "lowest": 3}}}


def test_scripted_records_carry_no_serving(tiny_run):
    _, root = tiny_run
    assert all("serving" not in r for r in load_results(root))
