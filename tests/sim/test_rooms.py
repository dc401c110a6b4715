"""The simulator is in rooms by concern: each room imports only the rooms before it (function-
level imports included), each sub-package's docstring states its contract, and few files sit
at its top."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import REPO

SIM = REPO / "src" / "agentload" / "sim"
ROOMS: tuple[tuple[str, ...], ...] = (
    ("specs",),
    ("steps",),
    ("cache",),
    ("engine",),
    ("setup",),
    ("replay", "predict"),
    ("calibration",),
    ("facts", "target", "__init__"),
)
"""First to last: what exists, step times, the KV cache, the engine, from names to an engine,
the replay drivers, calibration on a measured run, and the drivers a user calls."""
MOST_TOP_LEVEL_FILES = 12


def _room(parts: tuple[str, ...]) -> int:
    name = parts[0].removesuffix(".py")
    return next(i for i, names in enumerate(ROOMS) if name in names)


def _sim_imports(path: Path) -> list[tuple[int, tuple[str, ...]]]:
    """(line, the imported module's parts under `agentload.sim`) of every import in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        modules = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module]
        for module in modules:
            parts = tuple(module.split("."))
            if parts[:2] == ("agentload", "sim") and len(parts) > 2:
                found.append((node.lineno, parts[2:]))
    return found


def test_every_room_imports_only_the_rooms_before_it() -> None:
    upward = []
    for path in sorted(SIM.rglob("*.py")):
        mine = _room(path.relative_to(SIM).parts)
        for line, imported in _sim_imports(path):
            if _room(imported) > mine:
                upward.append(f"{path.relative_to(REPO)}:{line} imports {'.'.join(imported)}")
    assert not upward, "imports running up between the simulator's rooms:\n" + "\n".join(upward)


def test_every_room_states_its_contract_and_few_files_sit_at_the_top() -> None:
    rooms = {name for names in ROOMS for name in names}
    for package in (p for p in SIM.iterdir() if (p / "__init__.py").is_file()):
        assert package.name in rooms, f"sim/{package.name} is in no room: add it to ROOMS"
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
        assert "Contract:" in doc, f"sim/{package.name}/__init__.py states no contract"
    top = sorted(p.name for p in SIM.glob("*.py"))
    assert len(top) <= MOST_TOP_LEVEL_FILES, top
