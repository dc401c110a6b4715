"""Errors the user sees as one clear line, never a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


class AgentloadError(Exception):
    """An error that the CLI prints as one line and exits on (status 2)."""


class InputError(AgentloadError):
    """Bad input: names the file, the line and the field where it was found."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.reason = message
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        what = f"field '{self.field}': " if self.field else ""
        return one_line(f"{where}{what}{self.reason}")


def one_line(text: str) -> str:
    """`text` with its control characters (a newline in a field name read from a file, say)
    written as escapes, so an error stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class ServerError(AgentloadError):
    """The server under test could not be used at all (not a per-request failure)."""


def first_problem(exc: ValidationError) -> tuple[str | None, str]:
    """The first problem pydantic found: (the dotted field path, or None; the message)."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return (where or None), first["msg"]


def validated(model: type[M], data: object, *, path: str | Path | None = None) -> M:
    """`data` validated as `model`; its first problem as an InputError naming the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        where, message = first_problem(exc)
        raise InputError(message, path=path, field=where) from None
