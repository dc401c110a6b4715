"""The packages of agentload import only downwards: no package imports one above it, and no
two packages import each other (checked on the source, lazy imports inside functions included).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
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


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, imported agentload package) of every import in a file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
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
