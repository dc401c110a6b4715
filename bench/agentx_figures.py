"""AgentX-style figures of a finished search, from its records: what each probe's goodput,
session figures and methodology stamp come to.

    .venv/bin/python bench/agentx_figures.py RESULTS_DIR

Reads the results directory (`agentload.results.load`), takes each probe's window from its
figures and every record up to the window's end, and calls the pure functions the search's
orchestrator is to call per probe: `goodput_by_tier`, `session_figures` (with the one-agent
probe's `one_agent_baseline`) and `probe_stamp`, then folds the stamps with `summary_stamp`.
Prints one row per probe, units in the headers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentload.measure.goodput import goodput_by_tier
from agentload.measure.methodology import probe_stamp, summary_stamp
from agentload.measure.metrics import RecordTable
from agentload.measure.sessions import one_agent_baseline, session_figures
from agentload.measure.window import Window
from agentload.results.load import load_results
from agentload.results.summary import TierResult
from agentload.results.tiers import Tier


def tier_of(result: TierResult) -> Tier:
    """The tier a summary's result was judged on."""
    return Tier(
        name=result.name,
        output_speed_floor_tokens_per_s=result.output_speed_floor_tokens_per_s,
        output_speed_percentile=result.output_speed_percentile,
        ttft_ceiling_s=result.ttft_ceiling_s,
        ttft_percentile=result.ttft_percentile,
        interactivity_floor_tokens_per_s=result.interactivity_floor_tokens_per_s,
        interactivity_percentile=result.interactivity_percentile or 90.0,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path)
    args = parser.parse_args()
    files = load_results(args.results)
    assert files.summary is not None, "a finished search (summary.json) is needed"
    tiers = [tier_of(t) for t in files.summary.tiers]
    records = files.records
    table = RecordTable.from_records(records)
    probes = sorted(files.summary.probes, key=lambda p: p.index)
    one = next((p for p in probes if p.agents == 1), None)
    baseline = (
        one_agent_baseline(records, Window(one.window_start, one.window_end)) if one else None
    )
    print(f"one-agent baseline: {baseline}")
    stamps = {}
    header = (
        "agents | p25 speed tok/s | p95 TTFT s | e2e 1/p90 tok/s | "
        + " | ".join(f"goodput {t.name} calls/s" for t in tiers)
        + " | sessions | wall p50 s | model share | slowdown p50 / p90 | agentperf rules"
    )
    print(header)
    for probe in probes:
        window = Window(probe.window_start, probe.window_end)
        goodput = goodput_by_tier(table, window, tiers)
        sessions = session_figures(records, window, baseline=baseline)
        before = [r for r in records if r.t_send < window.end]
        stamp = probe_stamp(before, window, agents=probe.agents)
        stamps[f"probe-{probe.index}"] = stamp
        slowdown = (
            f"{sessions.slowdown_p50:.2f} / {sessions.slowdown_p90:.2f}"
            if sessions.slowdown_p50 is not None and sessions.slowdown_p90 is not None
            else "-"
        )
        print(
            f"{probe.agents} | {_f(probe.p25_output_tokens_per_s)} | {_f(probe.p95_ttft_s, 3)} | "
            f"{_f(probe.p90_interactivity_tokens_per_s)} | "
            + " | ".join(f"{goodput[t.name]:.2f}" for t in tiers)
            + f" | {sessions.sessions} | {_f(sessions.wall_s_p50)} | "
            f"{_f(sessions.model_share, 2)} | {slowdown} | "
            + ("valid" if stamp.valid else "; ".join(stamp.reasons))
        )
    folded = summary_stamp(stamps)
    print(f"summary stamp: valid={folded.valid}; reasons: {list(folded.reasons)}")


def _f(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


if __name__ == "__main__":
    main()
