"""A search on the real llama.cpp server converges, and each tier's answer is as measured:
max agents passed, the next count up failed. One search serves every test here (about a
minute of the real server): the default plan (the sweep) in one process, on speed/TTFT tiers
and on end-to-end normalised interactivity tiers (AgentX's definition). Bisection's probe
order is checked without a server (tests/search), and searches over worker processes and Ray
actors against fake servers (tests/scale, tests/reliability)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from agentload.engines.llamacpp import LocalEngine
from agentload.files import read_json
from agentload.measure.power_spec import parse_power_spec
from agentload.results.record import load_records
from agentload.results.summary import ProbeFigures, Summary
from agentload.results.tiers import Tier, parse_tier
from agentload.run.execute import Execution, execute
from agentload.run.search_settings import SearchSettings
from agentload.run.settings import AgentSettings
from agentload.search.plans import DEFAULT_PLAN
from agentload.target.deployment import TargetOptions

WORKLOAD = (
    "synthetic:agentic-coding?sessions=16&system_tokens=256&min_input=400&mean_input=1200"
    "&max_input=4000&task_median=100&calls_median=10&tool_call_output_median=16"
    "&burst_output_median=48&max_output=96&tool_time_median_s=0.05&max_tool_time_s=0.3"
)
MAX_AGENTS = 8
"""Twice the test server's slots, so the top probes queue and a TTFT ceiling fails."""
PRECISION = 0.25
WATTS = 75.0
"""What the power command reports: a measured source whose answer the test knows."""
SPEED_TIERS = (
    Tier(name="loose", output_speed_floor_tokens_per_s=0.001, ttft_ceiling_s=600.0),
    Tier(name="snappy", output_speed_floor_tokens_per_s=0.001, ttft_ceiling_s=0.25),
    Tier(name="impossible", output_speed_floor_tokens_per_s=1e9, ttft_ceiling_s=600.0),
)
INTERACTIVITY_TIERS = (
    parse_tier("e2e-loose:e2e=0.001"),
    parse_tier("e2e-mid:e2e=150"),
    parse_tier("e2e-impossible:e2e=1000000000"),
    parse_tier("mixed:0.001:600:e2e=0.001@p75"),
)
TIERS = SPEED_TIERS + INTERACTIVITY_TIERS


@pytest.fixture(scope="module")
def searched(llama_server: LocalEngine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The search every test below reads: the sweep, in one process."""
    out = tmp_path_factory.mktemp("search") / "results"
    settings = SearchSettings(
        tiers=TIERS,
        max_agents=MAX_AGENTS,
        settle_s=0.5,
        window_s=4.0,
        max_window_s=6.0,
        ramp_s=0.2,
        min_samples=10,
        precision=PRECISION,
        plan=DEFAULT_PLAN,
    )
    search = Execution(
        workload=WORKLOAD,
        search=settings,
        agents=AgentSettings(start_mid_session=True),
        target=TargetOptions(
            url=llama_server.url,
            model=llama_server.model,
            tokenizer=str(llama_server.tokenizer_path),
            metrics_url=f"{llama_server.url}/metrics",
        ),
        out=out,
        label="search-test",
        gpus=1,
        power=parse_power_spec(f"command:echo {WATTS}", interval_s=0.2),
    )
    execute(search, console=Console(quiet=True))
    return out


def _probes(out: Path) -> dict[int, ProbeFigures]:
    summary = Summary.model_validate(read_json(out / "summary.json"))
    return {p.agents: p for p in summary.probes}


def test_the_search_converges_and_writes_every_probe(searched: Path) -> None:
    summary = Summary.model_validate(read_json(searched / "summary.json"))
    assert summary.complete and summary.kind == "search"
    lines = (searched / "probes.jsonl").read_bytes().splitlines()
    assert len(lines) == len(summary.probes) >= 3
    counts = [p.agents for p in summary.probes]
    assert summary.search is not None and summary.search.plan == DEFAULT_PLAN
    assert counts[0] == 1 and max(counts) == MAX_AGENTS  # the loose tier passes at the cap
    assert summary.search.probe_s == pytest.approx(sum(p.probe_s or 0 for p in summary.probes))
    assert all(p.probe_s is not None and p.probe_s >= p.window_s for p in summary.probes)
    assert load_records(searched / "records.jsonl").records


def test_each_tier_passes_at_its_max_and_fails_one_step_up(searched: Path) -> None:
    summary = Summary.model_validate(read_json(searched / "summary.json"))
    probes = _probes(searched)
    for tier in summary.tiers:
        if tier.max_agents is not None:
            assert probes[tier.max_agents].verdicts[tier.name] == "pass", tier.name
            assert tier.total_tokens_per_s == probes[tier.max_agents].total_tokens_per_s
        if tier.first_failing_agents is not None:
            assert probes[tier.first_failing_agents].verdicts[tier.name] == "fail", tier.name
            passing = tier.max_agents or 0
            assert tier.first_failing_agents > passing
            assert tier.first_failing_agents - passing <= max(1, int(PRECISION * passing))
            # Nothing measured between the two: the bracket is as tight as measured.
            assert not [n for n in probes if passing < n < tier.first_failing_agents]


def test_tiers_at_the_extremes(searched: Path) -> None:
    tiers = {t.name: t for t in Summary.model_validate(read_json(searched / "summary.json")).tiers}
    assert tiers["loose"].max_agents == MAX_AGENTS and tiers["loose"].first_failing_agents is None
    assert tiers["impossible"].max_agents is None and tiers["impossible"].first_failing_agents == 1
    per_gpu = tiers["loose"].total_tokens_per_s_per_gpu
    assert per_gpu == pytest.approx(tiers["loose"].total_tokens_per_s)


def test_per_mw_figures_use_the_measured_power(searched: Path) -> None:
    summary = Summary.model_validate(read_json(searched / "summary.json"))
    assert summary.power.source == "command" and not summary.power.assumed
    assert summary.power.valid and summary.power.mean_watts == pytest.approx(WATTS)
    assert (searched / "power.jsonl").stat().st_size > 0
    measured = [t for t in summary.tiers if t.max_agents is not None]
    assert measured
    for tier in measured:
        assert tier.mean_watts == pytest.approx(WATTS)
        assert tier.agents_per_mw == pytest.approx(tier.max_agents / (WATTS / 1e6))
        assert tier.total_tokens_per_s_per_mw == pytest.approx(
            tier.total_tokens_per_s / (WATTS / 1e6)
        )
        assert tier.joules_per_output_token == pytest.approx(WATTS / tier.output_tokens_per_s)


def test_server_side_cache_hit_rate_is_reported(searched: Path) -> None:
    summary = Summary.model_validate(read_json(searched / "summary.json"))
    rates = [p.server_cache_hit_rate for p in summary.probes]
    assert all(r is not None for r in rates)
    # The server's own counters agree with the client's usage to within a few points.
    for p in summary.probes:
        assert p.server_cache_hit_rate == pytest.approx(p.cache_hit_rate, abs=0.1)


def test_every_agent_called_and_each_record_carries_its_probe(searched: Path) -> None:
    workers = read_json(searched / "manifest.json")["workers"]
    summary = Summary.model_validate(read_json(searched / "summary.json"))
    records = load_records(searched / "records.jsonl").records
    assert len({r.id for r in records}) == len(records)
    assert len({r.agent for r in records}) >= MAX_AGENTS  # the top probe's agents all called
    assert summary.selfcheck is not None
    assert (summary.selfcheck.processes or 1) == workers == 1
    # Each probe's records carry its phase.
    phases = {r.phase for r in records}
    assert {f"probe-{p.index}" for p in summary.probes} <= phases


def test_every_probe_carries_goodput_sessions_and_a_methodology_stamp(searched: Path) -> None:
    summary = Summary.model_validate(read_json(searched / "summary.json"))
    for probe in summary.probes:
        assert set(probe.goodput_calls_per_s) == {t.name for t in TIERS}
        assert probe.goodput_calls_per_s["impossible"] == 0.0
        assert probe.sessions is not None and probe.sessions.sessions > 0
        assert probe.methodology is not None
    one = next(p for p in summary.probes if p.agents == 1)
    assert one.sessions is not None and one.sessions.baseline is not None
    busy = max(summary.probes, key=lambda p: p.agents)
    assert busy.sessions is not None and busy.sessions.slowdown_p50 is not None
    assert summary.methodology is not None
    assert summary.methodology.valid == all(p.methodology.valid for p in summary.probes)


def tiers_named(tiers: tuple[Tier, ...]) -> set[str]:
    return {t.name for t in tiers}


def test_a_search_on_interactivity_tiers_converges(searched: Path) -> None:
    summary = Summary.model_validate(read_json(searched / "summary.json"))
    assert summary.complete
    probes = {p.agents: p for p in summary.probes}
    tiers = {t.name: t for t in summary.tiers}
    assert tiers["e2e-loose"].max_agents == MAX_AGENTS
    assert tiers["mixed"].max_agents == MAX_AGENTS
    assert tiers["e2e-impossible"].max_agents is None
    assert tiers["e2e-impossible"].first_failing_agents == 1
    for tier in (t for t in summary.tiers if t.name in tiers_named(INTERACTIVITY_TIERS)):
        assert tier.interactivity_floor_tokens_per_s is not None
        if tier.max_agents is not None:
            assert probes[tier.max_agents].verdicts[tier.name] == "pass", tier.name
            assert tier.p90_interactivity_tokens_per_s == (
                probes[tier.max_agents].p90_interactivity_tokens_per_s
            )
        if tier.first_failing_agents is not None:
            assert probes[tier.first_failing_agents].verdicts[tier.name] == "fail", tier.name
            passing = tier.max_agents or 0
            assert tier.first_failing_agents - passing <= max(1, int(PRECISION * passing))


def test_every_probe_reports_its_interactivity(searched: Path) -> None:
    summary = Summary.model_validate(read_json(searched / "summary.json"))
    for probe in summary.probes:
        assert probe.p90_interactivity_tokens_per_s is not None
        assert probe.p90_interactivity_tokens_per_s > 0
    # The interactivity-only tiers carry no speed floor or TTFT ceiling.
    loose = next(t for t in summary.tiers if t.name == "e2e-loose")
    assert loose.output_speed_floor_tokens_per_s is None and loose.ttft_ceiling_s is None
