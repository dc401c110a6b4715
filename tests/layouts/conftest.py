"""One tiny layout search, asked of the library (`chosen`) and of the command (`searched`) with
the same settings: 2 x H200, Qwen3-8B (dense: tp1 and tp2), two tiers, two searches, on a
small synthetic workload, the real simulated search."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.cli import main
from agentload.layouts.choose import choose_layout
from agentload.layouts.request import LAYOUT_PRECISION, LayoutRequest, LayoutResult
from agentload.results.tiers import parse_tier
from agentload.run.search_settings import SearchSettings
from agentload.run.settings import AgentSettings
from agentload.sim.setup.build import DeploymentSpec

pytest.importorskip("aiconfigurator_core", reason="the sim extra is not installed")

WORKLOAD = (
    "synthetic:agentic-coding?sessions=16&system_tokens=2048&min_input=3000&mean_input=8000"
    "&max_input=24000&task_median=400&calls_median=8&tool_call_output_median=40"
    "&burst_output_median=300&max_output=1024&tool_time_median_s=2&max_tool_time_s=10"
)
SYSTEM, MODEL, GPUS, SEARCHES, SEED, SALT = "h200_sxm", "Qwen/Qwen3-8B", 2, 2, 5, "fixed"
TIERS = ("fast:150:2", "slow:40:5")
SETTLE_S, WINDOW_S, MAX_WINDOW_S, RAMP_S, MIN_SAMPLES = 5, 15, 30, 2, 10
DEPLOYMENT = ("--system", SYSTEM, "--engine", "sglang", "--model", MODEL)
SEARCH = (
    *(a for spec in TIERS for a in ("--tier", spec)), "--settle", str(SETTLE_S),
    "--window", str(WINDOW_S), "--max-window", str(MAX_WINDOW_S), "--ramp", str(RAMP_S),
    "--min-samples", str(MIN_SAMPLES), "--seed", str(SEED), "--salt", SALT,
)  # fmt: skip


def layout_request(out: Path) -> LayoutRequest:
    """The tiny search, as the library is asked it."""
    return LayoutRequest(
        workload=WORKLOAD,
        deployment=DeploymentSpec(
            system=SYSTEM, model=MODEL, gpus=GPUS, routing="cache_aware", kv_host_gb=0.0
        ),
        kv_host_gb=0.0,
        search=SearchSettings(
            tiers=tuple(parse_tier(spec) for spec in TIERS),
            settle_s=SETTLE_S,
            window_s=WINDOW_S,
            max_window_s=MAX_WINDOW_S,
            ramp_s=RAMP_S,
            min_samples=MIN_SAMPLES,
            precision=LAYOUT_PRECISION,
        ),
        agents=AgentSettings(start_mid_session=True, seed=SEED, run_salt=SALT),
        searches=SEARCHES,
        out=out,
    )


@pytest.fixture(scope="session")
def chosen(tmp_path_factory: pytest.TempPathFactory) -> LayoutResult:
    """The library's answer."""
    return choose_layout(layout_request(tmp_path_factory.mktemp("layouts") / "chosen"))


@pytest.fixture(scope="session")
def searched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The command's results directory."""
    out = tmp_path_factory.mktemp("layouts") / "search"
    argv = [
        "simulate", "--choose-layout", "--gpus", str(GPUS), "--workload", WORKLOAD,
        *DEPLOYMENT, *SEARCH, "--searches", str(SEARCHES), "--kv-host-gb", "0",
        "--routing", "cache_aware", "--out", str(out),
    ]  # fmt: skip
    assert main(argv) == 0
    return out
