"""The analysis verbs through `agentload.cli.main`: typed figures, results dirs, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentload.cli import main
from tests.analysis.cli import column, error_line, figures, run_json
from tests.analysis.summaries import (
    ASSUMED_POWER,
    gb300_like,
    probe,
    set_power,
    set_tier,
    tier,
    write_summary,
)
from tests.analysis.test_mix import COUNCIL_TRACE


def test_decode_typed_headline(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["decode", "--total-tokens-per-s", "185,382", "--output-tokens-per-s", "1237"]
    argv += ["--agents", "160", "--output-speed", "40.9", "--gpus", "1"]
    argv += ["--watts-per-gpu", "1400", "--cache-hit-rate", "97.2%"]
    table, *_ = run_json(capsys, *argv)
    got = figures(table)
    assert got["total tokens/s"] == (185_382, "tok/s (all GPUs)", "typed in")
    value, unit, source = got["output (generated) share of tokens"]
    assert round(value, 1) == 0.7 and unit == "%" and source == "computed"
    assert round(got["input share of tokens"][0], 1) == 99.3
    assert got["total tokens/s per MW (at the GPU)"][0] == pytest.approx(185_382 / 1_400 * 1e6)
    assert got["agents × speed"][0] == pytest.approx(6_544)
    assert got["output GPU-equivalents"][0] == pytest.approx(6_544 / 1_237)
    assert any("at most 5 GPUs" in note for note in table["notes"])
    # Every row names a unit and where it came from.
    assert all(row[2] and row[3] for row in table["rows"])


def test_decode_text_names_units_and_sources(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", "--total-tokens-per-s", "185382", "--output-tokens-per-s", "1237"]) == 0
    out = capsys.readouterr().out
    assert "0.667" in out and "tok/s per GPU" in out and "typed in" in out and "computed" in out


def test_decode_per_mw_headline_to_per_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["decode", "--tokens-per-s-per-mw", "150e6", "--gpus", "4", "--total-watts", "5000"]
    got = figures(run_json(capsys, *argv)[0])
    assert got["tokens/s per GPU from the per-MW headline"][0] == pytest.approx(187_500)


def test_decode_per_gpu_figures_scale_to_the_deployment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["decode", "--total-tokens-per-s", "1000", "--per-gpu", "--gpus", "4"]
    got = figures(run_json(capsys, *argv)[0])
    assert got["total tokens/s"][0] == 4_000
    assert got["total tokens/s per GPU"][0] == 1_000


def test_decode_results_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = gb300_like(tmp_path / "gb300", gpus=4)
    table, *_ = run_json(capsys, "decode", str(directory))
    assert table["source"] == f"measured, {directory / 'summary.json'}"
    assert column(table, "point")[0] == "tier 40 tok/s"
    assert column(table, "total tok/s per GPU")[0] == pytest.approx(185_382)
    assert round(column(table, "output %")[0], 1) == 0.7
    assert column(table, "total tok/s per MW (at the GPU)")[0] == pytest.approx(
        185_382 / 1_400 * 1e6
    )
    assert any("nvml" in note for note in table["notes"])


def test_decode_results_dir_with_typed_power(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = gb300_like(tmp_path / "gb300")
    table, *_ = run_json(capsys, "decode", str(directory), "--watts-per-gpu", "1000")
    assert column(table, "total tok/s per MW (at the GPU)")[0] == pytest.approx(
        185_382 / 1_000 * 1e6
    )
    assert any("power typed in" in note for note in table["notes"])


def test_cost_implied_throughput(capsys: pytest.CaptureFixture[str]) -> None:
    tables = run_json(capsys, "cost", "--gpu-hour-price", "2.26", "--dollars-per-m", "0.019")
    (table,) = tables
    assert column(table, "implied tok/s per GPU") == [pytest.approx(33_041, abs=1)]
    assert "2.26" in table["source"]


def test_cost_hosted_blend_and_trace(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cost", "--input-price", "1.25", "--output-price", "4.25"]
    argv += ["--cached-discount", "88%", "--mix", "7:2:1", "--trace", str(COUNCIL_TRACE)]
    (table,) = run_json(capsys, *argv)
    blended = column(table, "blended $/M tokens")
    assert blended[0] == pytest.approx(0.78)
    assert blended[1] < blended[0]
    assert column(table, "from") == ["typed in", str(COUNCIL_TRACE)]


def test_electricity_on_declared_power_says_assumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = gb300_like(tmp_path / "gb300")
    argv = ["cost", str(directory), "--gpu-hour-price", "2.26", "--kwh-price", "0.1"]
    assert not any("ASSUMED" in n for n in run_json(capsys, *argv)[0]["notes"])
    set_power(directory, ASSUMED_POWER)
    notes = run_json(capsys, *argv)[0]["notes"]
    assert any(n.startswith("electricity on power ASSUMED, not measured: ") for n in notes)


def test_a_tier_at_the_search_cap_is_priced_as_an_upper_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = gb300_like(tmp_path / "gb300")
    set_tier(directory, limit="max_agents")
    gpu_hour, *_ = run_json(capsys, "cost", str(directory), "--gpu-hour-price", "2.26")
    assert column(gpu_hour, "point")[0] == "tier 40 tok/s (at the search's cap)"
    assert any("its $/M is an upper bound" in note for note in gpu_hour["notes"])


def test_cost_results_dir_self_host_vs_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = gb300_like(tmp_path / "gb300")
    argv = ["cost", str(directory), "--gpu-hour-price", "2.26", "--kwh-price", "0.1"]
    argv += ["--input-price", "1.25", "--output-price", "4.25", "--cached-discount", "0.88"]
    argv += ["--utilisation", "0.5", "--overhead", "0.3"]
    gpu_hour, hosted, own, *_per_agent = run_json(capsys, *argv)
    tier_row = gpu_hour["rows"][0]
    assert tier_row[0] == "tier 40 tok/s"
    assert column(gpu_hour, "GPU $/M tokens")[0] == pytest.approx(2.26 / (185_382 * 3600) * 1e6)
    assert column(gpu_hour, "electricity $/M tokens")[0] == pytest.approx(
        1.4 * 0.1 / (185_382 * 3600) * 1e6
    )
    # Every probe carries its measured mix, so every row has a $/M output tokens.
    assert all(value is not None for value in column(gpu_hour, "all-in $/M output tokens"))
    assert any(name.startswith("measured") for name in column(hosted, "mix"))
    even = column(own, "break-even utilisation %")[0]
    assert 0 < even < 50  # cheaper than the API at the typed 50% utilisation
    assert column(own, "self-host / hosted (×)")[0] < 1


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
    assert any("1 point(s) skipped" in note for note in frontier["notes"])
    got = figures(area)
    assert got["points given"][0] == 4 + 2 + 1
    assert 0 < got["share of the area kept"][0] <= 100
    assert got["frontier area"][1] == "(tok/s per request) × (tok/s per GPU)"


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
    assert "tok/s/GPU" in page and str(a / "summary.json") in page


def test_compare_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", "--system", "B300", "total=33041", "price=2.26"]
    argv += ["--system", "MI355X", "total=17361", "price=1.50"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "MI355X / B300 (×)" in out and "$/M tok" in out and "0.019" in out and "0.024" in out


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["decode", "{missing}"], "no summary.json here"),
        (["cost", "--gpu-hour-price", "-1", "--tokens-per-s-per-gpu", "5"], "must be >= 0"),
        (["cost", "--gpu-hour-price", "two", "--dollars-per-m", "0.019"], "expected a number"),
        (["cost", "--dollars-per-m", "0.019"], "needs --gpu-hour-price"),
        (["cost", "--input-price", "1", "--output-price", "2", "--mix", "7:2"], "C:U:O"),
        (["cost", "--input-price", "1", "--mix", "7:2:1"], "--output-price"),
        (["cost"], "nothing to price"),
        (["decode"], "give a results directory"),
        (["decode", "--total-tokens-per-s", "10", "--output-tokens-per-s", "20"], "exceeds"),
        (["decode", "--cache-hit-rate", "120%", "--agents", "1"], "a share is 0..1"),
        (["frontier", "--point", "1"], "SPEED,THROUGHPUT"),
        (["frontier", "--point", "1,2", "-k", "1"], "k >= 2"),
        (["compare", "--system", "A", "total=1"], "two or more"),
        (["compare", "--system", "A", "colour=red", "--system", "B"], "KEY=VALUE"),
        (["compare", "--system", "A", "--system", "B", "--gpu-hour-price", "C=1"], "labelled"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    argv = [arg.replace("{missing}", str(tmp_path)) for arg in argv]
    line = error_line(capsys, *argv)
    assert expected in line


def test_bad_summary_names_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_summary(tmp_path, tiers=[tier("t", max_agents=3)])
    raw = json.loads((tmp_path / "summary.json").read_text())
    raw["tiers"][0]["max_agents"] = -3
    (tmp_path / "summary.json").write_text(json.dumps(raw))
    line = error_line(capsys, "decode", str(tmp_path))
    assert f"{tmp_path / 'summary.json'}: field 'tiers[0].max_agents'" in line


def test_frontier_says_when_the_gpu_count_is_assumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = write_summary(tmp_path / "c", label="C", probes=[probe(4, 50.0, 8_000.0)])
    frontier, _ = run_json(capsys, "frontier", str(directory))
    assert column(frontier, "total tok/s per GPU") == [8_000.0]
    assert any("GPU count not given" in n and n.endswith(": C") for n in frontier["notes"])


@pytest.mark.parametrize("verb", ["decode", "cost", "frontier", "compare", "plan"])
def test_every_analysis_verb_has_help(capsys: pytest.CaptureFixture[str], verb: str) -> None:
    with pytest.raises(SystemExit) as info:
        main([verb, "--help"])
    assert info.value.code == 0
    assert "--json" in capsys.readouterr().out
