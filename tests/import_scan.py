"""The layer tests' one import scanner: every ``fairarena.*`` module a source file imports, wherever the
import statement is (function-local imports included, since those hid the package cycles)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "fairarena"


def file_imports(path: Path, *, names: bool = False) -> set[str]:
    """The ``fairarena.*`` modules ``path`` imports; with ``names``, also ``module.name`` for each name a
    ``from module import name`` takes."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
            if names:
                out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {n for n in out if n.startswith("fairarena.")}


def imports_of(package: str, *, names: bool = False) -> dict[str, set[str]]:
    """Each module of ``package`` (a path relative to the package root, e.g. ``"domains/protocol.py"``) ->
    :func:`file_imports`."""
    return {str(p.relative_to(SRC)): file_imports(p, names=names) for p in (SRC / package).rglob("*.py")}


def imported(paths: list[Path]) -> set[str]:
    """Every ``fairarena.*`` module any of ``paths`` imports."""
    return set().union(*(file_imports(p) for p in paths))


# -- what the generic-layer tests add (tests/domains/test_generic_layers.py) ---------------------------

def module_of(path: Path) -> str:
    """``src/fairarena/aggregation/cli.py`` -> ``"aggregation/cli.py"`` (the scan's name for a file)."""
    return str(path.relative_to(SRC))


def sites_of_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every absolute ``fairarena.*`` import statement in ``path``, function-local
    ones included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
    return [(ln, m) for ln, m in out if m.startswith("fairarena.")]


def docstring_nodes(tree: ast.AST) -> set[int]:
    """``id`` of every docstring constant (the first statement of a module, class or function when it is
    a string), so a scan of string literals can skip them."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                out.add(id(body[0].value))
    return out


def with_parents(tree: ast.AST) -> dict[int, ast.AST]:
    """``id(node) -> parent`` for every node of ``tree``."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


def string_literals(path: Path) -> list[tuple[ast.Constant, dict[int, ast.AST]]]:
    """Every string constant of ``path`` that is not a docstring, with the file's parent map."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip, parents = docstring_nodes(tree), with_parents(tree)
    return [(n, parents) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]


def identifier(node: ast.AST | None) -> str:
    """The name an expression ends in (``domain``, ``cfg.domain``, ``self.domain_name`` -> the last part;
    ``resolve(...)`` -> ``resolve``), or ``""``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return identifier(node.func)
    if isinstance(node, ast.Subscript):
        return identifier(node.value)
    return ""


def in_domain_context(node: ast.Constant, parents: dict[int, ast.AST]) -> bool:
    """True when the literal ``node`` is used as a domain name: compared with (or tested for membership
    against) an expression whose name mentions ``domain`` (``domain == "x"``, ``cfg.domain in ("x", "y")``),
    the value of a ``domain=`` keyword, of a ``"domain":`` dict key, of an assignment to a name mentioning
    ``domain`` or of a parameter default named so, or the argument of ``resolve(...)`` / ``DOMAINS.get(...)``
    (or any call on a name mentioning ``domain``)."""
    def domainish(expr: ast.AST | None) -> bool:
        return "domain" in identifier(expr).lower()

    child: ast.AST = node
    parent = parents.get(id(node))
    while isinstance(parent, (ast.Tuple, ast.List, ast.Set)):   # "x" in ("a", "b"): the container's context
        child, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.Compare):
        return any(domainish(e) for e in [parent.left, *parent.comparators] if e is not child)
    if isinstance(parent, ast.keyword):
        return "domain" in (parent.arg or "").lower()
    if isinstance(parent, ast.Dict):
        for k, v in zip(parent.keys, parent.values):
            if v is child and isinstance(k, ast.Constant) and isinstance(k.value, str) and "domain" in k.value.lower():
                return True
        return False
    if isinstance(parent, (ast.Assign, ast.AnnAssign)):
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        return any(domainish(t) for t in targets)
    if isinstance(parent, ast.arguments):
        pos = parent.posonlyargs + parent.args
        for a, d in zip(pos[len(pos) - len(parent.defaults):], parent.defaults):
            if d is child and "domain" in a.arg.lower():
                return True
        return any(d is child and "domain" in a.arg.lower() for a, d in zip(parent.kwonlyargs, parent.kw_defaults))
    if isinstance(parent, ast.Call):
        return child in parent.args and (identifier(parent.func) == "resolve" or domainish(parent.func)
                                         or domainish(getattr(parent.func, "value", None)))
    return False


def package_graph(skip: set[str] = frozenset()) -> dict[str, dict[str, list[str]]]:
    """The import graph between the parts of ``src/fairarena``: a package (``aggregation``) or a top-level
    module (``errors``); ``graph[a][b]`` lists the files of ``a`` (``"a/x.py:LINE"``) importing ``b``,
    function-local imports included. Files in ``skip`` (scan names, :func:`module_of`) are left out."""
    graph: dict[str, dict[str, list[str]]] = {}
    for path in sorted(SRC.rglob("*.py")):
        name = module_of(path)
        if name in skip:
            continue
        part = name.split("/")[0].removesuffix(".py")
        if part == "__init__":
            part = "fairarena"
        edges = graph.setdefault(part, {})
        for line, mod in sites_of_imports(path):
            target = mod.split(".")[1] if "." in mod else "fairarena"
            if target != part:
                edges.setdefault(target, []).append(f"{name}:{line}")
    return graph


def find_cycle(graph: dict[str, dict[str, list[str]]]) -> list[str] | None:
    """One cycle of ``graph`` (``[a, b, ..., a]``) or None; deterministic (nodes and edges sorted)."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = {n: WHITE for n in graph}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        colour[n] = GREY
        stack.append(n)
        for m in sorted(graph.get(n, {})):
            c = colour.get(m, WHITE)
            if c == GREY:
                return stack[stack.index(m):] + [m]
            if c == WHITE:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        colour[n] = BLACK
        return None

    for n in sorted(graph):
        if colour[n] == WHITE:
            found = visit(n)
            if found:
                return found
    return None


def all_cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The strongly connected parts of ``graph`` with more than one node (each sorted), sorted: every
    package in a cycle, grouped (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(set(graph) | {w for e in graph.values() for w in e}):
            if v not in index:
                strong(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(out)
