"""`agentload compare`: typed systems with several tiers, and what a repeated label may not do."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.cli import main
from tests.analysis.simulated import simulate
from tests.analysis.summaries import ASSUMED_POWER, gb300_like, set_power, set_tier
from tests.commands.cli import column, error_line, rows_by_first, run_json


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--system", "A", "price=1", "--system", "A", "tier=b", "price=2"], "price= 1 and 2"),
        (["--system", "A", "tier=x", "--system", "A", "tier=x", "--system", "B"], "tier 'x' twice"),
        (["--system", "A", "speed=1", "p25=2", "--system", "B"], "one output speed"),
    ],
)
def test_a_repeated_label_must_describe_one_system(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    assert expected in error_line(capsys, "compare", *argv)


def test_p25_speeds_are_compared(capsys: pytest.CaptureFixture[str]) -> None:
    _, tier = run_json(capsys, "compare", "--system", "A", "p25=100", "--system", "B", "p25=50")
    assert rows_by_first(tier)["output speed"][4] == pytest.approx(0.5)


def test_a_simulated_directory_is_said_to_be_simulated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    measured = gb300_like(tmp_path / "m", label="measured GB300")
    simulated = gb300_like(tmp_path / "s", label="simulated GB300")
    simulate(monkeypatch, simulated)
    systems, tier = run_json(capsys, "compare", str(measured), str(simulated))
    sources = column(systems, "from")
    assert sources[0].startswith("measured, ") and sources[1].startswith("simulated, ")
    assert "simulated GB300: simulated power (nvml)" in " ".join(tier["notes"])


def test_declared_power_is_said_assumed_not_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    metered = gb300_like(tmp_path / "m", label="metered")
    declared = gb300_like(tmp_path / "d", label="declared")
    set_power(declared, ASSUMED_POWER)
    systems, _ = run_json(capsys, "compare", str(metered), str(declared))
    assert column(systems, "power source") == ["nvml", "ASSUMED, not measured"]


def test_a_tier_at_the_search_cap_is_a_bound_and_its_capacity_ratios_are_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    limited = gb300_like(tmp_path / "l", label="limited")
    capped = gb300_like(tmp_path / "c", label="capped")
    set_tier(capped, limit="max_agents")  # passed at --max-agents: not the tier's limit
    _, tier = run_json(capsys, "compare", str(limited), str(capped))
    rows = rows_by_first(tier)
    assert rows["max agents"][2:] == [160, "160+", None]
    for figure in ("agents per GPU", "agents per MW", "total tokens/s per GPU"):
        assert rows[figure][4] is None
    assert rows["output speed"][4] == pytest.approx(1.0)  # not a capacity figure
    assert any(note.startswith("N+: capped passed at the search's cap") for note in tier["notes"])


def test_compare_dirs_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = gb300_like(tmp_path / "a", label="GB300")
    b = gb300_like(tmp_path / "b", label="<script>alert('x')</script>", gpus=2)
    out = tmp_path / "compare.html"
    argv = ["compare", str(a), str(b), "--gpu-hour-price", "2.26", "--html", str(out)]
    argv += ["--system", "MI355X", "tier=40 tok/s", "agents=80", "total=17361", "price=1.50"]
    systems, tier = run_json(capsys, *argv)
    assert column(systems, "$ per GPU-hour") == [2.26, 2.26, 1.5]
    assert tier["headers"][-2:] == [
        "<script>alert('x')</script> / GB300 (×)",
        "MI355X / GB300 (×)",
    ]
    rows = {row[0]: row for row in tier["rows"]}
    assert rows["max agents"][2:5] == [160, 160, 80]
    assert rows["agents per GPU"][5] == pytest.approx(0.5)  # 160 agents on 2 GPUs vs 1
    assert rows["cost per M tokens"][6] == pytest.approx((1.5 / 17_361) / (2.26 / 185_382))
    page = out.read_text()
    assert "<script" not in page and "&lt;script&gt;" in page
    for external in ("<link", "src=", "http://", "https://", "url("):
        assert external not in page
    assert "tok/s per GPU" in page and str(a / "summary.json") in page


def test_compare_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", "--system", "B300", "total=33041", "price=2.26"]
    argv += ["--system", "MI355X", "total=17361", "price=1.50"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "MI355X / B300 (×)" in out and "$/M tok" in out and "0.019" in out and "0.024" in out
