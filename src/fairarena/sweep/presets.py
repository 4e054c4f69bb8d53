"""Named sweep grids (``--preset``): the paper's grid and two reduced ones.

A preset is a dict of :class:`~fairarena.sweep.config.GridConfig` fields, registered in
:data:`PRESETS` (a :class:`~fairarena.registry.Registry`; register your own with
``PRESETS.add(name, {...}, title=...)``). This module imports nothing heavy, so the CLI can list the
presets without loading numerical code.

The ``paper`` grid: the procedural-fairness paper reports 7,776 settings; its factor values were lost
in our copy. Ours is a full factorial of 18 agent counts N = 2..19 x (sum over K = 2..10 of (K - 1)
fixed favourite counts + 1 random = 54) x 8 culture configurations (ic, uniform, sp_conitzer and
Mallows at five dispersions) = 7,776. The product fixes only the number of N values (7,776 / 432 =
18); which 18 is our choice: 2..19 (what ``range(2, 20)`` gives); the alternative 3..20 is reported
beside it in ``docs/reproduction.md``.
"""

from __future__ import annotations

from typing import Any

from fairarena.registry import Registry

PRESETS: Registry[dict[str, Any]] = Registry("preset")

PAPER: dict[str, Any] = dict(
    name="paper", seed=42,
    N=list(range(2, 20)), K=list(range(2, 11)),
    cultures=["ic", "uniform", "sp_conitzer", "mallows"],
    phi=[0.1, 0.3, 0.5, 0.7, 0.9],
    favourites=["fixed", "random"], f=list(range(1, 10)),
)

PRESETS.add("paper", PAPER, title="The procedural-fairness paper's grid (7,776 settings)",
            description="N = 2..19, K = 2..10, ic/uniform/sp_conitzer/mallows x 5 phi, fixed f < K and random")
PRESETS.add("small", dict(PAPER, name="small", N=[2, 3, 5, 8, 12], K=[2, 3, 4, 6], phi=[0.2, 0.8], f=[1, 2, 3]),
            title="The demo's reduced grid (325 settings, a few seconds)")
PRESETS.add("tiny", dict(PAPER, name="tiny", N=[2, 4], K=[2, 3], cultures=["ic", "sp_conitzer", "mallows"],
                         phi=[0.5], f=[1, 2]),
            title="A few dozen settings for tests")
