"""The registered pb domain as a pool of elections (fairarena.pb.domain: pool_files, sample, study_instance,
the generic metrics) and a council study over several elections through the study API."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from fairarena.domains.protocol import instance_digest
from fairarena.errors import InputError
from fairarena.pb import rules
from fairarena.pb.domain import PB, POOL_ENV, POOL_KEYS, POOL_ORDER, PBDomain, example_path, pool_files
from fairarena.pb.election import read_election

SMALL = Path("/work/shared/data/pabulib/small")


@pytest.fixture(autouse=True)
def _no_pool_env(monkeypatch):
    monkeypatch.delenv(POOL_ENV, raising=False)


def test_default_pool_is_the_shipped_elections_in_order():
    assert [p.name for p in pool_files()] == [example_path(n).name for n in POOL_ORDER]
    digests = [instance_digest(PB, PB.sample(s)) for s in range(len(POOL_ORDER))]
    assert len(set(digests)) == len(POOL_ORDER)                  # a different election for every seed
    assert instance_digest(PB, PB.sample(len(POOL_ORDER) + 2)) == digests[2]      # sample wraps around
    assert PB.sample(0).title == read_election(example_path("falenica")).title


def test_participants_and_metrics_never_name_one_elections_groups():
    names = [m.key for m in PB.metrics()]
    assert names[:6] == ["approvals", "budget_used", "gini", "worst", "vs_city", "vs_city_projects"]
    for s in range(len(POOL_ORDER)):
        inst = PB.sample(s)
        assert [p.name for p in PB.participants(inst)] == list(POOL_KEYS)
        got = PB.evaluate(inst, PB.optimum(inst, PB.participants(inst)[0]))
        assert sorted(got) == sorted(names)


def test_distance_to_the_city_against_slow_code():
    inst = PB.sample(POOL_ORDER.index("wesola"))
    e = read_election(example_path("wesola"))
    city = e.index(e.selected)
    assert PB.evaluate(inst, inst.x(city))["vs_city"] == 0.0
    assert PB.evaluate(inst, inst.x(rules.greedy(e)))["vs_city_projects"] == 0.0     # Warsaw ran greedy
    rng = np.random.default_rng(1)
    for _ in range(20):
        mask = rng.random(e.n_projects) < 0.3
        cost = sum(c for c, a, b in zip(e.costs, mask, city) if a != b)
        m = PB.evaluate(inst, inst.x(mask))
        assert m["vs_city"] == pytest.approx(cost / e.budget)
        assert m["vs_city_projects"] == sum(1 for a, b in zip(mask, city) if a != b)
    krakow = PB.sample(POOL_ORDER.index("krakow"))                  # the file records no outcome
    assert krakow.selected is None and np.isnan(PB.evaluate(krakow, krakow.x(np.zeros(len(krakow.costs))))["vs_city"])


def test_study_instance_refuses_a_seed_beyond_the_pool():
    assert PB.study_instance(4) is PB.sample(4)
    with pytest.raises(InputError) as exc:
        PB.study_instance(5)
    assert exc.value.field == "study.cohorts" and "5 elections" in str(exc.value)
    bound = PBDomain(PB.sample(0))                                 # a bound domain: its election for any seed
    assert bound.study_instance(9) is bound.sample(0) and bound.study_design("council") is None


def test_pool_env_adds_folders_and_refuses_bad_ones(monkeypatch, tmp_path):
    monkeypatch.setenv(POOL_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(InputError) as exc:
        pool_files()
    assert exc.value.field == POOL_ENV
    if not SMALL.is_dir():
        pytest.skip("the 272 small Pabulib files are not here")
    (tmp_path / "sub").mkdir()
    shutil.copy(SMALL / "poland_lodz_2020_gorniak.pb", tmp_path / "sub")              # three clusters of >= 10
    shutil.copy(SMALL / "poland_warszawa_2018_przyczolek-grochowski.pb", tmp_path)   # one cluster: left out
    shutil.copy(example_path("wesola"), tmp_path)                                     # already in the pool
    monkeypatch.setenv(POOL_ENV, str(tmp_path))
    files = pool_files()
    assert [p.name for p in files] == [example_path(n).name for n in POOL_ORDER] + ["poland_lodz_2020_gorniak.pb"]
    assert PB.sample(len(POOL_ORDER)).title == read_election(files[-1]).title


def test_council_study_over_several_elections(tmp_path):
    study = pytest.importorskip("fairarena.study.store")
    from fairarena.study.analysis import analyse_study
    from fairarena.study.design import expand, preset, to_toml

    assert preset("pb").cohorts == len(pool_files()) == len(POOL_ORDER)     # every election of the pool
    cfg = preset("pb-small")
    assert cfg.cohorts == 3 and cfg.members == list(POOL_KEYS)
    tasks = expand(cfg)
    assert len({t.key for t in tasks}) == 3                       # one election per cohort: three task keys
    root = tmp_path / "study"
    summary = study.run_study(cfg, to_toml(cfg), root)
    assert summary.ok == 3 and summary.failed == 0
    recs = study.load_results(root)
    titles = set()
    for r in recs:
        inst = PB.sample(int(r["task"]["cohort_seed"]))
        titles.add(inst.title)
        rows = {x["rule"]: x for x in r["rows"]}
        assert "debate" in rows and rows["debate"]["feasible"]
        assert set(rows["debate"]["metrics"]) == {m.key for m in PB.metrics()}
    assert len(titles) == 3
    an = analyse_study(root, n_resamples=50)                       # stats pair the debate with each rule
    assert an.domain == "pb" and an.members == list(POOL_KEYS)
    assert an.stats.cell("debate", "leximin", "worst").result.n == 3
    with pytest.raises(InputError):
        study.run_study(preset("pb-small", cohorts=6), to_toml(preset("pb-small", cohorts=6)), tmp_path / "s6")


FREE = """META
key;value
budget;100
vote_type;approval
PROJECTS
project_id;cost;name;selected
1;60;A;1
2;50;B;0
3;0;free;1
4;40;C;1
VOTES
voter_id;vote
""" + "".join(f"{i};1,3\n" for i in range(1, 13)) + "".join(f"{i};2,4\n" for i in range(13, 25)) + \
    "".join(f"{i};3,4\n" for i in range(25, 37))


def test_a_free_project_is_a_valid_allocation_item(pb_file):
    # a project of cost 0 (Gdynia 2020 Grabowek has one) made the allocation problem refuse the instance
    # ("need[...] = {}: at least one needed resource"), so its debate failed in pb compare and in a study
    from fairarena.domains import check
    from fairarena.pb.domain import domain_for

    f = pb_file(FREE, "free.pb")
    d = domain_for(f, "clusters:3", min_group=1)
    inst = d.sample(0)
    prob = d.problem(inst)
    assert prob.capacity[0] == 101 and list(prob.need[:, 0]) == [60, 50, 1, 40]
    city = np.array([True, False, True, True])
    x = inst.x(city)
    assert not d.violations(inst, x) and (inst.mask(x) == city).all()
    m = d.evaluate(inst, x)
    assert m["budget_used"] == 1.0 and sum(m[k] for k in m if k.startswith("share:")) == pytest.approx(1.0)
    assert d.violations(inst, inst.x([True, True, True, False]))                  # 110 over the budget of 100
    half = x.copy(); half[2, 0] = 0.5
    assert any("free project" in v for v in d.violations(inst, half))
    report = check(d, studies=False)                                               # linear forms = evaluate, debate
    assert report.ok, report.table()
    from fairarena.pb.compare import compare

    row = next(r for r in compare(f, "clusters:3", min_group=1)["rows"] if r["rule"] == "debate")
    assert row["debate"]["status"] == "ok" and "3" in row["projects"]
