"""The layers of docs/architecture.md, read from the source: every import points downward
(or stays inside its own package), the engine never imports the reference evaluator, and
the only import cycles are the algebra's recursive types."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

LAYERS = [
    {"rdf"},
    {"algebra"},
    {"io", "lang"},
    {"reasoning"},
    {"engine", "semantics"},
    {"workloads"},
    {"runtime"},
    {"bench", "timeline"},
    {"cli"},
]
"""Sepia's packages, lowest first; a package imports only from lower ones (or itself)."""

ENGINE = [
    {""},
    {"s2r"},
    {"r2r"},
    {"cep"},
    {"r2s"},
    {"plan"},
    {"query"},
    {"columnar"},
    {"hosts"},
]
"""The engine's folders, lowest first, one to a level so no two import each other ("": the
modules at its root: rows, graphs, codec, background): the row engine's query kinds, then
the columnar core (a ``ContinuousQuery`` whose windows are columns), then the hosts that
choose between the two (sessions, networks); its ``__init__`` sits above them all."""


def modules() -> dict[str, Path]:
    found = {}
    for path in SRC.joinpath("sepia").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = modules()


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST, package: str) -> Iterator[str]:
    """The sepia modules a module imports (at any depth, not under TYPE_CHECKING)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _type_checking(child):
            continue
        if isinstance(child, ast.Import):
            yield from (a.name for a in child.names if a.name.startswith("sepia"))
        elif isinstance(child, ast.ImportFrom):
            base = child.module or ""
            if child.level:
                anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base.startswith("sepia"):
                for alias in child.names:
                    inner = f"{base}.{alias.name}"
                    yield inner if inner in MODULES else base
        else:
            yield from _imports(child, package)


def graph() -> dict[str, set[str]]:
    edges = {}
    for name, path in MODULES.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges[name] = set(_imports(ast.parse(path.read_text()), package)) - {name}
    return edges


EDGES = graph()


def _level(module: str) -> int | None:
    top = module.split(".")[1] if "." in module else None
    return next((i for i, layer in enumerate(LAYERS) if top in layer), None)


def _engine_level(module: str) -> int:
    parts = module.split(".")
    if module == "sepia.engine":
        return len(ENGINE)
    package = MODULES[module].name == "__init__.py"
    folder = parts[2] if len(parts) > 3 or package else ""
    return next(i for i, level in enumerate(ENGINE) if folder in level)


def test_every_package_has_a_layer():
    tops = {m.split(".")[1] for m in MODULES if m.count(".") >= 1}
    assert tops - {"__main__"} <= set().union(*LAYERS)


def test_imports_point_downward():
    upward = [
        (source, target)
        for source, targets in EDGES.items()
        for target in targets
        if _level(source) is not None
        and _level(target) is not None
        and source.split(".")[1] != target.split(".")[1]
        and _level(target) >= _level(source)  # type: ignore[operator]
    ]
    assert upward == []


def test_the_engine_does_not_import_the_reference_evaluator():
    borrowed = [
        (source, target)
        for source, targets in EDGES.items()
        for target in targets
        if source.startswith("sepia.engine") and target.startswith("sepia.semantics")
    ]
    assert borrowed == []


def test_the_engine_folders_are_layered():
    """s2r below r2r below cep below r2s below plan below query below columnar below hosts."""
    upward = [
        (source, target)
        for source, targets in EDGES.items()
        if source.startswith("sepia.engine.")
        for target in targets
        if target.startswith("sepia.engine") and _engine_level(target) > _engine_level(source)
    ]
    assert upward == []


def _cycles() -> list[set[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in EDGES.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(EDGES):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_but_the_algebras_recursive_types():
    cycles = [c for c in _cycles() if not all(m.startswith("sepia.algebra") for m in c)]
    assert cycles == []
