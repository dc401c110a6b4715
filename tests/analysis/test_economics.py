"""Per-agent economics: $ per agent-hour, per session and per M tokens, worked by hand.

The fixture is the published SGLang GB300 HiCache point (`sglang_gb300_muse_spark_open` in
tests/data/published/agentic_serving_results.json): 160 agents at 185,382 tok/s per GPU,
1,237 of them output, 97.2% of input cached; here on 4 GPUs at a measured 1,400 W each. Hosted
list prices: `hosted_list_prices_muse_spark_open`; $2.26 per GPU-hour: `inferencex_price_points`.
"""

from __future__ import annotations

import pytest

from agentload.analysis.cost import HostedPrices
from agentload.analysis.economics import (
    agent_load,
    hosted,
    hosted_by_kind,
    owned,
    owned_gpu_hour,
    rented,
    self_hosted,
)
from agentload.analysis.mix import TokenMix
from tests.analysis.summaries import HICACHE_OUTPUT, HIT_RATE

LIST = HostedPrices.with_discount(input=1.25, output=4.25, cached_discount=0.88)
PER_GPU = TokenMix(
    cached_input=(185_382 - HICACHE_OUTPUT) * HIT_RATE,
    uncached_input=(185_382 - HICACHE_OUTPUT) * (1 - HIT_RATE),
    output=HICACHE_OUTPUT,
)
AGENTS_PER_GPU = 40.0
CALLS_PER_S_PER_AGENT = 1_600 / 60 / 160
"""1,600 calls in a 60 s window across 160 agents."""


def test_a_rented_agent_hour_is_the_gpu_hour_shared_by_its_agents() -> None:
    """$2.26 per GPU-hour / 40 agents per GPU = $0.0565 per agent-hour; an agent's 4,634.6
    tok/s make 16.68M tokens an hour, so $0.00339 per M."""
    load = agent_load(PER_GPU, AGENTS_PER_GPU, CALLS_PER_S_PER_AGENT)
    costs = self_hosted(rented(2.26), load, AGENTS_PER_GPU)
    assert costs.per_agent_hour == pytest.approx(0.0565)
    assert costs.per_million == pytest.approx(0.0565 / (185_382 / 40 * 3600) * 1e6)


def test_half_utilised_gpus_double_the_gpu_part_but_not_the_electricity() -> None:
    load = agent_load(PER_GPU, AGENTS_PER_GPU, None)
    costs = self_hosted(rented(2.26), load, 40, electricity_per_gpu_hour=0.2, utilisation=0.5)
    assert costs.per_agent_hour == pytest.approx(2.26 * 2 / 40 + 0.2 / 40)


def test_an_owned_gpu_hour_spreads_its_capex_over_every_hour() -> None:
    """$50,000 over 4 years of 8,760 hours: $1.427 per GPU-hour."""
    assert owned_gpu_hour(50_000, 4) == pytest.approx(50_000 / 35_040)
    assert owned(50_000, 4).gpu_hour == pytest.approx(1.4269, abs=1e-4)


def test_a_hosted_agent_hour_prices_each_kind_of_token() -> None:
    """Per agent: 4,474.7 cached ($0.15), 128.9 uncached ($1.25), 30.9 output ($4.25) tok/s:
    $2.416 + $0.580 + $0.473 = $3.470 per agent-hour."""
    load = agent_load(PER_GPU, AGENTS_PER_GPU, None)
    by_kind = hosted_by_kind(LIST, load)
    assert by_kind["output"] == pytest.approx(HICACHE_OUTPUT / 40 * 3600 * 4.25 / 1e6)
    assert hosted(LIST, load).per_agent_hour == pytest.approx(sum(by_kind.values()))
    assert hosted(LIST, load).per_agent_hour == pytest.approx(3.470, abs=1e-3)


def test_a_session_costs_its_calls_tokens() -> None:
    """0.1667 calls/s per agent at 4,634.6 tok/s: 27,807 tokens per call; 100 calls are 2.78M
    tokens: $0.0094 self-hosted at $0.00339 per M, $0.578 hosted at $0.208 per M."""
    load = agent_load(PER_GPU, AGENTS_PER_GPU, CALLS_PER_S_PER_AGENT)
    session = load.session_tokens(100)
    assert session is not None
    assert session.total == pytest.approx(100 * 185_382 / 40 / CALLS_PER_S_PER_AGENT)
    own = self_hosted(rented(2.26), load, AGENTS_PER_GPU, calls_per_session=100)
    assert own.per_session == pytest.approx(0.0094, abs=1e-4)
    api = hosted(LIST, load, calls_per_session=100)
    assert api.per_session == pytest.approx(0.578, abs=1e-3)
