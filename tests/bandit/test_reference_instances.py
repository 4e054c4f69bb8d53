"""Every notion agrees with the reference corpus of hand-solved instances."""

import json
from pathlib import Path

import numpy as np
import pytest

from fairarena.bandit import get_notion
from fairarena.bandit.notions import score_all

CORPUS = json.loads((Path(__file__).parent / "reference_instances.json").read_text())["instances"]


@pytest.mark.parametrize("case", CORPUS, ids=[c["name"][:40] for c in CORPUS])
def test_policies_match_reference(case):
    mu = case["rewards"]
    for name, expected in case["policies"].items():
        got = get_notion(name).policy(mu)
        np.testing.assert_allclose(got, expected, atol=1e-6, err_msg=f"{name} policy")


@pytest.mark.parametrize("case", CORPUS, ids=[c["name"][:40] for c in CORPUS])
def test_scores_match_reference(case):
    for row in case["scores"]:
        got = score_all(case["rewards"], row["policy"])
        for key in ("pf", "ef", "uf"):
            if key in row:
                assert got[key] == pytest.approx(row[key], abs=1e-7), key


def test_worked_example_pf_score_is_five_sixths_by_the_papers_sum():
    # 1/3 (agent 1) + 1/6 (agent 2 gets what is left of arm 1) + 1/3 (agent 3)
    got = get_notion("pf").score([[0.9, 0.1], [0.8, 0.2], [0.1, 0.9]], [0.5, 0.5])
    assert got == pytest.approx(1 / 3 + 1 / 6 + 1 / 3, abs=1e-12)


def test_ef_score_is_one_minus_excess_inequality():
    mu = np.array([[0.9, 0.1], [0.9, 0.1], [0.1, 0.9]])
    p = np.array([1.0, 0.0])
    u = mu @ p  # (0.9, 0.9, 0.1): pairs (0,0.8,0.8) -> I = 2/(3*2) * (0 + 0.64 + 0.64)
    expected_i = 2 / 6 * (0.64 + 0.64)
    assert get_notion("ef").score(mu, p) == pytest.approx(1 - expected_i, abs=1e-9)
    # absolute variant: 2/(N(N-1)) * sum |U_i - U_j| = 1/3 * 1.6
    assert get_notion("ef").score(mu, p, ef_kind="absolute") == pytest.approx(1 - 1.6 / 3, abs=1e-9)
    assert u.tolist() == pytest.approx([0.9, 0.9, 0.1])
