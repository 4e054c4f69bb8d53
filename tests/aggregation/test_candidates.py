"""Candidate-set rules: against pref_voting's implementations, hand-worked profiles and brute force."""

import itertools

import numpy as np
import pytest

from fairarena.aggregation import candidates as C
from fairarena.aggregation.rules import RULES, Agent, Profile, aggregate

pv = pytest.importorskip("pref_voting")
from pref_voting.profiles import Profile as PVProfile  # noqa: E402
from pref_voting.voting_methods import beat_path, borda, copeland, plurality  # noqa: E402


def strict_profiles(seed=0, count=300):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n, k = rng.integers(2, 7), rng.integers(2, 6)
        yield rng.random((n, k))


def to_pv(U):
    return PVProfile([list(map(int, np.argsort(-row, kind="stable"))) for row in U])


def support(p):
    return sorted(int(k) for k in np.flatnonzero(p > 1e-12))


@pytest.mark.parametrize("ours,theirs", [(C.borda, borda), (C.copeland, copeland), (C.schulze, beat_path),
                                         (C.plurality, plurality)])
def test_ranking_rules_agree_with_pref_voting(ours, theirs):
    for U in strict_profiles():
        assert support(ours(U)) == sorted(theirs(to_pv(U))), U


def test_batched_equals_one_by_one():
    rng = np.random.default_rng(3)
    U = rng.integers(0, 5, size=(200, 4, 4)) / 4.0  # many ties
    for name in RULES.names(kind="candidates"):
        fn = RULES.entry(name).batched
        batch = fn(U)
        for b in range(0, 200, 17):
            assert np.allclose(batch[b], fn(U[b])), (name, b)


def test_cardinal_rules_by_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(200):
        U = rng.integers(0, 6, size=(3, 4)).astype(float)  # integers: exact sums for the comparison
        sums = U.sum(0)
        assert support(C.utilitarian(U)) == [k for k in range(4) if sums[k] == sums.max()]
        mins = U.min(0)
        assert support(C.maximin(U)) == [k for k in range(4) if mins[k] == mins.max()]
        keys = [tuple(sorted(U[:, k])) for k in range(4)]
        assert support(C.leximin(U)) == [k for k in range(4) if keys[k] == max(keys)]
        nk = [(int((U[:, k] > 0).sum()), round(float(np.sum(np.log(U[:, k][U[:, k] > 0]))), 9)) for k in range(4)]
        assert support(C.nash(U)) == [k for k in range(4) if nk[k] == max(nk)]


def test_hand_worked_borda_vs_condorcet():
    # 3 agents a>b>c, 2 agents b>c>a: Condorcet winner a (3 of 5); Borda: a 6, b 7, c 2 -> b
    U = np.array([[1, .5, 0]] * 3 + [[0, 1, .5]] * 2, dtype=float)
    assert support(C.borda(U)) == [1]
    assert support(C.schulze(U)) == [0]
    assert support(C.copeland(U)) == [0]
    assert support(C.plurality(U)) == [0]


def test_ks_rescales_each_agent_to_its_candidates():
    U = np.array([[0.2, 0.3, 0.25], [0.9, 0.1, 0.6]])
    # relative: agent0 (0, 1, .5), agent1 (1, 0, .625) -> mins 0, 0, .5 -> candidate 2
    assert support(C.kalai_smorodinsky(U)) == [2]


def test_per_agent_range_known_values():
    V = np.array([[2.0, 4.0, 3.0], [5.0, 5.0, 5.0], [0.0, 1.0, 2.0]])
    assert np.array_equal(C.per_agent_range(V), [[0, 1, .5], [1, 1, 1], [0, .5, 1]])
    # a given best (an agent's ideal) instead of the row maximum; not clipped
    assert np.allclose(C.per_agent_range(V, best=np.array([6.0, 5.0, 1.0])), [[0, .5, .25], [1, 1, 1], [0, 1, 2]])
    # spans within tol are indifference
    assert np.array_equal(C.per_agent_range(np.array([[1.0, 1.0 + 1e-10]])), [[1.0, 1.0]])
    assert np.array_equal(C.per_agent_range(np.array([[1.0, 1.0 + 1e-10]]), tol=1e-12), [[0.0, 1.0]])
    assert np.array_equal(C.unit(V)[0], C.per_agent_range(V))


def test_hand_worked_borda_scores_and_strongest_paths():
    # the profile above: classical points a 6, b 7, c 2 over 5 agents and 3 candidates -> 2 x points - 5 x 2
    U = np.array([[1, .5, 0]] * 3 + [[0, 1, .5]] * 2, dtype=float)
    assert np.array_equal(C.borda_scores(U), [2.0, 4.0, -6.0])
    p = C.strongest_paths(C.margins(U))[0]
    # margins: a-b 3-2 = 1, a-c 1, b-c 5; strongest paths a->b 1, a->c 1, b->c 5, b->a 0, c->a 0, c->b 0
    assert np.array_equal(p, [[0, 1, 1], [0, 0, 5], [0, 0, 0]])


def test_pf_lottery_is_the_bandit_notion():
    from fairarena.bandit.notions import NOTIONS

    rng = np.random.default_rng(5)
    for _ in range(20):
        U = rng.integers(0, 4, size=(4, 5)) / 3.0
        P = C.pf_lottery(U)
        assert np.allclose(P, NOTIONS.get("pf").policy(C.unit(U)[0], tol=C.TOL), atol=1e-9)
        assert C.pf_score(U, P) == pytest.approx(1.0, abs=1e-7)  # PF: every agent a full 1/N share


def test_pf_lottery_closed_form_single_favourites():
    U = np.array([[1, 0, 0], [1, 0.2, 0], [0, 0, 1], [0, 1, 0.5]], dtype=float)
    assert np.allclose(C.pf_lottery(U), [0.5, 0.25, 0.25])


def test_variance_weights():
    U = np.array([[0.5, 0.5, 0.5], [0.0, 1.0, 0.5]])
    assert np.allclose(C.variance_weights(U), [0.0, 1.0])
    assert support(C.weighted(U, C.variance_weights(U))) == [1]


def test_decision_ties_become_a_seeded_lottery():
    prof = Profile.from_utilities(["x", "y"], ["a", "b"], [[1.0, 0.0], [0.0, 1.0]])
    d1 = aggregate(prof, "utilitarian", seed=3)
    d2 = aggregate(prof, "utilitarian", seed=3)
    assert d1.lottery == {"a": 0.5, "b": 0.5} and d1.draw == d2.draw
    assert np.allclose(d1.utilities, [0.5, 0.5])


def test_profile_errors():
    from fairarena.errors import InputError

    with pytest.raises(InputError, match="agents"):
        Profile.from_utilities(["x"], ["a"], [[1.0]])
    with pytest.raises(InputError, match="distinct"):
        Profile.from_utilities(["x", "x"], ["a"], [[1.0], [0.0]])
    with pytest.raises(InputError, match="rule"):
        aggregate(Profile.from_utilities(["x", "y"], ["a"], [[1.0], [0.0]]), "nope")
    with pytest.raises(InputError, match="rule"):
        aggregate(Profile.from_utilities(["x", "y"], ["a"], [[1.0], [0.0]]), "nash-bargaining")


def test_permutation_properties_hold_for_every_rule():
    rng = np.random.default_rng(9)
    U = rng.integers(0, 11, size=(100, 4, 4)) / 10.0
    for name in RULES.names(kind="candidates"):
        fn = RULES.entry(name).batched
        P = fn(U)
        for perm in itertools.islice(itertools.permutations(range(4)), 1, 24, 7):
            perm = list(perm)
            assert np.allclose(fn(U[:, :, perm]), P[:, perm], atol=1e-7), name
            assert np.allclose(fn(U[:, perm]), P, atol=1e-7), name
