"""The lines of `power.jsonl` (power samples) and `server_metrics.jsonl` (scrapes)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import ConfigDict, Field, model_validator

from agentload.frozen import Frozen


class PowerSample(Frozen):
    """One reading of the selected accelerators at one instant."""

    t: float
    """Epoch seconds (the middle of the reading)."""
    watts: float = Field(ge=0)
    """Total power of the devices, W."""
    device_watts: tuple[float, ...]
    """Power of each device, W, in the order of `devices`."""
    devices: tuple[str, ...]
    """Device ids (GPU index, or the label set a Prometheus series had)."""
    energy_j: float | None = None
    """Cumulative energy counter summed over the devices, J; None without a counter."""

    @model_validator(mode="after")
    def _check(self) -> PowerSample:
        if not math.isfinite(self.t):
            raise ValueError(f"sample time must be finite, got {self.t}")
        if len(self.device_watts) != len(self.devices):
            raise ValueError(
                f"{len(self.device_watts)} device readings for {len(self.devices)} devices"
            )
        if not math.isfinite(self.watts):
            raise ValueError(f"watts must be finite, got {self.watts}")
        if self.energy_j is not None and not math.isfinite(self.energy_j):
            raise ValueError(f"energy_j must be finite, got {self.energy_j}")
        return self

    @classmethod
    def of(
        cls,
        t: float,
        device_watts: Sequence[float],
        devices: Sequence[str],
        energy_j: float | None = None,
    ) -> PowerSample:
        """A sample whose total is the sum of the device readings."""
        return cls(
            t=t,
            watts=math.fsum(device_watts),
            device_watts=tuple(device_watts),
            devices=tuple(devices),
            energy_j=energy_j,
        )


class ServerScrape(Frozen):
    """What one scrape found: each quantity combined over its series, and the name it came from."""

    model_config = ConfigDict(extra="ignore")  # older scrape lines may hold more fields

    t: float
    """Epoch s (the middle of the request)."""
    url: str
    engine: str | None = None
    values: dict[str, float] = Field(default_factory=dict)
    """Quantity (see `EngineNames` fields) -> value: counters and running/waiting summed over
    series, ratios averaged."""
    names: dict[str, str] = Field(default_factory=dict)
    """Quantity -> the metric name it was read from."""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None
