"""The target's options read and checked before anything is created, each bad value one line
naming its option: headers, the extra body, the local engine's sizes and priority."""

from __future__ import annotations

import pytest

from agentload.errors import AgentloadError
from agentload.target.deployment import (
    MAX_NICE,
    TargetOptions,
    check_target_options,
    parse_extra_body,
    parse_header,
)


def test_a_header_is_a_name_and_a_value_trimmed() -> None:
    assert parse_header(" X-Team :  perf ") == ("X-Team", "perf")
    assert parse_header("X-Url: http://a:1") == ("X-Url", "http://a:1")
    for bad in ("no colon", ": value"):
        with pytest.raises(AgentloadError, match="--header: expected 'Name: value'"):
            parse_header(bad)


def test_an_extra_body_is_a_json_object_or_nothing() -> None:
    assert parse_extra_body(None) is None
    assert parse_extra_body('{"reasoning_effort": "low"}') == {"reasoning_effort": "low"}
    with pytest.raises(AgentloadError, match="--extra-body: not valid JSON"):
        parse_extra_body("{")
    with pytest.raises(AgentloadError, match="--extra-body: expected a JSON object"):
        parse_extra_body("[1]")


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("engine_parallel", 0, "--engine-parallel: must be at least 1, got 0"),
        ("engine_ctx_per_slot", -1, "--engine-ctx: must be at least 1, got -1"),
        ("engine_threads", 0, "--engine-threads: must be at least 1, got 0"),
        ("engine_nice", MAX_NICE + 1, f"--engine-nice: must be 0 to {MAX_NICE}, got 20"),
        ("engine_nice", -1, f"--engine-nice: must be 0 to {MAX_NICE}, got -1"),
    ],
)
def test_the_local_engines_sizes_and_priority_are_checked(
    field: str, value: int, words: str
) -> None:
    with pytest.raises(AgentloadError) as refused:
        check_target_options(TargetOptions(**{field: value}), "chat")  # type: ignore[arg-type]
    assert str(refused.value) == words


def test_sizes_of_one_and_the_lowest_priority_pass() -> None:
    options = TargetOptions(
        engine_parallel=1, engine_ctx_per_slot=1, engine_threads=1, engine_nice=0
    )
    check_target_options(options, "chat")
