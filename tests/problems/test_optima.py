"""Exact optima known by hand on the tiny file (four pupils r1..r4 with scores 10, 40, 30, 20, teams A = r1 r2 and
B = r3 r4, two seats), every metric's value and linear form, and the compromise of the scripted agents."""

from __future__ import annotations

import numpy as np
import pytest

from fairarena.problems.domain import load_problem_domain
from fairarena.problems.objectives import compromise, linear_form, metric_values, optimum

from .conftest import STAKEHOLDERS


def _stake(name: str, objective: str) -> str:
    return f'[[stakeholders]]\nname = "{name}"\nobjective = {objective}\n'


def optima(tiny, objectives: dict[str, str], **kw) -> tuple[dict[str, np.ndarray], object]:
    text = "\n".join(_stake(n, o) for n, o in objectives.items())
    d = load_problem_domain(tiny(stakeholders=text, **kw))
    p = d.sample(0)
    return {s.name: optimum(p, s)[:, 0] for s in p.stakeholders}, p


def test_whole_seats_known_by_hand(tiny):
    x, p = optima(tiny, {
        "merit": '"merit"',                         # the two best scores: r2 (40), r3 (30)
        "teams": '["teams", "merit"]',              # one seat per team, then merit: r2 and r3
        "teams_only": '"teams"',                    # one seat per team, ties: earlier pupils first: r1 and r3
        "worst": '"worst"',                         # max-min is 0 for everyone: two seats used, r1 and r2 first
        "team_a": '"team_a"',                       # team A first: r1 and r2
        "lex": '["worst", "teams", "merit"]',       # 0, then one per team, then merit: r2 and r3
    })
    assert x == {k: pytest.approx(v) for k, v in {
        "merit": [0, 1, 1, 0], "teams": [0, 1, 1, 0], "teams_only": [1, 0, 1, 0], "worst": [1, 1, 0, 0],
        "team_a": [1, 1, 0, 0], "lex": [0, 1, 1, 0]}.items()}
    m = metric_values(p, np.array([[0], [1], [1], [0]]))
    assert m["merit"] == pytest.approx(70 / 100) and m["placed"] == pytest.approx(0.5)
    assert m["teams"] == pytest.approx(0.5) and m["team_a"] == pytest.approx(0.5) and m["worst"] == 0
    assert m["inequality"] == pytest.approx(0.5) and m["spread"] == pytest.approx(0.25)


def test_a_gini_first_stage_is_the_egalitarian_optimum_without_levelling_down(tiny):
    x, p = optima(tiny, {"equal": '"inequality"', "merit": '"merit"'})
    # whole seats: nobody Pareto-improvable, least Gini: two pupils seated (Gini 1/2), never the empty allocation
    assert x["equal"].sum() == 2 and metric_values(p, x["equal"][:, None])["inequality"] == pytest.approx(0.5)
    x, p = optima(tiny, {"equal": '"inequality"', "merit": '"merit"'}, divisible=True)
    assert x["equal"] == pytest.approx([0.5, 0.5, 0.5, 0.5])          # half a seat each: Gini 0
    assert x["merit"] == pytest.approx([0, 1, 1, 0])


def test_divisible_max_min_variance_and_later_inequality_stages(tiny):
    x, p = optima(tiny, {
        "worst": '"worst"',                          # max-min: half each
        "spread": '"spread"',                        # variance 0 at any equal split, then the most in total: half each
        "placed_spread": '["placed", "spread"]',     # two seats used, then the least variance: half each
        "a_gini": '["team_a", "inequality"]',        # team A full (r1 r2 = 1), then the least Gini on 0 left: 1 1 0 0
        "a_spread": '["team_a", "spread"]',
    }, divisible=True)
    for k in ("worst", "spread", "placed_spread"):
        assert x[k] == pytest.approx([0.5, 0.5, 0.5, 0.5]), k
    assert x["a_gini"] == pytest.approx([1, 1, 0, 0]) and x["a_spread"] == pytest.approx([1, 1, 0, 0])
    # three seats: team A full, then the third seat split equally between r3 and r4 (Gini 1/6, variance 1/16)
    x, p = optima(tiny, {"a_gini": '["team_a", "inequality"]', "a_spread": '["team_a", "spread"]'}, divisible=True,
                  capacity=3)
    assert x["a_gini"] == pytest.approx([1, 1, 0.5, 0.5], abs=1e-6)
    # the variance is kept to 1e-7 in the norm of the deviations, flat at its optimum: amounts to about 1e-3
    assert x["a_spread"] == pytest.approx([1, 1, 0.5, 0.5], abs=1e-3)
    m = metric_values(p, x["a_gini"][:, None])
    assert m["inequality"] == pytest.approx(1 / 6, abs=1e-6) and m["spread"] == pytest.approx(1 / 16, abs=1e-6)


def test_linear_forms_equal_the_sums_where_satisfaction_is_linear(tiny):
    d = load_problem_domain(tiny(divisible=True))
    p = d.sample(0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.uniform(0, 1, (4, 1)) * np.array([[0.5]])
        values = d.evaluate(p, x)
        for spec in d.metrics():
            form = spec.linear(p) if spec.linear is not None else None
            if form is not None:
                coef, const = form
                assert float((coef * x).sum() + const) == pytest.approx(values[spec.key])
    assert linear_form(p, "worst") is None and linear_form(p, "merit") is not None
    # the indicator form with divisible amounts is not linear in x: no form
    q = load_problem_domain(tiny(divisible=True, stakeholders=STAKEHOLDERS).parent / "tiny0.toml")
    path = tiny(divisible=True)
    path.write_text(path.read_text().replace('"fractional"', '"indicator"'))
    assert linear_form(load_problem_domain(path).sample(0), "merit") is None and q is not None


def test_the_compromise_keeps_the_largest_share_of_every_range(tiny):
    text = _stake("merit", '"merit"') + _stake("team_a", '"team_a"')
    d = load_problem_domain(tiny(stakeholders=text, divisible=True))
    p = d.sample(0)
    opt = {s.name: optimum(p, s) for s in p.stakeholders}
    assert opt["merit"][:, 0] == pytest.approx([0, 1, 1, 0]) and opt["team_a"][:, 0] == pytest.approx([1, 1, 0, 0])
    # r2 in both; r1 gets a, r3 gets 1 - a: merit keeps 1 - a of its range [0.5, 0.7], team_a keeps a of [0.5, 1]
    x = compromise(p, ["merit", "team_a"], opt)
    assert x[:, 0] == pytest.approx([0.5, 1, 0.5, 0], abs=1e-6)
    same = load_problem_domain(tiny()).sample(0)    # merit's optimum is one seat per team: no range to share
    assert compromise(same, ["merit", "teams"], {s.name: optimum(same, s) for s in same.stakeholders}) is None
