"""What a token costs: GPU-hour pricing, electricity, hosted list prices, self-host vs API.

All prices are US dollars; "$/M" is dollars per million counted tokens (input + output, the
same tokens a throughput headline counts) unless a name says output tokens. Pure functions.
"""

from __future__ import annotations

import math

from pydantic import Field

from agentload.analysis.mix import TokenMix
from agentload.analysis.refused import Reason, Refused
from agentload.frozen import Frozen
from agentload.units import PERCENT, SECONDS_PER_HOUR, TOKENS_PER_MILLION, WATTS_PER_KW, number


def dollars_per_million(gpu_hour_price: float, tokens_per_s_per_gpu: float) -> float:
    """$/M tokens = $/GPU-hour / (tokens/s per GPU x 3600) x 1e6."""
    _positive(tokens_per_s_per_gpu, "tokens/s per GPU")
    _not_negative(gpu_hour_price, "$ per GPU-hour")
    return gpu_hour_price / (tokens_per_s_per_gpu * SECONDS_PER_HOUR) * TOKENS_PER_MILLION


def implied_tokens_per_s_per_gpu(gpu_hour_price: float, dollars_per_m: float) -> float:
    """The tokens/s per GPU at which a GPU-hour price comes to the given $/M tokens."""
    _positive(dollars_per_m, "$ per M tokens")
    _not_negative(gpu_hour_price, "$ per GPU-hour")
    return gpu_hour_price / (dollars_per_m / TOKENS_PER_MILLION * SECONDS_PER_HOUR)


def electricity_per_gpu_hour(watts_per_gpu: float, kwh_price: float, pue: float = 1.0) -> float:
    """$ of electricity one GPU uses in an hour at a mean draw, times the facility's PUE."""
    _not_negative(watts_per_gpu, "watts per GPU")
    _not_negative(kwh_price, "$ per kWh")
    if pue < 1.0:
        raise ValueError(f"PUE must be >= 1, got {pue:g}")
    return watts_per_gpu / WATTS_PER_KW * pue * kwh_price


def electricity_per_million(
    watts_per_gpu: float, kwh_price: float, tokens_per_s_per_gpu: float, pue: float = 1.0
) -> float:
    """$ of electricity per M tokens while serving at the given rate and power."""
    hourly = electricity_per_gpu_hour(watts_per_gpu, kwh_price, pue)
    return dollars_per_million(hourly, tokens_per_s_per_gpu)


class HostedPrices(Frozen):
    """A hosted API's list prices, $ per M tokens of each kind."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float = Field(ge=0)

    @classmethod
    def with_discount(cls, input: float, output: float, cached_discount: float) -> HostedPrices:
        """Prices where cached input costs `(1 - discount)` of input (discount 0..1)."""
        if not 0 <= cached_discount <= 1:
            raise ValueError(f"a cached-input discount is 0..1, got {cached_discount:g}")
        return cls(input=input, output=output, cached_input=input * (1 - cached_discount))


def hosted_prices(
    input_price: float | None,
    output_price: float | None,
    cached_discount: float | None,
    cached_input_price: float | None,
) -> HostedPrices | None:
    """The hosted list prices typed, or None when none were; `Refused` for half a price list,
    or a cached-input price given both ways."""
    given = (input_price, output_price, cached_discount, cached_input_price)
    if all(v is None for v in given):
        return None
    if input_price is None or output_price is None:
        raise Refused(
            None, Reason.NEEDS, "hosted prices need both --input-price and --output-price"
        )
    if cached_discount is not None and cached_input_price is not None:
        raise Refused(
            None, Reason.CONFLICTS, "give --cached-discount or --cached-input-price, not both"
        )
    if cached_input_price is not None:
        return HostedPrices(input=input_price, output=output_price, cached_input=cached_input_price)
    return HostedPrices.with_discount(input_price, output_price, cached_discount or 0.0)


def blended_price(prices: HostedPrices, mix: TokenMix) -> float:
    """$ per M counted tokens at list prices, for tokens in the given mix."""
    spend = (
        mix.cached_input * prices.cached_input
        + mix.uncached_input * prices.input
        + mix.output * prices.output
    )
    return spend / mix.total


def per_output_million(dollars_per_m: float, mix: TokenMix) -> float:
    """$ per M output tokens, when every counted token costs `dollars_per_m` per M."""
    _positive(mix.output, "output tokens")
    return dollars_per_m / mix.output_share


def self_host_per_million(
    gpu_hour_price: float,
    tokens_per_s_per_gpu: float,
    *,
    utilisation: float = 1.0,
    overhead: float = 0.0,
    electricity_per_m: float = 0.0,
) -> float:
    """$/M tokens when GPUs are paid for every hour but serve only `utilisation` of them.

    `overhead` adds a share to the GPU-hour price (hosting, staff, network); electricity is
    paid per token served (idle draw is left out). Utilisation is the share of hours spent
    serving at the measured rate (0..1].
    """
    if not 0 < utilisation <= 1:
        raise ValueError(f"utilisation is in (0, 1], got {utilisation:g}")
    _not_negative(overhead, "overhead")
    hourly = gpu_hour_price * (1 + overhead)
    return dollars_per_million(hourly, tokens_per_s_per_gpu) / utilisation + electricity_per_m


def break_even_utilisation(
    gpu_hour_price: float,
    tokens_per_s_per_gpu: float,
    hosted_per_m: float,
    *,
    overhead: float = 0.0,
    electricity_per_m: float = 0.0,
) -> float:
    """The utilisation at which self-hosting costs what the hosted API charges per token.

    Self-hosting is cheaper above it. Over 1 means never, even fully busy; infinity means the
    electricity alone costs more than the API.
    """
    _not_negative(overhead, "overhead")
    margin = hosted_per_m - electricity_per_m
    if margin <= 0:
        return math.inf
    hourly = gpu_hour_price * (1 + overhead)
    return dollars_per_million(hourly, tokens_per_s_per_gpu) / margin


def break_even_cell(utilisation: float) -> float | str:
    """A break-even utilisation as a reader takes it: a percentage where self-hosting can break
    even (at most 100%), else in words, since over 100% it never does: `never (192% would be
    needed)`, `never (electricity alone costs more than the API)`."""
    if math.isinf(utilisation):
        return "never (electricity alone costs more than the API)"
    if utilisation > 1:
        return f"never ({number(utilisation * PERCENT)}% would be needed)"
    return utilisation * PERCENT


def _positive(value: float, what: str) -> None:
    if not value > 0:
        raise ValueError(f"{what} must be > 0, got {value:g}")


def _not_negative(value: float, what: str) -> None:
    if not value >= 0:
        raise ValueError(f"{what} must be >= 0, got {value:g}")
