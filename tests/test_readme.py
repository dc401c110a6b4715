"""What the README says is what the tool does: its commands run, and the figures it quotes that
do not depend on the machine are the ones the tool prints (the demo's workload and its hit
rate, the published shape's, the demo's tiers and declared watts, the report's scripts and
charts, the saved config and the command that runs it again)."""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

import orjson
import pytest

from agentload.cli import build_parser, main
from agentload.commands.demo import name_default_tiers
from agentload.config_file import CONFIG_SOURCE, apply_config, effective_config
from agentload.measure.power_spec import CPU_WATTS_PER_VCPU, CPU_WATTS_SOURCE
from agentload.report.html import write_report
from agentload.report.load import load_view
from agentload.report.vega import CHART_CLASS
from agentload.results.files import CONFIG_FILE
from agentload.results.tiers import preset
from agentload.run import presets
from tests.paths import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
DEMO = REPO / "bench" / "data" / "sim-validation" / "demo"
COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
STATS = re.compile(r"agentload workload stats(?: '([^']+)')?\s+# ([^:\n]+): ([\d.]+)%")
COMMAND_ROW = re.compile(r"^\| `agentload ([a-z]+)(?: ([a-z|\\]+))?[^`]*` \|", re.MULTILINE)
RERUN = re.compile(r"`agentload (\w+) --config results/<time>-demo/config.toml")


def _one(pattern: str) -> re.Match[str]:
    found = re.search(pattern, README)
    assert found, f"the README no longer says {pattern!r}"
    return found


def _stats(capsys: pytest.CaptureFixture[str], *source: str) -> dict[str, object]:
    assert main(["workload", "stats", *source, "--json"]) == 0
    data: dict[str, object] = orjson.loads(capsys.readouterr().out)
    return data


@pytest.mark.slow
def test_the_quoted_workload_stats_commands_print_the_hit_rates_quoted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    quoted = STATS.findall(README)
    assert len(quoted) == 2, quoted  # the demo's workload and the published shape
    for spec, whose, rate in quoted:
        stats = _stats(capsys, *([spec] if spec else []))
        assert f"{stats['prefix_cache_hit_rate']:.1%}" == f"{rate}%", whose
    demo_spec = next(spec for spec, whose, _ in quoted if "demo" in whose)
    assert demo_spec == presets.LOCAL_WORKLOAD  # "the demo's" is the demo's


def test_the_demos_prompt_and_reply_lengths_are_its_workloads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stats = _stats(capsys, presets.LOCAL_WORKLOAD)
    mean_prompt = _one(r"the demo's prompts average ([\d,]+)\s+tokens").group(1)
    median_reply = _one(r"replies have a median of (\d+)").group(1)
    assert f"{stats['input_tokens']['mean']:,.0f}" == mean_prompt  # type: ignore[index]
    assert f"{stats['output_tokens']['p50']:,.0f}" == median_reply  # type: ignore[index]


def test_the_demos_tiers_and_declared_watts_are_as_described() -> None:
    cpu60 = next(t for t in preset(presets.DEMO_TIERS) if t.name == "cpu60")
    assert "p25 output speed >= 60" in README and cpu60.output_speed_floor_tokens_per_s == 60
    assert cpu60.output_speed_percentile == 25 and cpu60.ttft_percentile == 95
    assert f"within {cpu60.ttft_ceiling_s:g} s (p95 TTFT <= {cpu60.ttft_ceiling_s:g} s)" in README
    watts = _one(r"declares\* ([\d.]+) W per vCPU").group(1)
    assert float(watts) == CPU_WATTS_PER_VCPU
    tdp, threads = _one(r"(\d+) W TDP over its\s+(\d+) hardware threads").groups()
    assert f"{tdp} W TDP over {threads} hardware threads" in CPU_WATTS_SOURCE


@pytest.mark.parametrize("row", COMMAND_ROW.findall(README), ids=lambda r: " ".join(r).strip())
def test_every_verb_of_the_commands_table_answers_help(
    row: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    verb, subs = row
    for sub in [s for s in subs.replace("\\", "").split("|") if s] or [""]:
        argv = [verb, *([sub] if sub else []), "--help"]
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 0
        assert f"usage: agentload {' '.join(argv[:-1])}" in capsys.readouterr().out


def test_the_commands_table_lists_every_verb() -> None:
    listed = {verb for verb, _ in COMMAND_ROW.findall(README)}
    parser = build_parser()
    verbs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert listed == set(verbs.choices)


def _parsed(argv: list[str]) -> argparse.Namespace:
    parser = build_parser()
    apply_config(parser, argv)
    return parser.parse_args(argv)


def _options(args: argparse.Namespace) -> dict[str, object]:
    kept = ("config", "config_parser", "func", CONFIG_SOURCE)  # bookkeeping, not options
    return {k: v for k, v in vars(args).items() if k not in kept}


def test_a_demos_saved_config_runs_the_same_demo_with_the_command_the_readme_gives(
    tmp_path: Path,
) -> None:
    first = _parsed(["demo"])
    name_default_tiers(first)
    text = effective_config(first, "demo") or ""
    verb = _one(RERUN.pattern).group(1)
    assert f"# Run it again: agentload {verb} --config THIS_FILE" in text
    path = tmp_path / CONFIG_FILE
    path.write_text(text)
    again = _parsed([verb, "--config", str(path)])
    assert _options(again) == _options(first)
    saved = {line.split(" = ")[0]: line.split(" = ", 1)[1] for line in text.splitlines()[4:]}
    assert orjson.loads(saved["workload"]) == presets.LOCAL_WORKLOAD  # what workload stats reads
    assert orjson.loads(saved["tiers"]) == presets.DEMO_TIERS
    assert int(saved["max_agents"]) == presets.DEMO_MAX_AGENTS


def test_the_report_has_the_scripts_and_charts_the_readme_names_and_fetches_nothing(
    tmp_path: Path,
) -> None:
    charts, scripts = _one(
        r"its (\w+)\s+charts are Vega-Lite specs.*?drawn by (\w+)\s+inline"
    ).groups()
    results = tmp_path / "demo"
    shutil.copytree(DEMO, results)
    page = write_report(load_view(results)).read_text(encoding="utf-8")
    tags = re.findall(r"<script[^>]*>", page)
    assert sum('type="application/json"' not in tag for tag in tags) == COUNTS[scripts]
    assert page.count(f'class="{CHART_CLASS}"') == COUNTS[charts]
    assert sum('type="application/json"' in tag for tag in tags) == COUNTS[charts]
    markup = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.DOTALL)
    assert not re.search(r"<(script|img|iframe)[^>]*\ssrc=|<link[^>]*href=", markup)
    # (what the page tries to fetch when drawn: tests/report/test_browser.py, network off)
