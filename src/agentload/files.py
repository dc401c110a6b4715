"""Writing results files safely: atomic JSON, owner-only permissions, no symlinks followed;
reading a file with one-line errors."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import orjson

from agentload.errors import AgentloadError

T = TypeVar("T")

LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
"""What a label may not hold to be part of a directory name."""
OWNER_ONLY_FILE = 0o600
OWNER_ONLY_DIR = 0o700
OWNER_ONLY_UMASK = 0o077
"""While a run writes its results, every file and folder it creates (the engine's log
included) is created without group or other permissions."""


def clean_label(text: str, fallback: str) -> str:
    """A label safe in a directory name (letters, digits, `._-`), or `fallback` when none is
    left."""
    return LABEL_UNSAFE.sub("-", text).strip("-") or fallback


def make_results_dir(path: Path, *, exist_ok: bool = False) -> Path:
    """Create a results directory (owner-only); refuse a symlink or a non-empty existing one."""
    if path.is_symlink():
        raise AgentloadError(f"{path}: is a symlink; refusing to write results through it")
    try:
        if path.exists():
            if not path.is_dir():
                raise AgentloadError(f"{path}: exists and is not a directory")
            if any(path.iterdir()) and not exist_ok:
                raise AgentloadError(
                    f"{path}: already holds results; choose another --out or remove it first"
                )
        path.mkdir(parents=True, exist_ok=True, mode=OWNER_ONLY_DIR)
    except OSError as exc:
        raise AgentloadError(
            f"{path}: cannot create the results directory: {exc.strerror or exc}"
        ) from None
    return path


@contextlib.contextmanager
def new_results_dir(
    path: Path, first_file: str, disposable: tuple[str, ...] = ()
) -> Iterator[Path]:
    """`make_results_dir`, with an empty `first_file` in it from the start (so a killed run
    leaves a directory the report can read). If the block fails while `first_file` is still
    empty and nothing but it and the `disposable` files are there (a bad option, a server that
    cannot be reached: nothing measured), they are removed again, and the directory if this
    made it, so the next try can use the same path."""
    existed = path.exists()
    out = make_results_dir(path)
    first = out / first_file
    try:
        os.close(os.open(first, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, OWNER_ONLY_FILE))
    except OSError as exc:
        raise AgentloadError(f"{first}: cannot create: {exc.strerror or exc}") from None
    try:
        yield out
    except BaseException:
        with contextlib.suppress(OSError):
            names = {p.name for p in out.iterdir()}
            if names <= {first_file, *disposable} and first.stat().st_size == 0:
                for name in names:
                    (out / name).unlink()
                if not existed:
                    out.rmdir()
        raise


def refuse_symlinks(folder: Path) -> None:
    """Refuse a results directory that is, or holds, a symlink (nothing is written through
    one)."""
    if folder.is_symlink():
        raise AgentloadError(f"{folder}: is a symlink; refusing to write results through it")
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink():
            raise AgentloadError(f"{entry}: is a symlink; refusing to write results through it")


@contextlib.contextmanager
def owner_only_files() -> Iterator[None]:
    """Create files and folders owner-only inside the block (the process umask, restored
    after)."""
    previous = os.umask(OWNER_ONLY_UMASK)
    try:
        yield
    finally:
        os.umask(previous)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to a temporary file, fsync it, then rename it over `path`."""
    payload = orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
    write_bytes_atomic(path, payload)


def write_bytes_atomic(path: Path, payload: bytes, *, final_newline: bool = True) -> None:
    """Write bytes (and a final newline, unless `final_newline` is False) to a temporary file,
    fsync it, then rename it over `path`; owner-only, never through a symlink. The temporary
    file is this process's own (two processes filling one cache do not write into each other's)
    and is removed on a failure."""
    if path.is_symlink():
        raise AgentloadError(f"{path}: is a symlink; refusing to write through it")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if final_newline and not payload.endswith(b"\n"):
        payload += b"\n"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, OWNER_ONLY_FILE)
        try:
            view = memoryview(payload)
            while view:  # os.write may write less than asked
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise AgentloadError(f"{path}: cannot write: {exc.strerror or exc}") from None


def write_text_atomic(path: Path, text: str, *, final_newline: bool = True) -> None:
    """Write UTF-8 text as `write_bytes_atomic` does."""
    write_bytes_atomic(path, text.encode(), final_newline=final_newline)


def read_json(path: Path) -> Any:
    """Read a JSON file, with a one-line error naming it when it is missing or malformed."""
    return read_parsed(path, orjson.loads, orjson.JSONDecodeError, "JSON")


def read_parsed(
    path: Path,
    parse: Callable[[bytes], T],
    invalid: type[Exception],
    kind: str,
    *,
    what: str | None = None,
    missing: str = "not found",
    unreadable: str = "cannot read: ",
) -> T:
    """`parse` of a file's bytes; a missing, unreadable or malformed (`invalid`, not valid
    `kind`) file is one `AgentloadError` line that starts with `what` (the path)."""
    where = str(path) if what is None else what
    try:
        return parse(path.read_bytes())
    except FileNotFoundError:
        raise AgentloadError(f"{where}: {missing}") from None
    except invalid as exc:
        raise AgentloadError(f"{where}: not valid {kind} ({exc})") from None
    except OSError as exc:
        raise AgentloadError(f"{where}: {unreadable}{exc.strerror or exc}") from None
