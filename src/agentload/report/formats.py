"""The report's number and text formats, shared by the HTML report and the terminal.

Unknown or non-finite values are written as an em dash; `e` escapes any value for HTML text or
attributes (every string that came from a file or a server goes through it).
"""

from __future__ import annotations

import math
import time
from html import escape
from typing import Any

DASH = "—"


def e(value: object) -> str:
    """Escape any value for HTML text or attributes."""
    return escape(str(value), quote=True)


def agents_words(n: int) -> str:
    """`1 agent`, `16 agents`."""
    return f"{n:,} agent" + ("" if n == 1 else "s")


def fmt(value: float | None, digits: int = 1) -> str:
    """A number with thousands separators, or an em dash when unknown."""
    if value is None or not math.isfinite(value):
        return DASH
    return f"{value:,.{digits}f}"


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


def compact(value: float | None) -> str:
    """A figure to three significant digits with k, M or G: `32.8 M`, `41.0 M`, `5.71 k`."""
    if value is None or not math.isfinite(value):
        return DASH
    scaled, suffix = value, ""
    for size, name in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(value) >= size:
            scaled, suffix = value / size, name
            break
    if scaled == 0:
        return "0"
    digits = max(0, 2 - math.floor(math.log10(abs(scaled))))
    return f"{scaled:.{digits}f}{suffix}"
