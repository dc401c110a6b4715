"""Bad input, from every door: random bytes and random JSON into each trace loader, random
tier specs and tier files, random stream payloads, random command lines, and a list of bad
invocations. Only `InputError` (or `AgentloadError`) may come out: one line naming what is
wrong and where; never a traceback."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentload.cli import build_parser, main
from agentload.client.events import summarise
from agentload.client.sse import parse_sse
from agentload.commands.run import settings_from
from agentload.commands.search import search_settings_from
from agentload.commands.target_options import target_from
from agentload.errors import AgentloadError, InputError
from agentload.results.tiers import load_tiers, parse_tier
from agentload.target.deployment import check_target_options
from agentload.workload import (
    agentperf,
    mooncake,
    sglang_agentic,
    swe_agent,
    synthetic,
    tracelab,
    usage_log,
    weka,
)
from agentload.workload.load import load_workload

EXAMPLES = int(os.environ.get("AGENTLOAD_FUZZ_EXAMPLES", "60"))
"""Hypothesis examples per property: 60 in CI (quick on 2 cores); set AGENTLOAD_FUZZ_EXAMPLES
for a deeper search."""
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

FIELDS = (
    "messages", "role", "content", "tool_calls", "tools", "hash_ids", "input_length",
    "output_length", "timestamp", "session_id", "conversation_id", "conversation_idx",
    "call_index", "turn", "prompt_tokens", "completion_tokens", "cached_tokens", "usage",
    "prompt_tokens_details", "start_time", "end_time", "duration_ms", "tasks", "trace",
    "model_calls", "name", "id", "task_id", "new_input", "transient", "target_output_tokens",
    "recorded_prompt_tokens", "simulated_tool_delay_ms_after", "input_tokens", "output_tokens",
    "cache_read_input_tokens", "turns", "key", "block_size", "requests", "type", "in", "out",
    "t", "agent_id", "status", "hash_id_scope", "round_index", "input_tokens_total",
    "prefix_tokens", "newly_append_tokens", "conversations", "metadata",
)  # fmt: skip
"""Field names the loaders look for, so random objects get past the first checks."""

keys = st.sampled_from(FIELDS) | st.text(max_size=6)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**15), 10**15)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["user", "assistant", "system", "tool", "", "\x00", "../..", "/"])
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=12,
)
json_lines = st.lists(
    st.dictionaries(keys, json_values, max_size=8) | json_values, min_size=0, max_size=6
)


def _dump(value: Any) -> str:
    """JSON as a careless exporter might write it (NaN and Infinity literals included)."""
    return json.dumps(value, allow_nan=True)


@pytest.fixture(scope="module")
def scratch() -> Iterator[Callable[[str, bytes], Path]]:
    """Write bytes to a fresh file with a given suffix, in a folder kept for the module."""
    with tempfile.TemporaryDirectory() as folder:
        counter = itertools.count()

        def write(suffix: str, data: bytes) -> Path:
            path = Path(folder) / f"input-{next(counter)}{suffix}"
            path.write_bytes(data)
            return path

        yield write


LOADERS: dict[str, Callable[[Path, bool], object]] = {
    "agentperf": lambda p, skip: agentperf.load_trace(p, skip_bad_lines=skip),
    "manifest": lambda p, skip: agentperf.load_manifest(p, skip_bad_lines=skip, allow_missing=skip),
    "mooncake": lambda p, skip: mooncake.load_mooncake(p, skip_bad_lines=skip),
    "usage-log": lambda p, skip: usage_log.load_usage_log(p, skip_bad_lines=skip),
    "azure": lambda p, skip: mooncake.load_azure(p, skip_bad_lines=skip),
    "weka": lambda p, skip: weka.load_weka(p, skip_bad_lines=skip),
    "weka-lines": lambda p, skip: weka.load_weka(p, skip_bad_lines=skip),
    "tracelab": lambda p, skip: tracelab.load_tracelab(p, skip_bad_lines=skip),
    "sglang-agentic": lambda p, skip: sglang_agentic.load_sglang_agentic(p),
    "auto": lambda p, skip: load_workload(str(p), skip_bad_lines=skip),
}
DOCUMENT_LOADERS = ("manifest", "weka", "sglang-agentic")
"""Loaders of whole-file JSON documents (`.json`)."""


def _only_input_errors(load: Callable[[Path, bool], object], path: Path, skip: bool) -> None:
    try:
        load(path, skip)
    except InputError as exc:
        text = str(exc)
        assert "\n" not in text.strip(), text
        assert str(path) in text or path.name in text, f"the error names the file: {text}"


@FUZZ
@given(loader=st.sampled_from(sorted(LOADERS)), data=st.binary(max_size=300), skip=st.booleans())
def test_random_bytes_into_every_loader(
    scratch: Callable[[str, bytes], Path], loader: str, data: bytes, skip: bool
) -> None:
    suffix = ".csv" if loader == "azure" else ".json" if loader in DOCUMENT_LOADERS else ".jsonl"
    _only_input_errors(LOADERS[loader], scratch(suffix, data), skip)


@pytest.mark.slow
@FUZZ
@given(
    loader=st.sampled_from(
        ["agentperf", "mooncake", "usage-log", "weka-lines", "tracelab", "auto"]
    ),
    lines=json_lines,
    skip=st.booleans(),
)
def test_random_json_lines_into_the_line_loaders(
    scratch: Callable[[str, bytes], Path], loader: str, lines: list[Any], skip: bool
) -> None:
    data = "".join(_dump(line) + "\n" for line in lines).encode()
    _only_input_errors(LOADERS[loader], scratch(".jsonl", data), skip)


manifests = st.dictionaries(keys, json_values, max_size=4) | st.fixed_dictionaries(
    {"tasks": st.lists(st.dictionaries(keys, json_values, max_size=3) | json_values, max_size=3)}
)


documents = (
    st.dictionaries(keys, json_values, max_size=6)
    | st.fixed_dictionaries(
        {
            "id": st.text(max_size=4) | json_values,
            "block_size": st.integers(-2, 70) | json_values,
            "requests": st.lists(st.dictionaries(keys, json_values, max_size=8), max_size=4),
        }
    )
    | st.fixed_dictionaries(
        {
            "metadata": json_values,
            "conversations": st.lists(
                st.lists(st.dictionaries(keys, json_values, max_size=3) | json_values, max_size=3)
                | json_values,
                max_size=3,
            ),
        }
    )
)


@pytest.mark.slow
@FUZZ
@given(loader=st.sampled_from(["weka", "sglang-agentic", "auto"]), document=documents)
def test_random_json_documents_into_the_document_loaders(
    scratch: Callable[[str, bytes], Path], loader: str, document: dict[str, Any]
) -> None:
    _only_input_errors(LOADERS[loader], scratch(".json", _dump(document).encode()), False)


@FUZZ
@given(manifest=manifests, skip=st.booleans())
def test_random_manifests(
    scratch: Callable[[str, bytes], Path], manifest: dict[str, Any], skip: bool
) -> None:
    _only_input_errors(LOADERS["manifest"], scratch(".json", _dump(manifest).encode()), skip)


cells = st.one_of(
    st.integers(-5, 10**6).map(str), st.text(max_size=6), st.just(""), st.just("1e400")
)


@FUZZ
@given(
    header=st.permutations(["TIMESTAMP", "ContextTokens", "GeneratedTokens", "x"]),
    rows=st.lists(st.lists(cells, min_size=0, max_size=5), max_size=6),
    skip=st.booleans(),
)
def test_random_azure_csv(
    scratch: Callable[[str, bytes], Path], header: list[str], rows: list[list[str]], skip: bool
) -> None:
    text = "\n".join(",".join(row) for row in [header, *rows]) + "\n"
    _only_input_errors(LOADERS["azure"], scratch(".csv", text.encode()), skip)


@FUZZ
@given(spec=st.text(max_size=60) | st.builds(lambda q: "synthetic:agentic-coding?" + q, st.text()))
def test_random_synthetic_specs(spec: str) -> None:
    with contextlib.suppress(InputError):
        synthetic.parse_spec(spec)


@FUZZ
@given(
    spec=st.builds(
        lambda name, value: f"synthetic:swe-agent?{name}={value}",
        st.sampled_from(
            ["sessions", "seed", "calls_median", "output_long_share", "max_input", "x"]
        ),
        st.sampled_from(["", "0", "-1", "1e9", "nan", "abc", "0.5", "2"]),
    )
)
def test_random_swe_agent_specs(spec: str) -> None:
    with contextlib.suppress(InputError):
        swe_agent.parse_spec(spec)


tier_specs = st.text(max_size=40) | st.builds(
    lambda n, f, sp, t, tp: f"{n}:{f}{sp}:{t}{tp}",
    st.text(alphabet="ab-._9", min_size=0, max_size=5),
    st.sampled_from(["0", "1", "100", "1e9", "-1", "nan", "inf", "1.2.3", ""]),
    st.sampled_from(["", "@p0", "@p50", "@p100", "@p-1", "@pnan"]),
    st.sampled_from(["0", "2", "0.5", "inf", "", "1e400"]),
    st.sampled_from(["", "@p99", "@p100", "@p1e3"]),
)


@FUZZ
@given(spec=tier_specs)
def test_random_tier_specs(spec: str) -> None:
    try:
        tier = parse_tier(spec)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    assert tier.output_speed_floor_tokens_per_s > 0 and tier.ttft_ceiling_s > 0
    assert 0 < tier.output_speed_percentile < 100 and 0 < tier.ttft_percentile < 100


def test_a_preset_given_as_a_tier_points_at_tiers() -> None:
    with pytest.raises(InputError, match="preset ladder: give --tiers agentperf"):
        parse_tier("agentperf")


@pytest.mark.slow
@FUZZ
@given(data=json_values | st.lists(st.dictionaries(keys | st.sampled_from(
    ["output_speed_floor_tokens_per_s", "ttft_ceiling_s", "output_speed_percentile",
     "ttft_percentile"]), json_values, max_size=5), max_size=3))  # fmt: skip
def test_random_tier_files(scratch: Callable[[str, bytes], Path], data: Any) -> None:
    path = scratch(".json", _dump(data).encode())
    try:
        load_tiers(path)
    except InputError as exc:
        assert str(path) in str(exc)


@pytest.mark.slow
@FUZZ
@given(
    payloads=st.lists(
        st.dictionaries(
            st.sampled_from(["choices", "usage", "error", "delta", "id"]), json_values, max_size=3
        ),
        max_size=6,
    )
)
def test_random_stream_payloads_never_raise(payloads: list[dict[str, Any]]) -> None:
    """Valid SSE carrying JSON of the wrong shapes (the SSE fuzz in tests/client covers bytes)."""
    data = b"".join(b"data: " + _dump(p).encode() + b"\n\n" for p in payloads)
    summary = summarise(parse_sse([(1.0, data)] if data else []))
    assert summary.output_times == sorted(summary.output_times)


OPTION_VALUES = st.sampled_from(
    ["0", "1", "-1", "2.5", "nan", "inf", "-inf", "1e400", "x", "", "64", "0.99", "1.5"]
)
RUN_OPTIONS = ("--agents", "--duration", "--ramp", "--settle", "--seed", "--request-timeout")
SEARCH_OPTIONS = (
    "--start-agents", "--max-agents", "--settle", "--window", "--max-window", "--ramp",
    "--min-samples", "--precision", "--confidence", "--max-error-rate", "--ttft-ceiling",
    "--tier",
)  # fmt: skip


def _settings_or_one_line(verb: str, argv: list[str]) -> None:
    """Parse and build the settings the verb would use: valid, or exit 2, or one line."""
    try:
        args = build_parser().parse_args([verb, *argv])
    except SystemExit as exc:
        assert exc.code == 2
        return
    assert isinstance(args, argparse.Namespace)
    try:
        if verb == "run":
            settings_from(args)
        else:
            search_settings_from(args)
        check_target_options(target_from(args), args.api)
    except AgentloadError as exc:
        assert "\n" not in str(exc)


@pytest.mark.slow
@FUZZ
@given(pairs=st.lists(st.tuples(st.sampled_from(RUN_OPTIONS), OPTION_VALUES), max_size=6))
def test_random_run_options(pairs: list[tuple[str, str]]) -> None:
    _settings_or_one_line("run", [item for pair in pairs for item in pair])


@pytest.mark.slow
@FUZZ
@given(pairs=st.lists(st.tuples(st.sampled_from(SEARCH_OPTIONS), OPTION_VALUES), max_size=6))
def test_random_search_options(pairs: list[tuple[str, str]]) -> None:
    _settings_or_one_line("search", [item for pair in pairs for item in pair])


CLOSED = ["--url", "http://127.0.0.1:9/v1", "--model", "m"]
"""A target on the discard port: nothing listens, so no invocation below gets further."""


def bad_invocations(folder: Path) -> list[list[str]]:
    """Command lines that must each end in one line and exit status 2."""
    garbage = folder / "garbage.jsonl"
    garbage.write_bytes(b"garbage\x00\xff\n{}\n")
    no_json = folder / "tiers.json"
    no_json.write_text("nope")
    empty = folder / "empty"
    empty.mkdir()
    out = str(folder / "never")
    run = ["run", "--agents", "1", "--duration", "2", *CLOSED, "--out", out]
    search = ["search", *CLOSED, "--out", out]
    return [
        ["bogus"],
        ["run"],
        ["run", "--agents", "x", "--duration", "1"],
        ["run", "--agents", "0", "--duration", "1", *CLOSED],
        ["run", "--agents", "2", "--duration", "5", "--ramp", "10", *CLOSED],
        ["run", "--agents", "1", "--durat", "5"],  # no abbreviations
        [*run, "--workload", str(folder / "missing.jsonl")],
        [*run, "--workload", "synthetic:agentic-coding?sessions=abc"],
        [*run, "--workload", "synthetic:agentic-coding?bogus=1"],
        [*run, "--workload", str(garbage)],
        [*run, "--workload", f"mooncake:{garbage}"],
        [*run, "--workload", str(empty)],
        [*run, "--url", "ftp://x"],
        ["run", "--agents", "1", "--duration", "1", "--url", "http://127.0.0.1:9/v1"],
        [*run, "--api-key-env", "BAD-NAME"],
        [*run, "--api-key-env", "AGENTLOAD_SURELY_UNSET_VARIABLE"],
        [*run, "--api-key", "sk-typed-on-the-command-line"],
        [*run, "--request-timeout", "-3"],
        [*run, "--tokenizer", str(garbage)],
        [*search, "--tier", "bad"],
        [*search, "--tier", "agentperf"],
        [*search, "--tier", "a:1:2", "--tier", "a:3:4"],
        [*search, "--tier", "a:1:2@p100"],
        [*search, "--tiers-file", str(no_json)],
        [*search, "--tiers-file", str(folder / "missing.json")],
        [*search, "--start-agents", "10", "--max-agents", "2"],
        [*search, "--window", "10", "--max-window", "5"],
        [*search, "--precision", "2"],
        [*search, "--power", "bogus:"],
        [*search, "--power", "nvml", "--gpu-watts", "100"],
        [*search, "--gpu-watts", "-5"],
        [*search, "--metrics-url", "notaurl"],
        ["search", *CLOSED, "--resume", str(folder / "missing")],
        ["search", *CLOSED, "--resume", str(empty)],
        ["report", str(folder / "missing")],
        ["report", str(garbage)],
        ["report", str(empty)],
        ["workload", "stats", str(garbage)],
        ["compare", str(folder / "missing")],
        ["demo", "--max-agents", "0"],
    ]


def test_bad_invocations_end_in_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a default results directory would land here, not in the repo
    for argv in bad_invocations(tmp_path):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own exit
            code = exc.code
        captured = capsys.readouterr()
        errors = [line for line in captured.err.splitlines() if "error:" in line]
        assert code == 2, (argv, captured.err)
        assert len(errors) == 1 and captured.err.strip().endswith(errors[0].strip()), (
            argv,
            captured.err,
        )
        assert "Traceback" not in captured.err + captured.out, argv
        assert "sk-typed-on-the-command-line" not in captured.err
    assert not (tmp_path / "never").exists(), "no results directory is left by a failed start"
    assert not (tmp_path / "results").exists()


def test_an_unexpected_error_is_one_line_not_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug deep inside a verb still reaches the user as one line (traceback on request)."""

    def broken(_: argparse.Namespace) -> int:
        raise KeyError("deep inside")

    monkeypatch.setattr("agentload.commands.report.handle", broken)
    monkeypatch.delenv("AGENTLOAD_TRACEBACK", raising=False)
    code = main(["report", "anything"])
    err = capsys.readouterr().err
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "internal error: KeyError" in err and "Traceback" not in err
    monkeypatch.setenv("AGENTLOAD_TRACEBACK", "1")
    with pytest.raises(KeyError):
        main(["report", "anything"])


def test_a_field_name_with_a_newline_is_escaped_in_the_one_line_error() -> None:
    error = InputError("unexpected field", path="calls.jsonl", line=3, field="a\nb")
    assert str(error) == "calls.jsonl:3: field 'a\\nb': unexpected field"
