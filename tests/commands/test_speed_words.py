"""Two rates, two names, in every verb (`agentload.vocabulary`): the output speed is per request
(how fast a call streams; what tiers judge and the frontier's x axis), and an agent's share of
the throughput is per active agent, tool time included (what cost and a plan price). Before,
`frontier` and `cost` both said `tokens/s per agent`, for 19.9 and 956.7 on the same run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentload.cli import main
from tests.analysis.summaries import gb300_like
from tests.commands.cli import column, run_json
from tests.paths import REPO

PER_AGENT = re.compile(r"tok(ens)?/s(/| per )agent\b")
"""The old, ambiguous name (`calls/s per active agent`, `$ per agent-hour` are not it)."""
PRICES = ["--gpu-hour-price", "2.26", "--input-price", "1.25", "--output-price", "4.25"]
TEAM = ["--developers", "100", "--agents-per-developer", "2", "--active-share", "50%"]


@pytest.fixture
def results(tmp_path: Path) -> str:
    return str(gb300_like(tmp_path / "gb300"))


def test_the_frontier_is_against_the_output_speed_per_request(
    results: str, capsys: pytest.CaptureFixture[str]
) -> None:
    frontier, _area, lookups = run_json(capsys, "frontier", results, "--at-speed", "60")
    assert "p25 output speed, tok/s per request" in frontier["headers"]
    assert column(frontier, "p25 output speed, tok/s per request")[0] == pytest.approx(40.9)
    assert "output speed, tok/s per request" in column(lookups, "given unit")


def test_cost_and_plan_price_tokens_per_active_agent(
    results: str, capsys: pytest.CaptureFixture[str]
) -> None:
    tables = run_json(capsys, "cost", results, *PRICES)
    per_agent = next(t for t in tables if t["title"] == "Per agent")
    # 160 agents on 1 GPU at 185,382 tok/s: 1,158.6 tok/s each, tool time included
    unit = "tok/s per active agent (tool time included)"
    assert column(per_agent, unit)[0] == pytest.approx(185_382 / 160)
    plan = run_json(capsys, "plan", results, *TEAM, *PRICES)
    mix = plan["deployment"]["tokens_per_s_per_active_agent"]
    total = mix["cached_input"] + mix["uncached_input"] + mix["output"]
    assert total == pytest.approx(185_382 / 160)


@pytest.mark.parametrize(
    "argv",
    [
        ["frontier", "{r}", "--at-speed", "60"],
        ["cost", "{r}", *PRICES],
        ["decode", "{r}"],
        ["compare", "{r}", "{r}"],
        ["plan", "{r}", *TEAM, *PRICES],
        ["report", "{r}", "--no-html"],
    ],
    ids=lambda argv: argv[0],
)
def test_no_verb_says_tokens_per_agent(
    results: str,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main([a.replace("{r}", results) for a in argv]) == 0
    out = capsys.readouterr().out
    assert not PER_AGENT.search(out), PER_AGENT.search(out)


def test_a_relation_scales_by_ten_to_the_sixth_not_1e06(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tables = run_json(capsys, "decode", str(REPO / "bench" / "data" / "sim-validation" / "demo"))
    relations = [
        row[1] for t in tables if t["title"].startswith("Consistency") for row in t["rows"]
    ]
    assert relations and any("× 10^6" in r for r in relations)
    assert not any("1e+06" in r for r in relations)
