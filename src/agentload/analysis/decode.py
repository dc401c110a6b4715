"""Decoding headline numbers: per GPU <-> per MW, an output speed (tokens/s per request) <-> the
aggregate the agents receive, and the token mix.

All functions are pure. Throughputs are tokens/s; power is watts; a megawatt is 1e6 W.
"""

from __future__ import annotations

from agentload.analysis.mix import TokenMix, mix_from_rates
from agentload.analysis.results import OperatingPoint
from agentload.frozen import Frozen
from agentload.units import WATTS_PER_MW


def per_mw_from_per_gpu(tokens_per_s_per_gpu: float, watts_per_gpu: float) -> float:
    """Tokens/s per MW from tokens/s per GPU and the watts one GPU draws."""
    _positive(watts_per_gpu, "watts per GPU")
    return tokens_per_s_per_gpu / watts_per_gpu * WATTS_PER_MW


def per_gpu_from_per_mw(tokens_per_s_per_mw: float, watts_per_gpu: float) -> float:
    """Tokens/s per GPU from tokens/s per MW and the watts one GPU draws."""
    _positive(watts_per_gpu, "watts per GPU")
    return tokens_per_s_per_mw * watts_per_gpu / WATTS_PER_MW


def watts_per_gpu(total_watts: float, gpus: int) -> float:
    """Watts one GPU draws, from the deployment's watts and its GPU count."""
    _positive(gpus, "GPU count")
    return total_watts / gpus


def agents_per_mw(agents: float, total_watts: float) -> float:
    """Agents served per MW of accelerator power."""
    _positive(total_watts, "watts")
    return agents / total_watts * WATTS_PER_MW


def aggregate_output(agents: float, output_speed: float) -> float:
    """Output tokens/s the agents receive together while each streams at the given output
    speed (tokens/s per request)."""
    return agents * output_speed


def per_agent_speed(aggregate_tokens_per_s: float, agents: float) -> float:
    """The output speed each agent would stream at, from the aggregate (inverse of
    `aggregate_output`)."""
    _positive(agents, "agent count")
    return aggregate_tokens_per_s / agents


def output_gpu_equivalents(
    agents: float, output_speed: float, output_tokens_per_s_per_gpu: float
) -> float:
    """How many GPUs' worth of output the agents' streaming speed adds up to.

    If each agent were receiving output at its output speed all the time, the deployment
    would need this many GPUs at the per-GPU output rate; a real deployment has at most this
    many (agents also wait for the first token and run tools), when the speed is a mean.
    """
    _positive(output_tokens_per_s_per_gpu, "output tokens/s per GPU")
    return aggregate_output(agents, output_speed) / output_tokens_per_s_per_gpu


def streaming_duty(agents: float, output_speed: float, output_tokens_per_s_total: float) -> float:
    """Share of the time an agent is receiving output, if it streams at the output speed.

    Deployment output = agents x speed x duty, so duty = output / (agents x speed). Above 1
    means the speed is not a mean over streaming time (e.g. it is a low percentile).
    """
    aggregate = aggregate_output(agents, output_speed)
    _positive(aggregate, "agents x speed")
    return output_tokens_per_s_total / aggregate


def _positive(value: float, what: str) -> None:
    if not value > 0:
        raise ValueError(f"{what} must be > 0, got {value:g}")


class Decoded(Frozen):
    """What one operating point says once decoded; None where the inputs do not say."""

    point: OperatingPoint
    mix: TokenMix | None
    """Per-GPU token rates (tokens/s per GPU)."""
    total_tokens_per_s_per_gpu: float | None
    output_tokens_per_s_per_gpu: float | None
    output_share: float | None
    """Generated output as a share of all counted tokens (0..1), even without a full mix."""
    tokens_per_s_per_mw: float | None
    output_tokens_per_s_per_mw: float | None
    agents_per_mw: float | None
    agents_per_gpu: float | None
    aggregate_output_tokens_per_s: float | None
    """Agents x output speed (tokens/s, whole deployment)."""
    output_gpu_equivalents: float | None
    streaming_duty: float | None


def decode_point(point: OperatingPoint) -> Decoded:
    """Every figure the point pins down: mix, per-GPU, per-MW, per-agent aggregates."""
    mix = mix_from_rates(
        total=point.total_tokens_per_s,
        output=point.output_tokens_per_s,
        cached_input=point.cached_input_tokens_per_s,
        uncached_input=point.uncached_input_tokens_per_s,
        cache_hit_rate=point.cache_hit_rate,
    )
    total = mix.total if mix is not None else point.total_tokens_per_s
    output = mix.output if mix is not None else point.output_tokens_per_s
    per_gpu_total = point.per_gpu(total)
    per_gpu_output = point.per_gpu(output)
    watts = point.watts if point.watts else None
    per_mw = point.recorded_tokens_per_s_per_mw
    if per_mw is None and total is not None and watts:
        per_mw = total / watts * WATTS_PER_MW
    agents_mw = point.recorded_agents_per_mw
    if agents_mw is None and point.agents is not None and watts:
        agents_mw = agents_per_mw(point.agents, watts)
    speed = point.output_speed
    aggregate = None
    equivalents = duty = None
    if point.agents and speed:
        aggregate = aggregate_output(point.agents, speed)
        if per_gpu_output:
            equivalents = output_gpu_equivalents(point.agents, speed, per_gpu_output)
        if output is not None:
            duty = streaming_duty(point.agents, speed, output)
    return Decoded(
        point=point,
        mix=mix.scaled(1 / point.gpus) if mix is not None else None,
        total_tokens_per_s_per_gpu=per_gpu_total,
        output_tokens_per_s_per_gpu=per_gpu_output,
        output_share=output / total if output is not None and total else None,
        tokens_per_s_per_mw=per_mw,
        output_tokens_per_s_per_mw=(
            output / watts * WATTS_PER_MW if output is not None and watts else None
        ),
        agents_per_mw=agents_mw,
        agents_per_gpu=point.per_gpu(point.agents) if point.agents is not None else None,
        aggregate_output_tokens_per_s=aggregate,
        output_gpu_equivalents=equivalents,
        streaming_duty=duty,
    )
