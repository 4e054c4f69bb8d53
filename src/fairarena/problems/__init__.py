"""Problems a user declares in a file: a TOML (or JSON) problem file becomes the domain ``file`` with no Python.

* :mod:`fairarena.problems.schema` -- the file format, validated completely (:func:`read_problem`);
* :mod:`fairarena.problems.objectives` -- the objective vocabulary (``sum``, ``min``, ``group_min``, ``gini``,
  ``variance``, lexicographic stages): values, linear forms, exact optima;
* :mod:`fairarena.problems.domain` -- :class:`ProblemDomain`, the domain plug-in (:func:`load_problem_domain`);
* :mod:`fairarena.problems.agents` -- stakeholder profiles and scripted agents;
* :mod:`fairarena.problems.run` -- the debate and the council of the commands;
* :mod:`fairarena.problems.conflict` -- the conflict audit of two metrics.

    from fairarena.problems import example_path, load_problem_domain
    domain = load_problem_domain(example_path("school-seats"))
    seats = domain.sample(0)                        # the file's problem (whatever the seed)
    {p.name: domain.optimum(seats, p).sum() for p in domain.participants(seats)}

docs/domains.md, "A domain in a file", documents the format and the commands.
"""

from __future__ import annotations

from fairarena.lazy import lazy_exports

_LAZY = {
    "DeclaredProblem": "fairarena.problems.schema",
    "METRIC_KINDS": "fairarena.problems.schema",
    "SATISFACTION_FORMS": "fairarena.problems.schema",
    "parse_problem": "fairarena.problems.schema",
    "read_problem": "fairarena.problems.schema",
    "ProblemDomain": "fairarena.problems.domain",
    "FILE": "fairarena.problems.domain",
    "SEATS": "fairarena.problems.domain",
    "VACCINES": "fairarena.problems.domain",
    "EXAMPLES": "fairarena.problems.domain",
    "example_path": "fairarena.problems.domain",
    "is_problem_file": "fairarena.problems.domain",
    "load_problem_domain": "fairarena.problems.domain",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
