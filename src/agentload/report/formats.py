"""The report's number and text formats, shared by the HTML report and the terminal.

Unknown or non-finite values are written as an em dash; `e` escapes any value for HTML text or
attributes (every string that came from a file or a server goes through it).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from html import escape
from typing import Any

from agentload.results.summary import ArrivalFigures, TierResult

DASH = "—"


def e(value: object) -> str:
    """Escape any value for HTML text or attributes."""
    return escape(str(value), quote=True)


def fmt(value: float | None, digits: int = 1) -> str:
    """A number with thousands separators, or an em dash when unknown."""
    if value is None or not math.isfinite(value):
        return DASH
    return f"{value:,.{digits}f}"


def whole(value: int | None) -> str:
    """A whole number with thousands separators, or an em dash when unknown."""
    return DASH if value is None else f"{value:,}"


def arrival_rows(arrivals: ArrivalFigures) -> list[tuple[str, str, str]]:
    """An open-loop run's arrivals as (figure, value, unit) rows: how sessions came, how many,
    and the concurrency they came to (which stands for the run's agents)."""
    mean, peak = arrivals.sessions_active_mean, arrivals.sessions_active_peak
    return [
        ("arrivals (open loop)", arrivals.arrivals, ""),
        ("sessions arrived", f"{arrivals.sessions_arrived:,}", "sessions, start to window end"),
        (
            "sessions active mean / peak",
            f"{fmt(mean, 2)} / {peak:,}",
            "sessions over the window",
        ),
    ]


def pct(value: float | None, digits: int = 1) -> str:
    """A fraction as a percentage (`0.573` -> `57.3%`), or an em dash when unknown."""
    return DASH if value is None or not math.isfinite(value) else f"{value * 100:.{digits}f}%"


def utc(epoch: Any) -> str:
    """Epoch seconds as `YYYY-MM-DD HH:MM:SS UTC`."""
    if not isinstance(epoch, int | float) or isinstance(epoch, bool) or not math.isfinite(epoch):
        return DASH
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


def with_gpu(value: float | None, gpus: int | None, template: str = "{total} · {each}/GPU") -> str:
    """A whole-deployment figure and, when the GPU count is known, its share per GPU:
    `22,947 · 11,473/GPU` (or as `template` lays out `total` and `each`)."""
    if value is None:
        return DASH
    if not gpus:
        return fmt(value, 0)
    return template.format(total=fmt(value, 0), each=fmt(value / gpus, 0))


def compact(value: float | None, sep: str = " ") -> str:
    """A figure to three significant digits with k, M or G: `32.8 M`, `41.0 M`, `5.71 k`
    (`32.8M` with `sep=""`)."""
    if value is None or not math.isfinite(value):
        return DASH
    scaled, suffix = value, ""
    for size, name in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            scaled, suffix = value / size, sep + name
            break
    if scaled == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(scaled))))
    return f"{scaled:.{digits}f}{suffix}"


TierRow = tuple[str, str, Callable[[TierResult], str]]
"""A figure of a tier: its name, its unit and how to write it."""


def service_rows(*, p50: bool, interactivity: str) -> list[TierRow]:
    """How a tier's calls were served: output speed (p25, and p50 when asked), p95 TTFT, e2e
    interactivity (named `interactivity`), goodput and cache hit rate."""
    speed = "tokens/s per request"
    rows: list[TierRow] = [
        ("p25 output speed", speed, lambda t: fmt(t.p25_output_tokens_per_s)),
        ("p50 output speed", speed, lambda t: fmt(t.p50_output_tokens_per_s)),
        ("p95 TTFT", "s", lambda t: fmt(t.p95_ttft_s, 3)),
        (interactivity, speed, lambda t: fmt(t.p90_interactivity_tokens_per_s)),
        ("goodput", "calls/s meeting the tier", lambda t: fmt(t.goodput_calls_per_s, 2)),
        ("cache hit rate", "cached / prompt tokens", lambda t: pct(t.cache_hit_rate)),
    ]
    return rows if p50 else [rows[0], *rows[2:]]
