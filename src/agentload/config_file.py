"""`--config FILE.toml`: every option of a verb from a TOML file, and the effective options of a
run saved beside its results (`config.toml`), so `agentload search --config DIR/config.toml`
runs it again exactly (apart from the salt: a second run with the first one's salt would hit
its cache).

The file is flat: each key is an option's name without its dashes (`max-agents` or
`max_agents`), each value of the option's type (a repeatable option takes a list). The command
line wins over the file, and a repeatable option's command-line values add to the file's.
Relative paths are relative to the current directory (saved files hold absolute ones). A key
that is no option of the verb, or a value of the wrong type, is one line naming the file and
the key.
"""

from __future__ import annotations

import argparse
import json
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentload import __version__
from agentload.client.endpoint import is_secret
from agentload.errors import AgentloadError
from agentload.files import read_parsed

CONFIG_OPTION = "--config"
CONFIG_DEST = "config"
PARSER_DEST = "config_parser"
"""Where each verb keeps its own parser in the parsed arguments (for the effective config)."""
CONFIG_SOURCE = "config_source"
"""Where the parsed arguments keep which values came from the file (`ConfigSource`)."""
NOT_SAVED = frozenset(
    {CONFIG_DEST, PARSER_DEST, "func", "help", "out", "resume", "salt", "api_key", "list"}
)
"""Options never written to a saved config: where results go, a resume, the salt, keys, and
`simulate --list` (which prints and exits: it is never part of a run)."""
REDACTED = "<redacted when saved: give it again>"
"""What a secret-looking header's value is saved as (unless it is an {env:VAR} template)."""
PATH_OPTIONS = frozenset({"tokenizer", "tiers_file", "ca_bundle"})
"""Options holding a file path, saved absolute."""
WORKLOAD_FORMATS = ("agentperf", "manifest", "mooncake", "usage-log", "azure")
LENIENT = {"doctor": ("search", "run")}
"""Verbs that read another verb's config, skipping the options they do not have."""
RENAMED_KEYS: dict[str, dict[str, str]] = {
    "run": {"backend": "host"},
    "search": {"backend": "host"},
    "simulate": {"backend": "engine"},
}
"""Per verb, keys older saved configs wrote under an option's former name, read as the new
one (`--backend` became `--host` where agents run, and `simulate --engine`)."""


@dataclass(frozen=True)
class ConfigSource:
    """The values a `--config FILE.toml` gave: the file, each destination's key as written
    there, and its value (an error about a value names the file and the key)."""

    path: str
    keys: Mapping[str, str]
    values: Mapping[str, Any]


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    """`--config FILE.toml` on a verb, and the verb's parser kept for `effective_config`."""
    parser.add_argument(
        CONFIG_OPTION,
        metavar="FILE.toml",
        help="take every option from a TOML file (the command line wins); a results "
        "directory's config.toml runs it again",
    )
    parser.set_defaults(**{PARSER_DEST: parser})


def apply_config(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """Before parsing: when the verb in `argv` has `--config FILE`, make the file's values
    that verb's defaults (and its required options satisfied by the file no longer required)."""
    verb_index = next((i for i, a in enumerate(argv) if not a.startswith("-")), None)
    if verb_index is None:
        return
    sub = _subparser(parser, argv[verb_index])
    if sub is None or not any(a.dest == CONFIG_DEST for a in sub._actions):
        return
    path = _config_path(argv[verb_index + 1 :])
    if path is None:
        return
    verb = argv[verb_index]
    also = [_subparser(parser, v) for v in LENIENT.get(verb, ())]
    keys: dict[str, str] = {}
    values = load_config(
        Path(path), sub, verb, tolerate=[p for p in also if p is not None], keys=keys
    )
    for action in sub._actions:
        if action.dest in values:
            action.required = False
    for group in sub._mutually_exclusive_groups:
        if any(a.dest in values for a in group._group_actions):
            group.required = False
    sub.set_defaults(**values, **{CONFIG_SOURCE: ConfigSource(path, keys, dict(values))})


def _subparser(parser: argparse.ArgumentParser, verb: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(verb)
            return chosen if isinstance(chosen, argparse.ArgumentParser) else None
    return None


def _config_path(args: Sequence[str]) -> str | None:
    for i, arg in enumerate(args):
        if arg == CONFIG_OPTION and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(CONFIG_OPTION + "="):
            return arg.split("=", 1)[1]
    return None


def load_config(
    path: Path,
    parser: argparse.ArgumentParser,
    verb: str,
    *,
    tolerate: Sequence[argparse.ArgumentParser] = (),
    keys: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The file's values as the verb's parsed values (each converted by its option's type);
    keys that are options of a `tolerate` parser are skipped (doctor reads a search's file).
    `keys`, when given, is filled with each destination's key as the file spells it."""
    data = read_parsed(
        path,
        lambda raw: tomllib.loads(raw.decode()),
        tomllib.TOMLDecodeError,
        "TOML",
        what=f"{CONFIG_OPTION} {path}",
        missing="no such file",
        unreadable="",
    )
    actions = {a.dest: a for a in parser._actions if a.dest not in (CONFIG_DEST, "help")}
    tolerated = {a.dest for p in tolerate for a in p._actions}
    values: dict[str, Any] = {}
    renamed = RENAMED_KEYS.get(verb, {})
    for key, value in data.items():
        dest = key.replace("-", "_")
        dest = renamed.get(dest, dest)
        action = actions.get(dest)
        if action is None and dest in tolerated:
            continue
        if dest == "api_key":
            raise AgentloadError(
                f"{path}: '{key}': keys are never taken from a file; name the environment "
                "variable holding it with api_key_env"
            )
        if action is None or dest in (PARSER_DEST, "func"):
            raise AgentloadError(
                f"{path}: '{key}' is not an option of {verb} (see agentload {verb} --help)"
            )
        values[dest] = _convert(action, key, value, path)
        if keys is not None:
            keys[dest] = key
    return values


def _convert(action: argparse.Action, key: str, value: Any, path: Path) -> Any:
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        if not isinstance(value, bool):
            raise AgentloadError(f"{path}: '{key}': expected true or false, got {value!r}")
        return value
    if isinstance(action, argparse._AppendAction):
        items = value if isinstance(value, list) else [value]
        return [_one(action, key, item, path) for item in items]
    return _one(action, key, value, path)


def _one(action: argparse.Action, key: str, value: Any, path: Path) -> Any:
    if isinstance(value, dict | list | bool):
        raise AgentloadError(f"{path}: '{key}': expected one value, got {value!r}")
    if isinstance(value, str) and REDACTED in value:
        raise AgentloadError(
            f"{path}: '{key}': a secret was left out when this file was saved; edit the file: "
            "write the value as {env:VAR} (a variable holding it), or delete it and pass it "
            "with --" + key.replace("_", "-")
        )
    converter = action.type
    # (argparse also takes a registered type's name, not callable; agentload registers none)
    if converter is None or not callable(converter):
        if not isinstance(value, str):
            raise AgentloadError(f"{path}: '{key}': expected a string, got {value!r}")
        converted: Any = value
    else:
        try:
            converted = converter(value if isinstance(value, str) else str(value))
        except (TypeError, ValueError):
            kind = getattr(converter, "__name__", "value")
            raise AgentloadError(f"{path}: '{key}': expected {kind}, got {value!r}") from None
    if action.choices is not None and converted not in action.choices:
        allowed = ", ".join(map(str, action.choices))
        raise AgentloadError(f"{path}: '{key}': {converted!r} is not one of {allowed}")
    return converted


# --- the effective config ----------------------------------------------------------------------


def effective_config(args: argparse.Namespace, verb: str) -> str | None:
    """The TOML of every option the verb was run with (defaults included, `NOT_SAVED` left
    out), paths absolute and secret header values redacted; None when the verb has none."""
    parser: argparse.ArgumentParser | None = getattr(args, PARSER_DEST, None)
    if parser is None or not any(a.dest == CONFIG_DEST for a in parser._actions):
        return None
    lines = [
        f"# agentload {__version__} {verb}: every option as run (defaults included).",
        f"# Run it again: agentload {verb} --config THIS_FILE [--out DIR]",
        "# Left out: --out, --resume and --salt (a new run gets a new salt, so it never hits",
        "# the first run's cache).",
    ]
    for action in parser._actions:
        dest = action.dest
        if dest in NOT_SAVED or (action.help == argparse.SUPPRESS and dest != "drain"):
            continue
        value = getattr(args, dest, None)
        if value is None or value == []:
            continue
        lines.append(f"{dest} = {_toml(_saved(dest, value))}")
    return "\n".join(lines) + "\n"


def _saved(dest: str, value: Any) -> Any:
    if dest == "header":
        return [_header(v) for v in value]
    if dest == "workload" and isinstance(value, str):
        return _absolute_workload(value)
    if dest in PATH_OPTIONS or isinstance(value, Path):
        return _absolute(value)
    return value


def _header(spec: str) -> str:
    name, _, text = spec.partition(":")
    if is_secret(name.strip()) and "{env:" not in text:
        return f"{name.strip()}: {REDACTED}"
    return spec


def _absolute(value: Any) -> str:
    path = Path(str(value)).expanduser()
    return str(path.resolve()) if path.exists() else str(value)


def _absolute_workload(spec: str) -> str:
    if spec.startswith("synthetic:"):
        return spec
    name, sep, rest = spec.partition(":")
    if sep and name in WORKLOAD_FORMATS:
        return f"{name}:{_absolute(rest)}"
    return _absolute(spec)


def _toml(value: Any) -> str:
    """A TOML value: a string (JSON escapes are TOML's), a number, a boolean, or a list."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a config value must be finite, got {value}")
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)
