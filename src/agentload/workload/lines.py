"""Reading input files line by line, with errors that name the file, the line and the field.

Every loader reads through these helpers so that a malformed line, a missing field or a wrong
type reads the same everywhere: `FILE:LINE: field 'F': reason` (for a whole-file JSON document,
`FILE: field 'requests[3].in': reason`). With `skip_bad_lines` a loader counts such lines in a
`LineSkipper` and carries on. Files ending in `.gz` are read through gzip.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, overload

import orjson

from agentload.errors import InputError
from agentload.units import count_words

SHOWN_VALUE_CHARS = 40
"""A wrong value is quoted in the error up to this many characters."""
GZIP_SUFFIX = ".gz"


@dataclass
class LineSkipper:
    """Counts bad lines when asked to skip them; raises them otherwise."""

    skip: bool = False
    skipped: int = 0
    first_error: str | None = field(default=None)

    def handle(self, error: InputError) -> None:
        """Raise `error`, or count it when skipping."""
        if not self.skip:
            raise error
        self.skipped += 1
        if self.first_error is None:
            self.first_error = str(error)

    def note(self) -> str | None:
        """A note for `Workload.notes` when lines were skipped."""
        if not self.skipped:
            return None
        return f"skipped {count_words(self.skipped, 'bad line')}; the first: {self.first_error}"


def check_file(path: Path) -> Path:
    """The path, if it is a readable file; a clear error otherwise."""
    if not path.exists():
        raise InputError("no such file or directory", path=path)
    if not path.is_file():
        raise InputError("not a file", path=path)
    return path


def is_gzip(path: Path) -> bool:
    """Whether a file is read through gzip (its name ends in `.gz`)."""
    return path.suffix.lower() == GZIP_SUFFIX


def plain_suffix(path: Path) -> str:
    """The suffix that names a file's format, a `.gz` suffix looked through (lower case)."""
    return Path(path.stem).suffix.lower() if is_gzip(path) else path.suffix.lower()


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) for each non-blank line of a text file (gzip if `.gz`)."""
    check_file(path)
    try:
        with gzip.open(path, "rb") if is_gzip(path) else path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if raw.strip():
                    yield number, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=path) from None
    except (OSError, EOFError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise InputError(f"cannot read: {reason}", path=path) from None


def read_document(path: Path) -> Any:
    """A whole-file JSON document (gzip if `.gz`), or an error naming the file (and the line
    of a syntax error)."""
    check_file(path)
    try:
        raw = gzip.decompress(path.read_bytes()) if is_gzip(path) else path.read_bytes()
    except (OSError, EOFError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise InputError(f"cannot read: {reason}", path=path) from None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"malformed JSON ({exc.msg})", path=path, line=exc.lineno) from None


def parse_object(text: str, path: Path, line: int) -> dict[str, Any]:
    """One JSON object from one line, or an error naming the line."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"malformed JSON ({exc.msg})", path=path, line=line) from None
    if not isinstance(value, dict):
        raise InputError(
            f"expected a JSON object, got {type_name(value)}", path=path, line=line
        ) from None
    return value


def iter_objects(path: Path, skipper: LineSkipper) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each JSON line; bad lines go to the skipper."""
    for number, text in read_lines(path):
        try:
            yield number, parse_object(text, path, number)
        except InputError as error:
            skipper.handle(error)


def first_object(path: Path) -> dict[str, Any] | None:
    """The first well-formed JSON object of a JSONL file, for format detection."""
    for number, text in read_lines(path):
        try:
            return parse_object(text, path, number)
        except InputError:
            continue
    return None


def type_name(value: object) -> str:
    """A JSON-ish name for a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def shown(value: object) -> str:
    """A value quoted for an error message, cut short."""
    text = repr(value)
    if len(text) > SHOWN_VALUE_CHARS:
        text = text[: SHOWN_VALUE_CHARS - 3] + "..."
    return text


LineT = TypeVar("LineT", int, None)
"""A line number (`Fields[int]`: a line of a JSON-lines file) or None (`Fields[None]`: an object
of a whole-file document)."""


@dataclass(frozen=True)
class Fields(Generic[LineT]):
    """Typed access to one line's fields, raising errors that name file, line and field.

    `prefix` places the object inside a larger document (`requests[3].`), so errors name the
    field by its full path; `line` is None for an object of a whole-file document. A required
    field's value is never None (`required=True`, the default).
    """

    data: Mapping[str, Any]
    path: Path
    line: LineT
    prefix: str = ""

    def error(self, name: str, reason: str) -> InputError:
        """An error about field `name` of this line."""
        return InputError(reason, path=self.path, line=self.line, field=self.prefix + name)

    def nested(self, name: str, value: Any) -> Fields[LineT]:
        """The fields of an object inside this one (`value`, found at `name`)."""
        if not isinstance(value, Mapping):
            raise self.error(name, f"expected an object, got {type_name(value)} {shown(value)}")
        return Fields(value, self.path, self.line, f"{self.prefix}{name}.")

    def get(self, name: str) -> Any:
        """A field that may be absent (None); dotted names reach into nested objects."""
        value: Any = self.data
        for part in name.split("."):
            if not isinstance(value, Mapping):
                return None
            value = value.get(part)
        return value

    def require(self, name: str) -> Any:
        """A field that must be present and not null."""
        value = self.get(name)
        if value is None:
            raise self.error(name, "missing")
        return value

    @overload
    def integer(
        self, name: str, *, minimum: int | None = 0, required: Literal[True] = True
    ) -> int: ...

    @overload
    def integer(self, name: str, *, minimum: int | None = 0, required: bool) -> int | None: ...

    def integer(self, name: str, *, minimum: int | None = 0, required: bool = True) -> int | None:
        """An integer field (a float with no fraction is accepted)."""
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(name, f"expected an integer, got {type_name(value)} {shown(value)}")
        if minimum is not None and value < minimum:
            raise self.error(name, f"expected an integer >= {minimum}, got {value}")
        return value

    @overload
    def number(
        self, name: str, *, minimum: float | None = 0.0, required: Literal[True] = True
    ) -> float: ...

    @overload
    def number(self, name: str, *, minimum: float | None = 0.0, required: bool) -> float | None: ...

    def number(
        self, name: str, *, minimum: float | None = 0.0, required: bool = True
    ) -> float | None:
        """A numeric field."""
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(name, f"expected a number, got {type_name(value)} {shown(value)}")
        if minimum is not None and value < minimum:
            raise self.error(name, f"expected a number >= {minimum}, got {value}")
        return float(value)

    @overload
    def text(self, name: str, *, required: Literal[True] = True) -> str: ...

    @overload
    def text(self, name: str, *, required: bool) -> str | None: ...

    def text(self, name: str, *, required: bool = True) -> str | None:
        """A string field (numbers are accepted and turned into text, for ids)."""
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise self.error(name, f"expected a string, got {type_name(value)} {shown(value)}")
        text = str(value)
        if not text:
            raise self.error(name, "empty")
        return text

    @overload
    def array(self, name: str, *, required: Literal[True] = True) -> list[Any]: ...

    @overload
    def array(self, name: str, *, required: bool) -> list[Any] | None: ...

    def array(self, name: str, *, required: bool = True) -> list[Any] | None:
        """A list field."""
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.error(name, f"expected a list, got {type_name(value)} {shown(value)}")
        return value

    def first_present(self, names: tuple[str, ...]) -> str | None:
        """The first of `names` present (not null) on this line."""
        for name in names:
            if self.get(name) is not None:
                return name
        return None
