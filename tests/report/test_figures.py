"""Figures of the study report on degenerate samples."""

from __future__ import annotations

from types import SimpleNamespace

from fairarena.report.figures import means_figure


def test_means_figure_accepts_a_constant_sample_whose_interval_is_off_by_rounding():
    # a metric identical in every cohort (e.g. a nursing Gini every allocation shares) has the bootstrap
    # interval [m, m]; its bounds can sit 1e-17 on the wrong side of the mean, which matplotlib refuses
    m = 0.1 + 0.2  # 0.30000000000000004
    res = SimpleNamespace(mean_a=m, ci_a=(0.3 + 1e-16, 0.3), mean_b=float("nan"), ci_b=(float("nan"),) * 2,
                          winner="tie")
    st = SimpleNamespace(opponents=["baseline"], frameworks=["utilitarian"], directions={"gini": "min"},
                         cell=lambda opp, fw, metric: SimpleNamespace(result=res))
    fig = means_figure(st, "gini")
    assert fig.axes and fig.axes[0].get_title() == "A vs baseline"


def _obvious_counts(points, side, direction):
    """Per (cohort, opponent): the means of the side and of the joint; joint better / equal / worse."""
    cells = {}
    for p in points:
        if p[side] is None or p["joint"] is None or p[side] != p[side] or p["joint"] != p["joint"]:
            continue
        cells.setdefault((p["cohort"], p["opponent"]), []).append((p[side], p["joint"]))
    b = e = w = 0
    for pairs in cells.values():
        x = sum(v for v, _ in pairs) / len(pairs)
        y = sum(j for _, j in pairs) / len(pairs)
        d = (y - x) if direction == "max" else (x - y)
        if abs(d) <= 1e-9 * max(1.0, abs(x)):
            e += 1
        elif d > 0:
            b += 1
        else:
            w += 1
    return len(cells), b, e, w


def test_joint_vs_sides_counts_points_per_cohort_as_the_obvious_code():
    import random

    from fairarena.report.figures import joint_vs_sides_figure

    rnd = random.Random(3)
    points = []
    for cohort in range(7):
        for opp in ("baseline", "adversarial"):
            for fw in range(3):
                a, b = rnd.choice([1.0, 2.0, 3.0]), rnd.random()
                joint = a if fw == 0 and cohort % 2 else rnd.choice([a, b, rnd.random() * 3])
                points.append({"cohort": cohort, "opponent": opp, "a": a, "b": None if cohort == 6 else b,
                               "joint": joint})
    points.append({"cohort": 9, "opponent": "baseline", "a": float("nan"), "b": 1.0, "joint": 2.0})
    other = [{**p, "joint": p["a"]} for p in points]                   # a second metric: joint = A everywhere
    fig = joint_vs_sides_figure({"esg": points, "gini": other}, directions={"esg": "max", "gini": "min"})
    assert len(fig.axes) == 4
    for ax, (metric, pts, direction, side, who) in zip(fig.axes, [
            ("esg", points, "max", "a", "A"), ("esg", points, "max", "b", "opponent"),
            ("gini", other, "min", "a", "A"), ("gini", other, "min", "b", "opponent")]):
        n, b, e, w = _obvious_counts(pts, side, direction)
        assert ax.get_title() == f"{metric}, joint vs {who}: of {n} points, joint better {b}, equal {e}, worse {w}"
        assert sum(len(c.get_offsets()) for c in ax.collections) == n
    assert fig.axes[2].get_title().endswith("of 14 points, joint better 0, equal 14, worse 0")   # joint = A
    for direction in ("max", "min"):
        ax = joint_vs_sides_figure({"esg": points}, directions={"esg": direction}).axes[0]
        n, b, e, w = _obvious_counts(points, "a", direction)
        assert ax.get_title() == f"esg, joint vs A: of {n} points, joint better {b}, equal {e}, worse {w}"


def test_slopegraph_draws_the_mean_per_framework():
    import numpy as np

    from fairarena.report.figures import slopegraph_figure

    lines = [{"framework": fw, "opponent": "baseline", "side": side, "values": (k, k + 1.0, k + d)}
             for k, fw in enumerate(("utilitarian", "rawlsian")) for side in ("A", "opponent") for d in (0.0, 4.0)]
    lines.append({"framework": "rawlsian", "opponent": "baseline", "side": "A", "values": (float("nan"), 1.0, 1.0)})
    fig = slopegraph_figure({"esg": lines, "rmg": lines[:4]})
    ax = fig.axes[0]
    means = {ln.get_label(): ln.get_ydata() for ln in ax.get_lines() if not ln.get_label().startswith("_")}
    assert np.allclose(means["utilitarian"], [0, 1, 2]) and np.allclose(means["rawlsian"], [1, 2, 3])
    assert [a.get_title() for a in fig.axes] == ["esg, A vs baseline: A", "esg, A vs baseline: baseline",
                                                 "rmg, A vs baseline: A", "rmg, A vs baseline: baseline"]
    grey = [ln for ln in ax.get_lines() if ln.get_label().startswith("_")]
    assert len(grey) == 1 and np.isnan(grey[0].get_ydata()).sum() == 4      # 4 distinct finite debate lines
