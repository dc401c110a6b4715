"""Every option of every verb says what it does and, when it has a default, what the default is
(issue 33: `--max-agents`, `--seed`, `--start-agents`, `--min-samples`, `--confidence` and
`--max-error-rate` had neither); an option's old name is one line naming the new one."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from agentload.cli import build_parser, main
from tests.commands.cli import EXIT_USAGE


def _verbs(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(`agentload VERB [SUB]`, its parser) for every verb and sub-verb."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield " ".join(("agentload", *path)), parser
    for action in subs:
        for name, sub in action.choices.items():
            yield from _verbs(sub, (*path, name))


def _shown(action: argparse.Action) -> bool:
    return bool(action.option_strings) and action.help != argparse.SUPPRESS


def _has_default(action: argparse.Action) -> bool:
    default = action.default
    no_value = default is None or default is False or default == [] or default is argparse.SUPPRESS
    return not no_value and not isinstance(action, argparse._StoreTrueAction | argparse._HelpAction)


def _default_texts(default: object) -> set[str]:
    """How a default may be written in its help: as argparse prints it, or as `%g` does."""
    texts = {str(default)}
    if isinstance(default, float):
        texts.add(f"{default:g}")
    return texts


def _problems(verb: str, parser: argparse.ArgumentParser) -> Iterator[str]:
    for action in filter(_shown, parser._actions):
        if isinstance(action, argparse._HelpAction | argparse._VersionAction):
            continue
        name = f"{verb} {action.option_strings[-1]}"
        if not action.help:
            yield f"{name}: no help"
            continue
        if not _has_default(action):
            continue
        text = action.help % {**vars(action), "default": action.default}
        shown = "default" in text and any(t in text for t in _default_texts(action.default))
        if not shown:
            yield f"{name}: its default {action.default!r} is not shown"


def test_every_option_of_every_verb_has_help_that_shows_its_default() -> None:
    verbs = list(_verbs(build_parser()))
    assert {"agentload search", "agentload simulate", "agentload demo"} <= {v for v, _ in verbs}
    problems = [p for verb, parser in verbs for p in _problems(verb, parser)]
    assert not problems, "\n".join(problems)


def test_the_help_of_search_shows_the_defaults_a_newcomer_relies_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for shown in ("--max-agents N", "(default: 64)", "(default: 0.95)", "(default: 40)"):
        assert shown in text


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["search", "--backend", "ray"], "--backend is now --host (where the agents run"),
        (["run", "--backend"], "--backend is now --host"),
        (["simulate", "--backend", "vllm"], "--backend is now --engine (the serving engine"),
    ],
)
def test_an_options_old_name_is_one_line_naming_the_new(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == EXIT_USAGE
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert words in line


@pytest.mark.parametrize(("verb", "sub_verb"), [("engine", "install"), ("workload", "stats")])
def test_a_verb_without_its_sub_verb_prints_its_own_help(
    verb: str, sub_verb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([verb]) == EXIT_USAGE
    out = capsys.readouterr().out
    assert out.startswith(f"usage: agentload {verb}") and sub_verb in out
