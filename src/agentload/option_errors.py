"""A settings model's validation error in the words of the command line: the option that set
the field (`--max-agents: must be at least 1, got 0`), or the config file's key when the value
came from `--config FILE.toml` (`cfg.toml: 'max_agents' (--max-agents): ...`), never the
model's class or its field names.

One mapping for every verb: a field is set by the option of the same name, or of its name
without a unit suffix (`settle_s` <- `--settle`); a verb whose options feed differently named
fields says so where it builds the model (`named_options(args, length_s="duration")`). Field
names inside a validator's message are rewritten the same way (`start_agents must be at most
max_agents` -> `--start-agents must be at most --max-agents`). The CLI's last resort for a
validation error no verb caught uses the same mapping.

Each verb's parser is kept in its parsed arguments (`keep_parsers`), so the option's spelling
is argparse's own. An option's former name (`Renamed`) is one usage error naming the new one.
"""

from __future__ import annotations

import argparse
import contextlib
import re
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import ValidationError

from agentload.config_file import CONFIG_SOURCE, PARSER_DEST, ConfigSource
from agentload.errors import AgentloadError, problem_words

OPTIONS_PARSER = PARSER_DEST
"""Where each verb's parser is kept in its parsed arguments (where `--config` keeps it)."""
UNIT_SUFFIXES = ("_s", "_gb", "_w", "_tokens")
"""Unit suffixes a field carries and its option leaves off (`window_s` <- `--window`)."""
_FIELD_NAME = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
"""A snake_case name in a message: a field, perhaps."""


class Renamed(argparse.Action):
    """An option's former name: one usage error naming the new one (never taken; the CLI
    says it before any missing option)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        self.new, self.what = kwargs.pop("new"), kwargs.pop("what")
        super().__init__(option_strings, dest, nargs="?", default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        parser.error(self.words)

    @property
    def words(self) -> str:
        return f"{self.option_strings[0]} is now {self.new} ({self.what})"


def keep_parsers(parser: argparse.ArgumentParser) -> None:
    """Keep each (sub)parser in the arguments it parses, under `OPTIONS_PARSER`."""
    parser.set_defaults(**{OPTIONS_PARSER: parser})
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                keep_parsers(sub)


@contextlib.contextmanager
def named_options(args: argparse.Namespace, **fields: str) -> Iterator[None]:
    """Inside, a settings model's `ValidationError` becomes one line naming the option (or
    config key) that set the field; `fields` maps a field to the option destination that feeds
    it where the names differ beyond a unit suffix (`max_agents="agents"`)."""
    try:
        yield
    except ValidationError as exc:
        raise option_error(exc, args, fields) from None


def option_error(
    exc: ValidationError, args: argparse.Namespace, fields: Mapping[str, str] | None = None
) -> AgentloadError:
    """The error's first problem as one line in the command line's words (module docstring)."""
    problem = exc.errors()[0]
    names = _Names(args, fields or {})
    words = names.rewrite(problem_words(problem))
    loc = [str(part) for part in problem["loc"]]
    if not loc:
        return AgentloadError(words)
    where = names.where(loc[0])
    if len(loc) > 1:
        where += f" ({'.'.join(loc[1:])})"
    return AgentloadError(f"{where}: {words}")


class _Names:
    """Fields to options for one verb's parsed arguments."""

    def __init__(self, args: argparse.Namespace, fields: Mapping[str, str]) -> None:
        self.args = args
        self.fields = fields
        parser = getattr(args, OPTIONS_PARSER, None)
        self.actions: dict[str, argparse.Action] = (
            {a.dest: a for a in parser._actions} if parser is not None else {}
        )
        source = getattr(args, CONFIG_SOURCE, None)
        self.source: ConfigSource | None = source if isinstance(source, ConfigSource) else None

    def dest(self, field: str) -> str | None:
        """The option destination that set `field`, or None when no option did."""
        if field in self.fields:
            return self.fields[field]
        known = self.actions or vars(self.args)
        for name in (field, *(field.removesuffix(s) for s in UNIT_SUFFIXES if field.endswith(s))):
            if name in known and name != OPTIONS_PARSER:
                return name
        return None

    def option(self, dest: str) -> str:
        """How the option is typed: `--max-agents` (a positional: its metavar)."""
        action = self.actions.get(dest)
        if action is None:
            return "--" + dest.replace("_", "-")
        longs = [s for s in action.option_strings if s.startswith("--")]
        if longs or action.option_strings:
            return (longs or action.option_strings)[0]
        metavar = action.metavar if isinstance(action.metavar, str) else None
        return metavar or dest.upper()

    def where(self, field: str) -> str:
        """The option (or config key) that set `field`; the field itself when none did."""
        dest = self.dest(field)
        if dest is None:
            return field
        option = self.option(dest)
        source = self.source
        if source is not None and dest in source.keys and _same(self.args, dest, source.values):
            return f"{source.path}: '{source.keys[dest]}' ({option})"
        return option

    def rewrite(self, message: str) -> str:
        """`message` with each field name that an option sets written as the option."""

        def option_for(match: re.Match[str]) -> str:
            dest = self.dest(match.group(0))
            return match.group(0) if dest is None else self.option(dest)

        pattern = _FIELD_NAME
        if self.fields:
            words = "|".join(re.escape(name) for name in sorted(self.fields, key=len, reverse=True))
            pattern = re.compile(rf"{_FIELD_NAME.pattern}|\b(?:{words})\b")
        return pattern.sub(option_for, message)


def _same(args: argparse.Namespace, dest: str, values: Mapping[str, Any]) -> bool:
    """Whether the parsed value is the config file's (the command line did not change it)."""
    return getattr(args, dest, None) == values.get(dest)
