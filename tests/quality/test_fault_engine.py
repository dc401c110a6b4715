"""The gate catches what it is for (issue 31, item 5): a proxy in front of the real llama.cpp
server corrupts tokens only above three concurrent requests. A search through it fails the gate
from the probe whose load crosses that on, and each tier's answer drops below it, said to be the
quality's doing; the same engine without the proxy passes the gate at the load that failed.

Check calls are half the agents' calls here (so a few seconds of window judge), their replies
short; the tier is loose, so speed passes everywhere and only quality can fail it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from rich.console import Console

from agentload.engines.llamacpp import LocalEngine
from agentload.files import read_json
from agentload.quality.settings import QualityOptions
from agentload.results.quality import CheckSettings, QualityThresholds
from agentload.results.summary import Summary
from agentload.results.tiers import Tier
from agentload.run.execute import Execution, execute
from agentload.run.search_settings import SearchSettings
from agentload.run.settings import AgentSettings
from agentload.target.deployment import TargetOptions

PROXY = Path(__file__).with_name("corrupting_proxy.py")
WORKLOAD = (
    "synthetic:agentic-coding?sessions=16&system_tokens=256&min_input=400&mean_input=900"
    "&max_input=2000&task_median=100&calls_median=10&tool_call_output_median=12"
    "&burst_output_median=32&max_output=48&tool_time_median_s=0.02&max_tool_time_s=0.1"
)
ABOVE = 3
"""The proxy corrupts a reply that arrives while more than this many are in flight: never at 2
agents (with their one check lane, at most 3), nearly always at 4."""
QUALITY = QualityOptions(
    settings=CheckSettings(share=0.5, conversations=6, max_output_tokens=8),
    thresholds=QualityThresholds(min_checks=6),
)
RUN_S = 8.0
"""The run without the proxy: six check calls (half the calls, replies of 8 tokens) come in its
first seconds at 4 agents; 15 s before 2026-12-05, when the suite had to shed a minute."""
LOOSE = Tier(name="loose", output_speed_floor_tokens_per_s=0.001, ttft_ceiling_s=600.0)
WINDOW = {"settle_s": 1.0, "window_s": 3.0, "max_window_s": 30.0, "ramp_s": 0.2, "min_samples": 5}
"""Short windows, held open (up to 30 s) until the gate has its check calls, as a search's are:
3 s sufficed for each probe at load 3-5 (6 s fixed windows, before they were held open, left the
4-agent probe unjudged at load 7-9; held open, a loaded machine lengthens them instead)."""


@pytest.fixture(scope="module")
def proxy(llama_server: LocalEngine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The corrupting proxy's base URL, in front of the shared test server."""
    log = tmp_path_factory.mktemp("proxy") / "requests.jsonl"
    command = [sys.executable, str(PROXY), "--upstream", llama_server.url]
    command += ["--above", str(ABOVE), "--log", str(log)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None
        words = process.stdout.readline().decode().split()
        assert words[:1] == ["PORT"], f"the proxy did not start: {words!r}"
        yield f"http://127.0.0.1:{words[1]}/v1"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _measure(
    url: str, model: str, tokenizer: Path | None, out: Path, search: SearchSettings
) -> Summary:
    request = Execution(
        workload=WORKLOAD,
        search=search,
        agents=AgentSettings(start_mid_session=True),
        target=TargetOptions(url=url, model=model, tokenizer=str(tokenizer)),
        out=out,
        label="quality-fault",
        quality=QUALITY,
    )
    return execute(request, console=Console(quiet=True))


@pytest.fixture(scope="module")
def through_proxy(
    proxy: str, llama_server: LocalEngine, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp("fault") / "results"
    search = SearchSettings(tiers=(LOOSE,), max_agents=4, plan="bisect", precision=0.0, **WINDOW)
    _measure(proxy, llama_server.model, llama_server.tokenizer_path, out, search)
    return out


def test_the_gate_fails_from_the_corrupting_load_on_and_the_answer_drops(
    through_proxy: Path,
) -> None:
    summary = Summary.model_validate(read_json(through_proxy / "summary.json"))
    gates = {p.agents: p.quality.gate for p in summary.probes if p.quality and p.quality.gate}
    assert gates[1].outcome == "pass" and gates[2].outcome == "pass"
    assert gates[4].outcome == "fail" and gates[4].check == "divergence"
    assert all(g.outcome == "fail" for n, g in gates.items() if n > 2)
    tier = summary.tiers[0]
    assert tier.max_agents == 2 and tier.limit == "quality"
    assert tier.quality is not None and tier.quality.limited
    assert re.fullmatch(
        r"\d+% of check calls diverge from their reference from token 0 on at 3 agents; "
        r"0% at 1-2 agents",
        tier.quality.words,
    ), tier.quality.words
    assert tier.max_agents_interval is not None
    assert tier.max_agents_interval.basis.endswith("(the quality gate set the answer)")
    assert tier.explanation is not None
    assert tier.explanation.startswith("limited by quality: ") and "quality: quality" not in (
        tier.explanation
    )


def test_the_references_and_every_check_call_are_kept(through_proxy: Path) -> None:
    references = read_json(through_proxy / "references.json")
    assert len(references["references"]) == QUALITY.settings.conversations
    assert references["source"]["origin"] == "this deployment at one agent"
    checks = [
        orjson.loads(line)
        for line in (through_proxy / "checks.jsonl").read_bytes().split(b"\n")
        if line
    ]
    assert {c["agents"] for c in checks} >= {1, 2, 4}
    assert all(c["first_diff"] == 0 for c in checks if c["agents"] >= 4 and not c["exact"])


def test_the_same_engine_without_the_proxy_passes_at_that_load(
    llama_server: LocalEngine, tmp_path: Path
) -> None:
    run = SearchSettings.for_run(4, RUN_S, ramp_s=0.2, settle_s=1.0)
    summary = _measure(
        llama_server.url, llama_server.model, llama_server.tokenizer_path, tmp_path / "r", run
    )
    quality = summary.probes[0].quality
    assert quality is not None and quality.gate is not None
    assert quality.gate.outcome == "pass", quality.gate.reason
    assert quality.diverged == 0 and quality.checks >= QUALITY.thresholds.min_checks
