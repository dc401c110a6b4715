"""Power samplers (NVML, AMD SMI, a Prometheus endpoint, a command, a declared constant), the
`--power` spec that chooses one, and the recorder that samples in a background thread.

Use:

    spec = power_spec_from_options(args.power, args.gpu_watts, args.gpus)   # None: no power
    recorder = PowerRecorder(spec.create(), path=results / "power.jsonl")
    recorder.start()            # raises AgentloadError (one line) if the source cannot be read
    ...
    figures = await recorder.window_figures(window)   # PowerFigures over exactly the window
    recorder.stop()

Sampling runs in a daemon thread, so a slow reading never blocks the client's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import math
import subprocess
import threading
import time
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentload.clock import now
from agentload.errors import AgentloadError, InputError
from agentload.measure.power import (
    JOULES_PER_MILLIJOULE,
    SOURCE_ASSUMED,
    WATTS_PER_MILLIWATT,
    JsonLinesAppender,
    PowerSample,
    WindowLike,
    assumed_figures,
    default_max_gap_s,
    integrate,
)
from agentload.measure.prometheus import Exposition, parse
from agentload.report.schema import PowerFigures

SPEC_FIELD = "--power"

NVML_INTERVAL_S = 0.1
AMDSMI_INTERVAL_S = 0.1
HTTP_INTERVAL_S = 1.0
COMMAND_INTERVAL_S = 1.0

HTTP_TIMEOUT_S = 5.0
"""Longest wait for one scrape of a Prometheus endpoint, s."""
HTTP_MAX_BYTES = 64 * 1024 * 1024
COMMAND_TIMEOUT_S = 10.0
"""Longest wait for one run of a power command, s."""
STOP_JOIN_S = 15.0
"""Longest wait for the sampling thread to finish its last reading when stopping, s."""
WAIT_POLL_S = 0.02

DCGM_POWER_METRIC = "DCGM_FI_DEV_POWER_USAGE"
"""DCGM exporter: power draw of each GPU, W."""
DCGM_ENERGY_METRIC = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
"""DCGM exporter: energy counter of each GPU, mJ."""
DEVICE_LABEL = "gpu"
"""The label that names a GPU in DCGM series; other endpoints are told apart by all labels."""
NO_METRIC = "none"

POWER_UNITS = {"W": 1.0, "mW": 1e-3, "kW": 1e3}
"""Watts per unit of a Prometheus power metric."""
ENERGY_UNITS = {"mJ": 1e-3, "J": 1.0, "kJ": 1e3, "uJ": 1e-6, "Wh": 3600.0, "kWh": 3.6e6}
"""Joules per unit of a Prometheus energy metric."""

AMD_POWER_KEYS = ("socket_power", "current_socket_power", "average_socket_power")
"""`amdsmi_get_power_info` fields in order of preference (W); 'N/A' where a part lacks one."""
AMD_ENERGY_KEYS = ("energy_accumulator", "power")
"""`amdsmi_get_energy_count` counter field (newer, older name); ticks of `counter_resolution` uJ."""
JOULES_PER_MICROJOULE = 1e-6

Kind = Literal["nvml", "amdsmi", "prometheus", "command", "assumed"]
KINDS = ("nvml", "amdsmi", "prometheus", "command")
SPEC_HELP = (
    "nvml[:0,1], amdsmi[:0,1], prometheus:URL[#metric=NAME&energy_metric=NAME&LABEL=V], "
    "dcgm:URL, command:CMD"
)


class SamplerError(Exception):
    """One reading failed (the recorder counts it and carries on)."""


class PowerSampler(ABC):
    """Reads the power of a set of accelerators. `open()` once, `read()` often, `close()`."""

    source: str
    """What `PowerFigures.source` says: nvml, amdsmi, prometheus, command or assumed."""
    interval_s: float
    assumed: bool = False

    def open(self) -> None:  # noqa: B027 - most samplers need no setup
        """Prepare to read; raise `AgentloadError` with a one-line reason if impossible."""

    @abstractmethod
    def read(self) -> PowerSample | None:
        """One reading; None when the source has nothing new; `SamplerError` when it failed."""

    def close(self) -> None:  # noqa: B027 - most samplers hold nothing
        """Release what `open()` took."""


# --- NVML -------------------------------------------------------------------------------------


def _import(module: str, package: str, source: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise AgentloadError(
            f"power source {source}: the Python package {package} is not installed"
        ) from None


def _select(count: int, devices: Sequence[int] | None, source: str) -> list[int]:
    if count == 0:
        raise AgentloadError(f"power source {source}: no GPU found")
    if devices is None:
        return list(range(count))
    missing = [i for i in devices if not 0 <= i < count]
    if missing:
        raise AgentloadError(
            f"power source {source}: no GPU {missing[0]} (found {count}, numbered from 0)"
        )
    return list(devices)


class NvmlSampler(PowerSampler):
    """NVIDIA GPUs through NVML (`nvidia-ml-py`): the energy counter where every selected GPU
    has one (Volta and newer), and the power reading of each GPU."""

    source = "nvml"

    def __init__(
        self,
        devices: Sequence[int] | None = None,
        *,
        interval_s: float = NVML_INTERVAL_S,
        clock: Callable[[], float] = now,
    ) -> None:
        self.devices = tuple(devices) if devices is not None else None
        self.interval_s = interval_s
        self._clock = clock
        self._nvml: Any = None
        self._handles: list[Any] = []
        self._ids: tuple[str, ...] = ()
        self.has_energy_counter = False

    def open(self) -> None:
        nvml = _import("pynvml", "nvidia-ml-py", self.source)
        try:
            nvml.nvmlInit()
        except nvml.NVMLError as exc:
            raise AgentloadError(f"power source nvml: cannot initialise NVML: {exc}") from None
        self._nvml = nvml
        try:
            indices = _select(int(nvml.nvmlDeviceGetCount()), self.devices, self.source)
            self._handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in indices]
            self._ids = tuple(str(i) for i in indices)
            self.has_energy_counter = True
            for handle in self._handles:
                try:
                    nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
                except nvml.NVMLError:
                    self.has_energy_counter = False
        except nvml.NVMLError as exc:
            self.close()
            raise AgentloadError(f"power source nvml: {exc}") from None
        except AgentloadError:
            self.close()
            raise

    def read(self) -> PowerSample:
        nvml = self._nvml
        if nvml is None:
            raise SamplerError("NVML is not open")
        before = self._clock()
        try:
            milliwatts = [nvml.nvmlDeviceGetPowerUsage(h) for h in self._handles]
            energy = None
            if self.has_energy_counter:
                millijoules = [nvml.nvmlDeviceGetTotalEnergyConsumption(h) for h in self._handles]
                energy = math.fsum(millijoules) * JOULES_PER_MILLIJOULE
        except nvml.NVMLError as exc:
            raise SamplerError(f"NVML: {exc}") from None
        after = self._clock()
        return PowerSample.of(
            (before + after) / 2,
            [mw * WATTS_PER_MILLIWATT for mw in milliwatts],
            self._ids,
            energy,
        )

    def close(self) -> None:
        if self._nvml is not None:
            with contextlib.suppress(Exception):
                self._nvml.nvmlShutdown()
            self._nvml = None


# --- AMD SMI ----------------------------------------------------------------------------------


class AmdSmiSampler(PowerSampler):
    """AMD GPUs through the `amdsmi` Python package: the energy counter where every selected
    GPU has one, and the socket power of each GPU."""

    source = "amdsmi"

    def __init__(
        self,
        devices: Sequence[int] | None = None,
        *,
        interval_s: float = AMDSMI_INTERVAL_S,
        clock: Callable[[], float] = now,
    ) -> None:
        self.devices = tuple(devices) if devices is not None else None
        self.interval_s = interval_s
        self._clock = clock
        self._smi: Any = None
        self._handles: list[Any] = []
        self._ids: tuple[str, ...] = ()
        self.has_energy_counter = False

    def open(self) -> None:
        smi = _import("amdsmi", "amdsmi", self.source)
        try:
            smi.amdsmi_init()
        except Exception as exc:
            raise AgentloadError(f"power source amdsmi: cannot initialise AMD SMI: {exc}") from None
        self._smi = smi
        try:
            handles = list(smi.amdsmi_get_processor_handles())
            indices = _select(len(handles), self.devices, self.source)
            self._handles = [handles[i] for i in indices]
            self._ids = tuple(str(i) for i in indices)
            for handle in self._handles:
                self._watts(handle)
            self.has_energy_counter = True
            for handle in self._handles:
                try:
                    self._energy(handle)
                except Exception:
                    self.has_energy_counter = False
        except AgentloadError:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise AgentloadError(f"power source amdsmi: {exc}") from None

    def _watts(self, handle: Any) -> float:
        info = self._smi.amdsmi_get_power_info(handle)
        for key in AMD_POWER_KEYS:
            value = info.get(key)
            if isinstance(value, int | float) and math.isfinite(value):
                return float(value)
        raise AgentloadError(
            f"power source amdsmi: no power reading (fields {', '.join(AMD_POWER_KEYS)})"
        )

    def _energy(self, handle: Any) -> float:
        info = self._smi.amdsmi_get_energy_count(handle)
        ticks = next((info[k] for k in AMD_ENERGY_KEYS if k in info), None)
        resolution = info.get("counter_resolution")
        if not isinstance(ticks, int | float) or not isinstance(resolution, int | float):
            raise SamplerError("no energy counter")
        return float(ticks) * float(resolution) * JOULES_PER_MICROJOULE

    def read(self) -> PowerSample:
        if self._smi is None:
            raise SamplerError("AMD SMI is not open")
        before = self._clock()
        try:
            watts = [self._watts(h) for h in self._handles]
            energy = None
            if self.has_energy_counter:
                energy = math.fsum(self._energy(h) for h in self._handles)
        except Exception as exc:
            raise SamplerError(f"AMD SMI: {exc}") from None
        after = self._clock()
        return PowerSample.of((before + after) / 2, watts, self._ids, energy)

    def close(self) -> None:
        if self._smi is not None:
            with contextlib.suppress(Exception):
                self._smi.amdsmi_shut_down()
            self._smi = None


# --- Prometheus (DCGM exporter) ---------------------------------------------------------------


def fetch_text(url: str, timeout_s: float = HTTP_TIMEOUT_S) -> str:
    """GET a URL as text (blocking), with a `SamplerError` naming what went wrong."""
    request = urllib.request.Request(url, headers={"Accept": "text/plain"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body = response.read(HTTP_MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise SamplerError(f"{url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SamplerError(f"{url}: {reason}") from None
    if len(body) > HTTP_MAX_BYTES:
        raise SamplerError(f"{url}: response larger than {HTTP_MAX_BYTES} bytes")
    return body.decode("utf-8", errors="replace")


class PrometheusSampler(PowerSampler):
    """Any Prometheus endpoint, a DCGM exporter by default: the power metric (summed over the
    matching series, one per GPU) and the energy counter when every GPU has one.

    A reading whose energy counter has not moved since the last one is the exporter repeating
    a stale value and is skipped (set dcgm-exporter's collection interval `-c` to 1000 ms or
    less, or its values lag by up to 30 s).
    """

    source = "prometheus"

    def __init__(
        self,
        url: str,
        *,
        metric: str = DCGM_POWER_METRIC,
        energy_metric: str | None = DCGM_ENERGY_METRIC,
        filters: Mapping[str, Sequence[str]] | None = None,
        power_unit: str = "W",
        energy_unit: str = "mJ",
        interval_s: float = HTTP_INTERVAL_S,
        timeout_s: float = HTTP_TIMEOUT_S,
        clock: Callable[[], float] = now,
    ) -> None:
        self.url = url
        self.metric = metric
        self.energy_metric = energy_metric
        self.filters = {k: tuple(v) for k, v in (filters or {}).items()}
        self._watts_per_unit = POWER_UNITS[power_unit]
        self._joules_per_unit = ENERGY_UNITS[energy_unit]
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self._clock = clock
        self._last_energy: float | None = None

    def read(self) -> PowerSample | None:
        before = self._clock()
        text = fetch_text(self.url, self.timeout_s)
        after = self._clock()
        try:
            exposition = parse(text, source=self.url)
        except InputError as exc:
            raise SamplerError(str(exc)) from None
        sample = self.sample_from(exposition, (before + after) / 2)
        if sample.energy_j is not None:
            if sample.energy_j == self._last_energy:
                return None
            self._last_energy = sample.energy_j
        return sample

    def sample_from(self, exposition: Exposition, t: float) -> PowerSample:
        """The reading one exposition holds, taken at t (local time: exposition timestamps come
        from another clock and are ignored)."""
        power = exposition.series(self.metric, self.filters)
        if not power:
            where = f" with {_filters_text(self.filters)}" if self.filters else ""
            raise SamplerError(f"{self.url}: no series {self.metric}{where}")
        ids = [_device_id(s.labels) for s in power]
        if len(set(ids)) != len(ids):
            raise SamplerError(
                f"{self.url}: several {self.metric} series per GPU; add label filters"
            )
        watts = [s.value * self._watts_per_unit for s in power]
        if not all(math.isfinite(w) and w >= 0 for w in watts):
            raise SamplerError(f"{self.url}: {self.metric} is not a finite power")
        energy = None
        if self.energy_metric:
            by_id = {
                _device_id(s.labels): s.value
                for s in exposition.series(self.energy_metric, self.filters)
            }
            values = [by_id.get(i) for i in ids]
            if all(v is not None and math.isfinite(v) for v in values):
                energy = math.fsum(values) * self._joules_per_unit  # type: ignore[arg-type]
        return PowerSample.of(t, watts, ids, energy)


def _device_id(labels: tuple[tuple[str, str], ...]) -> str:
    for key, value in labels:
        if key == DEVICE_LABEL:
            return value
    return ",".join(f"{k}={v}" for k, v in labels) or "-"


def _filters_text(filters: Mapping[str, Sequence[str]]) -> str:
    return ", ".join(f"{k}={'|'.join(v)}" for k, v in filters.items())


# --- a command --------------------------------------------------------------------------------


class CommandSampler(PowerSampler):
    """A shell command that prints watts: one number, or one per line (one per device, summed).
    A trailing unit `W` is allowed. Run with `/bin/sh -c`, so pipes work."""

    source = "command"

    def __init__(
        self,
        command: str,
        *,
        interval_s: float = COMMAND_INTERVAL_S,
        timeout_s: float = COMMAND_TIMEOUT_S,
        clock: Callable[[], float] = now,
    ) -> None:
        self.command = command
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self._clock = clock

    def read(self) -> PowerSample:
        before = self._clock()
        try:
            done = subprocess.run(
                ["/bin/sh", "-c", self.command],
                capture_output=True,
                text=True,
                timeout=self.timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise SamplerError(f"command took over {self.timeout_s:g} s") from None
        except OSError as exc:
            raise SamplerError(f"command could not run: {exc.strerror}") from None
        after = self._clock()
        if done.returncode != 0:
            said = (done.stderr.strip().splitlines() or [""])[0][:200]
            raise SamplerError(f"command exited with status {done.returncode}: {said}".rstrip(": "))
        watts = parse_watts(done.stdout)
        return PowerSample.of(
            (before + after) / 2, watts, [str(i) for i in range(len(watts))], None
        )


def parse_watts(text: str) -> list[float]:
    """Watts from a command's output: one number a line (blank lines skipped, `W` allowed)."""
    values = []
    for line in text.splitlines():
        word = line.strip()
        if not word:
            continue
        if word.endswith("W"):
            word = word[:-1].rstrip()
        try:
            value = float(word)
        except ValueError:
            raise SamplerError(f"command printed {line.strip()[:40]!r}, expected watts") from None
        if not (math.isfinite(value) and value >= 0):
            raise SamplerError(f"command printed {line.strip()[:40]!r}, expected watts >= 0")
        values.append(value)
    if not values:
        raise SamplerError("command printed nothing, expected watts")
    return values


# --- a declared constant ----------------------------------------------------------------------


class AssumedPower(PowerSampler):
    """A declared power per GPU times the GPU count; marked assumed everywhere."""

    source = SOURCE_ASSUMED
    assumed = True

    def __init__(self, watts_per_gpu: float, gpus: int = 1) -> None:
        self.watts_per_gpu = watts_per_gpu
        self.gpus = gpus
        self.interval_s = math.inf

    @property
    def total_watts(self) -> float:
        return self.watts_per_gpu * self.gpus

    def read(self) -> PowerSample:
        return PowerSample.of(
            now(), [self.watts_per_gpu] * self.gpus, [str(i) for i in range(self.gpus)]
        )


# --- the spec ---------------------------------------------------------------------------------


class PowerSpec(BaseModel):
    """A chosen power source, parsed from `--power` (or `--gpu-watts`/`--gpus`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Kind
    devices: tuple[int, ...] | None = None
    """GPU indices for nvml/amdsmi; None for all."""
    url: str | None = None
    metric: str = DCGM_POWER_METRIC
    energy_metric: str | None = DCGM_ENERGY_METRIC
    filters: tuple[tuple[str, tuple[str, ...]], ...] = ()
    power_unit: str = "W"
    energy_unit: str = "mJ"
    command: str | None = None
    watts_per_gpu: float | None = Field(default=None, gt=0)
    gpus: int = Field(default=1, ge=1)
    interval_s: float | None = Field(default=None, gt=0)
    """Sampling interval, s; None for the source's default."""

    @model_validator(mode="after")
    def _check(self) -> PowerSpec:
        needs = {"prometheus": ("url", self.url), "command": ("command", self.command)}
        needs["assumed"] = ("watts_per_gpu", self.watts_per_gpu)
        if self.kind in needs and needs[self.kind][1] is None:
            raise ValueError(f"a {self.kind} power source needs {needs[self.kind][0]}")
        return self

    @property
    def source(self) -> str:
        return SOURCE_ASSUMED if self.kind == "assumed" else self.kind

    def describe(self) -> str:
        """One line for manifests and reports."""
        if self.kind == "assumed":
            return f"assumed {self.watts_per_gpu:g} W x {self.gpus} GPU(s)"
        if self.kind in ("nvml", "amdsmi"):
            which = (
                "all GPUs" if self.devices is None else "GPUs " + ",".join(map(str, self.devices))
            )
            return f"{self.kind} ({which})"
        if self.kind == "prometheus":
            return f"prometheus {self.url} ({self.metric})"
        return f"command {self.command!r}"

    def create(self) -> PowerSampler:
        """A sampler for this spec (nothing is opened yet; the asserts hold by validation)."""
        interval = {"interval_s": self.interval_s} if self.interval_s else {}
        if self.kind == "nvml":
            return NvmlSampler(self.devices, **interval)
        if self.kind == "amdsmi":
            return AmdSmiSampler(self.devices, **interval)
        if self.kind == "prometheus":
            assert self.url is not None
            return PrometheusSampler(
                self.url,
                metric=self.metric,
                energy_metric=self.energy_metric,
                filters=dict(self.filters),
                power_unit=self.power_unit,
                energy_unit=self.energy_unit,
                **interval,
            )
        if self.kind == "command":
            assert self.command is not None
            return CommandSampler(self.command, **interval)
        assert self.watts_per_gpu is not None
        return AssumedPower(self.watts_per_gpu, self.gpus)


def _bad(reason: str) -> InputError:
    return InputError(reason, field=SPEC_FIELD)


def parse_power_spec(spec: str, *, interval_s: float | None = None) -> PowerSpec:
    """Parse `--power`: nvml[:0,1], amdsmi[:0,1], prometheus:URL[#...], dcgm:URL, command:CMD."""
    if interval_s is not None and not (math.isfinite(interval_s) and interval_s > 0):
        raise InputError(
            f"sampling interval must be > 0 s, got {interval_s:g}", field="--power-interval"
        )
    text = spec.strip()
    kind, sep, rest = text.partition(":")
    kind = kind.strip().lower()
    rest = rest.strip()
    if kind in ("nvml", "amdsmi"):
        devices = _devices(rest) if sep and rest and rest.lower() != "all" else None
        return PowerSpec(kind=kind, devices=devices, interval_s=interval_s)  # type: ignore[arg-type]
    if kind in ("prometheus", "dcgm"):
        if not rest:
            raise _bad(f"{kind} needs a URL, e.g. {kind}:http://host:9400/metrics")
        return _prometheus_spec(rest, interval_s)
    if kind == "command":
        command = _unquote(rest)
        if not command:
            raise _bad("command needs a command line, e.g. command:'nvidia-smi ...'")
        return PowerSpec(kind="command", command=command, interval_s=interval_s)
    shown = text if len(text) <= 40 else text[:37] + "..."
    raise _bad(f"unknown power source {shown!r}; expected {SPEC_HELP}")


def _devices(text: str) -> tuple[int, ...]:
    devices = []
    for part in text.split(","):
        word = part.strip()
        if not word.isdigit():
            raise _bad(f"bad GPU index {word!r}; expected a list such as 0,1")
        devices.append(int(word))
    if len(set(devices)) != len(devices):
        raise _bad(f"GPU index listed twice in {text!r}")
    return tuple(devices)


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1].strip()
    return text


def _prometheus_spec(text: str, interval_s: float | None) -> PowerSpec:
    url, _, fragment = _unquote(text).partition("#")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise _bad(f"bad Prometheus URL {url!r}; expected http://host:port/metrics")
    options: dict[str, Any] = {}
    filters: dict[str, tuple[str, ...]] = {}
    for key, value in parse_qsl(fragment, keep_blank_values=True):
        if key in ("metric", "energy_metric"):
            if not value:
                raise _bad(f"{key} needs a metric name")
            options[key] = None if value == NO_METRIC and key == "energy_metric" else value
        elif key == "unit":
            if value not in POWER_UNITS:
                raise _bad(f"unit {value!r}: expected one of {', '.join(POWER_UNITS)}")
            options["power_unit"] = value
        elif key == "energy_unit":
            if value not in ENERGY_UNITS:
                raise _bad(f"energy_unit {value!r}: expected one of {', '.join(ENERGY_UNITS)}")
            options["energy_unit"] = value
        elif not key or not value:
            raise _bad(f"bad option {key or value!r} after '#'; expected NAME=VALUE")
        else:
            filters[key] = tuple(v for v in value.split(",") if v)
    return PowerSpec(
        kind="prometheus",
        url=url,
        filters=tuple(filters.items()),
        interval_s=interval_s,
        **options,
    )


def power_spec_from_options(
    power: str | None,
    gpu_watts: float | None = None,
    gpus: int | None = None,
    *,
    interval_s: float | None = None,
) -> PowerSpec | None:
    """The spec the CLI options ask for: `--power`, or `--gpu-watts` x `--gpus`; None for none."""
    if power and gpu_watts is not None:
        raise InputError(
            "give either --power (measured) or --gpu-watts (assumed), not both", field="--power"
        )
    if gpus is not None and gpus < 1:
        raise InputError(f"must be >= 1, got {gpus}", field="--gpus")
    if gpu_watts is not None:
        if not (math.isfinite(gpu_watts) and gpu_watts > 0):
            raise InputError(f"must be > 0 W, got {gpu_watts:g}", field="--gpu-watts")
        return PowerSpec(kind="assumed", watts_per_gpu=gpu_watts, gpus=gpus or 1)
    if power:
        return parse_power_spec(power, interval_s=interval_s)
    return None


# --- the recorder -----------------------------------------------------------------------------


class PowerRecorder:
    """Samples a power source at its interval in a daemon thread, keeping every sample and
    appending each to `power.jsonl` as it comes. Readings that fail are counted, not fatal:
    the gaps they leave show in the coverage of each window."""

    def __init__(
        self,
        sampler: PowerSampler,
        *,
        path: str | Path | None = None,
        max_gap_s: float | None = None,
    ) -> None:
        self.sampler = sampler
        self.path = Path(path) if path is not None else None
        self.max_gap_s = (
            max_gap_s if max_gap_s is not None else default_max_gap_s(sampler.interval_s)
        )
        self.failures = 0
        self.skipped = 0
        """Readings with nothing new (a stale exporter value)."""
        self.last_error: str | None = None
        self._samples: list[PowerSample] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._writer: JsonLinesAppender | None = None
        self._started = False

    @property
    def source(self) -> str:
        return self.sampler.source

    @property
    def assumed(self) -> bool:
        return self.sampler.assumed

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Open the source, take a first reading (errors here are fatal, one line), then sample
        in the background."""
        if self._started:
            raise RuntimeError("power recorder already started")
        self._started = True
        if self.sampler.assumed:
            return
        if self.path is not None:
            self._writer = JsonLinesAppender(self.path)
        try:
            self.sampler.open()
            try:
                first = self.sampler.read()
            except SamplerError as exc:
                self.sampler.close()
                raise AgentloadError(f"power source {self.source}: {exc}") from None
        except BaseException:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            raise
        if first is not None:
            self._keep(first)
        self._thread = threading.Thread(target=self._loop, name="agentload-power", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Take a last reading, stop the thread, close the source and the file."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join(STOP_JOIN_S)
            self._thread = None
            self.sampler.close()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> PowerRecorder:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def samples(self) -> list[PowerSample]:
        """A copy of the samples so far, in time order."""
        with self._lock:
            return list(self._samples)

    def figures(self, window: WindowLike) -> PowerFigures:
        """PowerFigures over exactly the window from the samples so far (see `integrate`)."""
        if isinstance(self.sampler, AssumedPower):
            return assumed_figures(self.sampler.total_watts, window)
        return integrate(self.samples, window, source=self.source, max_gap_s=self.max_gap_s)

    async def window_figures(self, window: WindowLike) -> PowerFigures:
        """Wait (without blocking the loop) for a reading at or past the window end, then
        return `figures(window)`. Gives up waiting after the allowed gap."""
        if not self.sampler.assumed:
            deadline = time.monotonic() + self.max_gap_s
            while self.running and self._latest() < window.end and time.monotonic() < deadline:
                await asyncio.sleep(WAIT_POLL_S)
        return self.figures(window)

    def _latest(self) -> float:
        with self._lock:
            return self._samples[-1].t if self._samples else -math.inf

    def _keep(self, sample: PowerSample) -> None:
        with self._lock:
            self._samples.append(sample)
        if self._writer is not None:
            self._writer.write(sample)

    def _take(self) -> None:
        try:
            sample = self.sampler.read()
        except SamplerError as exc:
            self.failures += 1
            self.last_error = str(exc)
            return
        except Exception as exc:  # a sampler bug must not kill the thread silently
            self.failures += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            return
        if sample is None:
            self.skipped += 1
        else:
            self._keep(sample)

    def _loop(self) -> None:
        interval = self.sampler.interval_s
        next_at = time.monotonic() + interval
        while True:
            delay = next_at - time.monotonic()
            if self._stop.wait(max(delay, 0.0)):
                self._take()  # a last reading, so a window ending now is reached
                return
            self._take()
            next_at += interval
            behind = time.monotonic() - next_at
            if behind > 0:  # a slow reading: skip the missed slots, keep the grid
                next_at += interval * math.ceil(behind / interval)
