"""The packages of agentload import only downwards: no package imports one above it, and no
two packages import each other; and no file imports itself through others (a circle of files).
Checked on the source: imports inside functions and under `if TYPE_CHECKING` included.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Mapping
from itertools import pairwise
from pathlib import Path

import pytest

from tests.paths import REPO

SOURCE = REPO / "src" / "agentload"
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "__init__",
        "__main__",
        "errors",
        "clock",
        "console",
        "files",
        "frozen",
        "home",
        "tables",
        "tasks",
        "units",
        "vocabulary",
    ),
    ("results",),
    ("workload",),
    ("client", "engines"),
    ("measure", "target"),
    ("sim", "doctor", "search", "quality"),
    ("run",),
    ("layouts",),
    ("report", "analysis"),
    ("commands", "cli", "config_file", "option_errors"),
)
"""Bottom to top: a package may import its own layer's modules and those below."""
ENTRY = ("__main__", "cli", "commands", "config_file", "option_errors")
"""The entry points sit on top whatever their file name's layer."""


def _layer(package: str) -> int:
    for level, names in enumerate(LAYERS):
        if package in names:
            return level
    raise AssertionError(f"agentload.{package} is in no layer: add it to LAYERS")


def _package(path: Path) -> str:
    part = path.relative_to(SOURCE).parts[0]
    return part.removesuffix(".py")


@functools.cache
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a source file, parsed once a session (each test below walks them all)."""
    return tuple(ast.walk(ast.parse(path.read_text(), filename=str(path))))


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, imported agentload package) of every import in a file."""
    for node in _nodes(path):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "agentload" and len(parts) > 1:
                yield node.lineno, parts[1]


def _edges() -> list[tuple[str, str, str]]:
    """(importer package, imported package, where) for every cross-package import."""
    found = []
    for path in sorted(SOURCE.rglob("*.py")):
        mine = _package(path)
        for line, theirs in _imports(path):
            if theirs != mine:
                found.append((mine, theirs, f"{path.relative_to(REPO)}:{line}"))
    return found


def test_no_package_imports_a_package_above_it() -> None:
    upward = [
        f"{where}: agentload.{mine} imports agentload.{theirs}"
        for mine, theirs, where in _edges()
        if mine not in ENTRY and _layer(theirs) > _layer(mine)
    ]
    assert not upward, "\n".join(upward)


def test_no_two_packages_import_each_other() -> None:
    graph: dict[str, set[str]] = {}
    for mine, theirs, _ in _edges():
        graph.setdefault(mine, set()).add(theirs)
    cycles = sorted(
        f"{a} <-> {b}" for a in graph for b in graph[a] if a < b and a in graph.get(b, set())
    )
    assert not cycles, cycles


@pytest.mark.parametrize(
    ("importer", "imported"), [("report", "run"), ("measure", "report"), ("run", "report")]
)
def test_named_layering_rules(importer: str, imported: str) -> None:
    """The issue's named rules: the report knows nothing of the run, measurement nothing of
    the report, the run nothing of the report."""
    assert not [w for m, t, w in _edges() if m == importer and t == imported]


def _module(path: Path) -> str:
    """A file's module name; a package's `__init__.py` is the package."""
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _file_imports(path: Path, modules: Mapping[str, Path]) -> Iterator[tuple[int, str]]:
    """(line, agentload module) of every import in a file: `from a.b import c` is a.b.c when
    that is a module, else a.b."""
    for node in _nodes(path):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                if name in modules:
                    yield node.lineno, name
                elif node.module in modules:
                    yield node.lineno, node.module


def _file_graph() -> dict[str, dict[str, int]]:
    """Each module's imports of other agentload modules, with the line of the first."""
    modules = {_module(path): path for path in sorted(SOURCE.rglob("*.py"))}
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        edges = graph.setdefault(name, {})
        for line, theirs in _file_imports(path, modules):
            if theirs != name:
                edges.setdefault(theirs, line)
    return graph


def _circle(graph: Mapping[str, Mapping[str, int]]) -> list[str] | None:
    """One circle of imports (`a`, `b`, ..., `a`), or None (depth-first, iterative)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    for root in sorted(graph):
        if root in state:
            continue
        path = [root]
        todo = [iter(sorted(graph[root]))]
        state[root] = 1
        while todo:
            step = next(todo[-1], None)
            if step is None:
                state[path.pop()] = 2
                todo.pop()
            elif state.get(step) == 1:
                return [*path[path.index(step) :], step]
            elif step not in state:
                state[step] = 1
                path.append(step)
                todo.append(iter(sorted(graph.get(step, {}))))
    return None


def _circle_words(circle: list[str], graph: Mapping[str, Mapping[str, int]]) -> str:
    return (
        " -> ".join(f"{a} (line {graph[a][b]})" for a, b in pairwise(circle)) + f" -> {circle[-1]}"
    )


def test_no_file_imports_itself_through_others() -> None:
    graph = _file_graph()
    circle = _circle(graph)
    assert circle is None, f"an import circle: {_circle_words(circle, graph)}"


def test_the_circle_finder_names_a_circle_of_files() -> None:
    graph = {"a": {"b": 3}, "b": {"c": 5}, "c": {"a": 7, "d": 1}, "d": {}}
    circle = _circle(graph)
    assert circle == ["a", "b", "c", "a"]
    assert _circle_words(circle, graph) == "a (line 3) -> b (line 5) -> c (line 7) -> a"
    assert _circle({"a": {"b": 1}, "b": {}, "c": {"b": 2}}) is None


def test_the_file_graph_sees_imports_inside_functions_and_type_checking() -> None:
    graph = _file_graph()
    in_a_function = graph["agentload.commands.simulate_options"]
    assert "agentload.sim.setup.build" in in_a_function
    assert "agentload.layouts.request" in graph["agentload.commands.simulate_layouts"]


def _imports_by_name(path: Path) -> Iterator[int]:
    """Lines of `importlib.import_module(...)` / `__import__(...)` calls naming an agentload
    module (a literal or an f-string): imports the graph above cannot see."""
    for node in _nodes(path):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = node.args[0]
        if isinstance(first, ast.JoinedStr) and first.values:
            first = first.values[0]
        if (
            name in ("import_module", "__import__")
            and isinstance(first, ast.Constant)
            and str(first.value).startswith("agentload")
        ):
            yield node.lineno


def test_no_agentload_module_is_imported_by_name() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted(SOURCE.rglob("*.py"))
        for line in _imports_by_name(path)
    ]
    assert not found, found
