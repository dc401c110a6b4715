"""Unit conversions used across the tool: one definition each."""

from __future__ import annotations

WATTS_PER_MW = 1e6
"""Watts in a megawatt: tokens/s per MW = tokens/s / watts x WATTS_PER_MW."""
SECONDS_PER_HOUR = 3600.0
MS_PER_S = 1000.0
TOKENS_PER_MILLION = 1e6
"""$ per M tokens = $ per token x TOKENS_PER_MILLION."""
WATTS_PER_KW = 1000.0
BYTES_PER_GB = 1e9
"""Decimal gigabytes, as GPU memory and model weights are quoted."""


def count_words(n: int, noun: str) -> str:
    """`1 call`, `16 calls`: a count and a noun with a regular plural."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def agents_words(n: int) -> str:
    """`1 agent`, `16 agents`."""
    return count_words(n, "agent")
