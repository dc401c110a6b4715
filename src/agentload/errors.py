"""Errors the user sees as one clear line, never a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

M = TypeVar("M", bound=BaseModel)

EXIT_INTERRUPTED = 130
"""The exit status of a verb stopped before it finished (Ctrl-C, SIGTERM, an incomplete run)."""


class AgentloadError(Exception):
    """An error that the CLI prints as one line and exits on (status 2)."""


class InputError(AgentloadError):
    """Bad input: names the file, the line and the field where it was found (or the option,
    a `field` spelled as typed: `--gpus`)."""

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
        what = ""
        if self.field:
            what = f"{self.field}: " if self.field.startswith("-") else f"field '{self.field}': "
        return one_line(f"{where}{what}{self.reason}")


def at_least_one(option: str, value: int | None) -> int | None:
    """`value` (None: not given), refused in one line naming `option` when under 1."""
    if value is not None and value < 1:
        raise AgentloadError(f"{option}: must be at least 1, got {value}")
    return value


def one_line(text: str) -> str:
    """`text` with its control characters (a newline in a field name read from a file, say)
    written as escapes, so an error stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class ServerError(AgentloadError):
    """The server under test could not be used at all (not a per-request failure)."""


BOUNDS = {
    "greater_than_equal": ("ge", "must be at least {}"),
    "greater_than": ("gt", "must be more than {}"),
    "less_than_equal": ("le", "must be at most {}"),
    "less_than": ("lt", "must be less than {}"),
    "string_too_short": ("min_length", "must be at least {} character(s) long"),
    "too_short": ("min_length", "must hold at least {} item(s)"),
    "literal_error": ("expected", "must be {}"),
}
"""pydantic's error types with a bound, as words a person reads (the bound from its context)."""
KINDS = {
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "int_type": "expected a whole number",
    "float_parsing": "expected a number",
    "float_type": "expected a number",
    "finite_number": "expected a finite number",
    "bool_parsing": "expected true or false",
    "string_type": "expected text",
    "missing": "is required",
    "extra_forbidden": "is not a known field",
}
"""pydantic's type errors as words (pydantic's own message for any other type)."""
SHOWN_CHARS = 60
"""The longest value an error repeats."""
VALUE_ERROR_PREFIX = "Value error, "
"""What pydantic puts before the message of a ValueError raised in a validator."""


def problem_words(problem: ErrorDetails) -> str:
    """One pydantic problem in words a person reads, with the value given where it helps:
    `must be at least 1, got 0`; a validator's own message without pydantic's prefix."""
    kind = problem["type"]
    context: dict[str, Any] = dict(problem.get("ctx") or {})
    if kind in BOUNDS:
        key, words = BOUNDS[kind]
        bound = context.get(key)
        bound_text = bound if isinstance(bound, str) else _shown(bound)
        return f"{words.format(bound_text)}, got {_shown(problem.get('input'))}"
    if kind in KINDS:
        if kind in ("missing", "extra_forbidden"):
            return KINDS[kind]
        return f"{KINDS[kind]}, got {_shown(problem.get('input'))}"
    return str(problem["msg"]).removeprefix(VALUE_ERROR_PREFIX)


def _shown(value: object) -> str:
    """A value given, as it was typed: numbers bare, text quoted, long values cut."""
    if isinstance(value, str) and numeric(value):
        text = value
    elif isinstance(value, bool) or not isinstance(value, int | float):
        text = repr(value)
    else:
        text = f"{value:g}" if isinstance(value, float) else str(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def numeric(text: str) -> bool:
    """Whether `text` reads as a number (`-1` is one: a value, not an option)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def first_problem(exc: ValidationError) -> tuple[str | None, str]:
    """The first problem pydantic found: (the dotted field path, or None; the problem in
    words, `problem_words`)."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return (where or None), problem_words(first)


def validated(model: type[M], data: object, *, path: str | Path | None = None) -> M:
    """`data` validated as `model`; its first problem as an InputError naming the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        where, message = first_problem(exc)
        raise InputError(message, path=path, field=where) from None
