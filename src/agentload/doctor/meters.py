"""The checks of what a run reads besides its calls: the server's Prometheus metrics (and which
cache counters it has), and the power source (opened, and one reading shown)."""

from __future__ import annotations

import asyncio

from agentload.errors import AgentloadError
from agentload.measure.power_recorder import PowerRecorder
from agentload.measure.power_samplers import rapl_zones
from agentload.measure.power_spec import PowerSpec
from agentload.measure.server_metrics import ServerMetricsScraper
from agentload.target.checks import Finding, failed, passed, warned
from agentload.units import count_words, quantity

CACHE_QUANTITIES = (
    "prefix_cache_hits",
    "prefix_cache_queries",
    "cached_prompt_tokens",
    "prompt_tokens",
    "uncached_prompt_tokens",
    "hit_rate",
)
"""Quantities the server-side cache hit rate is computed from (`EngineNames` fields)."""
OTHER_QUANTITIES = ("kv_cache_usage", "running", "waiting", "generation_tokens")
POWER_WAIT_S = 2.5
"""Longest wait for a second power reading, s."""
POWER_POLL_S = 0.05


async def metrics_check(url: str | None, *, given: bool, missing: str | None = None) -> Finding:
    """`metrics`: one scrape; which engine, and which cache counters it exposes. An endpoint
    the user named (`given`) that fails is a fail; none at all is a warning, saying where one
    was looked for (`missing`)."""
    if url is None:
        looked = f" (tried {missing})" if missing else ""
        return warned(
            "metrics",
            f"no metrics endpoint{looked}: no server-side cache hit rate or queue figures; "
            "name one with --metrics-url",
        )
    scraper = ServerMetricsScraper(url)
    try:
        scrape = await scraper.scrape()
    finally:
        await scraper.aclose()
    if scrape.error is not None:
        make = failed if given else warned
        return make("metrics", f"{scraper.url}: {scrape.error}")
    cache = [f"{q} ({scrape.names[q]})" for q in CACHE_QUANTITIES if q in scrape.names]
    other = [q for q in OTHER_QUANTITIES if q in scrape.names]
    if not cache:
        return warned(
            "metrics",
            f"{scrape.engine} metrics at {scraper.url}, but no prefix-cache counters: the "
            "cache hit rate will be the client's alone",
            engine=scrape.engine,
            names=scrape.names,
        )
    found = "" if given else " (found beside --url)"
    return passed(
        "metrics",
        f"{scrape.engine} at {scraper.url}{found}; cache counters: {', '.join(cache)}"
        + (f"; also {', '.join(other)}" if other else ""),
        engine=scrape.engine,
        names=scrape.names,
    )


async def power_check(spec: PowerSpec | None) -> Finding:
    """`power`: the source opened and read (twice, for a rate); a declared figure warns that
    per-MW figures will be marked assumed; none warns that they will be empty."""
    if spec is None:
        hint = " (this machine's CPU has RAPL counters: --power rapl)" if rapl_zones() else ""
        return warned(
            "power",
            "no power source: per-MW figures will be empty; give --power nvml|amdsmi|dcgm:URL|"
            f"rapl|command:CMD, or --gpu-watts W (assumed){hint}",
        )
    if spec.kind == "assumed":
        return warned(
            "power",
            f"{spec.describe()}: per-MW figures will be marked assumed, not measured",
            watts=(spec.watts_per_gpu or 0.0) * spec.gpus,
        )
    recorder = PowerRecorder(spec.create())
    try:
        recorder.start()
    except AgentloadError as exc:
        return failed("power", str(exc))
    try:
        waited = 0.0
        while len(recorder.samples) < 2 and waited < POWER_WAIT_S:
            await asyncio.sleep(POWER_POLL_S)
            waited += POWER_POLL_S
    finally:
        recorder.stop()
    samples = recorder.samples
    if not samples:
        why = recorder.last_error or "no reading"
        return failed("power", f"{spec.describe()}: {why}")
    last = samples[-1]
    counter = ", with an energy counter" if last.energy_j is not None else ""
    return passed(
        "power",
        f"{spec.describe()}: {quantity(last.watts, 'W')} now over "
        f"{count_words(len(last.devices), 'device')}{counter}",
        watts=last.watts,
        devices=list(last.devices),
    )
