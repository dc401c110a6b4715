"""RAPL (powercap) energy counters as a power source, and the demo's CPU power: measured where
the machine exposes RAPL, else declared and marked assumed with where its number comes from.

This VM exposes no powercap tree, so the sampler reads a directory laid out as the kernel's
(`/sys/class/powercap/intel-rapl:N/energy_uj`, `max_energy_range_uj`): a file interface, not a
fake server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.errors import AgentloadError
from agentload.measure import power_spec
from agentload.measure.power import integrate
from agentload.measure.power_samplers import RaplSampler, rapl_zones
from agentload.measure.power_spec import CPU_WATTS_PER_VCPU, cpu_power_spec, parse_power_spec
from agentload.measure.window import Window

RANGE_UJ = 262_143_328_850


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def zone(root: Path, name: str, energy_uj: int) -> Path:
    path = root / name
    path.mkdir(parents=True, exist_ok=True)
    (path / "energy_uj").write_text(f"{energy_uj}\n")
    (path / "max_energy_range_uj").write_text(f"{RANGE_UJ}\n")
    (path / "name").write_text("package-0\n")
    return path


def test_only_package_zones_are_read(tmp_path: Path) -> None:
    zone(tmp_path, "intel-rapl:0", 1)
    zone(tmp_path, "intel-rapl:1", 1)
    zone(tmp_path, "intel-rapl:0:0", 1)  # the core sub-zone: part of package 0
    assert [z.name for z in rapl_zones(tmp_path)] == ["intel-rapl:0", "intel-rapl:1"]


def test_energy_and_power_come_from_the_counters_summed_over_packages(tmp_path: Path) -> None:
    a = zone(tmp_path, "intel-rapl:0", 1_000_000)
    b = zone(tmp_path, "intel-rapl:1", 5_000_000)
    clock = Clock()
    sampler = RaplSampler(root=tmp_path, clock=clock)
    sampler.open()
    clock.t += 1.0
    (a / "energy_uj").write_text("31000000")  # 30 J in 1 s
    (b / "energy_uj").write_text("15000000")  # 10 J in 1 s
    first = sampler.read()
    assert first.watts == pytest.approx(40.0)
    assert first.energy_j == pytest.approx(46.0)
    clock.t += 1.0
    (a / "energy_uj").write_text("61000000")
    (b / "energy_uj").write_text("25000000")
    second = sampler.read()
    figures = integrate([first, second], Window(first.t, second.t), source="rapl", max_gap_s=2.0)
    assert figures.valid and figures.mean_watts == pytest.approx(40.0)


def test_a_counter_that_wraps_is_unwrapped(tmp_path: Path) -> None:
    a = zone(tmp_path, "intel-rapl:0", RANGE_UJ - 10_000_000)
    clock = Clock()
    sampler = RaplSampler(root=tmp_path, clock=clock)
    sampler.open()
    clock.t += 1.0
    (a / "energy_uj").write_text("15000000")  # 10 J to the wrap, 15 J after it
    assert sampler.read().watts == pytest.approx(25.0)


def test_no_readable_zone_is_one_line_naming_the_source(tmp_path: Path) -> None:
    with pytest.raises(AgentloadError, match="power source rapl: no readable RAPL package zone"):
        RaplSampler(root=tmp_path).open()


def test_the_spec_is_rapl_without_options() -> None:
    assert parse_power_spec("rapl").kind == "rapl"
    with pytest.raises(AgentloadError, match="rapl takes no options"):
        parse_power_spec("rapl:0")


def test_the_demo_measures_with_rapl_where_it_is_readable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(power_spec, "rapl_zones", lambda: [zone(tmp_path, "intel-rapl:0", 1)])
    assert cpu_power_spec(1).kind == "rapl"


def test_without_rapl_the_demo_declares_cpu_watts_marked_assumed_with_their_source(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(power_spec, "rapl_zones", list)
    spec = cpu_power_spec(3)
    assert spec.kind == "assumed" and spec.watts_per_gpu == pytest.approx(3 * CPU_WATTS_PER_VCPU)
    words = spec.describe()
    assert words.startswith(f"assumed {3 * CPU_WATTS_PER_VCPU:g} W")
    assert "3 vCPUs serving" in words and "EPYC 7763: 280 W TDP" in words


def test_declared_cpu_watts_win_over_rapl(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(power_spec, "rapl_zones", lambda: [zone(tmp_path, "intel-rapl:0", 1)])
    spec = cpu_power_spec(1, watts=65.0)
    assert spec.kind == "assumed" and "declared with --cpu-watts" in spec.describe()
    with pytest.raises(AgentloadError, match="--cpu-watts"):
        cpu_power_spec(1, watts=0.0)
