"""`--plan` picks the plan (the sweep by default, the original bisection on request) and
`--prior DIR` takes an earlier result's probes, judged against the current tiers; the summary
says which plan ran."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from agentload.cli import build_parser
from agentload.commands.search import search_settings_from
from agentload.errors import AgentloadError, InputError
from agentload.results.tiers import preset
from agentload.run.probe import paced_ramp_s
from agentload.search.plan import PlanContext
from agentload.search.plans import BISECT, DEFAULT_PLAN, choose
from agentload.search.prior import load_prior, prior_observations
from tests.analysis.summaries import PUBLISHED_POINTS, probe, write_summary


def parsed(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["search", *argv])


def test_the_sweep_is_the_default_and_bisect_stays_selectable() -> None:
    assert search_settings_from(parsed()).plan == DEFAULT_PLAN == "sweep"
    assert search_settings_from(parsed("--plan", "bisect")).plan == BISECT


def test_an_unknown_plan_is_refused() -> None:
    with pytest.raises(SystemExit):
        parsed("--plan", "golden")


def test_a_prior_is_the_earlier_results_probes_judged_against_these_tiers(tmp_path: Path) -> None:
    probes = [probe(a, s, t, p95_ttft_s=1.5) for a, s, t in PUBLISHED_POINTS]
    earlier = write_summary(tmp_path / "earlier", probes=probes)
    settings = search_settings_from(parsed("--prior", str(earlier)))
    assert [p.agents for p in settings.prior] == [1, 16, 64]
    assert settings.prior_source == str(earlier.resolve())
    seen = prior_observations(settings.prior, preset("agentperf"))
    at_64 = next(o for o in seen if o.agents == 64)  # p25 97.1 tokens/s there
    assert at_64.passed["tps60"] and not at_64.passed["tps100"]


def test_a_prior_without_probes_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises((InputError, AgentloadError)):
        load_prior(tmp_path / "empty")


def test_added_agents_start_at_the_full_ramps_pace() -> None:
    assert paced_ramp_s(10.0, before=30, agents=33) == pytest.approx(10.0 * 3 / 33)
    assert paced_ramp_s(10.0, before=0, agents=8) == pytest.approx(10.0)  # the first ramp
    assert paced_ramp_s(10.0, before=16, agents=8) == 0.0  # a shrink starts no one


def test_only_the_sweep_paces_its_ramp_and_holds_windows_for_settling_verdicts() -> None:
    context = PlanContext(tuple(preset("agentperf")), start=1, max_agents=64, precision=0.1)
    sweep = choose(DEFAULT_PLAN, (), context)
    bisect = choose(BISECT, (), context)
    assert sweep is not None and sweep.paced_ramp and sweep.hold is not None
    assert bisect is not None and not bisect.paced_ramp and bisect.hold is None
    assert not bisect.settle_shrink
