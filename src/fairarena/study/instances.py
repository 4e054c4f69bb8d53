"""How the study runner reaches a domain: through the registry and the domain protocol only.

A design's ``domain`` is a registered name (:data:`fairarena.domains.DOMAINS`). The runner asks the domain
object for everything it needs (:mod:`fairarena.domains.protocol`): an instance by seed
(``study_instance``, default ``sample(seed, **options)``), a problem file's instance (``load``), the
instance's digest (:func:`fairarena.domains.protocol.instance_digest`, what a task key holds), its
participants, the scripted agents that play them (``scripted_agents``, default
:func:`fairarena.arena.optimum.optimum_agents`) and its metric specs. No module of this package names
a domain; the registry entries do.

* :func:`default_domain`: the domain of a design that names none (designs written before the field): the
  package's first registered domain, the one the arena's profile agents (``aligned:<framework>``,
  ``baseline``, ``adversarial``) play.
* :func:`study_domain`: the domain object of a design's name (bound to its problem file when it has one).
* :func:`instance_of` / :func:`digest_of`: a study instance and its digest, cached per process (every task
  of an instance shares it).
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Mapping
from typing import Any

from fairarena.errors import InputError

__all__ = ["default_domain", "domain_names", "study_domain", "instance_of", "digest_of", "metric_directions",
           "sample_options", "participant_names"]


def domain_names() -> list[str]:
    """Every registered domain name (the package's and installed ones)."""
    from fairarena.domains.registry import DOMAINS

    return list(DOMAINS)


def default_domain() -> str:
    """The registry's ``DEFAULT_DOMAIN`` (the domain of a debate that names none), else the package's first
    registered domain (module doc)."""
    from fairarena.domains import registry

    return str(getattr(registry, "DEFAULT_DOMAIN", None) or next(iter(registry.DOMAINS)))


@functools.lru_cache(maxsize=32)
def _domain(name: str) -> Any:
    from fairarena.domains.registry import resolve

    return resolve(name, "study.domain")


@functools.lru_cache(maxsize=16)
def _bound(name: str, problem: str) -> tuple[Any, Any]:
    """``(domain, instance)`` of a problem file: the domain's ``bind(path)`` when it has one (a domain object
    bound to the file), else the domain itself with ``load(path)``. A bad file: InputError naming
    ``study.problem``."""
    base = _domain(name)
    try:
        bind = getattr(base, "bind", None)
        if callable(bind):
            dom = bind(problem)
            inst = dom.sample(0)
        else:
            from fairarena.domains.protocol import load_instance

            dom, inst = base, load_instance(base, problem)
    except InputError as exc:
        raise InputError("study.problem", problem, f"a valid problem file ({exc})") from None
    return dom, inst


def study_domain(name: str, problem: str | None = None) -> Any:
    """The domain object of ``name`` (bound to ``problem`` when given)."""
    if problem:
        return _bound(name, str(problem))[0]
    return _domain(name)


def sample_options(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``options`` that the domain's ``sample`` takes as keyword arguments (a design field
    such as the number of points of interest of a generated destination)."""
    try:
        params = inspect.signature(_domain(name).sample).parameters
    except (TypeError, ValueError):
        return {}
    return {k: v for k, v in options.items() if k in params and k != "seed"}


def _key(options: Mapping[str, Any] | None) -> str:
    return json.dumps(dict(options or {}), sort_keys=True)


@functools.lru_cache(maxsize=256)
def _instance(name: str, seed: int, problem: str | None, options: str) -> Any:
    if problem:
        return _bound(name, problem)[1]
    dom = _domain(name)
    own = getattr(dom, "study_instance", None)
    kw = json.loads(options)
    if callable(own):
        return own(seed, **kw)
    return dom.sample(seed, **kw)


def instance_of(name: str, seed: int, *, problem: str | None = None, options: Mapping[str, Any] | None = None) -> Any:
    """The instance of a study task: the problem file's (``problem``), else ``sample(seed, **options)``."""
    return _instance(name, int(seed), problem or None, _key(options))


@functools.lru_cache(maxsize=256)
def _digest(name: str, seed: int, problem: str | None, options: str) -> str:
    from fairarena.domains.protocol import instance_digest

    return instance_digest(study_domain(name, problem), _instance(name, seed, problem, options))


def digest_of(name: str, seed: int, *, problem: str | None = None, options: Mapping[str, Any] | None = None) -> str:
    """The instance's digest (:func:`fairarena.domains.protocol.instance_digest`; cached)."""
    return _digest(name, int(seed), problem or None, _key(options))


def metric_directions(name: str, problem: str | None = None) -> dict[str, str]:
    """The domain's metrics -> ``"max"`` | ``"min"`` (which is better), from its metric specs, in their order."""
    from fairarena.domains.protocol import metric_specs

    return {k: m.direction for k, m in metric_specs(study_domain(name, problem)).items()}


def participant_names(name: str, seed: int, *, problem: str | None = None,
                      options: Mapping[str, Any] | None = None) -> list[str]:
    """The participants of the domain's instance, by name, in order."""
    inst = instance_of(name, seed, problem=problem, options=options)
    return [p.name for p in study_domain(name, problem).participants(inst)]


def clear() -> None:
    """Forget every cached domain, instance and digest of this process."""
    for f in (_domain, _bound, _instance, _digest):
        f.cache_clear()
