"""Need satisfaction, the six framework metrics, and the framework registry.

All functions are pure and vectorised: an allocation is ``(n, R)`` or a stack ``(B, n, R)``.

* ``sat[i, r] = min(1, x[i, r] / need[i, r])`` for needed resources (``need > 0``)
* ``CNSS_i = mean_r sat[i, r]`` over the resources individual ``i`` needs
* ``esg = sum_i s_i CNSS_i``                      (utilitarian,  higher is better)
* ``rmg = min_i CNSS_i``                          (Rawlsian,     higher)
* ``var = population variance of CNSS``           (libertarian,  lower)
* ``dw_esg = sum_i w_i s_i CNSS_i``               (prioritarian, higher)
* ``vwci = sum_i v_i CNSS_i``                     (care ethics,  higher)
* ``gini`` = Gini of the :attr:`gini_resource` amounts (nursing hours) (egalitarian, lower)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from fairarena.allocation.problem import AllocationProblem, check_feasibility, is_feasible, waste
from fairarena.errors import InputError

__all__ = [
    "Framework",
    "FRAMEWORKS",
    "METRIC_KEYS",
    "get_framework",
    "need_satisfaction",
    "gini",
    "compute_metrics",
    "compute_metrics_batch",
]

METRIC_KEYS: tuple[str, ...] = ("esg", "rmg", "var", "dw_esg", "vwci", "gini")


@dataclass(frozen=True)
class Framework:
    """An ethical framework: its name, the metric that scores it, and that metric's direction."""

    name: str
    metric: str
    direction: Literal["max", "min"]
    label: str
    objective: str

    def better(self, a: float, b: float) -> bool:
        """True when metric value ``a`` is strictly better than ``b`` for this framework."""
        return a > b if self.direction == "max" else a < b


FRAMEWORKS: dict[str, Framework] = {
    f.name: f
    for f in (
        Framework("utilitarian", "esg", "max", "ESG",
                  "maximise ESG = sum_i s_i CNSS_i; tie-break: maximise RMG"),
        Framework("egalitarian", "gini", "min", "Gini",
                  "minimise the Gini of CNSS; tie-break: maximise mean CNSS"),
        Framework("rawlsian", "rmg", "max", "RMG",
                  "maximise RMG = min_i CNSS_i; tie-break: maximise ESG (exact leximin optional)"),
        Framework("prioritarian", "dw_esg", "max", "DW-ESG",
                  "maximise DW-ESG = sum_i w_i s_i CNSS_i; tie-break: maximise ESG"),
        Framework("care", "vwci", "max", "VWCI",
                  "maximise VWCI = sum_i v_i CNSS_i; tie-break: maximise ESG"),
        Framework("libertarian", "var", "min", "Var",
                  "entitlement: serve by urgency then survival, full needs while capacity lasts"),
    )
}


def get_framework(name: str) -> Framework:
    """Look a framework up by name (InputError naming ``framework`` when unknown)."""
    try:
        return FRAMEWORKS[name]
    except KeyError:
        raise InputError("framework", name, f"one of {list(FRAMEWORKS)}") from None


def need_satisfaction(problem: AllocationProblem, x: np.ndarray) -> np.ndarray:
    """CNSS for an allocation ``(n, R)`` -> ``(n,)`` or a stack ``(B, n, R)`` -> ``(B, n)``."""
    x = np.asarray(x, dtype=float)
    need = problem.need
    ratio = np.divide(x, need, out=np.zeros(np.broadcast_shapes(x.shape, need.shape)),
                      where=problem.needed)
    sat = np.minimum(ratio, 1.0)
    return sat.sum(axis=-1) / problem.n_needed


def gini(values: np.ndarray) -> np.ndarray | float:
    """Gini over the last axis: ``sum_i (2i - n - 1) x_(i) / (n sum_i x_i)``, 0 when all are 0."""
    v = np.sort(np.asarray(values, dtype=float), axis=-1)
    n = v.shape[-1]
    coef = 2.0 * np.arange(1, n + 1) - n - 1.0
    num = v @ coef
    den = n * v.sum(axis=-1)
    g = np.divide(num, den, out=np.zeros_like(np.asarray(num, dtype=float)), where=den > 0)
    return float(g) if np.ndim(g) == 0 else g


def compute_metrics_batch(problem: AllocationProblem, x: np.ndarray) -> dict[str, np.ndarray]:
    """Metrics for a stack of allocations ``(B, n, R)``: each key maps to a ``(B,)`` array,
    ``cnss`` to ``(B, n)``, ``feasible`` to ``(B,)`` bools. One pass, no Python loop over B."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 3 or x.shape[1:] != (problem.n, problem.n_resources):
        raise InputError("allocations", x.shape, f"shape (B, {problem.n}, {problem.n_resources})")
    c = need_satisfaction(problem, x)
    s = problem.survival
    return {
        "esg": c @ s,
        "rmg": c.min(axis=-1),
        "var": c.var(axis=-1),
        "dw_esg": c @ (problem.disadvantage * s),
        "vwci": c @ problem.vulnerability,
        "gini": np.asarray(gini(x[..., problem.gini_index])),
        "cnss": c,
        "feasible": np.asarray(is_feasible(problem, x)),
    }


def compute_metrics(problem: AllocationProblem, x: np.ndarray) -> dict[str, Any]:
    """All six metrics of one allocation, plus ``cnss``, ``feasible``, ``violations`` and ``waste``.

    An infeasible allocation is scored as it is; ``violations`` spells out what is wrong.
    """
    x = np.asarray(x, dtype=float)
    batch = compute_metrics_batch(problem, x[None])
    out: dict[str, Any] = {k: float(batch[k][0]) for k in METRIC_KEYS}
    out["cnss"] = [float(v) for v in batch["cnss"][0]]
    violations = check_feasibility(problem, x)
    out["feasible"] = not violations
    out["violations"] = violations
    out["waste"] = waste(problem, x)
    return out
