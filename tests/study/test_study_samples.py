"""``samples = k``: repeats of every debate, each with its own recorded seed; keys and digests of studies
without repeats unchanged; the new design fields (samples, concurrency tables, replicas) validated with
one error naming them."""

from __future__ import annotations

import pytest

from fairarena.errors import InputError
from fairarena.study.design import expand, from_dict, preset, presets, sample_seed


def test_samples_at_one_change_no_key_and_no_digest():
    base = preset("paper")
    one = preset("paper", samples=1)
    assert one.digest() == base.digest() and one.digest().startswith("4cf15bffdd45")   # pinned before samples
    assert [t.key for t in expand(one)] == [t.key for t in expand(base)]
    assert all(t.sample == 0 for t in expand(one))
    assert preset("paper", samples=2).digest() != base.digest()


def test_each_sample_has_its_own_seed_and_sample_zero_is_the_design():
    cfg = preset("tiny", seeds=[0, 7], samples=3)
    tasks = expand(cfg)
    plain = expand(preset("tiny", seeds=[0, 7]))
    assert len(tasks) == 3 * len(plain) and len({t.key for t in tasks}) == len(tasks)
    assert {t.key for t in plain} <= {t.key for t in tasks}              # adding samples reruns nothing
    assert {(t.seed, t.sample) for t in tasks} == {(sample_seed(s, j), j) for s in (0, 7) for j in range(3)}
    assert sample_seed(0, 0) == 0 and sample_seed(7, 0) == 7
    assert (sample_seed(0, 1), sample_seed(0, 2), sample_seed(7, 1)) == (1197419213, 1960968307, 1455233694)
    for t in tasks:                                                        # the debate runs at the sample's seed
        assert t.debate_config().seed == t.seed and t.to_dict()["sample"] == t.sample


def test_council_studies_repeat_too():
    tasks = expand(preset("council-small", samples=2))
    plain = expand(preset("council-small"))
    assert len(tasks) == 2 * len(plain) and {t.key for t in plain} <= {t.key for t in tasks}
    assert sorted({t.sample for t in tasks}) == [0, 1]


def test_the_sample_seed_reaches_the_model():
    import json

    from fairarena.allocation.problem import allocation_to_mapping
    from fairarena.study.store import RunOptions, execute_task
    from fairarena.llm.scripted import register_script
    from fairarena.triage import sample_cohort

    p = sample_cohort(0, "standard").to_problem()
    reply = json.dumps({"allocation": allocation_to_mapping(p, p.zeros()), "justification": "z", "critique": "n",
                        "accept": True})
    seen: list[int] = []

    def zero(msgs, params):
        seen.append(params.seed)
        return reply

    register_script("samples-zero", zero, replace=True)
    cfg = preset("tiny", model_a="scripted:samples-zero", model_b="scripted:samples-zero", samples=2, cohorts=1)
    one = [t for t in expand(cfg) if t.sample == 1][0]
    rec, _ = execute_task(one, RunOptions())
    assert rec["status"] == "ok" and rec["task"]["sample"] == 1 and rec["task"]["seed"] == sample_seed(0, 1)
    base = [t for t in expand(cfg) if t.sample == 0][0]
    seen_one = list(seen)
    seen.clear()
    execute_task(base, RunOptions())
    assert seen_one and seen and set(seen_one).isdisjoint(seen)   # other seeds, hence other cache entries


@pytest.mark.parametrize("field, value, needle", [
    ("samples", 0, "study.samples"),
    ("samples", -2, "study.samples"),
    ("samples", True, "study.samples"),
    ("samples", 1.5, "study.samples"),
    ("samples", "3", "study.samples"),
    ("concurrency", {"http://h/v1": True}, "study.concurrency"),
    ("concurrency", {"http://h/v1": {"start": 0, "max": 8}}, "study.concurrency"),
    ("concurrency", {"http://h/v1": {"start": 9, "max": 4}}, "study.concurrency"),
    ("concurrency", {"http://h/v1": {"burst": 3}}, "study.concurrency"),
    ("concurrency", {"http://h/v1": {"start": 2, "max": 8, "decrease": 1.5}}, "study.concurrency"),
    ("concurrency", [4], "study.concurrency"),
    ("default_concurrency", 0, "study.default_concurrency"),
    ("default_concurrency", {"max": "lots"}, "study.default_concurrency"),
    ("replicas", {"h:1": ["http://a/v1"]}, "study.replicas"),
    ("replicas", {"http://h:1/v1": []}, "study.replicas"),
    ("replicas", {"http://h:1/v1": ["ftp://a"]}, "study.replicas"),
    ("replicas", {"http://elsewhere/v1": ["http://a/v1"]}, "study.replicas"),
    ("replicas", ["http://a/v1"], "study.replicas"),
])
def test_new_design_fields_are_checked_with_one_error_naming_them(field, value, needle):
    data = {**presets()["tiny"], "model_a": "openai:m@http://h:1/v1", field: value}
    with pytest.raises(InputError) as exc:
        from_dict(data, "study.")
    assert exc.value.field == needle, exc.value
    assert "\n" not in str(exc.value)


def test_concurrency_forms_and_replicas():
    from fairarena.llm.concurrency import ConcurrencyPolicy

    cfg = preset("tiny", model_a="openai:m@http://h:1/v1", model_b="openai:m@http://g:2/v1",
                 concurrency={"http://h:1/v1": {"start": 8, "max": 128}, "http://g:2/v1": 2},
                 replicas={"http://h:1/v1/": ["http://h:1/v1", "http://h2:1/v1"]})
    assert cfg.server_policy(cfg.model_a) == ConcurrencyPolicy(start=8, max=128)
    assert cfg.server_policy(cfg.model_b) == ConcurrencyPolicy.fixed(2)
    assert cfg.server_limit(cfg.model_a) == 128 and cfg.server_limit(cfg.model_b) == 2
    assert cfg.replica_urls(cfg.model_a) == ["http://h:1/v1", "http://h2:1/v1"]
    assert cfg.replica_urls(cfg.model_b) == ["http://g:2/v1"] and cfg.replica_urls("scripted") == []
    # keys do not depend on how a study runs
    assert [t.key for t in expand(cfg)] == [t.key for t in expand(preset("tiny", model_a=cfg.model_a,
                                                                              model_b=cfg.model_b))]
    # a table round-trips through the TOML writer
    import tomllib

    from fairarena.study.design import to_toml
    assert from_dict(tomllib.loads(to_toml(cfg)), "study.") == cfg
