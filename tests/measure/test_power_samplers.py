"""Power samplers: NVML and AMD SMI replaced at the library boundary, a DCGM exporter read over
HTTP, commands that print watts, the `--power` spec, and the recorder's thread."""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
import types
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import orjson
import pytest
from aiohttp import web

import agentload.measure.power_samplers as power_samplers
from agentload.clock import now
from agentload.errors import AgentloadError, InputError
from agentload.measure.power import integrate
from agentload.measure.power_recorder import PowerRecorder
from agentload.measure.power_samplers import (
    AmdSmiSampler,
    AssumedPower,
    CommandSampler,
    NvmlSampler,
    PrometheusSampler,
    SamplerError,
)
from agentload.measure.power_spec import parse_power_spec, power_spec_from_options
from agentload.measure.prometheus import parse
from agentload.measure.window import Window
from agentload.results.jsonl import read_jsonl
from agentload.results.samples import PowerSample

# --- NVML, replaced at the library boundary ---------------------------------------------------


class FakeNvmlError(Exception):
    """Stands in for pynvml.NVMLError."""


def fake_pynvml(
    power_mw: Callable[[int, int], int],
    energy_mj: Callable[[int, int], int] | None,
    count: int = 2,
) -> types.ModuleType:
    """A `pynvml` exposing the functions the sampler calls. Reading k of device d returns
    power_mw(d, k) and energy_mj(d, k); energy_mj None means no energy counter."""
    module = types.ModuleType("pynvml")
    reads = {"power": [0] * count, "energy": [0] * count}
    module.NVMLError = FakeNvmlError  # type: ignore[attr-defined]
    module.shutdowns = 0  # type: ignore[attr-defined]

    def init() -> None:
        return None

    def shutdown() -> None:
        module.shutdowns += 1  # type: ignore[attr-defined]

    def get_power(handle: int) -> int:
        k = reads["power"][handle]
        reads["power"][handle] += 1
        return power_mw(handle, k)

    def get_energy(handle: int) -> int:
        if energy_mj is None:
            raise FakeNvmlError("Not Supported")
        k = reads["energy"][handle]
        reads["energy"][handle] += 1
        return energy_mj(handle, k)

    module.nvmlInit = init  # type: ignore[attr-defined]
    module.nvmlShutdown = shutdown  # type: ignore[attr-defined]
    module.nvmlDeviceGetCount = lambda: count  # type: ignore[attr-defined]
    module.nvmlDeviceGetHandleByIndex = lambda i: i  # type: ignore[attr-defined]
    module.nvmlDeviceGetPowerUsage = get_power  # type: ignore[attr-defined]
    module.nvmlDeviceGetTotalEnergyConsumption = get_energy  # type: ignore[attr-defined]
    return module


def script_clock(start: float, step: float) -> Callable[[], float]:
    """Reading k is taken at start + k * step (the sampler asks the clock twice per reading)."""
    ticks = itertools.count()
    return lambda: start + (next(ticks) // 2) * step


def test_nvml_samples_and_energy_match_the_script(monkeypatch: pytest.MonkeyPatch) -> None:
    def power(device: int, k: int) -> int:
        return 300_000 + 10_000 * k + 50_000 * device  # mW

    def energy(device: int, k: int) -> int:
        # The energy check at open() is reading 0; the scripted readings start at 1.
        return 7_000_000_000 + device * 1_000_000 + 25_000 * k * (device + 1)  # mJ

    module = fake_pynvml(power, energy)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    sampler = NvmlSampler(interval_s=0.1, clock=script_clock(500.0, 0.1))
    sampler.open()
    assert sampler.has_energy_counter
    samples = [sampler.read() for _ in range(10)]
    sampler.close()
    assert module.shutdowns == 1
    for k, sample in enumerate(samples):
        assert sample.t == pytest.approx(500.0 + 0.1 * k)
        assert sample.devices == ("0", "1")
        assert sample.device_watts == pytest.approx((300.0 + 10.0 * k, 350.0 + 10.0 * k))
        expected_mj = energy(0, k + 1) + energy(1, k + 1)
        assert sample.energy_j == pytest.approx(expected_mj / 1000.0)
    # Counter difference between readings 2 and 8: (25 + 50) J per reading, 6 readings.
    figures = integrate(samples, Window(samples[2].t, samples[8].t), source="nvml", max_gap_s=1)
    assert figures.valid
    assert figures.energy_j == pytest.approx(6 * 75.0)
    assert figures.mean_watts == pytest.approx(6 * 75.0 / 0.6)


def test_nvml_without_energy_counter_integrates_power(monkeypatch: pytest.MonkeyPatch) -> None:
    module = fake_pynvml(lambda d, k: 200_000 + 20_000 * k, None, count=4)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    sampler = NvmlSampler([1, 3], clock=script_clock(0.0, 0.5))
    sampler.open()
    assert not sampler.has_energy_counter
    samples = [sampler.read() for _ in range(5)]
    assert [s.devices for s in samples] == [("1", "3")] * 5
    assert [s.watts for s in samples] == pytest.approx([400.0, 440.0, 480.0, 520.0, 560.0])
    assert all(s.energy_j is None for s in samples)
    figures = integrate(samples, Window(0.0, 2.0), source="nvml", max_gap_s=1)
    # Trapezoids of 0.5 s: (400+440)/2 + (440+480)/2 + (480+520)/2 + (520+560)/2, times 0.5.
    assert figures.energy_j == pytest.approx(0.5 * (420 + 460 + 500 + 540))


def test_nvml_unavailable_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    module = fake_pynvml(lambda d, k: 1, None, count=2)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    with pytest.raises(AgentloadError, match=r"^power source nvml: no GPU 5 \(found 2"):
        NvmlSampler([0, 5]).open()

    def broken_init() -> None:
        raise FakeNvmlError("Driver Not Loaded")

    module.nvmlInit = broken_init  # type: ignore[attr-defined]
    with pytest.raises(AgentloadError, match="cannot initialise NVML: Driver Not Loaded"):
        NvmlSampler().open()
    monkeypatch.setitem(sys.modules, "pynvml", None)  # an import of it now fails
    with pytest.raises(AgentloadError, match="nvidia-ml-py is not installed"):
        NvmlSampler().open()


def test_recorder_thread_writes_samples_and_integrates(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    t0 = now()

    def energy(device: int, k: int) -> int:
        return int((now() - t0) * 250.0 * 1000.0)  # 250 W per GPU, mJ

    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(lambda d, k: 250_000, energy))
    path = tmp_path / "power.jsonl"
    recorder = PowerRecorder(NvmlSampler(interval_s=0.02), path=path)
    with recorder:
        start = now() + 0.05
        window = Window(start, start + 0.3)
        figures = asyncio.run(recorder.window_figures(window))
    samples = recorder.samples
    assert not recorder.running and recorder.failures == 0
    assert len(samples) >= 10
    assert read_jsonl(path, PowerSample).items == samples
    assert figures.valid and figures.source == "nvml"
    assert figures.mean_watts == pytest.approx(500.0, rel=0.02)
    assert figures.coverage == pytest.approx(1.0)


# --- AMD SMI, replaced at the library boundary ------------------------------------------------


def test_amdsmi_reads_socket_power_and_energy(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("amdsmi")
    ticks = {"a": 0, "b": 0}

    def energy(handle: str) -> dict[str, float]:
        ticks[handle] += 1
        # 15.3 uJ per tick, as MI300 reports; older amdsmi names the counter "power".
        key = "energy_accumulator" if handle == "a" else "power"
        return {key: 1_000_000 * ticks[handle], "counter_resolution": 15.3, "timestamp": 0}

    module.amdsmi_init = lambda: None  # type: ignore[attr-defined]
    module.amdsmi_shut_down = lambda: None  # type: ignore[attr-defined]
    module.amdsmi_get_processor_handles = lambda: ["a", "b"]  # type: ignore[attr-defined]
    module.amdsmi_get_power_info = lambda h: {  # type: ignore[attr-defined]
        "socket_power": "N/A",
        "current_socket_power": 700 if h == "a" else 650,
        "average_socket_power": 1,
    }
    module.amdsmi_get_energy_count = energy  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "amdsmi", module)
    sampler = AmdSmiSampler(clock=script_clock(10.0, 1.0))
    sampler.open()
    first, second = sampler.read(), sampler.read()
    assert first.watts == 1350.0 and first.devices == ("0", "1")
    assert second.energy_j - first.energy_j == pytest.approx(2 * 1_000_000 * 15.3e-6)


# --- a DCGM exporter over HTTP ----------------------------------------------------------------

GPU_WATTS = {"0": 101.5, "1": 202.25, "2": 303.0, "3": 404.125}


def dcgm_text(t: float, t0: float) -> str:
    lines = [
        "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).",
        "# TYPE DCGM_FI_DEV_POWER_USAGE gauge",
    ]
    for gpu, watts in GPU_WATTS.items():
        labels = f'gpu="{gpu}",UUID="GPU-{gpu}",device="nvidia{gpu}",modelName="NVIDIA H200"'
        lines.append(f"DCGM_FI_DEV_POWER_USAGE{{{labels}}} {watts:.6f}")
    lines += ["# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter"]
    for gpu, watts in GPU_WATTS.items():
        labels = f'gpu="{gpu}",UUID="GPU-{gpu}",device="nvidia{gpu}",modelName="NVIDIA H200"'
        millijoules = int(9e9 + watts * (t - t0) * 1000)
        lines.append(f"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{{labels}}} {millijoules}")
    lines.append('DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-0"} 99')
    return "\n".join(lines) + "\n"


@pytest.fixture
async def dcgm_exporter() -> AsyncIterator[str]:
    """A local DCGM-exporter look-alike whose energy counters advance with real time."""
    t0 = now()

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(text=dcgm_text(now(), t0), content_type="text/plain")

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}/metrics"
    await runner.cleanup()


async def test_dcgm_endpoint_sums_gpus(dcgm_exporter: str) -> None:
    sampler = parse_power_spec(f"dcgm:{dcgm_exporter}").create()
    sample = await asyncio.to_thread(sampler.read)
    assert sample is not None
    assert sample.devices == ("0", "1", "2", "3")
    assert sample.watts == pytest.approx(sum(GPU_WATTS.values()))
    assert sample.energy_j == pytest.approx(4 * 9e6, rel=1e-3)
    some = parse_power_spec(f"prometheus:{dcgm_exporter}#gpu=1,3").create()
    chosen = await asyncio.to_thread(some.read)
    assert chosen.devices == ("1", "3")
    assert chosen.watts == pytest.approx(GPU_WATTS["1"] + GPU_WATTS["3"])


@pytest.mark.slow
async def test_dcgm_recorder_measures_the_window(dcgm_exporter: str, tmp_path: Path) -> None:
    spec = parse_power_spec(f"prometheus:{dcgm_exporter}", interval_s=0.05)
    recorder = PowerRecorder(spec.create(), path=tmp_path / "power.jsonl")
    await asyncio.to_thread(recorder.start)
    try:
        start = now() + 0.1
        figures = await recorder.window_figures(Window(start, start + 0.5))
    finally:
        await asyncio.to_thread(recorder.stop)
    assert figures.valid and figures.source == "prometheus"
    assert figures.mean_watts == pytest.approx(sum(GPU_WATTS.values()), rel=0.02)
    lines = (tmp_path / "power.jsonl").read_bytes().splitlines()
    assert len(lines) == len(recorder.samples) >= 5
    assert orjson.loads(lines[0])["devices"] == ["0", "1", "2", "3"]


def test_prometheus_sampler_skips_a_stale_reading_and_names_missing_series(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sampler = PrometheusSampler("http://unused/metrics")
    text = dcgm_text(5.0, 0.0)
    first = sampler.sample_from(parse(text), 1.0)
    assert first.watts == pytest.approx(sum(GPU_WATTS.values()))
    other = PrometheusSampler("http://x/metrics", metric="node_power_watts", energy_metric=None)
    with pytest.raises(SamplerError, match="no series node_power_watts"):
        other.sample_from(parse(text), 1.0)
    dup = PrometheusSampler("http://x/metrics", metric="DCGM_FI_DEV_GPU_UTIL")
    doubled = parse(
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",a="1"} 1\nDCGM_FI_DEV_GPU_UTIL{gpu="0",a="2"} 1\n'
    )
    with pytest.raises(SamplerError, match="several"):
        dup.sample_from(doubled, 1.0)

    texts: Iterator[str] = iter([text, text, dcgm_text(6.0, 0.0)])
    monkeypatch.setattr(power_samplers, "fetch_text", lambda url, timeout_s: next(texts))
    assert sampler.read() is not None
    assert sampler.read() is None  # the exporter repeated its last values
    assert sampler.read() is not None


def test_unreachable_endpoint_fails_start_in_one_line() -> None:
    recorder = PowerRecorder(PrometheusSampler("http://127.0.0.1:9/metrics", timeout_s=1.0))
    with pytest.raises(AgentloadError) as caught:
        recorder.start()
    assert str(caught.value).startswith("power source prometheus: http://127.0.0.1:9/metrics")
    assert "\n" not in str(caught.value)


# --- commands ---------------------------------------------------------------------------------


def test_command_prints_watts() -> None:
    one = CommandSampler("echo 123.5").read()
    assert one.watts == 123.5 and one.devices == ("0",) and one.energy_j is None
    many = CommandSampler("printf '100\\n\\n200.5 W\\n'").read()
    assert many.device_watts == (100.0, 200.5) and many.watts == 300.5
    piped = parse_power_spec("command:\"echo '41 1' | tr ' ' '\\n'\"").create().read()
    assert piped.watts == 42.0


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("echo N/A", "printed 'N/A', expected watts"),
        ("echo -5", "expected watts >= 0"),
        ("true", "printed nothing"),
        ("echo oops >&2; exit 3", "exited with status 3: oops"),
    ],
)
def test_bad_command_output(command: str, why: str) -> None:
    with pytest.raises(SamplerError, match=why):
        CommandSampler(command).read()
    recorder = PowerRecorder(CommandSampler(command))
    with pytest.raises(AgentloadError) as caught:
        recorder.start()
    assert str(caught.value).startswith("power source command: ")
    assert "\n" not in str(caught.value)


def test_command_timeout() -> None:
    with pytest.raises(SamplerError, match=r"took over 0\.2 s"):
        CommandSampler("sleep 5", timeout_s=0.2).read()


# --- specs ------------------------------------------------------------------------------------


def test_good_specs() -> None:
    assert parse_power_spec("nvml").devices is None
    assert parse_power_spec("NVML:0, 1").devices == (0, 1)
    assert parse_power_spec("nvml:all").devices is None
    assert parse_power_spec("amdsmi:2").kind == "amdsmi"
    spec = parse_power_spec(
        "prometheus:http://h:9400/metrics#metric=node_gpu_watts&energy_metric=none"
        "&unit=mW&Hostname=n1&gpu=0,1",
        interval_s=0.5,
    )
    assert spec.url == "http://h:9400/metrics"
    assert spec.metric == "node_gpu_watts" and spec.energy_metric is None
    assert spec.power_unit == "mW"
    assert dict(spec.filters) == {"Hostname": ("n1",), "gpu": ("0", "1")}
    sampler = spec.create()
    assert isinstance(sampler, PrometheusSampler) and sampler.interval_s == 0.5
    default = parse_power_spec("prometheus:https://h/metrics")
    assert default.metric == "DCGM_FI_DEV_POWER_USAGE"
    assert default.energy_metric == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
    command = parse_power_spec(
        'command:"nvidia-smi --query-gpu=power.draw --format=csv,noheader,nounits"'
    )
    assert command.command == "nvidia-smi --query-gpu=power.draw --format=csv,noheader,nounits"
    assert parse_power_spec("nvml").create().interval_s == 0.1
    assert command.create().interval_s == 1.0


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("", "unknown power source ''"),
        ("ipmi", "unknown power source 'ipmi'"),
        ("nvml:0,x", "bad GPU index 'x'"),
        ("nvml:1,1", "listed twice"),
        ("prometheus:", "needs a URL"),
        ("prometheus:host:9400/metrics", "bad Prometheus URL"),
        ("prometheus:http://h/metrics#unit=GW", "unit 'GW'"),
        ("prometheus:http://h/metrics#energy_unit=cal", "energy_unit 'cal'"),
        ("prometheus:http://h/metrics#metric=", "metric needs a metric name"),
        ("prometheus:http://h/metrics#justaword", "bad option 'justaword'"),
        ("command:", "needs a command line"),
        ("command:''", "needs a command line"),
    ],
)
def test_bad_specs_are_one_line(spec: str, why: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_power_spec(spec)
    message = str(caught.value)
    assert message.startswith("--power: ")
    assert why in message
    assert "\n" not in message


def test_options_choose_measured_or_assumed() -> None:
    assert power_spec_from_options(None) is None
    assumed = power_spec_from_options(None, 1000.0, 8)
    assert assumed is not None and assumed.kind == "assumed"
    sampler = assumed.create()
    assert isinstance(sampler, AssumedPower) and sampler.total_watts == 8000.0
    recorder = PowerRecorder(sampler)
    recorder.start()
    figures = recorder.figures(Window(0.0, 10.0))
    assert figures.assumed and figures.valid and figures.mean_watts == 8000.0
    assert figures.source == "assumed"
    assert power_spec_from_options(None, 700.0).gpus == 1  # type: ignore[union-attr]
    assert power_spec_from_options("nvml:0").kind == "nvml"  # type: ignore[union-attr]
    with pytest.raises(InputError, match="not both"):
        power_spec_from_options("nvml", 1000.0, 8)
    with pytest.raises(InputError, match="--gpu-watts: must be > 0 W"):
        power_spec_from_options(None, -1.0)
    with pytest.raises(InputError, match="--gpus: must be >= 1"):
        power_spec_from_options(None, 100.0, 0)
    with pytest.raises(InputError, match="--power-interval: "):
        parse_power_spec("nvml", interval_s=0.0)


def test_recorder_counts_failed_readings(tmp_path: Path) -> None:
    flag = tmp_path / "fail"
    sampler = CommandSampler(f"test -e {flag} && exit 1; echo 10", interval_s=0.05)
    recorder = PowerRecorder(sampler)
    recorder.start()
    try:
        flag.touch()
        deadline = now() + 5.0
        while recorder.failures < 2 and now() < deadline:
            time.sleep(0.02)
    finally:
        recorder.stop()
    assert recorder.failures >= 2
    assert "exited with status 1" in (recorder.last_error or "")
    assert len(recorder.samples) >= 1
