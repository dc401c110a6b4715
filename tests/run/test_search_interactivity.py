"""A search whose tiers hold end-to-end normalised interactivity (AgentX's definition) converges
on the real llama.cpp server, and every probe reports the figure it was judged on."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from agentload.engines.llamacpp import LocalEngine
from agentload.files import read_json
from agentload.results.summary import Summary
from agentload.results.tiers import parse_tier
from agentload.run.execute import Request, execute
from agentload.run.search_settings import SearchSettings
from agentload.target.deployment import TargetOptions
from tests.run.test_search_engine import MAX_AGENTS, PRECISION, WORKLOAD

TIERS = (
    parse_tier("e2e-loose:e2e=0.001"),
    parse_tier("e2e-mid:e2e=150"),
    parse_tier("e2e-impossible:e2e=1000000000"),
    parse_tier("mixed:0.001:600:e2e=0.001@p75"),
)


@pytest.fixture(scope="module")
def searched(llama_server: LocalEngine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("search-e2e") / "results"
    settings = SearchSettings(
        tiers=TIERS,
        max_agents=MAX_AGENTS,
        settle_s=2.0,
        window_s=6.0,
        max_window_s=9.0,
        ramp_s=0.5,
        min_samples=10,
        precision=PRECISION,
    )
    execute(
        Request(
            workload=WORKLOAD,
            search=settings,
            target=TargetOptions(
                url=llama_server.url,
                model=llama_server.model,
                tokenizer=str(llama_server.tokenizer_path),
            ),
            out=out,
            label="search-e2e",
            gpus=1,
        ),
        console=Console(quiet=True),
    )
    return out


def test_a_search_on_interactivity_tiers_converges(searched: Path) -> None:
    summary = Summary.model_validate(read_json(searched / "summary.json"))
    assert summary.complete
    probes = {p.agents: p for p in summary.probes}
    tiers = {t.name: t for t in summary.tiers}
    assert tiers["e2e-loose"].max_agents == MAX_AGENTS
    assert tiers["mixed"].max_agents == MAX_AGENTS
    assert tiers["e2e-impossible"].max_agents is None
    assert tiers["e2e-impossible"].first_failing_agents == 1
    for tier in summary.tiers:
        assert tier.interactivity_floor_tokens_per_s is not None
        if tier.max_agents is not None:
            assert probes[tier.max_agents].verdicts[tier.name] == "pass", tier.name
            assert tier.p90_interactivity_tokens_per_s == (
                probes[tier.max_agents].p90_interactivity_tokens_per_s
            )
        if tier.first_failing_agents is not None:
            assert probes[tier.first_failing_agents].verdicts[tier.name] == "fail", tier.name
            passing = tier.max_agents or 0
            assert tier.first_failing_agents - passing <= max(1, int(PRECISION * passing))


def test_every_probe_reports_its_interactivity(searched: Path) -> None:
    summary = Summary.model_validate(read_json(searched / "summary.json"))
    for probe in summary.probes:
        assert probe.p90_interactivity_tokens_per_s is not None
        assert probe.p90_interactivity_tokens_per_s > 0
    # The interactivity-only tiers carry no speed floor or TTFT ceiling.
    loose = next(t for t in summary.tiers if t.name == "e2e-loose")
    assert loose.output_speed_floor_tokens_per_s is None and loose.ttft_ceiling_s is None
