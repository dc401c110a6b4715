"""Check records and probes for the quality tests, built to the figure."""

from __future__ import annotations

from typing import Any

from agentload.quality.figures import quality_figures
from agentload.results.quality import CheckRecord, QualityFigures, QualityGate
from agentload.results.summary import ProbeFigures


def record(n: int, *, t: float = 10.0, **fields: Any) -> CheckRecord:
    """Check call `n`, closed at `t` (exact unless `fields` say otherwise)."""
    values: dict[str, Any] = {
        "id": f"check-{n}", "reference": f"workload-{n % 4}", "kind": "workload", "agents": 4,
        "t_send": t - 1.0, "t_done": t, "tokens": 20, "exact": True, "logprob_tokens": 20,
        "logprob_drift_nats": 0.001, "logprob_shift_nats": 0.0,
    }  # fmt: skip
    return CheckRecord(**(values | fields))


def diverged(n: int, at: int = 12, **fields: Any) -> CheckRecord:
    """Check call `n`, diverged from its reference at token `at`, not at a near tie."""
    return record(
        n, exact=False, first_diff=at, near_tie=False, agreement_after=0.1,
        logprob_tokens=at, **fields,
    )  # fmt: skip


def window(same: int, differing: int, **fields: Any) -> QualityFigures:
    """A window of `same` exact check calls and `differing` diverged ones."""
    checks = [record(i) for i in range(same)]
    checks += [diverged(same + i) for i in range(differing)]
    return quality_figures(checks, **fields)


def probe(agents: int, quality: QualityFigures | None, **fields: Any) -> ProbeFigures:
    """A probe at `agents` that passed tier `t` on speed, with `quality`."""
    values: dict[str, Any] = {
        "index": agents, "agents": agents, "window_start": 0.0, "window_end": 30.0,
        "window_s": 30.0, "requests_ok": 100, "requests_failed": 0, "error_rate": 0.0,
        "total_tokens_per_s": 1000.0, "output_tokens_per_s": 100.0,
        "cached_input_tokens_per_s": 800.0, "uncached_input_tokens_per_s": 100.0,
        "input_tokens_per_s": 900.0, "p25_output_tokens_per_s": 50.0,
        "p50_output_tokens_per_s": 60.0, "p95_ttft_s": 0.5, "p50_ttft_s": 0.2,
        "cache_hit_rate": 0.9, "achieved_concurrency": float(agents), "verdicts": {"t": "pass"},
    }  # fmt: skip
    return ProbeFigures(**(values | fields | {"quality": quality}))


def gated(figures: QualityFigures, outcome: str, reason: str = "", **gate: Any) -> QualityFigures:
    return figures.model_copy(
        update={"gate": QualityGate(outcome=outcome, reason=reason, **gate)}  # type: ignore[arg-type]
    )
