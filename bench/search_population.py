"""The search-cost harness's population: simulated deployments, each with its workload, tiers
and search bounds (`Case`), chosen for variety, not for any plan's benefit.

Systems (Hopper, Blackwell, Grace-Blackwell, and MI355X on the roofline), models (dense 8B to
405B, MoE 30B to 1T), layouts (tensor parallel, expert parallel, attention data parallel, many
small engine instances), workloads (AgentPerf's agentic-coding shape, a shorter-prompt variant for
40K-context models, a fitted mini-swe-agent shape, long tool times) and tier ladders
(AgentPerf's five speed floors, the same with a tight TTFT ceiling, custom latency-bound
ladders, AgentX end-to-end interactivity, other percentiles) vary together; `--max-agents`
is what an operator of that box would search up to (`AGENTS_PER_GPU`), so some tiers are out
of reach, as in real searches. `QUICK` is a small, fast subset.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentload.results.tiers import Tier, parse_tier, preset
from agentload.sim.setup.build import DeploymentSpec

AGENTIC = "synthetic:agentic-coding"
SHORT = "synthetic:agentic-coding?mean_input=14000&max_input=32000"
"""AgentPerf's shape with prompts that fit a 40K context."""
SWE = "synthetic:swe-agent?max_input=32000"
SLOW_TOOLS = "synthetic:agentic-coding?tool_time_median_s=6&max_tool_time_s=120"
"""Agents that spend longer in their tools (tests, builds)."""
LATENCY = ("interactive:80:1", "standard:40:3", "batch:15:10")
E2E = ("x40:e2e=40", "x20:e2e=20", "x10:e2e=10")
TAILS = ("p10fast:60@p10:2@p99", "p50mid:30@p50:5@p99")


AGENTS_PER_GPU = 128
MOST_AGENTS = 1024
"""The search bound an operator would give: 1,024 agents on an 8-GPU box (the issue's
example; AgentPerf's answers there are in the tens to hundreds), scaled down with the GPUs."""


@dataclass(frozen=True)
class Case:
    """One deployment, workload, tier ladder and search bound."""

    name: str
    system: str
    model: str
    gpus: int
    parallel: str
    workload: str = AGENTIC
    ladder: str | tuple[str, ...] = "agentperf"
    """A preset name (`agentperf`), `agentperf@S` (its TTFT ceiling S seconds), or tier specs."""
    max_agents: int = 0
    """The search's cap (0: `AGENTS_PER_GPU` x GPUs, at most `MOST_AGENTS`)."""
    precision: float = 0.1
    steps: str = "auto"
    quick: bool = False

    @property
    def cap(self) -> int:
        return self.max_agents or min(MOST_AGENTS, AGENTS_PER_GPU * self.gpus)

    def deployment(self) -> DeploymentSpec:
        return DeploymentSpec(
            system=self.system,
            model=self.model,
            gpus=self.gpus,
            parallel=self.parallel,
            steps=self.steps,
        )

    def tiers(self) -> tuple[Tier, ...]:
        if isinstance(self.ladder, tuple):
            return tuple(parse_tier(spec) for spec in self.ladder)
        name, _, ceiling = self.ladder.partition("@")
        return preset(name, ttft_ceiling_s=float(ceiling) if ceiling else None)


DSV4 = "sgl-project/DeepSeek-V4-Pro-FP8"
DSV4F = "sgl-project/DeepSeek-V4-Flash-FP8"
LLAMA70 = "meta-llama/Meta-Llama-3.1-70B"
LLAMA8 = "meta-llama/Meta-Llama-3.1-8B"
QWEN32 = "Qwen/Qwen3-32B"
QWEN235 = "Qwen/Qwen3-235B-A22B-FP8"
QWEN30A3 = "Qwen/Qwen3-30B-A3B"

CASES: tuple[Case, ...] = (
    Case("gb300-dsv4-tp8", "gb300", DSV4, 8, "tp8,ep8", quick=True),
    Case("gb300-dsv4-dp8", "gb300", DSV4, 8, "tp1,dp8,ep8"),
    Case("gb300-dsv4-tp8-p25", "gb300", DSV4, 8, "tp8,ep8", workload=SHORT, precision=0.25),
    Case("b300-dsv4-tp8-slow", "b300_sxm", DSV4, 8, "tp8,ep8", workload=SLOW_TOOLS),
    Case("mi355x-dsv4-tp8", "mi355x", DSV4, 8, "tp8,ep8", steps="roofline"),
    Case("gb200-dsv4f-tp4", "gb200", DSV4F, 8, "tp4,ep4"),
    Case("h200-dsv4f-tp8-lat", "h200_sxm", DSV4F, 8, "tp8,ep8", ladder=LATENCY),
    Case("h200-dsv4f-tp8-ttft2", "h200_sxm", DSV4F, 8, "tp8,ep8", ladder="agentperf@2"),
    Case("h200-kimi-tp8", "h200_sxm", "moonshotai/Kimi-K2.5", 8, "tp8,ep8"),
    Case("gb200-glm-tp8-lat", "gb200", "zai-org/GLM-5.2-FP8", 8, "tp8,ep8", ladder=LATENCY),
    Case(
        "b200-minimax-tp4-slow",
        "b200_sxm",
        "MiniMaxAI/MiniMax-M2.7",
        8,
        "tp4,ep4",
        workload=SLOW_TOOLS,
    ),
    Case("h200-llama70-tp8", "h200_sxm", LLAMA70, 8, "tp8", workload=SHORT),
    Case("h100-llama70-tp4-e2e", "h100_sxm", LLAMA70, 8, "tp4", workload=SHORT, ladder=E2E),
    Case("b200-llama70-tp2", "b200_sxm", LLAMA70, 8, "tp2", workload=SHORT),
    Case("mi355x-llama70-tp8", "mi355x", LLAMA70, 8, "tp8", workload=SHORT, steps="roofline"),
    Case(
        "b300-llama405-tp8", "b300_sxm", "meta-llama/Meta-Llama-3.1-405B", 8, "tp8", workload=SHORT
    ),
    Case("h100-llama8-tp1", "h100_sxm", LLAMA8, 2, "tp1", quick=True),
    Case(
        "h100-llama8-tp1-p05",
        "h100_sxm",
        LLAMA8,
        1,
        "tp1",
        workload=SHORT,
        precision=0.05,
        quick=True,
    ),
    Case("l40s-llama8-tp2-lat", "l40s", LLAMA8, 2, "tp2", workload=SWE, ladder=LATENCY, quick=True),
    Case("h200-qwen32-tp2", "h200_sxm", QWEN32, 8, "tp2", workload=SHORT),
    Case("h100-qwen32-tp8-e2e", "h100_sxm", QWEN32, 8, "tp8", workload=SWE, ladder=E2E),
    Case("b200-qwen235-tp8", "b200_sxm", QWEN235, 8, "tp8,ep8", workload=SHORT),
    Case("h200-qwen235-tp4-tails", "h200_sxm", QWEN235, 8, "tp4,ep4", workload=SHORT, ladder=TAILS),
    Case("h100-qwen30a3-tp2", "h100_sxm", QWEN30A3, 4, "tp2,ep2", workload=SHORT),
    Case(
        "gb300-qwen30a3-tp1-ttft2",
        "gb300",
        QWEN30A3,
        4,
        "tp1",
        workload=SHORT,
        ladder="agentperf@2",
    ),
    Case(
        "h200-scout-tp4-swe",
        "h200_sxm",
        "meta-llama/Llama-4-Scout-17B-16E-Instruct",
        4,
        "tp4,ep4",
        workload=SWE,
    ),
)
QUICK: tuple[Case, ...] = tuple(c for c in CASES if c.quick)
