"""Server metrics: vLLM, SGLang and llama.cpp expositions read, window differences, the scraper
over HTTP, and a scrape of the real llama.cpp server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from agentload.engines.llamacpp import LocalEngine
from agentload.errors import InputError
from agentload.measure.prometheus import parse
from agentload.measure.server_metrics import (
    LLAMACPP,
    SGLANG,
    VLLM,
    ServerMetricsScraper,
    detect_engine,
    engine_names_from_mapping,
    metrics_url,
    read_exposition,
    server_window,
)
from agentload.results.jsonl import read_jsonl
from agentload.results.samples import ServerScrape


def vllm_text(hits: float, queries: float, prompt: float, generation: float, kv: float) -> str:
    """vLLM V1 with two data-parallel engines; the second holds a third of the counts."""
    rows = [
        "# HELP vllm:num_requests_running Number of requests in model execution batches.",
        "# TYPE vllm:num_requests_running gauge",
    ]
    for engine, share in (("0", 2 / 3), ("1", 1 / 3)):
        labels = f'engine="{engine}",model_name="m"'
        rows += [
            f"vllm:num_requests_running{{{labels}}} {6 * share:.1f}",
            f"vllm:num_requests_waiting{{{labels}}} {3 * share:.1f}",
            f"vllm:kv_cache_usage_perc{{{labels}}} {kv * (1.5 if engine == '0' else 0.5)}",
            f"vllm:gpu_cache_usage_perc{{{labels}}} 0.99",
            f"vllm:prefix_cache_queries_total{{{labels}}} {queries * share}",
            f"vllm:prefix_cache_hits_total{{{labels}}} {hits * share}",
            f"vllm:gpu_prefix_cache_queries_total{{{labels}}} 1.0",
            f"vllm:gpu_prefix_cache_hits_total{{{labels}}} 1.0",
            f"vllm:prompt_tokens_total{{{labels}}} {prompt * share}",
            f"vllm:generation_tokens_total{{{labels}}} {generation * share}",
            f'vllm:request_success_total{{{labels},finished_reason="stop"}} 40.0',
            f'vllm:time_to_first_token_seconds_bucket{{{labels},le="+Inf"}} 40.0',
        ]
    return "\n".join(rows) + "\n"


VLLM_V0 = """\
# TYPE vllm:gpu_prefix_cache_hit_rate gauge
vllm:gpu_prefix_cache_hit_rate{model_name="m"} 0.8
vllm:gpu_cache_usage_perc{model_name="m"} 0.25
vllm:num_requests_running{model_name="m"} 4.0
vllm:num_requests_waiting{model_name="m"} 0.0
vllm:prompt_tokens_total{model_name="m"} 1000.0
vllm:generation_tokens_total{model_name="m"} 200.0
"""


def sglang_text(prompt: float, cached: float, generation: float) -> str:
    return f"""\
# HELP sglang:prompt_tokens_total Number of prefill tokens processed.
# TYPE sglang:prompt_tokens_total counter
sglang:prompt_tokens_total{{model_name="meta-llama/Llama-3.1-8B-Instruct"}} {prompt:e}
# HELP sglang:generation_tokens_total Number of generation tokens processed.
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{{model_name="meta-llama/Llama-3.1-8B-Instruct"}} {generation:e}
# TYPE sglang:cached_tokens_total counter
sglang:cached_tokens_total{{model_name="meta-llama/Llama-3.1-8B-Instruct"}} {cached:e}
# HELP sglang:token_usage The token usage
# TYPE sglang:token_usage gauge
sglang:token_usage{{model_name="meta-llama/Llama-3.1-8B-Instruct"}} 0.28
# HELP sglang:cache_hit_rate The cache hit rate
# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate{{model_name="meta-llama/Llama-3.1-8B-Instruct"}} 0.007507552643049313
sglang:num_running_reqs{{model_name="meta-llama/Llama-3.1-8B-Instruct"}} 12.0
sglang:num_queue_reqs{{model_name="meta-llama/Llama-3.1-8B-Instruct"}} 2.0
sglang:time_to_first_token_seconds_sum{{model_name="meta-llama/Llama-3.1-8B-Instruct"}} 2.35e+06
"""


def llamacpp_text(uncached: int, cached: int | None, predicted: int, busy: int) -> str:
    """As a current llama.cpp build prints it (captured from the embedded engine)."""
    rows = [
        "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed, "
        "excluding cached tokens",
        "# TYPE llamacpp:prompt_tokens_total counter",
        f"llamacpp:prompt_tokens_total {uncached}",
    ]
    if cached is not None:
        rows += [
            "# TYPE llamacpp:prompt_tokens_cached_total counter",
            f"llamacpp:prompt_tokens_cached_total {cached}",
        ]
    rows += [
        "# TYPE llamacpp:prompt_seconds_total counter",
        "llamacpp:prompt_seconds_total 0.56139",
        "# TYPE llamacpp:tokens_predicted_total counter",
        f"llamacpp:tokens_predicted_total {predicted}",
        "# TYPE llamacpp:requests_processing gauge",
        f"llamacpp:requests_processing {busy}",
        "# TYPE llamacpp:requests_deferred gauge",
        "llamacpp:requests_deferred 0",
        "llamacpp:n_busy_slots_per_decode 1",
    ]
    return "\n".join(rows) + "\n"


def scrape(text: str, t: float, url: str = "http://s/metrics") -> ServerScrape:
    exposition = parse(text)
    engine = detect_engine(exposition.names())
    assert engine is not None
    return read_exposition(exposition, engine, t=t, url=url)


def test_engines_are_detected_from_names() -> None:
    assert detect_engine(parse(vllm_text(1, 2, 3, 4, 0.1)).names()) is VLLM
    assert detect_engine(parse(VLLM_V0).names()) is VLLM
    assert detect_engine(parse(sglang_text(1, 1, 1)).names()) is SGLANG
    assert detect_engine(parse(llamacpp_text(1, 1, 1, 0)).names()) is LLAMACPP
    assert detect_engine(parse("up 1\nprocess_cpu_seconds_total 3\n").names()) is None


def test_vllm_series_combine_across_engines() -> None:
    s = scrape(vllm_text(900.0, 1200.0, 1500.0, 300.0, 0.4), 10.0)
    assert s.engine == "vllm"
    assert s.values["prefix_cache_hits"] == pytest.approx(900.0)
    assert s.values["prefix_cache_queries"] == pytest.approx(1200.0)
    assert s.values["running"] == pytest.approx(6.0)
    assert s.values["waiting"] == pytest.approx(3.0)
    assert s.values["kv_cache_usage"] == pytest.approx(0.4)  # the mean of 0.6 and 0.2
    # The newer names win over the deprecated ones present beside them.
    assert s.names["kv_cache_usage"] == "vllm:kv_cache_usage_perc"
    assert s.names["prefix_cache_hits"] == "vllm:prefix_cache_hits_total"


def test_vllm_window_hit_rate_from_token_counters() -> None:
    a = scrape(vllm_text(900.0, 1200.0, 1500.0, 300.0, 0.4), 10.0)
    b = scrape(vllm_text(9900.0, 13200.0, 13500.0, 1300.0, 0.6), 20.0)
    w = server_window(a, b)
    assert w.valid and w.engine == "vllm" and w.duration_s == 10.0
    assert w.prefix_cache_hits == pytest.approx(9000.0)
    assert w.prefix_cache_queries == pytest.approx(12000.0)
    assert w.hit_rate == pytest.approx(0.75) and w.hit_rate_source == "counters"
    assert w.prompt_tokens == pytest.approx(12000.0)
    assert w.generation_tokens == pytest.approx(1000.0)
    assert w.generation_tokens_per_s == pytest.approx(100.0)
    assert w.kv_cache_usage is not None
    assert (w.kv_cache_usage.start, w.kv_cache_usage.end) == pytest.approx((0.4, 0.6))
    assert w.kv_cache_usage.mean == pytest.approx(0.5)
    assert w.running is not None and w.running.mean == pytest.approx(6.0)


def test_vllm_v0_falls_back_to_its_hit_rate_gauge() -> None:
    a = scrape(VLLM_V0, 0.0)
    b = scrape(VLLM_V0.replace("0.8", "0.6").replace("1000.0", "1500.0"), 5.0)
    w = server_window(a, b)
    assert w.hit_rate == pytest.approx(0.7) and w.hit_rate_source == "gauge"
    assert w.prompt_tokens == pytest.approx(500.0)
    assert w.kv_cache_usage is not None and w.kv_cache_usage.mean == pytest.approx(0.25)


def test_sglang_window_cached_of_prompt_tokens() -> None:
    a = scrape(sglang_text(8.128902e06, 4.0e06, 7.557572e06), 100.0)
    b = scrape(sglang_text(8.128902e06 + 40000, 4.0e06 + 36000, 7.557572e06 + 2000), 104.0)
    w = server_window(a, b)
    assert w.engine == "sglang"
    assert w.prompt_tokens == pytest.approx(40000.0)
    assert w.cached_prompt_tokens == pytest.approx(36000.0)
    assert w.uncached_prompt_tokens == pytest.approx(4000.0)
    assert w.hit_rate == pytest.approx(0.9) and w.hit_rate_source == "counters"
    assert w.kv_cache_usage is not None and w.kv_cache_usage.end == pytest.approx(0.28)
    assert w.waiting is not None and w.waiting.end == 2.0


def test_llamacpp_window_cached_of_all_prompt_tokens() -> None:
    a = scrape(llamacpp_text(100, 0, 10, 0), 0.0)
    b = scrape(llamacpp_text(400, 900, 60, 2), 2.0)
    w = server_window(a, b)
    assert w.engine == "llamacpp"
    assert w.uncached_prompt_tokens == 300 and w.cached_prompt_tokens == 900
    assert w.prompt_tokens == 1200
    assert w.hit_rate == pytest.approx(0.75)
    assert w.running is not None and (w.running.start, w.running.end) == (0.0, 2.0)
    assert w.kv_cache_usage is None  # this build has no KV-usage gauge
    older = server_window(
        scrape(llamacpp_text(1, None, 1, 0), 0), scrape(llamacpp_text(9, None, 5, 0), 1)
    )
    assert older.hit_rate is None and older.hit_rate_source is None
    assert older.uncached_prompt_tokens == 8 and older.prompt_tokens is None


def test_window_notes_a_restart_and_a_failed_scrape() -> None:
    a = scrape(llamacpp_text(5000, 100, 900, 0), 0.0)
    b = scrape(llamacpp_text(20, 0, 4, 0), 9.0)
    w = server_window(a, b)
    assert not w.valid
    assert any("llamacpp:prompt_tokens_total went backwards" in n for n in w.notes)
    assert w.hit_rate is None
    failed = ServerScrape(t=5.0, url="http://s/metrics", error="HTTP 503")
    broken = server_window(a, failed)
    assert not broken.valid and broken.notes == ("scrape at 5.000 failed: HTTP 503",)


def test_nothing_looked_up_gives_no_rate() -> None:
    text = vllm_text(10.0, 20.0, 30.0, 40.0, 0.1)
    w = server_window(scrape(text, 0.0), scrape(text, 1.0))
    assert w.prefix_cache_queries == 0.0 and w.hit_rate is None


def test_custom_mapping() -> None:
    names = engine_names_from_mapping(
        {"engine": "trtllm", "prompt_tokens": "trt:prompt_total", "running": ["trt:active"]}
    )
    exposition = parse("trt:prompt_total 10\ntrt:active 3\n")
    s = read_exposition(exposition, names, t=0.0, url="u")
    assert s.values == {"prompt_tokens": 10.0, "running": 3.0}
    with pytest.raises(InputError, match="field 'prompt_tokens'"):
        engine_names_from_mapping({"prompt_tokens": 5}, path="map.json")


def test_metrics_url() -> None:
    assert metrics_url("http://h:8000") == "http://h:8000/metrics"
    assert metrics_url("http://h:8000/v1/") == "http://h:8000/metrics"
    assert metrics_url("http://h:8000/metrics") == "http://h:8000/metrics"


@pytest.fixture
async def vllm_server() -> AsyncIterator[tuple[str, list[int]]]:
    """A local server whose vLLM counters advance by a fixed step on every scrape."""
    served = [0]

    async def metrics(request: web.Request) -> web.Response:
        k = served[0]
        served[0] += 1
        body = vllm_text(600.0 * k, 1000.0 * k, 1000.0 * k, 50.0 * k, 0.1 * (k % 5))
        return web.Response(text=body, content_type="text/plain")

    async def broken(request: web.Request) -> web.Response:
        return web.Response(status=503, text="down")

    async def in_pieces(request: web.Request) -> web.StreamResponse:
        """The exposition in two chunks, the second a moment later (a loaded server's)."""
        body = vllm_text(600.0, 1000.0, 1000.0, 50.0, 0.1).encode()
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        cut = body.index(b"model_name", len(body) // 2) + 1
        await response.write(body[:cut])
        await asyncio.sleep(0.05)
        await response.write(body[cut:])
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/down/metrics", broken)
    app.router.add_get("/pieces/metrics", in_pieces)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}", served
    await runner.cleanup()


async def test_scraper_over_http(vllm_server: tuple[str, list[int]], tmp_path: Path) -> None:
    base, served = vllm_server
    path = tmp_path / "server_metrics.jsonl"
    scraper = ServerMetricsScraper(base + "/v1", path=path, filters={"engine": "0"})
    try:
        first = await scraper.scrape()
        await scraper.start_periodic(0.02)
        await asyncio.sleep(0.15)
        await scraper.stop_periodic()
        last = await scraper.scrape()
    finally:
        await scraper.aclose()
    assert first.ok and first.engine == "vllm"
    steps = served[0] - 1
    assert steps >= 3
    window = scraper.window(first, last)
    # Only engine 0 (two thirds of each count) passes the filter.
    assert window.prefix_cache_queries == pytest.approx(1000.0 * steps * 2 / 3)
    assert window.hit_rate == pytest.approx(0.6)
    assert window.running is not None and window.running.scrapes == len(scraper.scrapes)
    assert window.running.mean == pytest.approx(4.0)
    assert read_jsonl(path, ServerScrape).items == scraper.scrapes


async def test_a_body_that_arrives_in_pieces_is_read_whole(
    vllm_server: tuple[str, list[int]],
) -> None:
    """vLLM under load sent its /metrics in chunks; the scraper read only the first, and the
    exposition failed at a line cut mid-label (`expected '=' after label m`)."""
    base, _ = vllm_server
    scraper = ServerMetricsScraper(base + "/pieces")
    try:
        scrape = await scraper.scrape()
    finally:
        await scraper.aclose()
    assert scrape.ok, scrape.error
    assert scrape.values["prefix_cache_queries"] == pytest.approx(1000.0)


async def test_scraper_records_failures(vllm_server: tuple[str, list[int]]) -> None:
    base, _ = vllm_server
    down = ServerMetricsScraper(base + "/down")
    unreachable = ServerMetricsScraper("http://127.0.0.1:9", timeout_s=1.0)
    try:
        failed = await down.scrape()
        refused = await unreachable.scrape()
    finally:
        await down.aclose()
        await unreachable.aclose()
    assert failed.error == "HTTP 503" and not failed.ok
    assert refused.error and not refused.ok


@pytest.mark.engine
async def test_llama_server_metrics_count_a_completion(llama_server: LocalEngine) -> None:
    scraper = ServerMetricsScraper(llama_server.url)
    body = {
        "model": llama_server.model,
        "messages": [{"role": "user", "content": "count the tokens of this prompt, please"}],
        "max_tokens": 4,
    }
    try:
        before = await scraper.scrape()
        async with (
            aiohttp.ClientSession() as session,
            session.post(f"{llama_server.url}/v1/chat/completions", json=body) as response,
        ):
            assert response.status == 200
            usage = (await response.json())["usage"]
        after = await scraper.scrape()
    finally:
        await scraper.aclose()
    assert before.ok and after.ok
    assert after.engine == "llamacpp" and scraper.engine is LLAMACPP
    window = scraper.window(before, after)
    assert window.valid
    assert window.uncached_prompt_tokens is not None and window.uncached_prompt_tokens > 0
    assert window.generation_tokens == usage["completion_tokens"]
    if window.prompt_tokens is not None:  # builds with the cached-token counter
        assert window.prompt_tokens == usage["prompt_tokens"]
