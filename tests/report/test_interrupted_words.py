"""An interrupted search's report says what it has (`results.answer_words`): a tier the search
did not settle is `not decided (interrupted)`, never `none` (no load meets it); a probe the
interrupt cut short is `cut short` beside its own figures, never `not probed`; and the verbs
that build on an answer (plan, compare, cost) say so too."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agentload.cli import main
from agentload.measure.headline import tier_results
from agentload.report.html import render_report
from agentload.report.load import load_view
from agentload.report.terminal import summary_text
from agentload.results.files import PROBES_FILE, SUMMARY_FILE
from agentload.results.load import read_summary
from agentload.results.tiers import Tier
from agentload.search.answers import annotate
from tests.commands.cli import error_line, run_json
from tests.paths import REPO
from tests.report.builder import TIERS, build_results
from tests.report.specs import charts, rows

UNDECIDED = "not decided (interrupted)"
PRECISION = 1.0
"""A bracket is settled once within 100% of its pass (4 passed, 8 failed: settled)."""
TIER_MODELS = tuple(
    Tier(name=name, output_speed_floor_tokens_per_s=floor, ttft_ceiling_s=ceiling)
    for name, floor, ceiling in TIERS
)


def _interrupted(path: Path, finished: int) -> Path:
    """The synthetic search (1, 2, 4, ... 32 agents) as if interrupted after `finished` probes:
    its summary incomplete, its tiers as the search writes them then (annotated)."""
    built = build_results(path)
    summary = read_summary(built.path)
    probes = summary.probes[:finished]
    tiers = annotate(
        tier_results(TIER_MODELS, probes, summary.gpus, 64),
        probes,
        TIER_MODELS,
        precision=PRECISION,
        max_agents=64,
        gpus=summary.gpus,
    )
    cut = summary.model_copy(update={"complete": False, "probes": probes, "tiers": tiers})
    (built.path / SUMMARY_FILE).write_bytes(orjson.dumps(cut.model_dump(mode="json")))
    (built.path / PROBES_FILE).write_bytes(
        b"".join(orjson.dumps(p.model_dump(mode="json")) + b"\n" for p in probes)
    )
    return built.path


def test_a_search_interrupted_in_its_first_probe_decided_nothing(tmp_path: Path) -> None:
    """Every tier read `max agents none` (the word for a tier no load meets) and the probe the
    interrupt cut short, drawn from the records, sat beside `not probed`."""
    view = load_view(_interrupted(tmp_path / "r", finished=0))
    text = summary_text(view, "text")
    for name, _, _ in TIERS:
        assert f"    {name}: {UNDECIDED}" in text
        assert f"why {name}: not decided: the search was interrupted before a probe finished" in (
            text
        )
    assert "none" not in text.split("first failing")[0] and "not probed" not in text
    (point,) = view.points  # computed from the records over what the cut probe measured
    assert all(view.verdict(point, name) == "cut short" for name, _, _ in TIERS)
    assert "cut short by the interrupt; its figures are computed from records.jsonl" in text
    document = render_report(view)
    assert UNDECIDED in document and "no probe met it" not in document
    assert '<td class="num">cut short</td>' in document


def test_a_tier_still_open_is_not_decided_beside_one_that_settled(tmp_path: Path) -> None:
    """After 1, 2, 4 and 8 agents: `fast` failed at 8 and passed at 4 (settled); `slow` passed
    at 8, the most probed (the cap is 64): not decided, and drawn without an answer's ring."""
    path = _interrupted(tmp_path / "r", finished=4)
    view = load_view(path)
    fast, slow = view.tiers
    assert view.decided(fast) and not view.decided(slow)
    text = summary_text(view, "text")
    assert f"    slow: {UNDECIDED}" in text and "    fast: 4" in text
    assert "why slow: not decided: the search was interrupted after it passed at 8 agents" in text
    assert "raise --max-agents" not in text
    rings = rows(charts(render_report(view))["curve"], "tier-point")
    assert [ring["tier"] for ring in rings] == ["fast"]  # an answer's ring, not a provisional one


def test_plan_compare_and_cost_say_not_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(_interrupted(tmp_path / "r", finished=4))
    team = ["--developers", "10", "--agents-per-developer", "1", "--active-share", "1"]
    line = error_line(capsys, "plan", path, "--tier", "slow", *team)
    assert f"tier 'slow' is {UNDECIDED}" in line
    tables = run_json(capsys, "compare", path, path)
    slow = next(t for t in tables if t["title"] == "Tier slow")
    assert slow["rows"][0][2:4] == [UNDECIDED, UNDECIDED]
    cost = run_json(capsys, "cost", path, "--gpu-hour-price", "2")
    labels = [row[0] for row in cost[0]["rows"]]
    assert f"tier slow ({UNDECIDED}: at the most agents passed so far)" in labels
    assert main(["plan", path, "--tier", "fast", *team, "--json"]) == 0  # decided: sized


def test_compare_writes_a_tier_no_load_meets_as_none(capsys: pytest.CaptureFixture[str]) -> None:
    demo = str(REPO / "bench" / "data" / "sim-validation" / "demo")
    tables = run_json(capsys, "compare", demo, demo)
    cpu200 = next(t for t in tables if t["title"] == "Tier cpu200")
    assert cpu200["rows"][0][2:4] == ["none", "none"]  # was an em dash: not computed
