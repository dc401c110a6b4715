"""An error names what the user typed: the option (or the config file's key), what to type
instead, the server's URL and what was being tried; never a model's class or field."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.cli import main

CLOSED = ["--url", "http://127.0.0.1:9/v1", "--model", "m"]
"""A target on the discard port: nothing listens there."""


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line the command ends with (exit status 2)."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own exit
        code = exc.code
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert "\n" not in err, err
    return err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["search", *CLOSED, "--max-agents", "0"], "--max-agents: must be at least 1, got 0"),
        (["demo", "--max-agents", "0"], "--max-agents: must be at least 1, got 0"),
        (["run", *CLOSED, "--agents", "0", "--duration", "5"], "--agents: must be at least 1"),
        (["run", *CLOSED, "--agents", "1", "--duration", "-1"], "--duration: must be more than 0"),
        (["search", *CLOSED, "--settle", "-1"], "--settle: must be at least 0, got -1"),
        (["search", *CLOSED, "--precision", "2"], "--precision: must be less than 1, got 2"),
        (
            ["search", *CLOSED, "--start-agents", "10", "--max-agents", "2"],
            "--start-agents (10) must be at most --max-agents (2)",
        ),
        (
            ["run", *CLOSED, "--agents", "2", "--duration", "5", "--ramp", "10"],
            "--ramp (10 s) must be shorter than --duration (5 s)",
        ),
        (
            ["simulate", "--system", "gb300", "--model", "m", "--gpus", "0"],
            "--gpus: must be at least 1, got 0",
        ),
        (
            ["simulate", "--system", "h200_sxm", "--model", "Qwen/Qwen3-0.6B", "--gpus", "3",
             "--parallel", "tp2", "--out", "never"],
            "--gpus: 3 GPUs do not split into model copies of 2 GPUs (--parallel tp2)",
        ),
        (
            ["simulate", "--system", "h200", "--model", "Qwen/Qwen3-0.6B", "--gpus", "1",
             "--out", "never"],
            "--system: unknown system 'h200'",
        ),
        (["decode", "--total-tokens-per-s", "1", "--cache-hit-rate", "1.5"], "--cache-hit-rate: "),
        (["search", *CLOSED, "--tier", "fast:0:2"], "fast:0:2: the floor must be more than 0"),
        (["search", *CLOSED, "--engine-parallel", "0"], "--engine-parallel: must be at least 1"),
    ],
)  # fmt: skip
def test_a_bad_value_names_its_option_not_the_settings_model(
    argv: list[str],
    expected: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    err = _error(argv, capsys)
    assert expected in err
    for leak in ("Settings", "Execution", "field '", "Input should", "Value error", "_s "):
        assert leak not in err, err


def test_a_bad_value_from_a_config_file_names_the_file_and_its_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "search.toml"
    config.write_text("max-agents = 0\n")
    err = _error(["search", *CLOSED, "--config", str(config)], capsys)
    assert f"{config}: 'max-agents' (--max-agents): must be at least 1, got 0" in err
    typed = _error(["search", *CLOSED, "--config", str(config), "--max-agents", "-2"], capsys)
    assert "error: --max-agents: must be at least 1, got -2" in typed


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("localhost:8000", "http://localhost:8000/v1"),
        ("gpu-box:8000/v1", "http://gpu-box:8000/v1"),
        ("ftp://gpu-box:8000", "http://gpu-box:8000/v1"),
    ],
)
def test_a_url_without_its_scheme_says_what_to_type(
    typed: str, meant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _error(["search", "--url", typed, "--model", "m"], capsys)
    assert f"--url: '{typed}' is not an http(s) URL; did you mean {meant}?" in err


def test_an_unreachable_server_is_named_with_what_was_being_tried(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _error(["search", *CLOSED, "--out", str(tmp_path / "never")], capsys)
    assert (
        "cannot reach the server at http://127.0.0.1:9/v1 (--url) while listing its models "
        "(GET /v1/models): connection refused"
    ) in err
    assert "Errno" not in err and "/tokenize" not in err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["search", "--max-agent", "5"],
            "agentload search: error: unrecognized option --max-agent; did you mean --max-agents?",
        ),
        (["run", "--agents", "1", "--durat", "5"], "did you mean --duration?"),
        (["engine", "start", "--paralel", "2"], "did you mean --parallel?"),
        (["serch"], "did you mean search?"),
        (["search", "--tiers", "agentprf"], "did you mean agentperf?"),
    ],
)
def test_a_mistyped_option_or_choice_suggests_the_one_meant(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert expected in _error(argv, capsys)


def test_every_missing_required_option_is_named_at_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _error(["run"], capsys)
    assert "the following arguments are required: --duration, --agents or --arrivals" in err
    assert "--duration" not in _error(["run", "--duration", "5"], capsys).split("required:")[1]
