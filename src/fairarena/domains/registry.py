"""The domain registry: every domain by name, imported only when used.

* The package's own domains are lazy entries below (name -> ``"module:object"``): ``DOMAINS.get("tourism")``
  imports the tourism package on first use, in any process, whatever was imported before (a transcript
  names its domain, and :func:`fairarena.arena.transcript.recompute_metrics` finds it).
* Installed distributions add domains through the entry-point group ``fairarena.domains`` (in their
  ``pyproject.toml``: ``[project.entry-points."fairarena.domains"]`` then ``seats = "mypkg.seats:DOMAIN"``);
  they are read when a name is looked up that is not registered, or when the registry is listed. A
  distribution cannot replace a domain of the package (its entry is listed in ``DOMAINS.shadowed``).
* Code may register a domain object directly: ``DOMAINS.add("seats", SEATS)``.

:func:`resolve` turns what a user typed (a registered name or ``MODULE:OBJECT``) into the domain object.
This module imports nothing numerical.
"""

from __future__ import annotations

from typing import Any

from fairarena.errors import InputError
from fairarena.registry import Registry, load_object

__all__ = ["DOMAINS", "DEFAULT_DOMAIN", "ENTRY_POINT_GROUP", "PROBLEM_FILE_FORMS", "problem_file_form", "resolve"]

#: the entry-point group third-party domains register in
ENTRY_POINT_GROUP = "fairarena.domains"

DOMAINS: Registry[Any] = Registry("domain", entry_points=ENTRY_POINT_GROUP)

# The package's domains: the only lines outside a domain's own package that name one.
DOMAINS.add_lazy("triage", "fairarena.triage.domain:TRIAGE", title="Hospital triage",
                 description="patients, scarce ICU/ventilator/surgery/medication/nursing capacity",
                 citation="Chaki, Gourru, Velcin: Beyond Arrow's Impossibility (arXiv 2604.13705)")
#: the domain of a debate or a transcript that names none (fairarena.arena.domain.default_domain)
DEFAULT_DOMAIN = "triage"
DOMAINS.add_lazy("tourism", "fairarena.tourism.domain:TOURISM", title="Multistakeholder tourism (visitor flows)",
                 description="tourist groups x POI@slot, free capacity per slot")
DOMAINS.add_lazy("tourism-lists", "fairarena.tourism.domain:TOURISM_LISTS",
                 title="Multistakeholder tourism (recommendation lists)",
                 description="tourist groups x POIs, a list of k stated as position scores k..1")
DOMAINS.add_lazy("file", "fairarena.problems.domain:FILE", title="A problem declared in a file (TOML or JSON)",
                 description="recipients x resources and stakeholders of a problem file (--problem FILE)")
DOMAINS.add_lazy("pb", "fairarena.pb.domain:PB", title="Participatory budgeting (Pabulib elections)",
                 description="projects within a city's budget; stakeholder groups of real voters",
                 citation="Stolicki, Szufa, Talmon: Pabulib (arXiv 2012.06539)")
#: what the commands' ``--problem FILE`` forms call in the file domain's package (imported on first use, as the
#: lazy entries: the arena and aggregation command modules reach it through here, never by an import)
PROBLEM_FILE_FORMS = {"is_problem_file": "fairarena.problems.domain:is_problem_file",
                      "debate": "fairarena.problems.cli:debate_command",
                      "council": "fairarena.problems.cli:council_command",
                      "conflict": "fairarena.problems.cli:conflict_command",
                      "refuse": "fairarena.problems.cli:refuse",
                      # the domain and its binding to a file (fairarena.study.design.file_problem; a study runs
                      # through the domain's protocol members study_check, study_council, ...)
                      "domain": "fairarena.problems.domain:FILE",
                      # the domain bound to a file, validated (fairarena domain check --problem FILE)
                      "load": "fairarena.problems.domain:load_problem_domain",
                      "study_problem": "fairarena.problems.run:study_problem"}


def problem_file_form(name: str) -> Any:
    """The function of :data:`PROBLEM_FILE_FORMS` called ``name`` (imported now)."""
    return load_object(PROBLEM_FILE_FORMS[name], name)


def resolve(target: Any, field: str = "domain") -> Any:
    """The domain ``target`` names: a registered name (the package's, an entry point's or one added in
    code), ``"MODULE:OBJECT"`` (imported; ``OBJECT`` may be dotted; a class is instantiated without
    arguments), or a domain object itself (returned as it is). Anything else: InputError naming
    ``field``."""
    if not isinstance(target, str):
        if target is None:
            raise InputError(field, target, f"a registered domain ({DOMAINS.choices()}) or MODULE:OBJECT")
        return target
    if ":" in target:
        obj = load_object(target, field)
        if isinstance(obj, type):
            try:
                obj = obj()
            except TypeError as exc:
                raise InputError(field, target, f"a domain object, or a class that takes no arguments ({exc})") from None
        return obj
    if target not in DOMAINS:
        raise InputError(field, target, f"a registered domain ({DOMAINS.choices()}) or MODULE:OBJECT")
    return DOMAINS.get(target)
