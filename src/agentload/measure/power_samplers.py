"""Power samplers: NVML, AMD SMI, a Prometheus endpoint (a DCGM exporter by default), a command
that prints watts, the CPU packages' RAPL energy counters (powercap), and a declared constant.
Each reads the power of a set of devices; the `--power` spec (`power_spec`) chooses one and the
recorder (`power_recorder`) runs it.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import re
import subprocess
import time
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from agentload.clock import now
from agentload.errors import AgentloadError, InputError
from agentload.measure.power import JOULES_PER_MILLIJOULE, SOURCE_ASSUMED, WATTS_PER_MILLIWATT
from agentload.measure.prometheus import Exposition, parse
from agentload.results.samples import PowerSample
from agentload.units import SECONDS_PER_HOUR, WATTS_PER_KW

NVML_INTERVAL_S = 0.1
AMDSMI_INTERVAL_S = 0.1
HTTP_INTERVAL_S = 1.0
COMMAND_INTERVAL_S = 1.0
RAPL_INTERVAL_S = 0.5

HTTP_TIMEOUT_S = 5.0
"""Longest wait for one scrape of a Prometheus endpoint, s."""
HTTP_MAX_BYTES = 64 * 1024 * 1024
COMMAND_TIMEOUT_S = 10.0
"""Longest wait for one run of a power command, s."""

DCGM_POWER_METRIC = "DCGM_FI_DEV_POWER_USAGE"
"""DCGM exporter: power draw of each GPU, W."""
DCGM_ENERGY_METRIC = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
"""DCGM exporter: energy counter of each GPU, mJ."""
DEVICE_LABEL = "gpu"
"""The label that names a GPU in DCGM series; other endpoints are told apart by all labels."""

POWER_UNITS = {"W": 1.0, "mW": 1e-3, "kW": 1e3}
"""Watts per unit of a Prometheus power metric."""
ENERGY_UNITS = {
    "mJ": 1e-3,
    "J": 1.0,
    "kJ": 1e3,
    "uJ": 1e-6,
    "Wh": SECONDS_PER_HOUR,
    "kWh": SECONDS_PER_HOUR * WATTS_PER_KW,
}
"""Joules per unit of a Prometheus energy metric."""

AMD_POWER_KEYS = ("socket_power", "current_socket_power", "average_socket_power")
"""`amdsmi_get_power_info` fields in order of preference (W); 'N/A' where a part lacks one."""
AMD_ENERGY_KEYS = ("energy_accumulator", "power")
"""`amdsmi_get_energy_count` counter field (newer, older name); ticks of `counter_resolution` uJ."""
JOULES_PER_MICROJOULE = 1e-6


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


class _LibrarySampler(PowerSampler):
    """GPUs through a vendor's library: the power reading of each selected GPU, and the sum of
    their energy counters where every one of them has one.

    A subclass starts and stops the library and reads one GPU; `failure` is what the library
    raises, and `joules_per_unit` turns the summed counters into joules.
    """

    library: str
    """The library's name in a reading's error (`NVML: ...`)."""
    default_interval_s: float
    joules_per_unit: float = 1.0

    def __init__(
        self,
        devices: Sequence[int] | None = None,
        *,
        interval_s: float | None = None,
        clock: Callable[[], float] = now,
    ) -> None:
        self.devices = tuple(devices) if devices is not None else None
        self.interval_s = self.default_interval_s if interval_s is None else interval_s
        self._clock = clock
        self._lib: Any = None
        self._failure: type[Exception] = Exception
        self._handles: list[Any] = []
        self._ids: tuple[str, ...] = ()
        self.has_energy_counter = False

    @abstractmethod
    def _start(self) -> tuple[Any, type[Exception]]:
        """The library, initialised, and the exception it raises; `AgentloadError` if not."""

    @abstractmethod
    def _stop(self) -> None:
        """Shut the library down."""

    @abstractmethod
    def _count(self) -> int:
        """How many GPUs the library sees."""

    @abstractmethod
    def _handle(self, index: int) -> Any:
        """The library's handle of GPU `index`."""

    @abstractmethod
    def _watts(self, handle: Any) -> float:
        """The GPU's power, W."""

    @abstractmethod
    def _energy(self, handle: Any) -> float:
        """The GPU's energy counter, in units of `joules_per_unit`."""

    def _check(self, handle: Any) -> None:
        """Refuse a GPU that cannot be read (`open` calls it on each selected GPU)."""

    def open(self) -> None:
        self._lib, self._failure = self._start()
        try:
            indices = _select(self._count(), self.devices, self.source)
            self._handles = [self._handle(i) for i in indices]
            self._ids = tuple(str(i) for i in indices)
            for handle in self._handles:
                self._check(handle)
            self.has_energy_counter = True
            for handle in self._handles:
                try:
                    self._energy(handle)
                except self._failure:
                    self.has_energy_counter = False
        except AgentloadError:
            self.close()
            raise
        except self._failure as exc:
            self.close()
            raise AgentloadError(f"power source {self.source}: {exc}") from None

    def read(self) -> PowerSample:
        if self._lib is None:
            raise SamplerError(f"{self.library} is not open")
        before = self._clock()
        try:
            watts = [self._watts(h) for h in self._handles]
            energy = None
            if self.has_energy_counter:
                energy = math.fsum(self._energy(h) for h in self._handles) * self.joules_per_unit
        except self._failure as exc:
            raise SamplerError(f"{self.library}: {exc}") from None
        after = self._clock()
        return PowerSample.of((before + after) / 2, watts, self._ids, energy)

    def close(self) -> None:
        if self._lib is not None:
            with contextlib.suppress(Exception):
                self._stop()
            self._lib = None


class NvmlSampler(_LibrarySampler):
    """NVIDIA GPUs through NVML (`nvidia-ml-py`): the energy counter where every selected GPU
    has one (Volta and newer), and the power reading of each GPU."""

    source = "nvml"
    library = "NVML"
    default_interval_s = NVML_INTERVAL_S
    joules_per_unit = JOULES_PER_MILLIJOULE

    def _start(self) -> tuple[Any, type[Exception]]:
        nvml = _import("pynvml", "nvidia-ml-py", self.source)
        try:
            nvml.nvmlInit()
        except nvml.NVMLError as exc:
            raise AgentloadError(f"power source nvml: cannot initialise NVML: {exc}") from None
        return nvml, nvml.NVMLError

    def _stop(self) -> None:
        self._lib.nvmlShutdown()

    def _count(self) -> int:
        return int(self._lib.nvmlDeviceGetCount())

    def _handle(self, index: int) -> Any:
        return self._lib.nvmlDeviceGetHandleByIndex(index)

    def _watts(self, handle: Any) -> float:
        return float(self._lib.nvmlDeviceGetPowerUsage(handle) * WATTS_PER_MILLIWATT)

    def _energy(self, handle: Any) -> float:
        return float(self._lib.nvmlDeviceGetTotalEnergyConsumption(handle))


# --- AMD SMI ----------------------------------------------------------------------------------


class AmdSmiSampler(_LibrarySampler):
    """AMD GPUs through the `amdsmi` Python package: the energy counter where every selected
    GPU has one, and the socket power of each GPU."""

    source = "amdsmi"
    library = "AMD SMI"
    default_interval_s = AMDSMI_INTERVAL_S
    _all: list[Any]
    """Every GPU's handle, as the library listed them."""

    def _start(self) -> tuple[Any, type[Exception]]:
        smi = _import("amdsmi", "amdsmi", self.source)
        try:
            smi.amdsmi_init()
        except Exception as exc:
            raise AgentloadError(f"power source amdsmi: cannot initialise AMD SMI: {exc}") from None
        return smi, Exception

    def _stop(self) -> None:
        self._lib.amdsmi_shut_down()

    def _count(self) -> int:
        self._all = list(self._lib.amdsmi_get_processor_handles())
        return len(self._all)

    def _handle(self, index: int) -> Any:
        return self._all[index]

    def _check(self, handle: Any) -> None:
        self._watts(handle)

    def _watts(self, handle: Any) -> float:
        info = self._lib.amdsmi_get_power_info(handle)
        for key in AMD_POWER_KEYS:
            value = info.get(key)
            if isinstance(value, int | float) and math.isfinite(value):
                return float(value)
        raise AgentloadError(
            f"power source amdsmi: no power reading (fields {', '.join(AMD_POWER_KEYS)})"
        )

    def _energy(self, handle: Any) -> float:
        info = self._lib.amdsmi_get_energy_count(handle)
        ticks = next((info[k] for k in AMD_ENERGY_KEYS if k in info), None)
        resolution = info.get("counter_resolution")
        if not isinstance(ticks, int | float) or not isinstance(resolution, int | float):
            raise SamplerError("no energy counter")
        return float(ticks) * float(resolution) * JOULES_PER_MICROJOULE


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
            known = [v for v in values if v is not None and math.isfinite(v)]
            if len(known) == len(values):
                energy = math.fsum(known) * self._joules_per_unit
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


# --- RAPL (powercap) ------------------------------------------------------------------------------


POWERCAP_ROOT = Path("/sys/class/powercap")
RAPL_PACKAGE = re.compile(r"^(intel-rapl|amd-rapl):\d+$")
"""Top-level RAPL zones: one per CPU package (their sub-zones, `intel-rapl:0:0`, are parts of
it and are not added again). AMD CPUs show up as `intel-rapl` too, through the same driver."""
RAPL_MIN_SPAN_S = 0.05
"""Shortest time between two readings a power figure is taken over (the counters tick about
every millisecond)."""


def rapl_zones(root: Path = POWERCAP_ROOT) -> list[Path]:
    """The readable package zones under a powercap root (empty when none, or unreadable)."""
    try:
        zones = sorted(p for p in root.iterdir() if RAPL_PACKAGE.match(p.name))
    except OSError:
        return []
    readable = []
    for zone in zones:
        try:
            int((zone / "energy_uj").read_text())
        except (OSError, ValueError):
            continue
        readable.append(zone)
    return readable


class RaplSampler(PowerSampler):
    """The CPU packages' RAPL energy counters (`energy_uj`, µJ) under `/sys/class/powercap`:
    energy exact between readings (wraps at `max_energy_range_uj` undone), power the mean since
    the previous reading. What it measures is the whole package: every process on it, not only
    the engine."""

    source = "rapl"

    def __init__(
        self,
        *,
        root: Path = POWERCAP_ROOT,
        interval_s: float = RAPL_INTERVAL_S,
        clock: Callable[[], float] = now,
    ) -> None:
        self.root = root
        self.interval_s = interval_s
        self._clock = clock
        self._zones: list[Path] = []
        self._ranges: list[float] = []
        self._raw: list[float] = []
        self._wraps: list[int] = []
        self._last: tuple[float, float] | None = None
        """(time, total joules) of the previous reading."""
        # a zone without max_energy_range_uj (0) cannot be unwrapped: its counter then goes
        # backwards at a wrap, and a window over it falls back to the power samples

    def open(self) -> None:
        self._zones = rapl_zones(self.root)
        if not self._zones:
            raise AgentloadError(
                f"power source rapl: no readable RAPL package zone under {self.root} "
                "(not exposed on this machine, or energy_uj is readable by root only)"
            )
        self._ranges = [self._number(z / "max_energy_range_uj", default=0.0) for z in self._zones]
        self._raw = [self._number(z / "energy_uj") for z in self._zones]
        self._wraps = [0] * len(self._zones)
        self._last = (self._clock(), self._joules())

    def _number(self, path: Path, default: float | None = None) -> float:
        try:
            return float(path.read_text())
        except (OSError, ValueError) as exc:
            if default is not None:
                return default
            raise SamplerError(f"{path}: {exc}") from None

    def _joules(self) -> float:
        zones = zip(self._raw, self._wraps, self._ranges, strict=True)
        return sum(raw + wraps * span for raw, wraps, span in zones) * JOULES_PER_MICROJOULE

    def read(self) -> PowerSample:
        if self._last is None:
            raise SamplerError("rapl: read before open")
        wait = self._last[0] + RAPL_MIN_SPAN_S - self._clock()
        if wait > 0:
            time.sleep(wait)
        t = self._clock()
        for i, zone in enumerate(self._zones):
            raw = self._number(zone / "energy_uj")
            if raw < self._raw[i]:
                self._wraps[i] += 1
            self._raw[i] = raw
        joules = self._joules()
        t0, j0 = self._last
        self._last = (t, joules)
        watts = max(0.0, (joules - j0) / (t - t0)) if t > t0 else 0.0
        return PowerSample.of(t, [watts], ["+".join(z.name for z in self._zones)], joules)


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
