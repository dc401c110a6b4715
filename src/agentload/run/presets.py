"""Presets scaled to the embedded CPU engine, so the demo finishes in a couple of minutes.

The published agentic shape (27K-token mean prompts, 150-token median outputs) would take the
small CPU model minutes per call; this keeps the shape (shared system prompt, prefix growth,
short tool calls with reasoning bursts, tool time) at about a seventh of the size.
"""

from __future__ import annotations

LOCAL_WORKLOAD = (
    "synthetic:agentic-coding?sessions=64&system_tokens=1024&min_input=1500&mean_input=4000"
    "&max_input=16000&task_median=300&calls_median=12&tool_call_output_median=24"
    "&burst_output_median=160&max_output=512&tool_time_median_s=0.5&max_tool_time_s=5"
)
"""The synthetic agentic-coding shape, scaled down for a ~1,500 tokens/s CPU model."""

DEMO_AGENTS = 6
DEMO_DURATION_S = 75.0
DEMO_RAMP_S = 10.0
DEMO_SETTLE_S = 15.0
DEMO_CTX_PER_SLOT = 20480
"""Room for the preset's largest prompt (16K) plus its longest reply."""
