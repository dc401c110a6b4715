"""docs/architecture.md names only what exists: every file path (`run/probe.py`,
`tests/test_layers.py`, a bare `files.py` in its package's row), every module of the ownership
table and every dotted name (`run.execute.Execution`), so a moved or renamed module fails here
and not in a newcomer's head."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.paths import REPO

DOC = REPO / "docs" / "architecture.md"
SRC = REPO / "src" / "agentload"
ROOTS = ("src/", "tests/", "bench/")
"""A path starting with one of these is from the repository's root; any other from the
package's."""
PY_PATH = re.compile(r"(?<![\w/.-])((?:[a-z_]+/)*[a-z_]+\.py)\b")
ROW = re.compile(r"^\| (.+?) \|")
"""The first cell of an ownership-table row: the packages or modules it is about."""
CELL_NAME = re.compile(r"`([a-z_]+)(/?)`")
DOTTED = re.compile(r"`((?:[a-z_]+\.)+[A-Za-z_]\w*)`")
FILE_SUFFIXES = {"py", "html", "json", "jsonl", "toml", "md"}
"""A dotted name ending in one of these is a file (`report.html`), not a Python name."""


def _lines() -> list[str]:
    return DOC.read_text(encoding="utf-8").splitlines()


def _row_packages(line: str) -> list[str]:
    """The packages a table row is about (`results/` -> results), none outside the table."""
    found = ROW.match(line)
    if found is None:
        return []
    return [name for name, slash in CELL_NAME.findall(found[1]) if slash]


def _candidates(path: str, packages: list[str]) -> list[Path]:
    """Where a named path may live: from the root, or the package, or the row's package."""
    if path.startswith(ROOTS):
        return [REPO / path]
    return [SRC / path, *(SRC / package / path for package in packages)]


def _named_paths() -> list[tuple[int, str, list[Path]]]:
    named = []
    for number, line in enumerate(_lines(), start=1):
        packages = _row_packages(line)
        for path in PY_PATH.findall(line):
            named.append((number, path, _candidates(path, packages)))
    return named


def _table_modules() -> list[str]:
    """Every module or package the ownership table's first column names."""
    return [
        name
        for line in _lines()
        if (row := ROW.match(line)) and not row[1].startswith(("package", "---"))
        for name, _ in CELL_NAME.findall(row[1])
    ]


def _resolves(dotted: str) -> bool:
    """`run.execute.Execution`: the longest importable module under agentload, then
    attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module("agentload." + ".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def _dotted_names() -> list[tuple[int, str]]:
    """Backticked dotted names whose first part is an agentload module (not `summary.json`)."""
    return [
        (number, name)
        for number, line in enumerate(_lines(), start=1)
        for name in DOTTED.findall(line)
        if name.rsplit(".", 1)[1] not in FILE_SUFFIXES
        and ((SRC / name.split(".")[0]).is_dir() or (SRC / f"{name.split('.')[0]}.py").is_file())
    ]


def test_the_doc_names_files_and_names_to_check() -> None:
    assert len(_named_paths()) > 40 and len(_table_modules()) > 15 and len(_dotted_names()) > 8


@pytest.mark.parametrize(("line", "path", "places"), _named_paths(), ids=lambda v: str(v))
def test_every_file_the_architecture_names_exists(line: int, path: str, places: list[Path]) -> None:
    assert any(p.is_file() for p in places), f"docs/architecture.md:{line}: no {path}"


@pytest.mark.parametrize("name", _table_modules())
def test_every_module_the_ownership_table_names_exists(name: str) -> None:
    assert (SRC / name).is_dir() or (SRC / f"{name}.py").is_file(), name


@pytest.mark.parametrize(("line", "name"), _dotted_names(), ids=lambda v: str(v))
def test_every_dotted_name_the_architecture_gives_resolves(line: int, name: str) -> None:
    assert _resolves(name), f"docs/architecture.md:{line}: no agentload.{name}"
