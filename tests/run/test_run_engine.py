"""A short multi-agent run against the real llama.cpp server: records, caching, forced lengths."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from agentload.engines.llamacpp import LocalEngine
from agentload.files import read_json
from agentload.measure.metrics import window_metrics
from agentload.measure.window import Window
from agentload.results.record import load_records
from agentload.run.execute import Execution, HostOptions, execute
from agentload.run.search_settings import SearchSettings
from agentload.run.settings import AgentSettings
from agentload.target.deployment import TargetOptions

SMALL_WORKLOAD = (
    "synthetic:agentic-coding?sessions=8&system_tokens=512&min_input=800&mean_input=2000"
    "&max_input=6000&task_median=200&calls_median=8&tool_call_output_median=12"
    "&burst_output_median=60&max_output=128&tool_time_median_s=0.2&max_tool_time_s=1"
)


def _target(server: LocalEngine) -> TargetOptions:
    return TargetOptions(url=server.url, model=server.model, tokenizer=str(server.tokenizer_path))


HOSTS = {
    "one-process": HostOptions(),
    "two-workers": HostOptions(workers=2),
}
"""Where the run's agents run: every test below holds for each. Ray actors are checked the same
way against the mock server (tests/scale/test_ray.py): starting a local Ray cluster beside the
real server adds half a minute and proves nothing about the server."""
RUN_S = 7.0
RAMP_S = 1.0
SETTLE_S = 2.0


@pytest.fixture(scope="module", params=list(HOSTS))
def short_run(
    llama_server: LocalEngine, tmp_path_factory: pytest.TempPathFactory, request: Any
) -> Path:
    out = tmp_path_factory.mktemp("run") / "results"
    run = Execution(
        workload=SMALL_WORKLOAD,
        search=SearchSettings.for_run(3, RUN_S, ramp_s=RAMP_S, settle_s=SETTLE_S),
        target=_target(llama_server),
        out=out,
        label="t",
        agents=AgentSettings(seed=1),
        hosts=HOSTS[request.param],
    )
    execute(run, console=Console(quiet=True))
    return out


def test_records_are_complete(short_run: Path) -> None:
    loaded = load_records(short_run / "records.jsonl")
    assert not loaded.torn_last_line
    records = loaded.records
    assert len(records) >= 10
    assert {r.agent for r in records} == {0, 1, 2}
    for r in records:
        assert r.error is None, (r.error, r.error_detail)
        assert r.t_send <= r.t_first <= r.t_last <= r.t_done  # type: ignore[operator]
        assert r.prompt_tokens and r.prompt_tokens > 0
        assert r.finish_reason is not None


def test_forced_output_lengths_are_exact(short_run: Path) -> None:
    records = load_records(short_run / "records.jsonl").records
    assert all(r.completion_tokens == r.intended_output_tokens for r in records)


LATER_CALLS_CACHED_SHARE = 0.8
"""llama.cpp keeps a session's prefix in the slot that served it; now and then another agent's
call takes that slot during the tool time, and the next call starts cold. Most must not."""


def test_later_calls_of_a_session_hit_the_prefix_cache(short_run: Path) -> None:
    by_session: dict[str, list] = defaultdict(list)
    for r in load_records(short_run / "records.jsonl").records:
        by_session[r.session].append(r)
    later = [r for calls in by_session.values() for r in calls if r.turn > 0]
    assert later, "no session got past its first call"
    cached = [r for r in later if (r.cached_tokens or 0) > 0]
    assert len(cached) >= LATER_CALLS_CACHED_SHARE * len(later)
    # Most of a later call's prompt is the previous call's prompt and reply.
    hit = sum(r.cached_tokens or 0 for r in later) / sum(r.prompt_tokens or 0 for r in later)
    assert hit > 0.5


CHAT_TEMPLATE_TOKENS = 16
"""ChatML wraps each message in a few tokens; a first call has a system and a user message."""


def test_first_prompts_have_the_intended_length(short_run: Path) -> None:
    records = load_records(short_run / "records.jsonl").records
    first = [r for r in records if r.turn == 0]
    assert first
    for r in first:
        # Content is made to length exactly; the chat template adds its wrapping tokens.
        assert 0 <= r.prompt_tokens - r.intended_prompt_tokens <= CHAT_TEMPLATE_TOKENS
    for r in records:
        # Later prompts carry the server's replies as text, which can re-tokenize longer
        # (the random model emits arbitrary token sequences), never shorter than intended.
        assert r.prompt_tokens >= r.intended_prompt_tokens


def test_window_totals_equal_the_sum_over_records(short_run: Path) -> None:
    records = load_records(short_run / "records.jsonl").records
    metrics = window_metrics(records, Window.covering(records))
    assert metrics.tokens.output == pytest.approx(sum(r.completion_tokens for r in records))
    assert metrics.tokens.input == pytest.approx(sum(r.prompt_tokens for r in records))
    assert metrics.tokens.cached_input == pytest.approx(sum(r.cached_tokens for r in records))


def test_summary_and_manifest_name_what_ran(short_run: Path) -> None:
    summary = read_json(short_run / "summary.json")
    manifest = read_json(short_run / "manifest.json")
    assert summary["complete"] is True and manifest["times"]["steady_state"] is True
    probe = summary["probes"][0]
    assert probe["agents"] == 3
    assert probe["total_tokens_per_s"] > probe["output_tokens_per_s"] > 0
    assert manifest["workload"]["fingerprint"]
    server = manifest["server"]
    assert [m["id"] for m in server["models"]] == [manifest["endpoint"]["model"]]
    assert "chat_template" not in server["props"] and server["props"]
    assert len(manifest["times"]["agent_starts"]) == 3


TINY_WORKLOAD = (
    "synthetic:agentic-coding?sessions=4&system_tokens=64&min_input=100&mean_input=300"
    "&max_input=800&task_median=50&calls_median=6&tool_call_output_median=8"
    "&burst_output_median=16&max_output=32&tool_time_median_s=0.05&max_tool_time_s=0.2"
)
"""Calls of a few hundred tokens: the records the kill must leave whole come in a second."""


def test_sigkill_midway_leaves_records_intact(llama_server: LocalEngine, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    command = [
        sys.executable, "-m", "agentload", "run",
        "--url", llama_server.url, "--model", llama_server.model,
        "--tokenizer", str(llama_server.tokenizer_path),
        "--workload", TINY_WORKLOAD, "--agents", "2", "--duration", "60", "--out", str(out),
    ]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    records_path = out / "records.jsonl"
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if records_path.exists() and records_path.read_bytes().count(b"\n") >= 4:
                break
            time.sleep(0.1)
        else:
            pytest.fail("the run wrote no records in 60 s")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    loaded = load_records(records_path)
    assert len(loaded.records) >= 4
    assert not (out / "summary.json").exists()
    metrics = window_metrics(loaded.records, Window.covering(loaded.records))
    assert metrics.requests_ok == len(loaded.records)
