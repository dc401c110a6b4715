"""`--config FILE.toml`: every option from a file, the command line winning; the effective
options saved as `config.toml` in the results directory; `--config DIR/config.toml` runs it again
with the same options and a new salt."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from agentload.cli import build_parser, main
from agentload.config_file import CONFIG_SOURCE, REDACTED, apply_config, effective_config
from agentload.engines.llamacpp import LocalEngine
from agentload.errors import EXIT_INTERRUPTED
from agentload.files import read_json
from agentload.results.files import CONFIG_FILE, MANIFEST_FILE
from agentload.results.tiers import preset
from agentload.run import execute as execute_module
from agentload.run import presets
from agentload.run.execute import Execution
from tests.reliability.conftest import SMALL_WORKLOAD

EXIT_USAGE = 2
SEARCH = [
    "search",
    "--url", "http://gpu-box:8000/v1",
    "--model", "m",
    "--tier", "fast:100:2",
    "--tier", "slow:20@p10:5@p99",
    "--max-agents", "128",
    "--window", "90",
    "--gpu-watts", "700",
    "--gpus", "8",
    "--header", "X-Team: perf",
    "--extra-body", '{"reasoning_effort": "low"}',
    "--history", "recorded",
    "--workers", "2",
    "--start-at-turn-zero",
]  # fmt: skip


def parsed(argv: list[str]) -> argparse.Namespace:
    parser = build_parser()
    apply_config(parser, argv)
    return parser.parse_args(argv)


def comparable(args: argparse.Namespace) -> dict[str, object]:
    kept = ("config", "config_parser", "func", CONFIG_SOURCE)
    return {k: v for k, v in vars(args).items() if k not in kept}


def test_a_saved_config_parses_back_to_the_same_options(tmp_path: Path) -> None:
    first = parsed(SEARCH)
    path = tmp_path / CONFIG_FILE
    path.write_text(effective_config(first, "search") or "")
    again = parsed(["search", "--config", str(path)])
    assert comparable(again) == comparable(first)


def test_the_command_line_wins_over_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('url = "http://a:1/v1"\nmodel = "m"\nmax-agents = 16\nwindow = 30\n')
    args = parsed(["search", "--config", str(path), "--max-agents", "32"])
    assert args.max_agents == 32 and args.window == 30.0 and args.url == "http://a:1/v1"


def test_a_required_option_may_come_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("agents = 4\nduration = 60\n")
    args = parsed(["run", "--config", str(path)])
    assert args.agents == 4 and args.duration == 60.0


def test_the_salt_out_and_secrets_are_not_saved() -> None:
    args = parsed([*SEARCH, "--salt", "s1", "--out", "/tmp/x", "--header", "Authorization: k1"])
    text = effective_config(args, "search") or ""
    keys = [line.split(" = ")[0] for line in text.splitlines() if not line.startswith("#")]
    assert "salt" not in keys and "out" not in keys and "/tmp/x" not in text
    assert "k1" not in text and f"Authorization: {REDACTED}" in text


def test_simulates_list_flag_is_not_part_of_a_saved_run() -> None:
    argv = ["simulate", "--system", "h200_sxm", "--model", "Qwen/Qwen3-8B", "--gpus", "1"]
    text = effective_config(parsed(argv), "simulate") or ""
    keys = [line.split(" = ")[0] for line in text.splitlines() if not line.startswith("#")]
    assert "system" in keys and "list" not in keys


@pytest.mark.parametrize(
    ("verb", "content", "dest", "value"),
    [
        ("search", 'backend = "ray"\n', "host", "ray"),
        ("run", 'backend = "local"\nagents = 2\nduration = 5\n', "host", "local"),
        ("simulate", 'backend = "vllm"\n', "engine", "vllm"),
    ],
)
def test_an_older_config_is_read_under_the_options_new_name(
    tmp_path: Path, verb: str, content: str, dest: str, value: str
) -> None:
    """`--backend` became `--host` (where agents run) and `simulate --engine`: a config.toml
    saved before says `backend`, and runs again as it did."""
    path = tmp_path / CONFIG_FILE
    path.write_text(content)
    args = parsed([verb, "--config", str(path)])
    assert getattr(args, dest) == value
    assert f'{dest} = "{value}"' in (effective_config(args, verb) or "")


def test_doctor_reads_an_older_searchs_file(tmp_path: Path) -> None:
    path = tmp_path / CONFIG_FILE
    path.write_text('url = "http://gpu-box:8000/v1"\nbackend = "local"\n')
    assert parsed(["doctor", "--config", str(path)]).url == "http://gpu-box:8000/v1"


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("agnts = 4\n", "'agnts' is not an option of run"),
        ("agents = 'four'\nduration = 5\n", "'agents': expected int, got 'four'"),
        ("agents = 4\napi = 'grpc'\n", "'api': 'grpc' is not one of chat, completions"),
        ("agents = 4\nskip_bad_lines = 1\n", "'skip_bad_lines': expected true or false"),
        ("agents = [\n", "not valid TOML"),
        (f'header = ["Authorization: {REDACTED}"]\n', "write the value as {env:VAR}"),
        ("api_key = 'k'\n", "keys are never taken from a file"),
    ],
)  # fmt: skip
def test_a_bad_file_is_one_line_naming_the_file_and_key(
    tmp_path: Path, content: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(content)
    assert main(["run", "--config", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and words in err


def test_a_missing_file_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--config", "/nonexistent/c.toml"]) == EXIT_USAGE
    assert "--config /nonexistent/c.toml: no such file" in capsys.readouterr().err


def test_doctor_reads_a_searchs_file_skipping_what_it_has_no_use_for(tmp_path: Path) -> None:
    path = tmp_path / CONFIG_FILE
    path.write_text(effective_config(parsed(SEARCH), "search") or "")
    args = parsed(["doctor", "--config", str(path)])
    assert args.url == "http://gpu-box:8000/v1" and args.gpu_watts == 700.0


@pytest.mark.engine
def test_a_run_saves_its_config_and_runs_again_from_it_with_a_new_salt(
    llama_server: LocalEngine, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    argv = [
        "run", "--url", f"{llama_server.url}/v1", "--model", llama_server.model,
        "--tokenizer", str(llama_server.tokenizer_path), "--workload", SMALL_WORKLOAD,
        "--agents", "1", "--duration", "2", "--settle", "0.5", "--label", "round-trip",
    ]  # fmt: skip
    assert main([*argv, "--out", str(first)]) == 0
    assert (first / CONFIG_FILE).is_file()
    assert main(["run", "--config", str(first / CONFIG_FILE), "--out", str(second)]) == 0
    a, b = (read_json(d / MANIFEST_FILE) for d in (first, second))
    assert a["settings"]["search"] == b["settings"]["search"]
    assert a["workload"]["fingerprint"] == b["workload"]["fingerprint"]
    assert a["label"] == b["label"] == "round-trip"
    salt = "run_salt"
    assert a["settings"]["agents"][salt] != b["settings"]["agents"][salt]
    rest = {k: v for k, v in a["settings"]["agents"].items() if k != salt}
    assert rest == {k: v for k, v in b["settings"]["agents"].items() if k != salt}
    assert (first / CONFIG_FILE).read_text() == (second / CONFIG_FILE).read_text()


def _demo_request(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> Execution:
    """The request `agentload demo ARGV` would execute (nothing is run)."""
    asked: list[Execution] = []

    def capture(request: Execution, console: object = None) -> None:
        asked.append(request)
        raise KeyboardInterrupt

    monkeypatch.setattr(execute_module, "execute", capture)
    assert main(["demo", *argv]) == EXIT_INTERRUPTED
    return asked[0]


def test_a_demos_config_holds_its_workload_tiers_and_windows_and_runs_the_same_demo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _demo_request(monkeypatch, ["--out", str(tmp_path / "a")])
    assert first.workload == presets.LOCAL_WORKLOAD
    assert [t.name for t in first.search.tiers] == [t.name for t in preset(presets.DEMO_TIERS)]
    assert first.agents.start_mid_session and first.agents.api == "chat"
    text = first.config or ""
    assert f"workload = {json.dumps(presets.LOCAL_WORKLOAD)}" in text
    assert 'tiers = "local-cpu"' in text and f"window = {presets.DEMO_WINDOW_S!r}" in text
    path = tmp_path / CONFIG_FILE
    path.write_text(text)
    again = _demo_request(monkeypatch, ["--config", str(path), "--out", str(tmp_path / "b")])
    assert again.search == first.search and again.workload == first.workload
    assert again.agents.model_copy(update={"run_salt": first.agents.run_salt}) == first.agents
