"""Power integration over a window: exact on synthetic samples, coverage, validity, per-MW."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentload.errors import InputError
from agentload.measure.metrics import TokenCounts
from agentload.measure.power import assumed_figures, default_max_gap_s, energy_figures, integrate
from agentload.measure.window import Window
from agentload.results.jsonl import JsonlAppender, read_jsonl
from agentload.results.samples import PowerSample
from agentload.results.summary import PowerFigures

STEP = 0.1
GAP = 0.5


def grid(t0: float, t1: float, step: float = STEP) -> list[float]:
    count = round((t1 - t0) / step)
    return [t0 + i * step for i in range(count + 1)]


def power_samples(
    times: list[float], watts: Callable[[float], float], energy: Callable[[float], float] | None
) -> list[PowerSample]:
    """Two devices sharing the power equally; the counter (if any) is the exact integral."""
    return [
        PowerSample.of(t, [watts(t) / 2, watts(t) / 2], ["0", "1"], energy(t) if energy else None)
        for t in times
    ]


def run(samples: list[PowerSample], a: float, b: float, gap: float = GAP) -> PowerFigures:
    return integrate(samples, Window(a, b), source="test", max_gap_s=gap)


def test_constant_power_with_edges_between_samples() -> None:
    samples = power_samples(grid(0, 10), lambda t: 500.0, None)
    figures = run(samples, 2.05, 7.05)
    assert figures.valid and figures.reason is None
    assert figures.energy_j == pytest.approx(500.0 * 5.0, rel=1e-12)
    assert figures.mean_watts == pytest.approx(500.0, rel=1e-12)
    assert figures.coverage == pytest.approx(1.0)
    assert figures.source == "test" and not figures.assumed


def test_ramp_is_exact_with_interpolated_edges() -> None:
    def watts(t: float) -> float:
        return 100.0 + 20.0 * t

    a, b = 1.03, 4.57
    exact = 100.0 * (b - a) + 10.0 * (b * b - a * a)
    figures = run(power_samples(grid(0, 6), watts, None), a, b)
    assert figures.valid
    assert figures.energy_j == pytest.approx(exact, rel=1e-12)
    assert figures.mean_watts == pytest.approx(exact / (b - a), rel=1e-12)


def test_step_is_joined_by_a_straight_line_between_the_two_samples() -> None:
    times = grid(0, 10)
    samples = power_samples(times, lambda t: 100.0 if t < 4.95 else 300.0, None)
    figures = run(samples, 4.0, 6.0)
    # 4.0..4.9 at 100 W, the ramp 4.9..5.0 from 100 to 300 W, then 5.0..6.0 at 300 W.
    assert figures.energy_j == pytest.approx(0.9 * 100 + 0.1 * 200 + 1.0 * 300, rel=1e-12)


def test_energy_counter_and_power_samples_agree() -> None:
    def watts(t: float) -> float:
        return 200.0 + 30.0 * t

    def energy(t: float) -> float:
        return 5e6 + 200.0 * t + 15.0 * t * t

    times = grid(0, 10)
    with_counter = power_samples(times, watts, energy)
    power_only = power_samples(times, watts, None)
    # Edges on sample times: the counter difference is exact, so is the trapezoid of a ramp.
    a, b = times[13], times[87]
    counter = run(with_counter, a, b)
    trapezoid = run(power_only, a, b)
    assert counter.valid and trapezoid.valid
    assert counter.energy_j == pytest.approx(energy(b) - energy(a), rel=1e-9)
    assert trapezoid.energy_j == pytest.approx(counter.energy_j, rel=1e-9)
    # Constant power: edges anywhere, both ways exact.
    flat = power_samples(times, lambda t: 640.0, lambda t: 1e9 + 640.0 * t)
    assert run(flat, 1.234, 8.765).energy_j == pytest.approx(640.0 * (8.765 - 1.234), rel=1e-9)


def test_counter_is_used_when_present() -> None:
    times = grid(0, 10)
    # Power readings say 100 W, the counter says 400 W: the counter wins.
    samples = power_samples(times, lambda t: 100.0, lambda t: 400.0 * t)
    assert run(samples, 2.0, 8.0).mean_watts == pytest.approx(400.0)


def test_a_counter_that_goes_backwards_falls_back_to_power() -> None:
    times = grid(0, 10)
    samples = power_samples(times, lambda t: 100.0, lambda t: 400.0 * t if t < 5 else 0.0)
    assert run(samples, 2.0, 8.0).mean_watts == pytest.approx(100.0)


def test_a_gap_invalidates_power_samples_and_sets_coverage() -> None:
    times = [t for t in grid(0, 10) if not 3.0 < t < 5.0]
    figures = run(power_samples(times, lambda t: 300.0, None), 2.0, 6.0)
    assert not figures.valid
    assert figures.mean_watts is None and figures.energy_j is None
    assert "gap of 2 s" in figures.reason
    assert figures.coverage == pytest.approx(0.5)  # [2, 3] and [5, 6] of [2, 6]
    # The same samples cover a window beside the gap.
    beside = run(power_samples(times, lambda t: 300.0, None), 5.5, 9.5)
    assert beside.valid and beside.coverage == pytest.approx(1.0)


def test_a_counter_bridges_an_inner_gap_but_not_one_at_an_edge() -> None:
    times = [t for t in grid(0, 10) if not 3.0 < t < 5.0]
    samples = power_samples(times, lambda t: 300.0, lambda t: 300.0 * t)
    inner = run(samples, 2.0, 6.0)
    assert inner.valid
    assert inner.energy_j == pytest.approx(300.0 * 4.0)
    assert inner.coverage == pytest.approx(0.5)
    edge = run(samples, 4.0, 6.0)
    assert not edge.valid
    assert "around the window start are 2 s apart" in edge.reason


def test_samples_must_reach_both_edges() -> None:
    samples = power_samples(grid(1, 5), lambda t: 300.0, None)
    early = run(samples, 0.5, 3.0)
    assert not early.valid and "start 0.5 s after the window" in early.reason
    assert early.coverage == pytest.approx(2.0 / 2.5)
    late = run(samples, 3.0, 6.0)
    assert not late.valid and "end 1 s before the window" in late.reason
    assert late.coverage == pytest.approx(2.0 / 3.0)
    assert run([], 0, 1).reason == "no power samples"
    assert not run(samples, 2.0, 2.0).valid


def test_duplicate_and_unordered_samples() -> None:
    samples = power_samples(grid(0, 4), lambda t: 50.0, None)
    shuffled = samples[::-1] + samples[:3]
    assert run(shuffled, 0.5, 3.5).energy_j == pytest.approx(150.0)


def test_default_gap() -> None:
    assert default_max_gap_s(0.1) == 1.0
    assert default_max_gap_s(1.0) == 3.0


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    # 1 + len(steps) sample times, one `watts` reading each
    steps=st.lists(st.floats(0.01, 0.4), min_size=5, max_size=59),
    watts=st.lists(st.floats(0.0, 1500.0), min_size=60, max_size=60),
    cuts=st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3),
    counter=st.booleans(),
)
def test_adjacent_windows_add_up(
    steps: list[float], watts: list[float], cuts: list[float], counter: bool
) -> None:
    times = [100.0]
    for step in steps:
        times.append(times[-1] + step)
    energy = [0.0]
    for i in range(1, len(times)):
        energy.append(energy[-1] + (watts[i] + watts[i - 1]) / 2 * (times[i] - times[i - 1]))
    samples = [
        PowerSample.of(t, [watts[i]], ["0"], energy[i] if counter else None)
        for i, t in enumerate(times)
    ]
    a, m, b = (times[0] + c * (times[-1] - times[0]) for c in sorted(cuts))
    if not (a < m < b):
        return
    whole, left, right = run(samples, a, b, 1.0), run(samples, a, m, 1.0), run(samples, m, b, 1.0)
    assert whole.valid and left.valid and right.valid
    assert left.energy_j + right.energy_j == pytest.approx(whole.energy_j, rel=1e-9, abs=1e-9)


def test_assumed_power_is_valid_and_marked() -> None:
    figures = assumed_figures(8 * 700.0, Window(10.0, 70.0))
    assert figures.assumed and figures.valid and figures.source == "assumed"
    assert figures.mean_watts == 5600.0
    assert figures.energy_j == pytest.approx(5600.0 * 60.0)
    with pytest.raises(ValueError):
        assumed_figures(0.0, Window(0, 1))


def test_energy_figures_per_mw_and_per_token() -> None:
    rates = TokenCounts.of(cached=6000.0, uncached=3000.0, output=1000.0)
    power = PowerFigures(source="nvml", mean_watts=2000.0, energy_j=1.0, valid=True)
    figures = energy_figures(rates, power, agents=20)
    assert figures.total_tokens_per_s_per_mw == pytest.approx(10000.0 / 2000.0 * 1e6)
    assert figures.output_tokens_per_s_per_mw == pytest.approx(500_000.0)
    assert figures.cached_input_tokens_per_s_per_mw == pytest.approx(3_000_000.0)
    assert figures.uncached_input_tokens_per_s_per_mw == pytest.approx(1_500_000.0)
    assert figures.agents_per_mw == pytest.approx(10_000.0)
    assert figures.joules_per_output_token == pytest.approx(2.0)
    assert figures.joules_per_token == pytest.approx(0.2)
    assert figures.mean_watts == 2000.0
    invalid = PowerFigures(source="nvml", valid=False, reason="gap")
    assert energy_figures(rates, invalid, agents=20).model_dump() == dict.fromkeys(
        figures.model_dump()
    )
    no_output = energy_figures(TokenCounts.of(10.0, 0.0, 0.0), power)
    assert no_output.joules_per_output_token is None and no_output.agents_per_mw is None


def test_power_jsonl_round_trip_and_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "power.jsonl"
    samples = power_samples(grid(0, 1), lambda t: 123.0, lambda t: 123.0 * t)
    writer = JsonlAppender(path)
    for sample in samples:
        writer.write(sample)
    writer.close()
    assert path.stat().st_mode & 0o777 == 0o600
    assert read_jsonl(path, PowerSample).items == samples
    with path.open("ab") as f:
        f.write(b'{"t": 5.0, "watts": 1')
    assert read_jsonl(path, PowerSample).items == samples
    path.write_bytes(b'{"t": 1.0, "watts": -5, "device_watts": [], "devices": []}\n\n')
    with pytest.raises(InputError) as caught:
        read_jsonl(path, PowerSample)
    assert ":1: field 'watts'" in str(caught.value)


def test_sample_checks_devices_and_finite_values() -> None:
    with pytest.raises(ValueError):
        PowerSample(t=1.0, watts=1.0, device_watts=(1.0,), devices=("0", "1"))
    with pytest.raises(ValueError):
        PowerSample.of(float("nan"), [1.0], ["0"])
    with pytest.raises(ValueError):
        PowerSample.of(1.0, [float("inf")], ["0"])
