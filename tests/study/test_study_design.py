"""The study design: the paper preset, validation (exit 2 naming the field, before any write), TOML
round trip, and task keys (a hash of what determines a debate, independent of position)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest

from fairarena.errors import InputError
from fairarena.study.design import StudyConfig, expand, from_dict, load_study, preset, presets, to_toml


def test_paper_preset_is_the_papers_design():
    from fairarena.allocation.welfare import FRAMEWORKS

    cfg = preset("paper")
    assert cfg.cohorts == 50 and cfg.capacity == ["standard"] and cfg.rounds == 3
    assert cfg.closing == ["joint-draft"] and cfg.opponents == ["baseline", "adversarial"]
    assert cfg.agent_a == [f"aligned:{f}" for f in FRAMEWORKS]          # every framework of the registry
    assert len(FRAMEWORKS) == 6
    assert cfg.model_a == cfg.model_b == "scripted:negotiator"
    tasks = expand(cfg)
    assert len(tasks) == 50 * 6 * 2 == 600
    assert len({t.key for t in tasks}) == 600
    assert [t.index for t in tasks] == list(range(600))
    # every (cohort, framework, opponent) cell exactly once; opponents labelled as the paper's B and C
    cells = Counter((t.cohort, t.framework, t.opponent_role) for t in tasks)
    assert set(cells.values()) == {1} and {r for *_, r in cells} == {"B", "C"}
    assert sorted({t.cohort_seed for t in tasks}) == list(range(50))


def test_toml_round_trip_gives_the_same_design(tmp_path):
    for name in presets():
        cfg = preset(name)
        p = tmp_path / f"{name}.toml"
        p.write_text(to_toml(cfg))
        back, text = load_study(p)
        assert back == cfg and back.digest() == cfg.digest() and text == p.read_text()


def test_base_preset_and_study_table(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('[study]\nbase = "paper"\ncohorts = 3\nbaseline_control = true\nclosing = ["joint-draft", "mean-repair"]\n')
    cfg, _ = load_study(p)
    tasks = expand(cfg)
    # 3 cohorts x (6 x 2 + 1 control) x 2 closings
    assert len(tasks) == 3 * 13 * 2
    ctrl = [t for t in tasks if t.control]
    assert len(ctrl) == 6 and all(t.agent_a == t.agent_b == "baseline" for t in ctrl)


@pytest.mark.parametrize("field, value, needle", [
    ("capacity", ["roomy"], "study.capacity"),
    ("agent_a", ["aligned:stoic"], "study.agent_a"),
    ("opponents", ["friendly"], "study.opponents"),
    ("model_b", "gpt:4", "study.model_b"),
    ("closing", ["coin-flip"], "study.closing"),
    ("rounds", 0, "study.rounds"),
    ("proposal_format", "haiku", "study.proposal_format"),
    ("rag", "maybe", "study.rag"),
    ("concurrency", {"http://x": 0}, "study.concurrency"),
    ("seeds", [-1], "study.seeds"),
    ("colour", "blue", "study.colour"),
])
def test_bad_field_names_field_and_value(field, value, needle):
    data = {**presets()["tiny"], field: value}
    with pytest.raises(InputError) as exc:
        from_dict(data)
    assert exc.value.field == needle
    assert str(value).strip("[]'{}").split(":")[0] in str(exc.value)


def test_cli_bad_field_exit_2_one_line_nothing_written(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('base = "tiny"\nrounds = -1\n')
    out = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "fairarena.cli", "study", "run", str(p), "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    err = r.stderr.strip()
    assert "study.rounds" in err and "-1" in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_keys_depend_on_what_determines_a_debate_only():
    small = {t.key: t for t in expand(preset("small"))}
    paper = {t.key: t for t in expand(preset("paper"))}
    # position-independent: the small study's debates are the paper's first five cohorts, same keys
    assert set(small) <= set(paper)
    assert len(small) == 60
    base = expand(preset("tiny"))
    for change in (dict(rounds=2), dict(seeds=[1]), dict(closing=["mean-repair"]), dict(temperature=0.5),
                   dict(model_b="openai:m@http://127.0.0.1:9/v1"), dict(capacity=["tight"]), dict(max_repairs=1),
                   dict(first_cohort_seed=5)):
        other = expand(preset("tiny", **change))
        assert not ({t.key for t in base} & {t.key for t in other}), change
    # and not on labels or run-time settings
    same = expand(preset("tiny", name="renamed", concurrency={"http://h/v1": 3}, default_concurrency=9))
    assert [t.key for t in same] == [t.key for t in base]


def test_design_digest_ignores_comments_and_order(tmp_path):
    a = tmp_path / "a.toml"
    b = tmp_path / "b.toml"
    a.write_text('base = "tiny"\nrounds = 2\ncohorts = 3\n')
    b.write_text('# a comment\ncohorts = 3\n\nrounds = 2\nbase = "tiny"\n')
    assert load_study(a)[0].digest() == load_study(b)[0].digest()
    assert load_study(a)[0].digest() != preset("tiny").digest()


def test_server_limits():
    cfg = preset("tiny", model_a="openai:m@http://h:1/v1", model_b="llamacpp:smollm2",
                 concurrency={"http://h:1/v1": 3})
    assert cfg.server_limit(cfg.model_a) == 3
    assert cfg.server_limit(cfg.model_b) == 1            # in-process llama.cpp: one call at a time
    assert cfg.server_limit("openai:z@http://other/v1") == cfg.default_concurrency
    assert cfg.server_limit("scripted") is None


def test_init_cli_writes_paper_and_refuses_overwrite(tmp_path):
    out = tmp_path / "study.toml"
    cmd = [sys.executable, "-m", "fairarena.cli", "study", "init", "--preset", "paper", "--out", str(out)]
    assert subprocess.run(cmd, capture_output=True, timeout=120).returncode == 0
    cfg, _ = load_study(out)
    assert cfg == preset("paper") and isinstance(cfg, StudyConfig)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--force" in r.stderr


def test_a_design_that_leaves_out_defaults_reads_back_as_itself(tmp_path):
    """Every default of a design is already in the form its validator gives (a design that omitted
    model_a/model_b ran with 'scripted' but was stored and read back as 'scripted:negotiator', so
    'study status' called its records 'of another design'). Property: the default design equals its own
    validated dump; and a TOML without the model fields runs and its folder's status counts it ok."""
    import subprocess
    import sys

    from fairarena.study.design import StudyConfig

    for kind in ("duel", "council"):
        cfg = StudyConfig(kind=kind)
        assert StudyConfig.model_validate(cfg.model_dump()) == cfg
    f = tmp_path / "s.toml"
    f.write_text('name = "x"\ncohorts = 1\nagent_a = ["aligned:care"]\nopponents = ["baseline"]\nrounds = 1\n')
    run = [sys.executable, "-m", "fairarena.cli", "study"]
    assert subprocess.run([*run, "run", str(f), "--out", str(tmp_path / "st")], capture_output=True).returncode == 0
    r = subprocess.run([*run, "status", str(tmp_path / "st"), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    import json
    status = json.loads(r.stdout)
    assert status["ok"] == 1 and status.get("pending", 0) == 0, status


# ------------------------------------------------------------------------------------------------
# Strict types, the empty design and the size limit: refused in one line, exit 2, before any write
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line, field", [
    ('temperature = "0.5"', "study.temperature"),
    ('baseline_control = "yes"', "study.baseline_control"),
    ("baseline_control = 1", "study.baseline_control"),
    ("cohorts = true", "study.cohorts"),
    ('cohorts = "3"', "study.cohorts"),
    ("cohorts = 2.0", "study.cohorts"),
    ("rounds = true", "study.rounds"),
    ('max_tokens = "900"', "study.max_tokens"),
    ("max_repairs = false", "study.max_repairs"),
    ("temperature = true", "study.temperature"),
    ('first_cohort_seed = "0"', "study.first_cohort_seed"),
    ("seeds = [0, true]", "study.seeds.1"),
    ('seeds = ["1"]', "study.seeds.0"),
])
def test_text_and_booleans_are_not_numbers(tmp_path, line, field):
    p = tmp_path / "s.toml"
    p.write_text(f'base = "tiny"\n{line}\n')
    with pytest.raises(InputError) as exc:
        load_study(p)
    assert exc.value.field == field
    assert "expected" in exc.value.expected


def test_integers_still_read_as_float_fields_with_the_same_digest(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('base = "paper"\ntemperature = 0\n')
    cfg, _ = load_study(p)
    assert cfg.temperature == 0.0 and isinstance(cfg.temperature, float)
    assert cfg.digest() == preset("paper").digest()


@pytest.mark.parametrize("text", ["", "# only a comment\n", "[study]\n"])
def test_an_empty_design_is_refused(tmp_path, text):
    p = tmp_path / "s.toml"
    p.write_text(text)
    with pytest.raises(InputError) as exc:
        load_study(p)
    assert exc.value.field == "study" and "an empty design" in exc.value.expected
    assert "study init --preset" in exc.value.expected


@pytest.mark.parametrize("line, field", [
    ("cohorts = 1000000000", "study.cohorts"),
    ("samples = 1000", "study.samples"),
    ('kind = "council"\nagent_a = ["aligned:utilitarian", "aligned:rawlsian"]\ncohorts = 100000\nrounds = 50',
     "study.cohorts"),   # under the debate limit, over the model-call limit
])
def test_an_unbounded_design_is_refused_naming_its_largest_factor(tmp_path, line, field):
    from fairarena.study.design import MAX_DEBATES, MAX_MODEL_CALLS

    p = tmp_path / "s.toml"
    p.write_text(f'base = "paper"\n{line}\n')
    with pytest.raises(InputError) as exc:
        load_study(p)
    assert exc.value.field == field
    assert f"{MAX_DEBATES:,}" in exc.value.expected or f"{MAX_MODEL_CALLS:,}" in exc.value.expected


def test_the_limits_are_generous_for_every_preset():
    from fairarena.study.design import MAX_DEBATES, MAX_MODEL_CALLS, estimate_size

    for name in presets():
        cfg = preset(name)
        debates, calls = estimate_size(cfg)
        assert debates == len(expand(cfg))                # the estimate is the expansion's size (no repeats)
        assert debates * 100 <= MAX_DEBATES and calls * 100 <= MAX_MODEL_CALLS, name
    assert estimate_size(preset("paper")) == (600, 600 * 2 * 5)


def test_keys_and_digests_of_the_presets_are_pinned():
    """Strict types and size limits change no valid design: every preset's digest and task keys as before."""
    import hashlib

    pinned = {"paper": ("4cf15bffdd45", "5fe0cec76318f0a3"), "tiny": ("8ef83ff47c00", "b8e3b50c6bf0a6dd"),
              "council": ("e435b8982c75", "93e8048ef39a059a"), "tourism-small": ("b00b92568c67", "c1dba5df5160fc6c")}
    for name, (digest, keys) in pinned.items():
        cfg = preset(name)
        assert cfg.digest()[:12] == digest, name
        assert hashlib.sha256("".join(t.key for t in expand(cfg)).encode()).hexdigest()[:16] == keys, name


@pytest.mark.parametrize("text, needle", [
    ('cohorts = true\n', "study.cohorts"),
    ('', "an empty design"),
    ('cohorts = 1000000000\n', "study.cohorts = 1000000000"),
])
def test_cli_refuses_in_one_line_before_any_write(tmp_path, text, needle):
    p = tmp_path / "s.toml"
    p.write_text(text)
    out = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "fairarena.cli", "study", "run", str(p), "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    err = r.stderr.strip()
    assert r.returncode == 2 and needle in err and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert not out.exists()


@pytest.mark.parametrize("name", ["paper", "council", "council-small", "tourism", "tourism-small", "pb-small"])
def test_init_writes_the_fields_a_study_reads_and_loads_back_the_same_design(name, tmp_path):
    """`study init` leaves out (and names) the fields its kind and domain do not read, at their defaults; the
    file loads back to the preset's design, digest included, and names no field twice."""
    from fairarena.study.design import DOMAIN_FIELDS, StudyConfig, load_study, preset, read_fields, to_toml

    cfg = preset(name)
    text = to_toml(cfg)
    (tmp_path / "s.toml").write_text(text, encoding="utf-8")
    back, _ = load_study(tmp_path / "s.toml")
    assert back.digest() == cfg.digest() and back.canonical() == cfg.canonical()
    written = [ln.split(" = ")[0].lstrip("# ") for ln in text.splitlines() if " = " in ln and not ln.startswith("# ")
               or ln.startswith("# baseline_control = ")]
    assert len(written) == len(set(written))
    left = set(StudyConfig.model_fields) - set(written)
    assert left <= set(StudyConfig.model_fields) - set(read_fields(cfg))
    if left:
        assert text.rstrip().splitlines()[-1].endswith(", ".join(f for f in StudyConfig.model_fields if f in left))
    reads = set(read_fields(cfg))
    if cfg.domain == "pb":        # a PB council reads none of the triage or tourism knobs
        assert not reads & set(DOMAIN_FIELDS) and not set(DOMAIN_FIELDS) & set(written)
    elif cfg.domain == "tourism":
        assert {"decision", "pois", "k"} <= reads and not {"capacity", "agent_a", "opponents"} & reads
    else:
        assert {"capacity", "agent_a"} <= reads and not {"decision", "pois", "k"} & reads
