"""Every `agentload` command line the README gives is one the tool takes as written (issue 33:
no `simulate` example ran, its `--model ...` cut short): each parses with the CLI's own parser,
and each `simulate` builds the deployment (or the layout search) it names before any load."""

from __future__ import annotations

import argparse
import re
import shlex

import pytest

from agentload.cli import build_parser
from agentload.commands.simulate_layouts import layout_request_from
from agentload.commands.simulate_options import deployment_from
from tests.paths import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"```bash\n(.*?)```", re.DOTALL)
SPAN = re.compile(r"`((?:\.venv/bin/)?agentload [^`]+)`")
PROGRAM = re.compile(r"^(?:\.venv/bin/)?agentload$")
TEMPLATE = ("...", "\\|", "<", "DIR", "SOURCE", "REF CAND")
"""What marks a span as a template of a command (placeholders, alternatives), not one."""


def _block_commands() -> list[list[str]]:
    """The `agentload` lines of the README's shell blocks, continuations joined, comments cut."""
    commands = []
    for block in BLOCK.findall(README):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words and PROGRAM.match(words[0]):
                commands.append(words[1:])
    return commands


def _span_commands() -> list[list[str]]:
    """The `agentload ...` spans of its prose that are whole commands (with an option; a verb
    named alone, `agentload run`, is a name)."""
    spans = [
        s for s in SPAN.findall(README.replace("\n", " ")) if not any(t in s for t in TEMPLATE)
    ]
    commands = [shlex.split(s)[1:] for s in spans]
    return [c for c in commands if any(word.startswith("--") for word in c)]


COMMANDS = _block_commands() + _span_commands()
SIMULATIONS = [c for c in COMMANDS if c[:1] == ["simulate"] and "--list" not in c]


def _parsed(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


def test_the_readme_gives_simulate_examples_to_run() -> None:
    assert len(SIMULATIONS) >= 3
    assert any("--choose-layout" in c for c in SIMULATIONS)


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a)[:60])
def test_every_command_line_parses_as_written(argv: list[str]) -> None:
    args = _parsed(argv)
    assert args.func is not None


@pytest.mark.parametrize("argv", SIMULATIONS, ids=lambda a: " ".join(a)[:60])
def test_every_simulation_names_a_deployment_the_simulator_builds(argv: list[str]) -> None:
    pytest.importorskip("aiconfigurator_core", reason="the sim extra is not installed")
    from agentload.sim.setup.build import build_deployment

    args = _parsed(argv)
    if args.choose_layout:
        request = layout_request_from(args)
        assert request.deployment.gpus == args.gpus
        return
    built = build_deployment(deployment_from(args))
    assert built.config.ranks >= 1
