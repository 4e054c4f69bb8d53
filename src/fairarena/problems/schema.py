"""The problem file: recipients, resources, metrics and stakeholders declared in TOML or JSON, validated
completely before any work.

A problem file has six tables (docs/domains.md, "A domain in a file", has the whole format)::

    [problem]            title, description, note, satisfaction ("fractional" | "indicator")
    [presentation]       how recipients are described to agents: item, items, item_id, setting, show, labels, rules
    [resources.NAME]     capacity, divisible (default false: whole units), minimum, unit
    [[recipients]]       id, needs = {RESOURCE = amount}, any other key an attribute (text, number, true/false)
    [metrics.KEY]        kind (the vocabulary, :data:`METRIC_KINDS`) and its fields
    [[stakeholders]]     name, kind, description, group, objective (a metric, or a list: lexicographic stages)

:func:`read_problem` reads a file and :func:`parse_problem` validates decoded data; both return a
:class:`DeclaredProblem` or raise :class:`~fairarena.errors.InputError` naming the file and the field path
(``seats.toml: recipients[3].needs.Nursing``) with the value. :meth:`DeclaredProblem.to_dict` is the
canonical JSON form (every default written out); it is itself a valid problem file and
``parse_problem(p.to_dict()) == p``.

Need satisfaction ``s_i`` of recipient ``i`` is the allocation core's (:func:`fairarena.allocation.metrics.
need_satisfaction`): the mean over the resources it needs of ``min(1, x / need)`` (``fractional``, the
default) or of ``[x >= min(minimum, need)]`` (``indicator``). Every metric is a function of ``s``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

from fairarena.errors import InputError

__all__ = ["METRIC_KINDS", "SATISFACTION_FORMS", "TABLES", "DeclaredProblem", "Resource", "Recipient", "Metric",
           "Stakeholder", "parse_problem", "read_problem", "NAME_PATTERN", "MAX_RECIPIENTS", "MAX_RESOURCES"]

#: the objective vocabulary: metric kind -> (direction, what it measures). A stakeholder's objective is one
#: metric, a weighted combination of metrics in one stage, or a list of stages (lexicographic).
METRIC_KINDS: dict[str, tuple[str, str]] = {
    "sum": ("max", "weighted sum of need satisfaction over the total weight, sum_i w_i s_i / sum_i w_i (in [0, 1]); "
                   "weights: a number (every recipient alike), a numeric recipient attribute, or per group "
                   "{attribute, values = {GROUP = weight}, default}"),
    "min": ("max", "the smallest need satisfaction, min_i s_i (max-min)"),
    "group_min": ("max", "the worst-off group's mean satisfaction, min_g mean_{i in g} s_i (group max-min); "
                         "group: a recipient attribute, groups: optionally the groups compared"),
    "gini": ("min", "the Gini coefficient of need satisfaction (0: equal)"),
    "variance": ("min", "the population variance of need satisfaction"),
}
#: how a recipient's need satisfaction is measured (the allocation core's two forms)
SATISFACTION_FORMS: dict[str, str] = {
    "fractional": "the mean over the resources it needs of min(1, amount / need): partial amounts count in proportion",
    "indicator": "the share of its needs met, a need counting as met from min(minimum, need) units (resource "
                 "minimum, default 1)",
}
#: the tables of a problem file
TABLES = ("problem", "presentation", "resources", "recipients", "metrics", "stakeholders")
#: names of stakeholders (arena participants) and metric keys
NAME_PATTERN = r"[A-Za-z][A-Za-z0-9_-]{0,31}"
KEY_PATTERN = r"[A-Za-z_][A-Za-z0-9_]{0,39}"
MAX_RECIPIENTS = 1000
MAX_RESOURCES = 100
_RESERVED = ("id", "needs")

Scalar = str | int | float | bool


@dataclass(frozen=True)
class Resource:
    name: str
    capacity: float
    divisible: bool = False
    minimum: float = 1.0
    unit: str = ""


@dataclass(frozen=True)
class Recipient:
    id: str
    needs: Mapping[str, float]
    attributes: Mapping[str, Scalar] = field(default_factory=dict)


@dataclass(frozen=True)
class Metric:
    """One declared metric: ``kind`` from :data:`METRIC_KINDS`; ``weights`` (sum): a number, an attribute
    name or ``{"attribute", "values", "default"}``; ``group`` and ``groups`` (group_min)."""

    key: str
    kind: str
    label: str
    description: str
    weights: Any = None
    group: str | None = None
    groups: tuple[str, ...] | None = None

    @property
    def direction(self) -> str:
        return METRIC_KINDS[self.kind][0]


@dataclass(frozen=True)
class Stakeholder:
    """A stakeholder (or framework): ``stages`` is its objective, lexicographic over the stages, each stage
    a combination ``((metric, weight), ...)`` with positive weights (more of a ``max`` metric and less of a
    ``min`` one is better)."""

    name: str
    kind: str
    description: str
    stages: tuple[tuple[tuple[str, float], ...], ...]
    group: str | None = None


@dataclass(frozen=True, eq=False)
class DeclaredProblem:
    """A validated problem file (module doc). Equality is equality of :meth:`to_dict`."""

    title: str
    description: str
    note: str
    satisfaction: str
    item: str
    items: str
    item_id: str
    setting: str
    show: tuple[str, ...]
    labels: Mapping[str, str]
    rules: str
    resources: tuple[Resource, ...]
    recipients: tuple[Recipient, ...]
    metrics: Mapping[str, Metric]
    stakeholders: tuple[Stakeholder, ...]

    def __eq__(self, other: object) -> bool:
        return other is self or (isinstance(other, DeclaredProblem) and self.to_dict() == other.to_dict())

    def __hash__(self) -> int:
        return hash(self.title)

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.recipients]

    @property
    def resource_names(self) -> list[str]:
        return [r.name for r in self.resources]

    def stakeholder(self, name: str) -> Stakeholder:
        for s in self.stakeholders:
            if s.name == name:
                return s
        raise InputError("stakeholder", name, f"one of {', '.join(s.name for s in self.stakeholders)}")

    def group_of(self, attribute: str) -> list[str]:
        """Every recipient's group under ``attribute`` (its value as text: ``true``/``false`` for booleans)."""
        return [group_key(r.attributes.get(attribute)) for r in self.recipients]

    @cached_property
    def allocation_problem(self) -> Any:
        """The :class:`~fairarena.allocation.problem.AllocationProblem` (built once): recipients x resources,
        capacities, needs, indivisible resources, the satisfaction form; no welfare data (the generic core
        needs none)."""
        import numpy as np

        from fairarena.allocation.problem import AllocationProblem

        names = self.resource_names
        need = np.array([[float(r.needs.get(k, 0.0)) for k in names] for r in self.recipients])
        return AllocationProblem(
            ids=self.ids, resources=names, capacity=[r.capacity for r in self.resources], need=need,
            indivisible=[not r.divisible for r in self.resources], cnss=self.satisfaction,
            cnss_minimum=[r.minimum for r in self.resources])

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON form (every default written out): a valid problem file itself."""
        def weights(w: Any) -> Any:
            return {"attribute": w["attribute"], "values": dict(w["values"]),
                    **({"default": w["default"]} if w.get("default") is not None else {})} if isinstance(w, dict) else w

        metrics: dict[str, Any] = {}
        for k, m in self.metrics.items():
            d: dict[str, Any] = {"kind": m.kind, "label": m.label, "description": m.description}
            if m.kind == "sum":
                d["weights"] = weights(m.weights)
            if m.kind == "group_min":
                d["group"] = m.group
                if m.groups is not None:
                    d["groups"] = list(m.groups)
            metrics[k] = d
        return {
            "problem": {"title": self.title, "description": self.description, "note": self.note,
                        "satisfaction": self.satisfaction},
            "presentation": {"item": self.item, "items": self.items, "item_id": self.item_id, "setting": self.setting,
                             "show": list(self.show), "labels": dict(self.labels), "rules": self.rules},
            "resources": {r.name: {"capacity": _num(r.capacity), "divisible": r.divisible, "minimum": _num(r.minimum),
                                   "unit": r.unit} for r in self.resources},
            "recipients": [{"id": r.id, **dict(r.attributes), "needs": {k: _num(v) for k, v in r.needs.items()}}
                           for r in self.recipients],
            "metrics": metrics,
            "stakeholders": [{"name": s.name, "kind": s.kind, "description": s.description,
                              "objective": [{m: _num(w) for m, w in stage} for stage in s.stages],
                              **({"group": s.group} if s.group is not None else {})} for s in self.stakeholders],
        }


def _num(v: float) -> int | float:
    return int(v) if float(v).is_integer() else float(v)


def group_key(value: Any) -> str:
    """A group's name from an attribute value: text as it is, ``true``/``false``, numbers as written."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# -- validation -------------------------------------------------------------------------------------------

class _Reader:
    """Raises InputErrors whose field is ``FILE: path``."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, path: str, value: Any, expected: str) -> InputError:
        return InputError(f"{self.source}: {path}" if self.source else path, value, expected)

    def table(self, data: Any, path: str, allowed: tuple[str, ...] | None = None) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise self.error(path, data, "a table")
        if allowed is not None:
            for k in data:
                if k not in allowed:
                    raise self.error(f"{path}.{k}" if path else k, data[k], f"a known field ({', '.join(allowed)})")
        return data

    def text(self, data: Mapping[str, Any], key: str, path: str, default: str | None = None, *,
             pattern: str | None = None, what: str = "text") -> str:
        v = data.get(key, default)
        where = f"{path}.{key}" if path else key
        if v is None:
            raise self.error(where, None, f"{what} (required)")
        if not isinstance(v, str):
            raise self.error(where, v, what)
        if pattern is not None and not re.fullmatch(pattern, v):
            raise self.error(where, v, what)
        if any(ord(c) < 32 and c not in "\n\t" for c in v):
            raise self.error(where, v, f"{what} without control characters")
        return v

    def number(self, v: Any, path: str, *, lo: float | None = 0.0, strict: bool = False, integer: bool = False,
               what: str = "a number") -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.error(path, v, what + (" (write 1, not \"1\")" if isinstance(v, str) else ""))
        f = float(v)
        if not math.isfinite(f):
            raise self.error(path, v, f"{what}, finite")
        if lo is not None and (f < lo or (strict and f <= lo)):
            raise self.error(path, v, f"{what} {'>' if strict else '>='} {lo:g}")
        if integer and not f.is_integer():
            raise self.error(path, v, f"{what}, a whole number")
        return f


def read_problem(path: str | Path, field: str = "--problem") -> DeclaredProblem:
    """Read and validate a problem file: ``.toml`` (TOML) or ``.json`` (JSON); any other suffix is read as
    JSON when it starts with ``{``, else as TOML. Every error is an InputError naming the file and the field."""
    from fairarena.inputs import parse_json, read_text

    p = Path(path)
    text = read_text(p, field, max_bytes=16 * 1024 * 1024)
    suffix = p.suffix.lower()
    if suffix == ".json" or (suffix != ".toml" and text.lstrip()[:1] == "{"):
        data = parse_json(text, field, str(p))
    else:
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(field, str(p), f"a valid TOML problem file ({exc})") from None
    return parse_problem(data, str(p))


def parse_problem(data: Any, source: str = "problem") -> DeclaredProblem:
    """Validate decoded problem data (module doc) completely; ``source`` names the file in errors."""
    rd = _Reader(source)
    top = rd.table(data, "", TABLES)
    for k in ("problem", "resources", "recipients", "metrics", "stakeholders"):
        if k not in top:
            raise rd.error(k, None, f"a [{k}] {'list' if k in ('recipients', 'stakeholders') else 'table'} (required)")

    # [problem]
    pt = rd.table(top["problem"], "problem", ("title", "description", "note", "satisfaction"))
    title = rd.text(pt, "title", "problem")
    if not title.strip():
        raise rd.error("problem.title", title, "a non-empty title")
    description = rd.text(pt, "description", "problem", "")
    note = rd.text(pt, "note", "problem", "")
    satisfaction = rd.text(pt, "satisfaction", "problem", "fractional")
    if satisfaction not in SATISFACTION_FORMS:
        raise rd.error("problem.satisfaction", satisfaction, f"one of {', '.join(SATISFACTION_FORMS)}")

    # [resources.NAME]
    rt = rd.table(top["resources"], "resources")
    if not rt:
        raise rd.error("resources", {}, "at least one resource")
    if len(rt) > MAX_RESOURCES:
        raise rd.error("resources", len(rt), f"at most {MAX_RESOURCES} resources")
    resources: list[Resource] = []
    for name, spec in rt.items():
        where = f"resources.{name}"
        if not name.strip() or name != name.strip() or len(name) > 40 or any(ord(c) < 32 for c in name):
            raise rd.error(where, name, "a resource name of 1 to 40 characters without surrounding spaces")
        spec = rd.table(spec, where, ("capacity", "divisible", "minimum", "unit"))
        divisible = spec.get("divisible", False)
        if not isinstance(divisible, bool):
            raise rd.error(f"{where}.divisible", divisible, "true or false")
        if "capacity" not in spec:
            raise rd.error(f"{where}.capacity", None, "a capacity (required)")
        capacity = rd.number(spec["capacity"], f"{where}.capacity", integer=not divisible,
                             what="a non-negative capacity" + ("" if divisible else " in whole units (indivisible)"))
        minimum = rd.number(spec.get("minimum", 1), f"{where}.minimum", strict=True, what="a minimum amount")
        resources.append(Resource(name, capacity, divisible, minimum, rd.text(spec, "unit", where, "")))
    rnames = [r.name for r in resources]
    indivisible = {r.name for r in resources if not r.divisible}

    # [[recipients]]
    rl = top["recipients"]
    if not isinstance(rl, list) or not rl:
        raise rd.error("recipients", rl, "a non-empty list of recipients ([[recipients]] tables)")
    if len(rl) > MAX_RECIPIENTS:
        raise rd.error("recipients", len(rl), f"at most {MAX_RECIPIENTS} recipients")
    recipients: list[Recipient] = []
    seen: dict[str, int] = {}
    for i, rec in enumerate(rl):
        where = f"recipients[{i}]"
        rec = rd.table(rec, where)
        rid = rec.get("id")
        if not isinstance(rid, str) or not rid.strip() or rid != rid.strip() or len(rid) > 40 \
                or any(ord(c) < 32 for c in rid):
            raise rd.error(f"{where}.id", rid, "a text id of 1 to 40 characters without surrounding spaces")
        if rid in seen:
            raise rd.error(f"{where}.id", rid, f"a unique id (recipients[{seen[rid]}] has it too)")
        seen[rid] = i
        needs_raw = rd.table(rec.get("needs"), f"{where}.needs") if rec.get("needs") is not None else None
        if needs_raw is None:
            raise rd.error(f"{where}.needs", None, "a table {RESOURCE = amount} (required)")
        needs: dict[str, float] = {}
        for k, v in needs_raw.items():
            if k not in rnames:
                raise rd.error(f"{where}.needs.{k}", v, f"a need for a declared resource ({', '.join(rnames)})")
            amount = rd.number(v, f"{where}.needs.{k}", integer=k in indivisible,
                               what="a non-negative amount" + (" in whole units (indivisible)" if k in indivisible else ""))
            if amount > 0:
                needs[k] = amount
        if not needs:
            raise rd.error(f"{where}.needs", needs_raw, "a positive need for at least one resource")
        attrs: dict[str, Scalar] = {}
        for k, v in rec.items():
            if k in _RESERVED:
                continue
            if not re.fullmatch(KEY_PATTERN, k):
                raise rd.error(f"{where}.{k}", v, f"an attribute name matching {KEY_PATTERN}")
            if isinstance(v, float) and not math.isfinite(v):
                raise rd.error(f"{where}.{k}", v, "a finite number")
            if not isinstance(v, (str, int, float, bool)):
                raise rd.error(f"{where}.{k}", v, "an attribute: text, a number or true/false")
            attrs[k] = v
        recipients.append(Recipient(rid, {k: needs[k] for k in rnames if k in needs}, attrs))
    attribute_names = list(dict.fromkeys(k for r in recipients for k in r.attributes))

    # [presentation]
    pr = rd.table(top.get("presentation", {}), "presentation",
                  ("item", "items", "item_id", "setting", "show", "labels", "rules"))
    item = rd.text(pr, "item", "presentation", "recipient")
    if not item.strip():
        raise rd.error("presentation.item", item, "a non-empty word")
    items = rd.text(pr, "items", "presentation", item + "s")
    item_id = rd.text(pr, "item_id", "presentation", re.sub(r"[^A-Z0-9]+", "_", item.upper()).strip("_") + "_ID",
                      pattern=r"[A-Z][A-Z0-9_]{0,39}", what="an upper-case placeholder such as STUDENT_ID")
    setting = rd.text(pr, "setting", "presentation", f"an allocation of {', '.join(rnames)} among {items}")
    show_raw = pr.get("show", attribute_names)
    if not isinstance(show_raw, list) or not all(isinstance(s, str) for s in show_raw):
        raise rd.error("presentation.show", show_raw, "a list of recipient attribute names")
    for j, s in enumerate(show_raw):
        if s not in attribute_names:
            raise rd.error(f"presentation.show[{j}]", s, f"a recipient attribute ({', '.join(attribute_names) or 'none'})")
    if len(set(show_raw)) != len(show_raw):
        raise rd.error("presentation.show", show_raw, "distinct attribute names")
    labels_raw = rd.table(pr.get("labels", {}), "presentation.labels")
    labels: dict[str, str] = {}
    for k, v in labels_raw.items():
        if k not in attribute_names:
            raise rd.error(f"presentation.labels.{k}", v, f"a label of a recipient attribute ({', '.join(attribute_names)})")
        labels[k] = rd.text(labels_raw, k, "presentation.labels")
    extra_rules = rd.text(pr, "rules", "presentation", "")

    # [metrics.KEY]
    mt = rd.table(top["metrics"], "metrics")
    if not mt:
        raise rd.error("metrics", {}, "at least one metric")
    metrics: dict[str, Metric] = {}
    for key, spec in mt.items():
        where = f"metrics.{key}"
        if not re.fullmatch(KEY_PATTERN, key):
            raise rd.error(where, key, f"a metric key matching {KEY_PATTERN}")
        spec = rd.table(spec, where)
        kind = spec.get("kind")
        if kind not in METRIC_KINDS:
            raise rd.error(f"{where}.kind", kind, f"one of {', '.join(METRIC_KINDS)} (the objective vocabulary)")
        allowed = ("kind", "label", "description") + {"sum": ("weights",), "group_min": ("group", "groups")}.get(kind, ())
        rd.table(spec, where, allowed)
        label = rd.text(spec, "label", where, key)
        desc = rd.text(spec, "description", where, METRIC_KINDS[kind][1].split(";")[0])
        weights, group, groups = None, None, None
        if kind == "sum":
            weights = _weights(rd, spec.get("weights", 1), f"{where}.weights", recipients)
        if kind == "group_min":
            group = rd.text(spec, "group", where, what="a recipient attribute")
            _attribute_everywhere(rd, group, f"{where}.group", recipients)
            present = set(group_key(r.attributes[group]) for r in recipients)
            if "groups" in spec:
                gl = spec["groups"]
                if not isinstance(gl, list) or not gl or not all(isinstance(g, (str, int, bool)) for g in gl):
                    raise rd.error(f"{where}.groups", gl, "a non-empty list of group names")
                groups = tuple(group_key(g) for g in gl)
                for j, g in enumerate(groups):
                    if g not in present:
                        raise rd.error(f"{where}.groups[{j}]", gl[j], f"a group with members (groups of {group}: "
                                       f"{', '.join(sorted(present))})")
                if len(set(groups)) != len(groups):
                    raise rd.error(f"{where}.groups", gl, "distinct groups")
        metrics[key] = Metric(key, kind, label, desc, weights, group, groups)

    # [[stakeholders]]
    sl = top["stakeholders"]
    if not isinstance(sl, list) or len(sl) < 2:
        raise rd.error("stakeholders", sl if not isinstance(sl, list) else len(sl),
                       "a list of at least two stakeholders ([[stakeholders]] tables)")
    stakeholders: list[Stakeholder] = []
    names: dict[str, int] = {}
    for i, s in enumerate(sl):
        where = f"stakeholders[{i}]"
        s = rd.table(s, where, ("name", "kind", "description", "objective", "group"))
        name = rd.text(s, "name", where, pattern=NAME_PATTERN,
                       what="a name of letters, digits, '-' or '_' (at most 32, starting with a letter)")
        if name in names:
            raise rd.error(f"{where}.name", name, f"a unique name (stakeholders[{names[name]}] has it too)")
        names[name] = i
        kind = rd.text(s, "kind", where, "stakeholder", pattern=r"[a-z][a-z0-9_-]{0,31}", what="a lower-case word")
        desc = rd.text(s, "description", where, "")
        group = rd.text(s, "group", where, "") or None
        stakeholders.append(Stakeholder(name, kind, desc, _objective(rd, s.get("objective"), f"{where}.objective",
                                                                      metrics), group))
    return DeclaredProblem(title, description, note, satisfaction, item, items, item_id, setting, tuple(show_raw),
                           labels, extra_rules, tuple(resources), tuple(recipients), metrics, tuple(stakeholders))


def _attribute_everywhere(rd: _Reader, attribute: str, where: str, recipients: list[Recipient]) -> None:
    for i, r in enumerate(recipients):
        if attribute not in r.attributes:
            raise rd.error(where, attribute, f"an attribute every recipient has (recipients[{i}] ({r.id}) has none)")


def _weights(rd: _Reader, w: Any, where: str, recipients: list[Recipient]) -> Any:
    """A number, an attribute name (numeric, non-negative on every recipient) or a per-group table."""
    if isinstance(w, (int, float)) and not isinstance(w, bool):
        return rd.number(w, where, strict=True, what="a positive constant weight")
    if isinstance(w, str):
        _attribute_everywhere(rd, w, where, recipients)
        for i, r in enumerate(recipients):
            v = r.attributes[w]
            rd.number(float(v) if isinstance(v, bool) else v, f"recipients[{i}].{w}",
                      what=f"a non-negative number (it weighs the recipients in {where})")
        if all(float(r.attributes[w]) == 0 for r in recipients):
            raise rd.error(where, w, "an attribute that is positive for some recipient (all weights are 0)")
        return w
    if isinstance(w, dict):
        rd.table(w, where, ("attribute", "values", "default"))
        attribute = rd.text(w, "attribute", where, what="a recipient attribute")
        _attribute_everywhere(rd, attribute, f"{where}.attribute", recipients)
        values = rd.table(w.get("values"), f"{where}.values") if w.get("values") is not None else None
        if not values:
            raise rd.error(f"{where}.values", values, "a table {GROUP = weight} with at least one group")
        present = {group_key(r.attributes[attribute]) for r in recipients}
        out = {}
        for g, v in values.items():
            if g not in present:
                raise rd.error(f"{where}.values.{g}", v, f"a group with members (groups of {attribute}: "
                               f"{', '.join(sorted(present))})")
            out[g] = rd.number(v, f"{where}.values.{g}", what="a non-negative weight")
        default = None
        if "default" in w:
            default = rd.number(w["default"], f"{where}.default", what="a non-negative weight")
        for i, r in enumerate(recipients):
            if group_key(r.attributes[attribute]) not in out and default is None:
                raise rd.error(f"recipients[{i}].{attribute}", r.attributes[attribute],
                               f"a group listed in {where}.values (or give {where}.default)")
        resolved = [out.get(group_key(r.attributes[attribute]), default or 0.0) for r in recipients]
        if not any(v > 0 for v in resolved):
            raise rd.error(where, w, "a weight that is positive for some recipient (all weights are 0)")
        return {"attribute": attribute, "values": out, "default": default}
    raise rd.error(where, w, "a positive number, a numeric recipient attribute, or {attribute, values, default}")


def _objective(rd: _Reader, obj: Any, where: str, metrics: dict[str, Metric]) -> tuple[tuple[tuple[str, float], ...], ...]:
    """Stages of metric weights: ``"m"``, ``{m = w, ...}`` or a list of those (lexicographic)."""
    if obj is None:
        raise rd.error(where, None, "a metric, a table {METRIC = weight} or a list of them (required)")
    raw = obj if isinstance(obj, list) else [obj]
    if not raw:
        raise rd.error(where, obj, "at least one stage")
    stages = []
    for j, st in enumerate(raw):
        at = f"{where}[{j}]" if isinstance(obj, list) else where
        if isinstance(st, str):
            st = {st: 1}
        if not isinstance(st, dict) or not st:
            raise rd.error(at, st, "a metric name or a table {METRIC = weight}")
        stage = []
        for m, w in st.items():
            if m not in metrics:
                raise rd.error(f"{at}" if isinstance(raw[j], str) else f"{at}.{m}", m,
                               f"a declared metric ({', '.join(metrics)})")
            stage.append((m, rd.number(w, f"{at}.{m}", strict=True, what="a positive weight (the metric's direction "
                                                                            "says whether more or less is better)")))
        kinds = [metrics[m].kind for m, _ in stage]
        if len(stage) > 1 and any(k in ("gini", "variance") for k in kinds):
            raise rd.error(at, list(st), "gini and variance only alone in a stage (give them a stage of their own)")
        stages.append(tuple(stage))
    if metrics[stages[0][0][0]].kind == "gini" and len(stages) > 1:
        raise rd.error(where, obj, "no stage after a first gini stage: its optimum is the egalitarian one, with its "
                                   "own tie-breaks (the least Gini among allocations nobody can improve on, then "
                                   "the mean satisfaction); put another metric first to rank by gini later")
    return tuple(stages)
