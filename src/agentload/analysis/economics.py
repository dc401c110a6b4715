"""Per-agent economics: $ per agent-hour, per session and per M tokens, self-hosted or hosted.

Self-hosted, a GPU-hour is paid whether or not it serves (rented: its price; owned: capex
spread over the years, `owned_gpu_hour`), plus electricity while serving, at the wall. An agent
holds `1 / agents_per_gpu` of a GPU while it is active, so

    $ per agent-hour = $ per GPU-hour x (1 + overhead) / agents per GPU / utilisation
                       + electricity $ per GPU-hour / agents per GPU

(`utilisation`: the share of paid hours spent serving at the measured rate). Hosted, an agent
pays list prices for what it sends and receives: its tokens/s of each kind x 3,600 x $/M / 1e6.
A session costs its tokens at the same rate: $ per session = tokens per session x $ per M / 1e6,
with tokens per session = calls per session x tokens per call, and tokens per call = an agent's
tokens/s / its calls/s. The self-hosted GPU time is not split by token kind, so its $ per M is
the same for every counted token; the hosted price is split by kind. Pure functions; US dollars.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentload.analysis.cost import HostedPrices, blended_price
from agentload.analysis.mix import TokenMix
from agentload.frozen import Frozen
from agentload.units import SECONDS_PER_HOUR, TOKENS_PER_MILLION, WATTS_PER_KW, dollars, given

HOURS_PER_YEAR = 8_760.0

Basis = Literal["rented", "owned"]


class CostBasis(Frozen):
    """How self-hosted GPU-hours are paid for, electricity aside."""

    basis: Basis
    gpu_hour: float = Field(ge=0)
    """$ per GPU-hour, paid whether serving or not (electricity is separate)."""
    words: str
    """`rented at $2.26 per GPU-hour` / `owned: $50,000 per GPU over 4 years`."""


def rented(gpu_hour_price: float) -> CostBasis:
    """GPUs rented by the hour."""
    return CostBasis(
        basis="rented", gpu_hour=gpu_hour_price, words=f"rented at {dollars(gpu_hour_price)}/GPU-h"
    )


def owned(capex_per_gpu: float, years: float) -> CostBasis:
    """GPUs bought (with their share of servers and network) and written off over `years`."""
    if not years > 0:
        raise ValueError(f"years must be > 0, got {years:g}")
    hourly = owned_gpu_hour(capex_per_gpu, years)
    return CostBasis(
        basis="owned",
        gpu_hour=hourly,
        words=(
            f"owned: {dollars(capex_per_gpu)}/GPU over {given(years)} years "
            f"({dollars(hourly)}/GPU-h)"
        ),
    )


def owned_gpu_hour(capex_per_gpu: float, years: float) -> float:
    """Capex per GPU spread evenly over every hour of `years`."""
    return capex_per_gpu / (years * HOURS_PER_YEAR)


def electricity_gpu_hour(wall_watts_per_gpu: float, kwh_price: float) -> float:
    """$ of electricity one GPU's share of the wall power costs in an hour."""
    return wall_watts_per_gpu / WATTS_PER_KW * kwh_price


class AgentCosts(Frozen):
    """What one agent costs at one operating point, one way of paying."""

    per_agent_hour: float
    """$ per hour of one active agent."""
    per_million: float
    """$ per M counted tokens (input + output)."""
    per_million_output: float | None
    """$ per M output tokens (every counted token's cost charged to output)."""
    per_session: float | None
    """$ per session, when the session's size is known."""


class AgentLoad(Frozen):
    """What one active agent sends and receives: tokens/s of each kind, and calls/s."""

    mix: TokenMix
    """Tokens/s per active agent of each kind, tool time included (not an output speed)."""
    calls_per_s: float | None = Field(default=None, gt=0)

    def session_tokens(self, calls_per_session: float | None) -> TokenMix | None:
        """Tokens of each kind one session of `calls_per_session` calls sends and receives."""
        if calls_per_session is None or self.calls_per_s is None:
            return None
        return self.mix.scaled(calls_per_session / self.calls_per_s)


def agent_load(
    tokens_per_s_per_gpu: TokenMix, agents_per_gpu: float, calls_per_s_per_agent: float | None
) -> AgentLoad:
    """An agent's share of a GPU's token rates (tool time included: agents are a closed loop)."""
    if not agents_per_gpu > 0:
        raise ValueError(f"agents per GPU must be > 0, got {agents_per_gpu:g}")
    return AgentLoad(
        mix=tokens_per_s_per_gpu.scaled(1 / agents_per_gpu), calls_per_s=calls_per_s_per_agent
    )


def self_hosted(
    basis: CostBasis,
    load: AgentLoad,
    agents_per_gpu: float,
    *,
    electricity_per_gpu_hour: float = 0.0,
    utilisation: float = 1.0,
    overhead: float = 0.0,
    calls_per_session: float | None = None,
) -> AgentCosts:
    """An agent's cost on self-hosted GPUs (see the module's formula)."""
    if not 0 < utilisation <= 1:
        raise ValueError(f"utilisation is in (0, 1], got {utilisation:g}")
    hourly = (
        basis.gpu_hour * (1 + overhead) / agents_per_gpu / utilisation
        + electricity_per_gpu_hour / agents_per_gpu
    )
    return _costs(hourly, load, calls_per_session)


def hosted(
    prices: HostedPrices, load: AgentLoad, calls_per_session: float | None = None
) -> AgentCosts:
    """An agent's cost at a hosted API's list prices, on its own token mix."""
    hourly = (
        blended_price(prices, load.mix) * load.mix.total * SECONDS_PER_HOUR / TOKENS_PER_MILLION
    )
    return _costs(hourly, load, calls_per_session)


def hosted_by_kind(prices: HostedPrices, load: AgentLoad) -> dict[str, float]:
    """$ per agent-hour at list prices from each kind of token."""
    scale = SECONDS_PER_HOUR / TOKENS_PER_MILLION
    return {
        "cached input": load.mix.cached_input * prices.cached_input * scale,
        "uncached input": load.mix.uncached_input * prices.input * scale,
        "output": load.mix.output * prices.output * scale,
    }


def _costs(per_hour: float, load: AgentLoad, calls_per_session: float | None) -> AgentCosts:
    tokens_per_hour = load.mix.total * SECONDS_PER_HOUR
    per_million = per_hour / tokens_per_hour * TOKENS_PER_MILLION
    session = load.session_tokens(calls_per_session)
    return AgentCosts(
        per_agent_hour=per_hour,
        per_million=per_million,
        per_million_output=per_million / load.mix.output_share if load.mix.output else None,
        per_session=session.total * per_million / TOKENS_PER_MILLION if session else None,
    )
