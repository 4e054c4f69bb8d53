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
    st = SimpleNamespace(opponents=["baseline"], frameworks=["utilitarian"], directions={"gini": "lower"},
                         cell=lambda opp, fw, metric: SimpleNamespace(result=res))
    fig = means_figure(st, "gini")
    assert fig.axes and fig.axes[0].get_title() == "A vs baseline"
