"""fairarena: fairness as a property of multi-agent decision-making.

Subpackages (lower layers never import higher ones):

- :mod:`fairarena.bandit`      collective decisions over alternatives (notions, solvers, properties)
- :mod:`fairarena.preferences` preference cultures, PrefLib loading, rank -> reward maps
- :mod:`fairarena.sweep`       the procedural-fairness sweep (grids, batched optima, results store)
- :mod:`fairarena.experiments` the debate study (and the sweep's former module paths)
- :mod:`fairarena.triage`      scarce-resource allocation (cohorts, metrics, framework optima)
- :mod:`fairarena.arena`       deliberation between agents
"""

__version__ = "0.1.0"

from fairarena.errors import FairArenaError, InputError, SolverError  # noqa: E402

__all__ = ["FairArenaError", "InputError", "SolverError", "__version__"]
