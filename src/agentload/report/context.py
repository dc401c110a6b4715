"""What every section of the HTML report needs: the points, the GPU divisor, the output-speed
percentile, probe colours and labels, and the provenance each chart's subtitle states."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from agentload.report.formats import DeploymentWords
from agentload.report.load import Point, ResultsView
from agentload.report.palette import ramp
from agentload.results.summary import TierResult
from agentload.units import agents_words

PROBE_WINDOWS = "each probe's steady-state window"
"""The window of every per-probe figure, as subtitles say it."""


@dataclass(frozen=True)
class ReportContext:
    """What every section needs: the view, GPU divisor, speed percentile and probe colours."""

    view: ResultsView
    points: tuple[Point, ...]
    colors: tuple[str, ...]
    gpus: int
    gpus_known: bool
    speed_q: int
    """The output-speed percentile the curve's x axis shows (25 or 50)."""

    @property
    def words(self) -> DeploymentWords:
        """How the deployment's size, power and per-MW figures read (as in the terminal)."""
        return self.view.deployment_words

    def throughput(self, unit: str = "tokens/s") -> str:
        """`tokens/s per GPU`, or `tokens/s` (the whole deployment's) when the run did not say
        how many GPUs served it (a CPU engine, or GPUs not given)."""
        return self.words.throughput(unit)

    def per_gpu(self, value: float | None) -> float | None:
        return None if value is None else value / self.gpus

    def speed(self, point: Point) -> float | None:
        f = point.figures
        return f.p25_output_tokens_per_s if self.speed_q == 25 else f.p50_output_tokens_per_s

    def tier_speed(self, tier: TierResult) -> float | None:
        return tier.p25_output_tokens_per_s if self.speed_q == 25 else tier.p50_output_tokens_per_s

    def tier_total_per_gpu(self, tier: TierResult) -> float | None:
        if tier.total_tokens_per_s_per_gpu is not None:
            return tier.total_tokens_per_s_per_gpu
        return self.per_gpu(tier.total_tokens_per_s)

    def point_label(self, point: Point) -> str:
        return agents_words(point.figures.agents)

    @property
    def tiers(self) -> tuple[TierResult, ...]:
        return self.view.tiers

    @property
    def point_sources(self) -> str:
        """Where the probes' figures came from: `summary.json`, `probes.jsonl`, ..."""
        return ", ".join(sorted({p.source for p in self.points})) or "none"

    def probe_labels(self) -> list[str]:
        """A distinct label per probe: its agent count (`16`, or `16 (2)` when repeated)."""
        seen: Counter[int] = Counter()
        labels = []
        for point in self.points:
            agents = point.figures.agents
            seen[agents] += 1
            labels.append(str(agents) if seen[agents] == 1 else f"{agents} ({seen[agents]})")
        return labels

    def subtitle(self, window: str, source: str, *, power: bool = False) -> list[str]:
        """A chart's subtitle: its window and source, and what was not measured."""
        lines = [f"Window: {window}. Source: {source}."]
        if self.view.simulated:
            lines.append("SIMULATED: figures from a simulated engine, not measured on a server.")
        summary = self.view.summary
        if power and summary is not None and summary.power.assumed:
            lines.append("Power ASSUMED: a declared constant, not measured.")
        return lines


def report_context(view: ResultsView) -> ReportContext:
    points = view.points
    q = 25
    if all(p.figures.p25_output_tokens_per_s is None for p in points) and any(
        p.figures.p50_output_tokens_per_s is not None for p in points
    ):
        q = 50
    return ReportContext(
        view=view,
        points=points,
        colors=tuple(ramp(len(points))),
        gpus=view.gpus or 1,
        gpus_known=view.gpus is not None,
        speed_q=q,
    )


def number(value: float | None) -> float | None:
    """A JSON-ready number: None for unknown or non-finite."""
    return float(value) if value is not None and math.isfinite(value) else None


def known(values: Iterable[float | None]) -> list[float]:
    """The finite values."""
    return [v for v in values if v is not None and math.isfinite(v)]
