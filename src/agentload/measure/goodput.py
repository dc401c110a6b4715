"""Goodput: how many calls per second each met a tier's criteria on their own (pure).

A tier holds percentiles of a window to bounds (`agentload.results.tiers`); goodput asks the
same of every call alone, as AIPerf's `good_request_count` does for its `--goodput` SLOs and
DistServe defined it: a call is good when it succeeded, closed in the window, and meets every
criterion the tier has:
- its output speed, (completion tokens - 1) / (last - first token time), is at least the floor;
- its time to first token is at most the ceiling;
- its end-to-end interactivity, completion tokens / (close - send), is at least the e2e floor.
A criterion a call has no value for (one output token: no speed; no usage) is not met, as in
AIPerf. Goodput = good calls / window duration, calls/s.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from agentload.measure.metrics import RecordsLike, RecordTable
from agentload.measure.window import Window
from agentload.results.tiers import Tier


def _table(records: RecordsLike) -> RecordTable:
    return records if isinstance(records, RecordTable) else RecordTable.from_records(records)


def good_calls(records: RecordsLike, window: Window, tier: Tier) -> np.ndarray:
    """A mask over the records: the calls that closed in the window and met the tier alone."""
    t = _table(records)
    good = t.ok & (t.t_done >= window.start) & (t.t_done < window.end)
    with np.errstate(divide="ignore", invalid="ignore"):
        if tier.output_speed_floor_tokens_per_s is not None:
            span = t.t_last - t.t_first
            speed = np.where(span > 0, (t.completion_tokens - 1.0) / span, np.nan)
            speed = np.where(t.completion_tokens >= 2, speed, np.nan)
            good &= speed >= tier.output_speed_floor_tokens_per_s
        if tier.ttft_ceiling_s is not None:
            good &= (t.t_first - t.t_send) <= tier.ttft_ceiling_s
        if tier.interactivity_floor_tokens_per_s is not None:
            latency = t.t_done - t.t_send
            rate = np.where(latency > 0, t.completion_tokens / latency, np.nan)
            good &= (t.completion_tokens >= 1) & (rate >= tier.interactivity_floor_tokens_per_s)
    return good


def goodput(records: RecordsLike, window: Window, tier: Tier) -> float:
    """Calls per second of the window that each met the tier, calls/s."""
    if not window.duration_s > 0:
        raise ValueError(f"window has no duration: [{window.start}, {window.end})")
    return float(good_calls(records, window, tier).sum()) / window.duration_s


def goodput_by_tier(
    records: RecordsLike, window: Window, tiers: Iterable[Tier]
) -> dict[str, float]:
    """Tier name -> goodput over the window, calls/s (`ProbeFigures.goodput_calls_per_s`)."""
    table = _table(records)
    return {tier.name: goodput(table, window, tier) for tier in tiers}
