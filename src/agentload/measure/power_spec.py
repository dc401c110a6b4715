"""The `--power` spec: which power source to read, parsed from `--power` (or `--gpu-watts` x
`--gpus`), and the sampler it creates.
"""

from __future__ import annotations

import math
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import Field, model_validator

from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.measure.power import SOURCE_ASSUMED
from agentload.measure.power_samplers import (
    DCGM_ENERGY_METRIC,
    DCGM_POWER_METRIC,
    ENERGY_UNITS,
    POWER_UNITS,
    AmdSmiSampler,
    AssumedPower,
    CommandSampler,
    NvmlSampler,
    PowerSampler,
    PrometheusSampler,
    RaplSampler,
    rapl_zones,
)
from agentload.units import count_words

CPU_WATTS_PER_VCPU = 2.2
"""Declared power of one busy vCPU, W, when a CPU engine's power cannot be measured: an AMD
EPYC 7763's 280 W default TDP (AMD's product page) over its 128 hardware threads (a vCPU is one
hardware thread). TDP is what the package is built to dissipate under sustained load, so this
is the package's share for a busy thread, without memory, board or power-supply losses, as GPU
power is the GPU's alone."""
CPU_WATTS_SOURCE = "AMD EPYC 7763: 280 W TDP over 128 hardware threads"

SPEC_FIELD = "--power"
NO_METRIC = "none"
Kind = Literal["nvml", "amdsmi", "prometheus", "command", "rapl", "assumed"]
SPEC_HELP = (
    "nvml[:0,1], amdsmi[:0,1], prometheus:URL[#metric=NAME&energy_metric=NAME&LABEL=V], "
    "dcgm:URL, command:CMD, rapl"
)


class PowerSpec(Frozen):
    """A chosen power source, parsed from `--power` (or `--gpu-watts`/`--gpus`)."""

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
    basis: str | None = None
    """What a declared constant stands for and where its number comes from (assumed only)."""

    @model_validator(mode="after")
    def _check(self) -> PowerSpec:
        needs: dict[str, tuple[str, object]] = {
            "prometheus": ("url", self.url),
            "command": ("command", self.command),
            "assumed": ("watts_per_gpu", self.watts_per_gpu),
        }
        if self.kind in needs and needs[self.kind][1] is None:
            raise ValueError(f"a {self.kind} power source needs {needs[self.kind][0]}")
        return self

    @property
    def source(self) -> str:
        return SOURCE_ASSUMED if self.kind == "assumed" else self.kind

    def describe(self) -> str:
        """One line for manifests and reports."""
        if self.kind == "assumed":
            assert self.watts_per_gpu is not None  # by validation
            if self.basis:
                return f"assumed {self.watts_per_gpu * self.gpus:g} W ({self.basis})"
            return f"assumed {self.watts_per_gpu:g} W x {self.gpus} GPU(s)"
        if self.kind == "rapl":
            return "rapl (the CPU packages' energy counters, every process on them)"
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
        interval: dict[str, Any] = {"interval_s": self.interval_s} if self.interval_s else {}
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
        if self.kind == "rapl":
            return RaplSampler(**interval)
        assert self.watts_per_gpu is not None
        return AssumedPower(self.watts_per_gpu, self.gpus)


def _bad(reason: str) -> InputError:
    return InputError(reason, field=SPEC_FIELD)


def parse_power_spec(spec: str, *, interval_s: float | None = None) -> PowerSpec:
    """Parse `--power`: nvml[:0,1], amdsmi[:0,1], prometheus:URL[#...], dcgm:URL, command:CMD,
    rapl."""
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
        gpu_kind: Kind = "nvml" if kind == "nvml" else "amdsmi"
        return PowerSpec(kind=gpu_kind, devices=devices, interval_s=interval_s)
    if kind in ("prometheus", "dcgm"):
        if not rest:
            raise _bad(f"{kind} needs a URL, e.g. {kind}:http://host:9400/metrics")
        return _prometheus_spec(rest, interval_s)
    if kind == "rapl":
        if rest:
            raise _bad("rapl takes no options (it reads every CPU package)")
        return PowerSpec(kind="rapl", interval_s=interval_s)
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


def cpu_power_spec(vcpus: int, *, watts: float | None = None) -> PowerSpec:
    """Power for a CPU engine on `vcpus` vCPUs: RAPL where this machine exposes it (measured),
    else declared (`watts` in all, or `CPU_WATTS_PER_VCPU` each), marked assumed."""
    if watts is None and rapl_zones():
        return PowerSpec(kind="rapl")
    if watts is not None:
        if not (math.isfinite(watts) and watts > 0):
            raise InputError(f"must be > 0 W, got {watts:g}", field="--cpu-watts")
        return PowerSpec(kind="assumed", watts_per_gpu=watts, basis="declared with --cpu-watts")
    total = vcpus * CPU_WATTS_PER_VCPU
    return PowerSpec(
        kind="assumed",
        watts_per_gpu=total,
        basis=(
            f"{count_words(vcpus, 'vCPU')} serving x {CPU_WATTS_PER_VCPU:g} W: {CPU_WATTS_SOURCE}"
        ),
    )
