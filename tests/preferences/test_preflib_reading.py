"""PrefLib files through preflibtools: the packaged Dots data, partial orders, bad files."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.errors import InputError
from fairarena.sweep.preflib_example import PACKAGED_DOTS
from fairarena.preferences.preflib import load_preflib, preflib_rewards, sample_voters


def test_dots_file_has_800_complete_voters():
    prof = load_preflib(PACKAGED_DOTS)
    assert prof.n_voters == 800 and prof.n_alternatives == 4
    assert prof.alternatives == ("200", "207", "214", "221")
    assert all(sorted(o) == [0, 1, 2, 3] for o in prof.orders)
    assert prof.orders[:129] == ((0, 1, 2, 3),) * 129  # first line: "129: 1,2,3,4"
    assert len(set(prof.orders)) == 24


def test_voter_sample_is_seeded_and_without_replacement():
    prof = load_preflib(PACKAGED_DOTS)
    a, b = sample_voters(prof, 50, 42), sample_voters(prof, 50, 42)
    assert a == b and a != sample_voters(prof, 50, 43)
    idx = np.random.default_rng(42).choice(800, 50, replace=False)
    assert a == [prof.orders[i] for i in idx]
    mu = preflib_rewards(a, 4)
    assert np.allclose(np.sort(mu, axis=1)[:, ::-1], np.linspace(0.9, 0.1, 4))


def test_partial_orders_give_unranked_arms_the_lowest_reward(tmp_path):
    soi = tmp_path / "x.soi"
    soi.write_text("# FILE NAME: x.soi\n# DATA TYPE: soi\n# NUMBER ALTERNATIVES: 3\n# NUMBER VOTERS: 3\n"
                   "# NUMBER UNIQUE ORDERS: 2\n# ALTERNATIVE NAME 1: a\n# ALTERNATIVE NAME 2: b\n"
                   "# ALTERNATIVE NAME 3: c\n2: 2\n1: 3,1\n")
    prof = load_preflib(soi)
    assert prof.orders == ((1,), (1,), (2, 0))
    mu = preflib_rewards(list(prof.orders), 3)
    assert mu[0].tolist() == [0.1, 0.9, 0.1]
    assert mu[2].tolist() == [0.5, 0.1, 0.9]


@pytest.mark.parametrize("text", [
    "# DATA TYPE: soc\n# NUMBER ALTERNATIVES: 3\nnot a vote line\n",
    "# DATA TYPE: soc\n# NUMBER ALTERNATIVES: 3\n# ALTERNATIVE NAME 1: a\n# ALTERNATIVE NAME 2: b\n"
    "# ALTERNATIVE NAME 3: c\n2: 1,2\n",                    # incomplete order in a .soc
    "# DATA TYPE: soc\n# NUMBER ALTERNATIVES: 2\n# ALTERNATIVE NAME 1: a\n# ALTERNATIVE NAME 2: b\n"
    "x: 1,2\n",                                             # bad multiplicity
    "",                                                     # empty
])
def test_malformed_files_raise_an_input_error_on_file(tmp_path, text):
    p = tmp_path / "bad.soc"
    p.write_text(text)
    with pytest.raises(InputError) as exc:
        load_preflib(p)
    assert exc.value.field == "file"


def test_too_few_voters_names_the_voters_field():
    prof = load_preflib(PACKAGED_DOTS)
    for v in (801, 0):
        with pytest.raises(InputError) as exc:
            sample_voters(prof, v, 1)
        assert exc.value.field == "voters"


def test_pref_voting_round_trip():
    pytest.importorskip("pref_voting")
    from fairarena.preferences import sample_profile
    from fairarena.preferences.prefvoting import from_pref_voting, to_pref_voting

    prof = sample_profile("ic", 12, 4, seed=3)
    back = from_pref_voting(to_pref_voting(prof))
    assert sorted(map(tuple, back)) == sorted(map(tuple, prof))
