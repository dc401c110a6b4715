"""The workload fits the server's context, checked before any load against the real llama.cpp
server: the count is the server's own, a local engine's slots are sized to the workload's
longest call (recorded agentperf traces reach 61K tokens on it), and what cannot fit is
refused in one line naming the fix."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from rich.console import Console

from agentload.client.endpoint import Endpoint
from agentload.engines.llamacpp import LocalEngine
from agentload.engines.model_gen import GeneratedModelSpec, generated_model
from agentload.errors import AgentloadError
from agentload.target.context import CHECK_INSTANCE, Fit, LlamaCppCounter, measure_need
from agentload.target.deployment import TargetOptions
from agentload.workload.load import load_workload
from agentload.workload.replies import Replies
from agentload.workload.text import TextMaker
from agentload.workload.tokenizers import FileTokenizer
from tests.conftest import require_engine
from tests.paths import AGENTPERF

DEFAULT_SET = AGENTPERF / "agentperf-default-v1" / "traces"
MINI_SET = AGENTPERF / "aa-mini-v1" / "manifest.json"
ISSUE_SLOT_TOKENS = 32_768
"""The slot the engine gave each agent before (issue 16: 14 of 85 calls failed at it)."""
HTTP_TIMEOUT_S = 300


def quiet() -> Console:
    return Console(quiet=True)


def endpoint_of(engine: LocalEngine) -> Endpoint:
    return Endpoint(base_url=f"{engine.url}/v1", model=engine.model)


@pytest.mark.engine
def test_the_count_is_the_prompt_tokens_the_server_reports(llama_server: LocalEngine) -> None:
    workload = load_workload(str(MINI_SET))
    session = workload.sessions[0]
    turn = len(session.turns) - 1
    text = TextMaker(FileTokenizer(llama_server.tokenizer_path or ""), "count-check")
    replies = Replies(session.id)
    for j, earlier in enumerate(session.turns[:turn]):
        replies.add(j, earlier.recorded_reply)
    messages = text.messages(
        session.prompt(turn, [t.output_tokens for t in session.turns]), CHECK_INSTANCE, replies
    )
    counted = LlamaCppCounter(endpoint_of(llama_server)).count(messages, session.tools)
    body = {"model": llama_server.model, "messages": messages, "max_tokens": 1}
    if session.tools:
        body["tools"] = list(session.tools)
    request = urllib.request.Request(
        f"{llama_server.url}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
        usage = json.loads(response.read())["usage"]
    assert counted == usage["prompt_tokens"]


@pytest.mark.engine
def test_recorded_traces_get_slots_sized_to_their_longest_call(tmp_path: Path) -> None:
    require_engine()
    fit = Fit(load_workload(str(DEFAULT_SET)), recorded_history=True)
    with TargetOptions().open(
        api="chat", agents=3, out=tmp_path, console=quiet(), fit=fit
    ) as target:
        context = target.context
        assert context is not None and context.fits
        longest = context.need.longest
        assert longest.tokens > ISSUE_SLOT_TOKENS  # what failed before
        assert context.window.tokens is not None and context.window.tokens >= longest.tokens
        assert context.need.ratio is not None and context.need.ratio > 1.2
        assert target.facts["context"]["calls_over"] == 0
        assert target.facts["engine"]["slot_ctx_tokens"] == context.window.tokens


@pytest.mark.engine
def test_an_explicit_engine_ctx_too_short_is_refused_naming_the_fix(tmp_path: Path) -> None:
    require_engine()
    fit = Fit(load_workload(str(DEFAULT_SET)), recorded_history=True)
    options = TargetOptions(engine_ctx_per_slot=8192)
    with (
        pytest.raises(AgentloadError, match=r"--engine-ctx 8192: .* give at least [0-9,]+"),
        options.open(api="chat", agents=1, out=tmp_path, console=quiet(), fit=fit),
    ):
        pass


@pytest.mark.engine
def test_a_model_trained_too_short_for_the_workload_is_refused_naming_the_fix(
    tmp_path: Path,
) -> None:
    require_engine()
    short = generated_model(GeneratedModelSpec(context=16_384))
    fit = Fit(load_workload(str(DEFAULT_SET)), recorded_history=True)
    options = TargetOptions(engine_model=str(short.path))
    with (
        pytest.raises(AgentloadError) as refused,
        options.open(api="chat", agents=1, out=tmp_path, console=quiet(), fit=fit),
    ):
        pass
    words = str(refused.value)
    assert "does not fit the local engine" in words and "trained context 16,384" in words
    assert "use --engine-model generated (trained context 262,144 tokens)" in words
    assert "\n" not in words


def test_estimates_scale_every_call_by_its_sessions_measured_ratio(tokenizer_path: Path) -> None:
    """Without a server the count is an estimate from the run's tokenizer, and every call not
    measured is scaled by its session's ratio."""
    workload = load_workload(str(DEFAULT_SET))
    text = TextMaker(FileTokenizer(tokenizer_path), "estimate")
    need = measure_need(workload, None, text, recorded_history=False, api="completions")
    assert len(need.measured) == len(workload.sessions)
    assert need.calls == sum(len(s.turns) for s in workload.sessions)
    assert max(need.estimated_tokens) == need.longest.tokens
    assert need.over(need.longest.tokens) == 0 and need.over(need.longest.tokens - 1) >= 1
