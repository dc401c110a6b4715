"""Server metrics: scrape an inference server's Prometheus `/metrics` and compute, over a
window, what the server itself counted (prefix-cache hits, tokens) and its gauges (KV-cache
usage, running and waiting requests).

Use:

    scraper = ServerMetricsScraper(base_url, path=results / "server_metrics.jsonl")
    first = await scraper.scrape()          # at window start
    ...
    last = await scraper.scrape()           # at window end
    figures = scraper.window(first, last)   # ServerWindowMetrics
    await scraper.aclose()

vLLM, SGLang and llama.cpp names are built in and the engine is detected from the names
present; other servers are described by an `EngineNames` mapping. A scrape never raises: a
failed one carries its error, and a window built on it says so.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import aiohttp
from pydantic import Field

from agentload.clock import now
from agentload.errors import InputError, validated
from agentload.frozen import Frozen
from agentload.measure.prometheus import Exposition, parse
from agentload.results.jsonl import JsonlAppender
from agentload.results.samples import ServerScrape
from agentload.tasks import cancel

SCRAPE_TIMEOUT_S = 5.0
MAX_BODY_BYTES = 32 * 1024 * 1024
METRICS_PATH = "/metrics"
OPENAI_SUFFIX = "/v1"

COUNTERS = (
    "prefix_cache_hits",
    "prefix_cache_queries",
    "cached_prompt_tokens",
    "prompt_tokens",
    "uncached_prompt_tokens",
    "generation_tokens",
)
"""Monotonic counters (tokens): a window uses their difference."""
SUMMED_GAUGES = ("running", "waiting")
"""Gauges summed over series (several engines or data-parallel ranks add up)."""
MEAN_GAUGES = ("kv_cache_usage", "hit_rate")
"""Gauges that are ratios (0..1): averaged over series."""


class EngineNames(Frozen):
    """Which metric names carry each quantity on one engine. Each field lists candidate names;
    the first one present in a scrape is used (newer names first)."""

    engine: str = Field(min_length=1)
    prefix: str = ""
    """Metric names that start with this identify the engine (empty: never auto-detected)."""
    prefix_cache_hits: tuple[str, ...] = ()
    """Counter: prompt tokens found in the prefix cache."""
    prefix_cache_queries: tuple[str, ...] = ()
    """Counter: prompt tokens looked up in the prefix cache."""
    cached_prompt_tokens: tuple[str, ...] = ()
    """Counter: prompt tokens served from the cache."""
    prompt_tokens: tuple[str, ...] = ()
    """Counter: all prompt tokens, cached ones included."""
    uncached_prompt_tokens: tuple[str, ...] = ()
    """Counter: prompt tokens computed (cached ones excluded)."""
    generation_tokens: tuple[str, ...] = ()
    """Counter: generated tokens."""
    hit_rate: tuple[str, ...] = ()
    """Gauge 0..1: the engine's own recent prefix-cache hit rate (used only without counters)."""
    kv_cache_usage: tuple[str, ...] = ()
    """Gauge 0..1: share of the KV cache in use."""
    running: tuple[str, ...] = ()
    """Gauge: requests being processed."""
    waiting: tuple[str, ...] = ()
    """Gauge: requests queued."""

    def candidates(self, quantity: str) -> tuple[str, ...]:
        return getattr(self, quantity)


VLLM = EngineNames(
    engine="vllm",
    prefix="vllm:",
    prefix_cache_hits=("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
    prefix_cache_queries=(
        "vllm:prefix_cache_queries_total",
        "vllm:gpu_prefix_cache_queries_total",
    ),
    cached_prompt_tokens=("vllm:prompt_tokens_cached_total",),
    prompt_tokens=("vllm:prompt_tokens_total",),
    generation_tokens=("vllm:generation_tokens_total",),
    hit_rate=("vllm:gpu_prefix_cache_hit_rate",),
    kv_cache_usage=("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
    running=("vllm:num_requests_running",),
    waiting=("vllm:num_requests_waiting",),
)
"""vLLM: V1 token counters `prefix_cache_{hits,queries}` (0.9+; `gpu_` before), V0's hit-rate
gauge; `prompt_tokens_total` counts whole prompts."""

SGLANG = EngineNames(
    engine="sglang",
    prefix="sglang:",
    cached_prompt_tokens=("sglang:cached_tokens_total",),
    prompt_tokens=("sglang:prompt_tokens_total",),
    generation_tokens=("sglang:generation_tokens_total",),
    hit_rate=("sglang:cache_hit_rate",),
    kv_cache_usage=("sglang:token_usage",),
    running=("sglang:num_running_reqs",),
    waiting=("sglang:num_queue_reqs",),
)
"""SGLang: `cached_tokens_total` of `prompt_tokens_total`; `token_usage` is the KV pool share."""

LLAMACPP = EngineNames(
    engine="llamacpp",
    prefix="llamacpp:",
    cached_prompt_tokens=("llamacpp:prompt_tokens_cached_total",),
    uncached_prompt_tokens=("llamacpp:prompt_tokens_total",),
    generation_tokens=("llamacpp:tokens_predicted_total",),
    kv_cache_usage=("llamacpp:kv_cache_usage_ratio",),
    running=("llamacpp:requests_processing",),
    waiting=("llamacpp:requests_deferred",),
)
"""llama.cpp server (`--metrics`): `prompt_tokens_total` counts tokens processed, cached ones
excluded; `prompt_tokens_cached_total` and `kv_cache_usage_ratio` exist in some builds only."""

BUILT_IN = (VLLM, SGLANG, LLAMACPP)


def detect_engine(
    names: Iterable[str], known: Sequence[EngineNames] = BUILT_IN
) -> EngineNames | None:
    """The engine whose prefix most metric names carry; None when none matches."""
    counts = dict.fromkeys(range(len(known)), 0)
    for name in names:
        for i, engine in enumerate(known):
            if engine.prefix and name.startswith(engine.prefix):
                counts[i] += 1
    best = max(counts, key=lambda i: counts[i], default=None)
    return known[best] if best is not None and counts[best] > 0 else None


def engine_names_from_mapping(
    mapping: Mapping[str, Any], *, path: str | Path | None = None
) -> EngineNames:
    """`EngineNames` from a config mapping (a name may be given as a string or a list)."""
    data = {
        k: [v] if isinstance(v, str) and k not in ("engine", "prefix") else v
        for k, v in mapping.items()
    }
    data.setdefault("engine", "custom")
    return validated(EngineNames, data, path=path)


# --- one scrape -------------------------------------------------------------------------------


def read_exposition(
    exposition: Exposition,
    engine: EngineNames,
    *,
    t: float,
    url: str,
    filters: Mapping[str, str | Iterable[str]] | None = None,
) -> ServerScrape:
    """The quantities one exposition holds for an engine (pure)."""
    present = exposition.names()
    values: dict[str, float] = {}
    names: dict[str, str] = {}
    for quantity in (*COUNTERS, *SUMMED_GAUGES, *MEAN_GAUGES):
        for name in engine.candidates(quantity):
            if name not in present:
                continue
            series = [s.value for s in exposition.series(name, filters)]
            series = [v for v in series if math.isfinite(v)]
            if not series:
                continue
            combined = math.fsum(series)
            if quantity in MEAN_GAUGES:
                combined /= len(series)
            values[quantity] = combined
            names[quantity] = name
            break
    return ServerScrape(t=t, url=url, engine=engine.engine, values=values, names=names)


def metrics_url(url: str) -> str:
    """The `/metrics` URL of a server given its base URL (an OpenAI `/v1` suffix is dropped)."""
    url = url.rstrip("/")
    if url.endswith(METRICS_PATH):
        return url
    if url.endswith(OPENAI_SUFFIX):
        url = url[: -len(OPENAI_SUFFIX)]
    return url + METRICS_PATH


class ServerMetricsScraper:
    """Scrapes one server's `/metrics` without blocking the event loop for long (the HTTP
    request is asynchronous; the text is parsed in a worker thread)."""

    def __init__(
        self,
        url: str,
        *,
        engine: EngineNames | None = None,
        filters: Mapping[str, str | Iterable[str]] | None = None,
        path: str | Path | None = None,
        timeout_s: float = SCRAPE_TIMEOUT_S,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.url = metrics_url(url)
        self.engine = engine
        """Fixed by the caller, or detected at the first successful scrape."""
        self.filters = dict(filters or {})
        self.timeout_s = timeout_s
        self.headers = dict(headers or {})
        self.scrapes: list[ServerScrape] = []
        self._writer = JsonlAppender(path) if path is not None else None
        self._session: aiohttp.ClientSession | None = None
        self._periodic: asyncio.Task[None] | None = None

    async def _fetch(self) -> str:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.timeout_s)
            )
        async with self._session.get(self.url, headers=self.headers) as response:
            if response.status != 200:
                raise _ScrapeFailed(f"HTTP {response.status}")
            body = bytearray()  # read() returns what has arrived: a chunk, not the whole body
            while chunk := await response.content.read(MAX_BODY_BYTES + 1 - len(body)):
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    raise _ScrapeFailed(f"response larger than {MAX_BODY_BYTES} bytes")
            return body.decode("utf-8", errors="replace")

    async def scrape(self) -> ServerScrape:
        """One scrape, kept in `scrapes` and appended to the file; errors are in `.error`."""
        before = now()
        try:
            text = await self._fetch()
            t = (before + now()) / 2
            exposition = await asyncio.to_thread(parse, text, source=self.url)
        except _ScrapeFailed as exc:
            result = ServerScrape(t=before, url=self.url, error=str(exc))
        except InputError as exc:
            result = ServerScrape(t=before, url=self.url, error=str(exc))
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            reason = str(exc) or type(exc).__name__
            result = ServerScrape(t=before, url=self.url, error=reason)
        else:
            result = self._read(exposition, t)
        self.scrapes.append(result)
        if self._writer is not None:
            self._writer.write(result)
        return result

    def _read(self, exposition: Exposition, t: float) -> ServerScrape:
        if self.engine is None:
            self.engine = detect_engine(exposition.names())
        if self.engine is None:
            return ServerScrape(
                t=t,
                url=self.url,
                error="no vLLM, SGLang or llama.cpp metrics found; give a name mapping",
            )
        return read_exposition(exposition, self.engine, t=t, url=self.url, filters=self.filters)

    def window(self, start: ServerScrape, end: ServerScrape) -> ServerWindowMetrics:
        """Figures between two scrapes, with the gauges averaged over every scrape between."""
        middle = [s for s in self.scrapes if start.t < s.t < end.t]
        return server_window(start, end, middle)

    async def start_periodic(self, interval_s: float) -> None:
        """Scrape every `interval_s` in the background (for gauges over time) until `stop`."""
        if self._periodic is not None:
            return

        async def loop() -> None:
            while True:
                await asyncio.sleep(interval_s)
                await self.scrape()

        self._periodic = asyncio.create_task(loop(), name="agentload-server-metrics")

    async def stop_periodic(self) -> None:
        await cancel(self._periodic)
        self._periodic = None

    async def aclose(self) -> None:
        """Stop the background scrapes, close the HTTP session and the file."""
        await self.stop_periodic()
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None


class _ScrapeFailed(Exception):
    """The server answered, but not with metrics."""


# --- a window ---------------------------------------------------------------------------------


class GaugeFigures(Frozen):
    """One gauge over a window: at its two ends, and the mean and max over every scrape."""

    start: float | None
    end: float | None
    mean: float
    max: float
    scrapes: int


class ServerWindowMetrics(Frozen):
    """What the server counted between two scrapes. Token fields are differences, tokens."""

    engine: str | None
    start: float
    """Time of the first scrape, epoch s."""
    end: float
    """Time of the last scrape, epoch s."""
    duration_s: float
    prompt_tokens: float | None = None
    """All prompt tokens (cached included), tokens."""
    cached_prompt_tokens: float | None = None
    uncached_prompt_tokens: float | None = None
    generation_tokens: float | None = None
    prompt_tokens_per_s: float | None = None
    generation_tokens_per_s: float | None = None
    prefix_cache_hits: float | None = None
    """Prompt tokens found in the prefix cache, tokens."""
    prefix_cache_queries: float | None = None
    """Prompt tokens looked up in the prefix cache, tokens."""
    hit_rate: float | None = None
    """hits / queries over the window; None when the server exposes neither counters nor a
    hit-rate gauge, or looked nothing up."""
    hit_rate_source: Literal["counters", "gauge"] | None = None
    """`counters` (exact over the window) or `gauge` (the engine's own recent rate, averaged
    over the scrapes)."""
    kv_cache_usage: GaugeFigures | None = None
    """Share of the KV cache in use (0..1)."""
    running: GaugeFigures | None = None
    waiting: GaugeFigures | None = None
    valid: bool = True
    notes: tuple[str, ...] = ()


def server_window(
    start: ServerScrape, end: ServerScrape, middle: Sequence[ServerScrape] = ()
) -> ServerWindowMetrics:
    """Counter differences and gauges between two scrapes (pure)."""
    duration = end.t - start.t
    if not start.ok or not end.ok:
        failed = start if not start.ok else end
        return ServerWindowMetrics(
            engine=start.engine or end.engine,
            start=start.t,
            end=end.t,
            duration_s=duration,
            valid=False,
            notes=(f"scrape at {failed.t:.3f} failed: {failed.error}",),
        )
    notes: list[str] = []
    deltas: dict[str, float] = {}
    for quantity in COUNTERS:
        a, b = start.values.get(quantity), end.values.get(quantity)
        if a is None or b is None:
            continue
        if start.names.get(quantity) != end.names.get(quantity):
            notes.append(f"{quantity}: read from different metrics at the two ends")
            continue
        if b < a:
            notes.append(f"{start.names[quantity]} went backwards (server restarted?)")
            continue
        deltas[quantity] = b - a
    prompt = deltas.get("prompt_tokens")
    cached = deltas.get("cached_prompt_tokens")
    uncached = deltas.get("uncached_prompt_tokens")
    if prompt is None and cached is not None and uncached is not None:
        prompt = cached + uncached
    if uncached is None and prompt is not None and cached is not None:
        uncached = max(prompt - cached, 0.0)
    hits = deltas.get("prefix_cache_hits")
    queries = deltas.get("prefix_cache_queries")
    if hits is None or queries is None:
        hits, queries = cached, prompt
    hit_rate: float | None = None
    source: Literal["counters", "gauge"] | None = None
    if hits is not None and queries is not None and queries > 0:
        hit_rate, source = min(hits / queries, 1.0), "counters"
    scrapes = [start, *[s for s in middle if s.ok], end]
    if hit_rate is None and (queries is None or queries > 0):
        gauge = _gauge(scrapes, "hit_rate")
        if gauge is not None:
            hit_rate, source = gauge.mean, "gauge"
    generation = deltas.get("generation_tokens")
    return ServerWindowMetrics(
        engine=end.engine,
        start=start.t,
        end=end.t,
        duration_s=duration,
        prompt_tokens=prompt,
        cached_prompt_tokens=cached,
        uncached_prompt_tokens=uncached,
        generation_tokens=generation,
        prompt_tokens_per_s=_rate(prompt, duration),
        generation_tokens_per_s=_rate(generation, duration),
        prefix_cache_hits=hits,
        prefix_cache_queries=queries,
        hit_rate=hit_rate,
        hit_rate_source=source,
        kv_cache_usage=_gauge(scrapes, "kv_cache_usage"),
        running=_gauge(scrapes, "running"),
        waiting=_gauge(scrapes, "waiting"),
        valid=not notes,
        notes=tuple(notes),
    )


def _rate(amount: float | None, duration_s: float) -> float | None:
    return amount / duration_s if amount is not None and duration_s > 0 else None


def _gauge(scrapes: Sequence[ServerScrape], quantity: str) -> GaugeFigures | None:
    values = [s.values[quantity] for s in scrapes if quantity in s.values]
    if not values:
        return None
    return GaugeFigures(
        start=scrapes[0].values.get(quantity),
        end=scrapes[-1].values.get(quantity),
        mean=math.fsum(values) / len(values),
        max=max(values),
        scrapes=len(values),
    )
