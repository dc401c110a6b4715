"""The token mix: how counted tokens split into cached input, uncached input and output.

A mix can be token counts or rates (tokens/s); shares are the same either way. Throughput
headlines count all three, so "what share of this headline is generated output" is
`output_share`.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field, model_validator

from agentload.frozen import Frozen

MIX_TOLERANCE = 0.01
"""How far (relative) a stated total may differ from the sum of its parts."""


class TokenMix(Frozen):
    """Cached input, uncached input and output, in any one unit (tokens, or tokens/s)."""

    cached_input: float = Field(ge=0)
    uncached_input: float = Field(ge=0)
    output: float = Field(ge=0)

    @model_validator(mode="after")
    def _not_empty(self) -> TokenMix:
        if self.total <= 0:
            raise ValueError("a token mix needs some tokens")
        return self

    @property
    def input(self) -> float:
        """All input tokens, cached or not."""
        return self.cached_input + self.uncached_input

    @property
    def total(self) -> float:
        """Every counted token: input and output."""
        return self.input + self.output

    @property
    def cached_share(self) -> float:
        """Cached input as a share of all counted tokens (0..1)."""
        return self.cached_input / self.total

    @property
    def uncached_share(self) -> float:
        """Uncached input as a share of all counted tokens (0..1)."""
        return self.uncached_input / self.total

    @property
    def output_share(self) -> float:
        """Generated output as a share of all counted tokens (0..1)."""
        return self.output / self.total

    @property
    def input_share(self) -> float:
        """All input as a share of all counted tokens (0..1)."""
        return self.input / self.total

    @property
    def cache_hit_rate(self) -> float | None:
        """Cached input as a share of input (0..1); None without input."""
        return self.cached_input / self.input if self.input > 0 else None

    def scaled(self, factor: float) -> TokenMix:
        """The same mix with every part multiplied (e.g. per deployment to per GPU)."""
        return TokenMix(
            cached_input=self.cached_input * factor,
            uncached_input=self.uncached_input * factor,
            output=self.output * factor,
        )


def mix_from_ratio(cached: float, uncached: float, output: float) -> TokenMix:
    """A mix from a ratio such as 7:2:1 (cached input : uncached input : output)."""
    return TokenMix(cached_input=cached, uncached_input=uncached, output=output)


def mix_from_rates(
    *,
    total: float | None = None,
    output: float | None = None,
    cached_input: float | None = None,
    uncached_input: float | None = None,
    cache_hit_rate: float | None = None,
) -> TokenMix | None:
    """The mix that the given figures pin down, or None when they do not pin one down.

    Input is total - output, or cached + uncached; a cache hit rate (cached share of input)
    splits input when the parts are not given. Raises ValueError on figures that disagree.
    """
    if cached_input is not None and uncached_input is not None:
        known_input: float | None = cached_input + uncached_input
    elif total is not None and output is not None:
        known_input = total - output
        if known_input < 0:
            raise ValueError(f"output ({output:g}) exceeds the total ({total:g})")
    else:
        known_input = None
    if output is None and total is not None and known_input is not None:
        output = total - known_input
        if output < 0:
            raise ValueError(f"input ({known_input:g}) exceeds the total ({total:g})")
    if known_input is None or output is None:
        return None
    if cached_input is None or uncached_input is None:
        if cached_input is not None:
            uncached_input = known_input - cached_input
        elif uncached_input is not None:
            cached_input = known_input - uncached_input
        elif cache_hit_rate is not None:
            cached_input = known_input * cache_hit_rate
            uncached_input = known_input - cached_input
        else:
            return None
        if cached_input < 0 or uncached_input < 0:
            raise ValueError("cached and uncached input do not fit in the input")
    mix = TokenMix(cached_input=cached_input, uncached_input=uncached_input, output=output)
    if total is not None and abs(mix.total - total) > MIX_TOLERANCE * max(total, mix.total):
        raise ValueError(f"the parts add up to {mix.total:g}, not the total {total:g}")
    return mix


def mix_from_calls(calls: Iterable[tuple[int, int]]) -> TokenMix:
    """The token mix of one agent's calls, given (prompt tokens, completion tokens) per call.

    Calls are prefix extensions: the cached part of a call is the previous call's prompt plus
    its completion, capped at this call's prompt. The first call has nothing cached (a cold
    cache; a shared system prompt across agents would raise the hit rate above this).
    """
    cached = uncached = output = 0
    previous: int | None = None
    for prompt, completion in calls:
        if prompt < 0 or completion < 0:
            raise ValueError("token counts must be >= 0")
        hit = 0 if previous is None else min(prompt, previous)
        cached += hit
        uncached += prompt - hit
        output += completion
        previous = prompt + completion
    return TokenMix(cached_input=cached, uncached_input=uncached, output=output)
