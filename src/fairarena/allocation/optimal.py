"""Framework-optimal allocations (compatibility module).

The MILP machinery lives in :mod:`fairarena.allocation.milp`, the framework registry with each
framework's solver in :mod:`fairarena.allocation.frameworks`; this module re-exports both under the
names earlier releases used. ``_add`` is kept as an alias of :func:`~fairarena.allocation.milp.add_exprs`
for callers not yet switched to the public name.
"""

from __future__ import annotations

from fairarena.allocation.frameworks import (
    FRAMEWORKS,
    entitlement_allocation,
    framework_optima,
    optimal_allocation,
    solve_care,
    solve_egalitarian,
    solve_prioritarian,
    solve_rawlsian,
    solve_utilitarian,
)
from fairarena.allocation.milp import (
    MIP_REL_GAP,
    STAGE_EPS,
    AllocationMILP,
    Expr,
    InfeasibleMILP,
    add_exprs,
    add_gini_bound,
)

__all__ = [
    "AllocationMILP",
    "InfeasibleMILP",
    "MIP_REL_GAP",
    "STAGE_EPS",
    "Expr",
    "add_exprs",
    "add_gini_bound",
    "optimal_allocation",
    "framework_optima",
    "entitlement_allocation",
    "SOLVERS",
]

_add = add_exprs  # deprecated alias: import add_exprs from fairarena.allocation.milp

#: framework -> solver, derived from the registry (the optimising five)
SOLVERS = {name: FRAMEWORKS.get(name).solve for name in FRAMEWORKS if name != "libertarian"}
