"""The report's number and text formats, shared by the HTML report and the terminal.

Unknown or non-finite values are written as an em dash; `e` escapes any value for HTML text or
attributes (every string that came from a file or a server goes through it).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from agentload.results.summary import ArrivalFigures, TierResult
from agentload.units import PERCENT, count_words, number, per_mw, quantity, unit_for
from agentload.vocabulary import PER_REQUEST

DASH = "—"
ASSUMED = "assumed"
WHOLE = "whole deployment"


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
    return DASH if value is None or not math.isfinite(value) else f"{value * PERCENT:.{digits}f}%"


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


@dataclass(frozen=True)
class DeploymentWords:
    """How the deployment's size, its power and the per-MW figures read: one rule for the
    terminal summary and the HTML report, from the same facts.

    - throughput is per GPU when the GPU count is known, else for the whole deployment (a CPU
      engine, or GPUs not given) and never called per GPU;
    - power is written in the unit its magnitude needs (`2.20 W`, `96.6 kW`: `units.quantity`),
      per-MW figures with a multiplier (`1.36M`), and both say `assumed` beside the figure
      when the watts were declared, not measured, wherever they show.
    """

    gpus: int | None
    """GPUs serving the model, when the run was told."""
    assumed: bool = False
    """The power is a declared figure (`--gpu-watts`, the CPU demo's per-vCPU watts)."""
    serving: str | None = None
    """What served when the GPU count is unknown (`llama.cpp on CPU, 1 thread`), if known."""

    @property
    def size(self) -> str:
        """`8 GPUs`; `llama.cpp on CPU, 1 thread`; or that the size was not given."""
        if self.gpus:
            return count_words(self.gpus, "GPU")
        return self.serving or "GPU count not given (figures are for the whole deployment)"

    def throughput(self, unit: str = "tokens/s") -> str:
        """A throughput's unit: `tokens/s per GPU`, or `tokens/s` (the whole deployment's)
        when the GPU count is unknown."""
        return f"{unit} per GPU" if self.gpus else unit

    @property
    def power_unit(self) -> str:
        """What a mean power covers: `all 8 GPUs`, or the `whole deployment`."""
        return f"all {count_words(self.gpus, 'GPU')}" if self.gpus else WHOLE

    def power_column(
        self, watts: Sequence[float | None]
    ) -> tuple[str, Callable[[float | None], str]]:
        """A column of mean powers in one unit, the one its largest reads best in: its header
        (`mean kW`) and how each figure reads in it (`96.6`). A table with such a column says
        `power ASSUMED` in its title (`assumed_clause`)."""
        unit, size = unit_for(max((w for w in watts if w is not None), default=0.0), "W")

        def cell(value: float | None) -> str:
            return DASH if value is None else number(value / size)

        return f"mean {unit}", cell

    @property
    def assumed_clause(self) -> str:
        """`, power ASSUMED` after a table's title when the watts were declared, else nothing."""
        return f", power {ASSUMED.upper()}" if self.assumed else ""

    def power(self, watts: float | None, *, each: bool = True) -> str:
        """A mean power: `2.20 W assumed`, `96.6 kW (1.34 kW/GPU)` (`each`: with the share of
        a GPU); an em dash when unknown."""
        if watts is None:
            return DASH
        shown = quantity(watts, "W")
        if each and self.gpus and self.gpus > 1:
            shown += f" ({quantity(watts / self.gpus, 'W')}/GPU)"
        return self.marked(shown)

    def marked(self, shown: str) -> str:
        """A figure computed from the power (`0.013` J/token), `assumed` beside it when the
        watts were declared; an em dash stays one."""
        return shown + (f" {ASSUMED}" if self.assumed and shown != DASH else "")

    def per_mw(self, value: float | None) -> str:
        """A per-MW figure as every verb writes it (`agentload.units.per_mw`): `1.36M`,
        `455k assumed`; an em dash without power."""
        if value is None:
            return DASH
        return self.marked(per_mw(value))


TierRow = tuple[str, str, Callable[[TierResult], str]]
"""A figure of a tier: its name, its unit and how to write it."""


def service_rows(*, p50: bool, interactivity: str) -> list[TierRow]:
    """How a tier's calls were served: output speed (p25, and p50 when asked), p95 TTFT, e2e
    interactivity (named `interactivity`), goodput and cache hit rate."""
    speed = PER_REQUEST
    rows: list[TierRow] = [
        ("p25 output speed", speed, lambda t: fmt(t.p25_output_tokens_per_s)),
        ("p50 output speed", speed, lambda t: fmt(t.p50_output_tokens_per_s)),
        ("p95 TTFT", "s", lambda t: fmt(t.p95_ttft_s, 3)),
        (interactivity, speed, lambda t: fmt(t.p90_interactivity_tokens_per_s)),
        ("goodput", "calls/s meeting the tier", lambda t: fmt(t.goodput_calls_per_s, 2)),
        ("cache hit rate", "cached / prompt tokens", lambda t: pct(t.cache_hit_rate)),
    ]
    return rows if p50 else [rows[0], *rows[2:]]


def power_rows(words: DeploymentWords) -> list[TierRow]:
    """A tier's power and per-MW figures, as the terminal and the HTML both show them."""
    return [
        ("mean power", words.power_unit, lambda t: words.power(t.mean_watts)),
        ("agents per MW", "agents/MW", lambda t: words.per_mw(t.agents_per_mw)),
        ("total per MW", "tokens/s per MW", lambda t: words.per_mw(t.total_tokens_per_s_per_mw)),
        (
            "output per MW",
            "tokens/s per MW",
            lambda t: words.per_mw(t.output_tokens_per_s_per_mw),
        ),
    ]
