"""`agentload frontier` look-ups through the CLI, on the published figures.

SGLang's GB300 points: `sglang_gb300_muse_spark_open`; 150M tok/s per MW on 4 GPUs:
`aa_agentperf_muse_spark_open` with `article_estimates` (5-6 kW for four GB300); InferenceX B300
$0.019 and $0.027 per M at 128 and 191 tok/s per user, $2.26 per GPU-hour:
`inferencex_price_points`; all in tests/data/published/agentic_serving_results.json.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.results.summary import PowerFigures
from tests.analysis.simulated import simulate
from tests.analysis.summaries import ASSUMED_POWER, gb300_like, probe, set_power, write_summary
from tests.commands.cli import column, error_line, figures, run_json, table_titled

SGLANG_POINTS = ["485.8,2514,c1", "208.7,49646,c16", "97.1,114342,c64", "40.9,185382,c160"]
TYPED = [arg for text in SGLANG_POINTS for arg in ("--point", text)]


@pytest.mark.parametrize("watts", ["1250", "1500"])
def test_150m_per_mw_at_5_to_6_kw_is_beyond_sglangs_slowest_point(
    capsys: pytest.CaptureFixture[str], watts: str
) -> None:
    """At 1,250-1,500 W per GPU the curve's most is 185,382 / W x 1e6 = 148.3M-123.6M tok/s per
    MW: 150M is more than any measured point, so the per-user speed is refused and bounded:
    under 40.9 tok/s per user, if reachable at all (log-log interpolation never extrapolates)."""
    argv = ["frontier", *TYPED, "--watts-per-gpu", watts, "--at-tokens-per-s-per-mw", "150e6"]
    lookups = table_titled(run_json(capsys, *argv), "Look-ups")
    assert column(lookups, "answer") == [None]
    assert column(lookups, "from frontier points (or the bound when refused)") == [
        "< 40.9 tok/s per request, if reachable at all"
    ]
    assert column(lookups, "how")[0].startswith("refused: more than the most measured")


def test_150m_per_mw_lands_on_the_hicache_point_at_1236_w(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """185,382 tok/s per GPU is 150M per MW at 1,235.88 W per GPU (4.94 kW for four): only there
    does the headline touch the curve, at its slowest point, 40.9 tok/s per user."""
    argv = ["frontier", *TYPED, "--watts-per-gpu", "1235.88", "--at-tokens-per-s-per-mw", "150e6"]
    lookups = table_titled(run_json(capsys, *argv), "Look-ups")
    assert column(lookups, "answer") == [pytest.approx(40.9, abs=0.01)]


def test_inferencex_b300_points_sit_well_below_sglangs_gb300_curve(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """$0.019 and $0.027 per M at $2.26 per GPU-hour imply 33,041 and 23,251 tok/s per GPU; the
    curve (log-log between 97.1 and 208.7 tok/s per user) has 84,601 and 54,683 there: the B300
    points are at 0.39x and 0.43x, not on it."""
    argv = ["frontier", *TYPED, "--gpu-hour-price", "2.26"]
    argv += ["--against-price", "128,0.019,B300", "--against-price", "191,0.027,B300"]
    against = table_titled(run_json(capsys, *argv), "Points against")
    assert column(against, "total tok/s per GPU") == [
        pytest.approx(33_041, abs=1),
        pytest.approx(23_251, abs=1),
    ]
    assert column(against, "frontier at that speed (tok/s per GPU)") == [
        pytest.approx(84_601, abs=1),
        pytest.approx(54_683, abs=1),
    ]
    assert column(against, "point / frontier (×)") == [
        pytest.approx(0.391, abs=1e-3),
        pytest.approx(0.425, abs=1e-3),
    ]
    assert column(against, "verdict") == ["below the curve", "below the curve"]


def test_throughput_per_gpu_and_per_mw_at_a_speed(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["frontier", *TYPED, "--watts-per-gpu", "1250", "--at-speed", "128"]
    argv += ["--interpolation", "linear"]
    lookups = table_titled(run_json(capsys, *argv), "Look-ups")
    per_gpu = 114_342 + (49_646 - 114_342) * (128 - 97.1) / (208.7 - 97.1)
    assert column(lookups, "answer") == [
        pytest.approx(per_gpu),
        pytest.approx(per_gpu / 1_250 * 1e6),
    ]
    assert column(lookups, "answer unit") == ["total tok/s per GPU", "total tok/s per MW"]


def test_the_area_on_log_axes_is_labelled(capsys: pytest.CaptureFixture[str]) -> None:
    _, area = run_json(capsys, "frontier", *TYPED, "--area-axes", "log-x", "-k", "3")
    got = figures(area)
    assert got["frontier area"][1] == "(decades of tok/s per request) × (tok/s per GPU)"
    assert area["title"] == "Area under the frontier (log-x axes)"
    assert 0 < got["share of the area kept"][0] < 100


def test_frontier_says_a_simulated_directory_is_simulated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = gb300_like(tmp_path / "sim", gpus=4)
    simulate(monkeypatch, directory)
    frontier, *_ = run_json(capsys, "frontier", str(directory), "--at-tokens-per-s-per-mw", "1e8")
    assert frontier["source"].startswith("simulated, ")
    assert column(frontier, "W per GPU") == [1_400.0] * 4  # measured-in-simulation power


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--interpolation", "linear"], "--interpolation"),
        (["--gpu-hour-price", "2"], "--gpu-hour-price"),
        (["--against-price", "1,2"], "--against-price"),
        (["--at-tokens-per-s-per-mw", "1e8"], "--at-tokens-per-s-per-mw"),
    ],
)
def test_frontier_refuses_options_that_change_nothing(
    capsys: pytest.CaptureFixture[str], argv: list[str], flag: str
) -> None:
    assert flag in error_line(capsys, "frontier", *TYPED, *argv)


def test_watts_without_typed_points_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = gb300_like(tmp_path / "r")
    assert "--watts-per-gpu" in error_line(
        capsys, "frontier", str(directory), "--watts-per-gpu", "9"
    )


def test_a_result_on_declared_power_says_its_per_mw_is_assumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = gb300_like(tmp_path / "d", label="declared")
    set_power(directory, ASSUMED_POWER)
    notes = " ".join(run_json(capsys, "frontier", str(directory))[0]["notes"])
    assert "power ASSUMED, not measured, and so per MW, for: declared" in notes


def test_two_results_with_one_label_keep_each_its_own_power(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every search is labelled `search` unless told: the frontier tells the results apart,
    and each point's W per GPU (and so per MW) is its own result's, not the last one read."""
    first = gb300_like(tmp_path / "a", label="search")
    slower = [probe(1, 485.8, 1_000.0), probe(16, 208.7, 20_000.0), probe(64, 97.1, 50_000.0)]
    power = PowerFigures(source="nvml", mean_watts=2_800.0, valid=True)
    second = write_summary(tmp_path / "b", label="search", gpus=1, power=power, probes=slower)
    frontier, *_ = run_json(capsys, "frontier", str(first), str(second))
    assert set(column(frontier, "W per GPU")) == {1_400.0}  # all the first result's points
    everything = run_json(capsys, "frontier", str(second), str(first))[0]
    labels = column(everything, "point")
    assert len(labels) == len(set(labels)) and all(" #2 " in label for label in labels)


def test_frontier_from_results_and_points(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = gb300_like(tmp_path / "a", label="A")
    b = write_summary(
        tmp_path / "b",
        label="B",
        gpus=2,
        probes=[probe(2, 600.0, 4_000.0), probe(8, 100.0, 20_000.0), probe(9, None, 1.0)],
    )
    argv = ["frontier", str(a), str(b), "--point", "700,100,typed fast", "-k", "3"]
    frontier, area = run_json(capsys, *argv)
    labels = column(frontier, "point")
    assert "typed fast" in labels and "B probe 2 agents" in labels
    assert "B probe 8 agents" not in labels  # 10,000 tok/s per GPU at 100: dominated by A's 97.1
    assert column(frontier, "kept").count(True) == 3
    assert any("1 point skipped" in note for note in frontier["notes"])
    got = figures(area)
    assert got["points given"][0] == 4 + 2 + 1
    assert 0 < got["share of the area kept"][0] <= 100
    assert got["frontier area"][1] == "(tok/s per request) × (tok/s per GPU)"


def test_frontier_says_when_the_gpu_count_is_assumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = write_summary(tmp_path / "c", label="C", probes=[probe(4, 50.0, 8_000.0)])
    frontier, _ = run_json(capsys, "frontier", str(directory))
    assert column(frontier, "total tok/s per GPU") == [8_000.0]
    assert any("GPU count not given" in n and n.endswith(": C") for n in frontier["notes"])
