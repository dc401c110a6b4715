"""One width rule for every line agentload prints: lines wrap between words (a continuation
indented under its line), never mid-word, to the terminal's width, or `WIDE_COLUMNS` in a pipe
on stdout and stderr alike; and every verb prints through a console that keeps the rule."""

from __future__ import annotations

import io
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.text import Text

from agentload.cli import main
from agentload.console import HANG, WIDE_COLUMNS, err_console, fitted_console, print_json, wrapped
from agentload.run.execute import print_probe
from tests.paths import REPO
from tests.report.builder import build_results

SRC = REPO / "src" / "agentload"
PRINTS_ITS_OWN_LINES = {
    "console.py": "the width rule itself",
}
"""Modules that may make a rich Console of their own, and why."""
_CONSOLE = re.compile(r"\bConsole\(")
LONG = (
    "why cpu200: out of reach: p25 output speed 159 tokens/s < 200 floor (21% short) at 1 "
    "agent; unloaded, p25 output speed 159 tokens/s, p95 TTFT 0.25 s; no load level meets it "
    "on this deployment: relax the tier or serve faster"
)


def _words(text: str) -> list[str]:
    return text.split()


@pytest.mark.parametrize("width", [40, 80, 120])
def test_a_long_line_wraps_between_words_with_its_continuations_indented(width: int) -> None:
    lines = wrapped(LONG, width).plain.splitlines()
    assert len(lines) > 1 and all(len(line) <= width for line in lines)
    assert _words(" ".join(lines)) == _words(LONG)  # no word cut, none lost
    assert all(line.startswith(" " * HANG) and line[HANG] != " " for line in lines[1:])


def test_a_note_indented_keeps_its_indent_and_hangs_past_it() -> None:
    lines = wrapped("  note: " + LONG, 60).plain.splitlines()
    assert lines[0].startswith("  note: why")
    assert all(line.startswith(" " * (2 + HANG)) for line in lines[1:])


def test_only_a_word_longer_than_a_line_is_folded_and_spacing_is_kept() -> None:
    url = "synthetic:agentic-coding?" + "&".join(f"knob_{k}={k}" for k in range(12))
    lines = wrapped(f"source: {url} and after", 40).plain.splitlines()
    assert all(len(line) <= 40 for line in lines)
    assert lines[0].startswith("source: synthetic")  # folded from where the line stood
    assert url in "".join(line.strip() for line in lines)
    assert lines[-1].endswith("and after") or lines[-1].strip() == "after"
    assert wrapped("agents 1  in flight 1  |  a", 80).plain == "agents 1  in flight 1  |  a"


def test_styles_survive_wrapping() -> None:
    text = Text("FELL BEHIND ", style="bold red") + Text(LONG)
    out = wrapped(text, 50)
    assert out.plain.startswith("FELL BEHIND") and any(s.style == "bold red" for s in out.spans)


def test_a_pipe_without_columns_gets_the_wide_width_on_stderr_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert err_console().width == WIDE_COLUMNS  # was rich's 80: the self-check wrapped at 78


def test_a_soft_wrapped_line_is_still_fitted_to_the_console(tmp_path: Path) -> None:
    """Lines printed with rich's soft_wrap (left to the terminal, which cuts them mid-word)
    are wrapped between words all the same: a probe's line at 80 columns."""
    probe = build_results(tmp_path / "r").probes[2]
    figures = probe.model_copy(update={"probe_s": 41.0, "verdicts": {"cpu60": "pass",
                               "cpu120": "fail", "cpu200": "fail"}})  # fmt: skip
    out = io.StringIO()
    outcome = SimpleNamespace(figures=figures)  # print_probe reads only the figures
    print_probe(outcome, fitted_console(width=80, file=out), gpus=2)  # type: ignore[arg-type]
    lines = out.getvalue().splitlines()
    assert len(lines) > 1 and all(len(line) <= 80 for line in lines)
    assert lines[0].startswith(f"probe 2: {figures.agents} agents over 40 s")
    words = " ".join(line.strip() for line in lines).split()
    assert "cpu200" in words  # a word never cut
    assert any("(0.0228 GPU-h)" in line for line in lines)  # nor a figure parted from its unit


def test_every_verb_prints_through_a_console_of_the_width_rule() -> None:
    """A rich Console made anywhere else would print by rich's own width (80 in a pipe)."""
    offenders = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if _CONSOLE.search(path.read_text(encoding="utf-8"))
        and str(path.relative_to(SRC)) not in PRINTS_ITS_OWN_LINES
    ]
    assert not offenders, f"make consoles with agentload.console: {offenders}"


def test_the_allowed_exceptions_still_exist() -> None:
    assert all((SRC / name).is_file() for name in PRINTS_ITS_OWN_LINES)


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


LONG_PATH = "/nonexistent/results/[a folder]/with a long name that wraps/run-1"


def test_an_error_line_wraps_between_words_at_the_terminal_width(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`agentload: error: ...` at a terminal follows the width rule (it was a plain print, cut
    mid-word by an 80-column terminal); brackets in it are not read as markup."""
    monkeypatch.setenv("COLUMNS", "60")
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    code = main(["report", LONG_PATH])
    err = terminal.getvalue()
    assert code != 0 and err.startswith("agentload: error:")
    assert all(len(line) <= 60 for line in err.splitlines()) and len(err.splitlines()) > 1
    assert "[a folder]" in err


def test_an_error_in_a_pipe_stays_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    assert main(["report", LONG_PATH]) != 0
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_json_for_machines_is_indented_and_ends_its_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    print_json({"ok": True, "checks": [1.5]})
    assert capsys.readouterr().out == '{\n  "ok": true,\n  "checks": [\n    1.5\n  ]\n}\n'
