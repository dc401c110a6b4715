"""Presets scaled to the embedded CPU engine, so the demo finishes in a few minutes.

The published agentic shape (27K-token mean prompts, 150-token median outputs) would take the
small CPU model minutes per call; this keeps the shape (shared system prompt, prefix growth,
short tool calls with reasoning bursts, tool time) at about a seventh of the size.
"""

from __future__ import annotations

LOCAL_WORKLOAD = (
    "synthetic:agentic-coding?sessions=64&system_tokens=1024&min_input=1500&mean_input=4000"
    "&max_input=16000&task_median=300&calls_median=12&tool_call_output_median=24"
    "&burst_output_median=160&max_output=512&tool_time_median_s=0.3&max_tool_time_s=3"
)
"""The synthetic agentic-coding shape, scaled down for a small CPU model."""

DEMO_TIERS = "local-cpu"
DEMO_MAX_AGENTS = 12
DEMO_SETTLE_S = 10.0
DEMO_WINDOW_S = 30.0
DEMO_MAX_WINDOW_S = 60.0
"""The demo's windows: with 12 s windows (46-100 calls at four agents, a few prefills of 16K
tokens each among them) three demos in a row answered `cpu120` 3, 4 and 4 agents and a repeat
range of 2-3; with 30 s windows after a 10 s settle `cpu60` agreed in five demos of five
(README, "Repeatability", `bench/demo_repeat.py`, with what still differs and why)."""
DEMO_RAMP_S = 2.0
DEMO_MIN_SAMPLES = 30
DEMO_PRECISION = 0.25
DEMO_CHECK_SHARE = 0.25
"""The demo's quality check calls per agent call: its windows (30 s, a few to a few hundred
calls) need this many for the gate to judge most probes (`agentload.quality.settings`: 5 check
calls a window); the report states the share and that the checks add their load."""
