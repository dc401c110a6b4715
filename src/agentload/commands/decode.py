"""`agentload decode`: a throughput headline or a results directory as token mix, per GPU <->
per MW (at the GPU and at the wall), an output speed per request <-> the aggregate the agents
receive, output share, and the consistency checks a skeptical reader would run. Every option
changes the answer or is refused.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from agentload.analysis import checks as rel
from agentload.analysis.checks import Checked, run_checks
from agentload.analysis.decode import Decoded, decode_point
from agentload.analysis.provenance import (
    COMPUTED,
    GPUS_NOT_GIVEN,
    TYPED_IN,
    describe_source,
    power_words,
)
from agentload.analysis.results import OperatingPoint, Results, load_results
from agentload.analysis.table import Cell, Table, figure_table, format_number
from agentload.analysis.wall import AT_THE_GPU, AT_THE_WALL, DEFAULT_GPUS_PER_NODE, WallPower
from agentload.commands.figures import (
    PERCENT,
    add_number_option,
    flag_for,
    fraction_arg,
    int_arg,
    number_arg,
    one_line_errors,
    show_tables,
)
from agentload.errors import InputError
from agentload.results.summary import PowerFigures
from agentload.units import WATTS_PER_MW
from agentload.vocabulary import PER_REQUEST_SHORT

_RATES = (
    ("total_tokens_per_s", "total tokens/s"),
    ("output_tokens_per_s", "output tokens/s"),
    ("cached_input_tokens_per_s", "cached input tokens/s"),
    ("uncached_input_tokens_per_s", "uncached input tokens/s"),
)
_TYPED_ONLY = (
    *(name for name, _ in _RATES),
    "cache_hit_rate",
    "agents",
    "agents_per_gpu",
    "output_speed",
    "tokens_per_s_per_mw",
    "agents_per_mw",
    "calls_per_s_per_agent",
    "input_tokens_per_call",
    "output_tokens_per_call",
)
"""Options that describe a typed headline; a results directory has its own figures."""
_CHECK_OPTIONS = {
    "tokens_per_s_per_mw": rel.TOKENS_PER_MW,
    "agents_per_mw": rel.AGENTS_PER_MW,
    "calls_per_s_per_agent": rel.CALLS,
    "input_tokens_per_call": rel.INPUT_PER_CALL,
    "output_tokens_per_call": rel.OUTPUT_PER_CALL,
}
"""Headline figures used only by the consistency checks: each must take part in one."""
_IMPLIED_LABELS = {
    (rel.WATTS, rel.TOKENS_PER_MW): "power per GPU implied by the per-MW headline",
    (rel.WATTS, rel.AGENTS_PER_MW): "power per GPU implied by agents per MW",
    (rel.TOTAL, rel.TOKENS_PER_MW): "tokens/s per GPU from the per-MW headline",
}
_IMPLIED_NAMES = {
    rel.AGENTS_PER_MW: f"agents per MW ({AT_THE_GPU})",
    rel.TOKENS_PER_MW: f"total tokens/s per MW ({AT_THE_GPU})",
}
_UNITS = {rel.WATTS: "W", rel.TOTAL: "tok/s per GPU"}


def _shown_anyway(decoded: Decoded) -> frozenset[str]:
    """Per-MW figures the decoded table computes anyway: implying them again would repeat it."""
    shown = {
        rel.AGENTS_PER_MW: decoded.agents_per_mw,
        rel.TOKENS_PER_MW: decoded.tokens_per_s_per_mw,
    }
    return frozenset(figure for figure, value in shown.items() if value is not None)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `decode` verb."""
    parser = subparsers.add_parser(
        "decode",
        help="token mix, per GPU <-> per MW, output speed <-> aggregate, consistency checks",
        description=(
            "Decode a throughput headline: what share is cached input, uncached input and "
            "generated output; per GPU <-> per MW, at the GPU and at the wall; an output speed "
            "per request <-> the aggregate the agents receive; and checks that its figures fit "
            "each other (total = agents x calls/s x tokens per call; agents per MW <-> agents "
            "per GPU through the watts; output share <-> output per call). Reads a results "
            "directory, or figures typed in (for the whole deployment of --gpus GPUs, or per GPU "
            "with --per-gpu)."
        ),
    )
    parser.add_argument("results", nargs="?", metavar="RESULTS_DIR", help="a results directory")
    for flag, help in (
        ("--total-tokens-per-s", "all counted tokens/s (input + output)"),
        ("--output-tokens-per-s", "generated tokens/s"),
        ("--cached-input-tokens-per-s", "input tokens/s served from the prefix cache"),
        ("--uncached-input-tokens-per-s", "input tokens/s computed afresh"),
        ("--cache-hit-rate", "cached share of input tokens (0..1 or N%%)"),
        ("--agents", "concurrent agents (whole deployment)"),
        ("--agents-per-gpu", "concurrent agents per GPU (a headline figure)"),
        (
            "--output-speed",
            "output speed, tokens/s per request: how fast each agent receives output while a "
            "call streams (a leaderboard's tokens/s per user)",
        ),
        ("--gpus", "GPUs in the deployment (default 1; overrides a results directory's)"),
        ("--watts-per-gpu", "mean power per GPU (W; overrides measured power)"),
        ("--total-watts", "mean power of all GPUs together (W; overrides measured power)"),
        ("--tokens-per-s-per-mw", "a per-MW headline (total tokens/s per MW at the GPU)"),
        ("--agents-per-mw", "an agents-per-MW headline (at the GPU)"),
        (
            "--calls-per-s-per-agent",
            "model calls per second per active agent (tool time included)",
        ),
        ("--input-tokens-per-call", "mean input tokens per call"),
        ("--output-tokens-per-call", "mean output tokens per call"),
        ("--host-watts", "host power per node (CPUs, NICs, fans), W: per MW at the wall"),
        ("--gpus-per-node", f"GPUs sharing a node's host power (default {DEFAULT_GPUS_PER_NODE})"),
        ("--pue", "facility power / IT power (>= 1): per MW at the wall"),
    ):
        add_number_option(parser, flag, help)
    parser.add_argument(  # the name before the output speed had its own (still accepted)
        "--tokens-per-s-per-agent", dest="output_speed", metavar="N", help=argparse.SUPPRESS
    )
    parser.add_argument("--per-gpu", action="store_true", help="typed tokens/s figures are per GPU")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=_decode)


@one_line_errors
def _decode(args: argparse.Namespace) -> int:
    gpus = int_arg(args, "gpus", positive=True)
    watts_per_gpu = number_arg(args, "watts_per_gpu", positive=True)
    total_watts = number_arg(args, "total_watts", positive=True)
    if watts_per_gpu is not None and total_watts is not None:
        raise InputError("give --watts-per-gpu or --total-watts, not both", field="--total-watts")
    wall = _wall_power(args)
    if args.results is not None:
        for name in (*_TYPED_ONLY, "per_gpu"):
            if getattr(args, name) not in (None, False):
                raise InputError(
                    "is for typed figures; a results directory brings its own (use one or the "
                    "other)",
                    field=flag_for(name),
                )
        results = load_results(args.results)
        tables = _decode_results(results, gpus, watts_per_gpu, total_watts, wall)
    else:
        tables = _decode_typed(args, gpus, watts_per_gpu, total_watts, wall)
    show_tables(args, tables)
    return 0


def _wall_power(args: argparse.Namespace) -> WallPower | None:
    host = number_arg(args, "host_watts")
    per_node = int_arg(args, "gpus_per_node", positive=True)
    pue = number_arg(args, "pue", positive=True)
    if per_node is not None and host is None:
        raise InputError(
            "only spreads --host-watts over a node's GPUs: give --host-watts too",
            field="--gpus-per-node",
        )
    if host is None and pue is None:
        return None
    if pue is not None and pue < 1:
        raise InputError(f"a PUE is >= 1 (facility / IT power), got {args.pue}", field="--pue")
    return WallPower(
        host_watts_per_node=host or 0.0,
        gpus_per_node=per_node or DEFAULT_GPUS_PER_NODE,
        pue=pue or 1.0,
    )


# --- a results directory ---------------------------------------------------------------------


def _decode_results(
    results: Results,
    gpus: int | None,
    watts_per_gpu: float | None,
    total_watts: float | None,
    wall: WallPower | None,
) -> list[Table]:
    notes = []
    update: dict[str, object] = {}
    if gpus is not None:
        update.update(gpus=gpus, gpus_known=True)
        notes.append(f"GPU count {gpus} typed in")
    points = []
    for point in results.points():
        watts = total_watts
        if watts_per_gpu is not None:
            watts = watts_per_gpu * (gpus or point.gpus)
        extra = dict(update)
        if watts is not None:
            extra.update(watts=watts, power_source=TYPED_IN, power_assumed=True)
            extra.update(recorded_tokens_per_s_per_mw=None, recorded_agents_per_mw=None)
        points.append(point.model_copy(update=extra))
    if watts_per_gpu is not None or total_watts is not None:
        notes.append("power typed in (per-MW figures use it, not the measured power)")
    else:
        notes.append(power_note(results.power))
    if results.gpus is None and gpus is None:
        notes.append(GPUS_NOT_GIVEN)
    notes.append(
        "agents × speed uses the p50 output speed (tokens/s per request) where recorded, else "
        "p25; duty = output / (agents × speed), the share of time an agent is receiving output"
    )
    notes.append(
        "calls/s per active agent: calls finished in the window / window / agents (tool time "
        "included); tokens per call: the window's tokens/s / its calls/s"
    )
    if wall is not None:
        notes.append(f"per MW {AT_THE_WALL}: {wall.describe()} (typed in)")
    decoded = [decode_point(point) for point in points]
    checked = [run_checks(_point_figures(d)) for d in decoded]
    headers = [
        "point",
        "agents",
        "total tok/s per GPU",
        "output tok/s per GPU",
        "cached input %",
        "uncached input %",
        "output %",
        f"total tok/s per MW ({AT_THE_GPU})",
        *([f"total tok/s per MW ({AT_THE_WALL})"] if wall is not None else []),
        "agents per MW",
        "calls/s per active agent",
        "input tokens per call",
        "output tokens per call",
        "agents × speed (output tok/s)",
        "output GPU-equivalents (GPUs)",
        "streaming duty %",
    ]
    source = describe_source(results.provenance, results.origin)
    tables = [
        Table(
            title=f"Decoded ({results.provenance}): {results.label or results.origin}",
            headers=tuple(headers),
            rows=tuple(_decoded_row(d, c, wall) for d, c in zip(decoded, checked, strict=True)),
            source=source,
            notes=tuple(notes),
        )
    ]
    rows: list[tuple[Cell, ...]] = []
    for d, c in zip(decoded, checked, strict=True):
        rows.extend(_check_row(check, d.point.label) for check in c.checks if check.stated)
    if rows:
        tables.append(_checks_table(tuple(rows), source, with_point=True))
    return tables


def _point_figures(decoded: Decoded) -> dict[str, float | None]:
    """What a results point states, for the checks (per-MW as recorded, when recorded)."""
    point = decoded.point
    agents = decoded.agents_per_gpu
    calls = point.calls_per_s / point.agents if point.calls_per_s and point.agents else None
    return {
        rel.TOTAL: decoded.total_tokens_per_s_per_gpu,
        rel.AGENTS: agents,
        rel.CALLS: calls,
        rel.OUTPUT_SHARE: decoded.output_share,
        rel.WATTS: point.watts_per_gpu or None,
        rel.AGENTS_PER_MW: point.recorded_agents_per_mw,
        rel.TOKENS_PER_MW: point.recorded_tokens_per_s_per_mw,
    }


def _decoded_row(decoded: Decoded, checked: Checked, wall: WallPower | None) -> tuple[Cell, ...]:
    mix = decoded.mix
    figures = checked.figures
    at_wall: list[Cell] = []
    if wall is not None:
        watts = decoded.point.watts_per_gpu
        per_gpu = decoded.total_tokens_per_s_per_gpu
        at_wall.append(
            per_gpu / wall.wall_watts_per_gpu(watts) * WATTS_PER_MW
            if per_gpu is not None and watts
            else None
        )
    calls = figures.get(rel.CALLS)
    return (
        decoded.point.label,
        decoded.point.agents,
        decoded.total_tokens_per_s_per_gpu,
        decoded.output_tokens_per_s_per_gpu,
        mix.cached_share * PERCENT if mix else None,
        mix.uncached_share * PERCENT if mix else None,
        decoded.output_share * PERCENT if decoded.output_share is not None else None,
        decoded.tokens_per_s_per_mw,
        *at_wall,
        decoded.agents_per_mw,
        calls,
        figures.get(rel.INPUT_PER_CALL) if calls else None,
        figures.get(rel.OUTPUT_PER_CALL) if calls else None,
        decoded.aggregate_output_tokens_per_s,
        decoded.output_gpu_equivalents,
        decoded.streaming_duty * PERCENT if decoded.streaming_duty is not None else None,
    )


# --- typed figures ----------------------------------------------------------------------------


def _decode_typed(
    args: argparse.Namespace,
    typed_gpus: int | None,
    watts_per_gpu: float | None,
    total_watts: float | None,
    wall: WallPower | None,
) -> list[Table]:
    gpus = typed_gpus or 1
    per_gpu = bool(args.per_gpu)
    typed_rates = {name: number_arg(args, name) for name, _ in _RATES}
    scale = gpus if per_gpu else 1
    rates: dict[str, Any] = {
        k: (v * scale if v is not None else None) for k, v in typed_rates.items()
    }
    agents = int_arg(args, "agents")
    agents_per_gpu = number_arg(args, "agents_per_gpu")
    if agents is not None and agents_per_gpu is not None:
        raise InputError("give --agents or --agents-per-gpu, not both", field="--agents-per-gpu")
    speed = number_arg(args, "output_speed")
    hit_rate = fraction_arg(args, "cache_hit_rate")
    headline = {name: number_arg(args, name) for name in _CHECK_OPTIONS}
    if watts_per_gpu is not None:
        total_watts = watts_per_gpu * gpus
    any_rate = any(v is not None for v in rates.values())
    typed = [*rates.values(), agents, agents_per_gpu, speed, *headline.values()]
    if all(v is None for v in typed):
        raise InputError("give a results directory or some figures to decode (see --help)")
    _refuse_unused(args, typed_gpus, any_rate, agents, hit_rate, speed)
    point = OperatingPoint(
        label="typed in",
        kind="typed",
        agents=agents,
        gpus=gpus,
        gpus_known=typed_gpus is not None,
        cache_hit_rate=hit_rate,
        p50_output_tokens_per_s=speed,
        watts=total_watts,
        power_source=TYPED_IN,
        power_assumed=total_watts is not None,
        **rates,
    )
    decoded = decode_point(point)
    if hit_rate is not None and decoded.mix is None:
        raise InputError(
            "splits input into cached and uncached: give --total-tokens-per-s and "
            "--output-tokens-per-s with it",
            field="--cache-hit-rate",
        )
    per_gpu_agents = agents_per_gpu if agents_per_gpu is not None else decoded.agents_per_gpu
    checked = run_checks(
        {
            rel.TOTAL: decoded.total_tokens_per_s_per_gpu,
            rel.AGENTS: per_gpu_agents,
            rel.OUTPUT_SHARE: decoded.output_share,
            rel.WATTS: watts_per_gpu if watts_per_gpu is not None else point.watts_per_gpu,
            **{_CHECK_OPTIONS[name]: value for name, value in headline.items()},
        }
    )
    for name, figure in _CHECK_OPTIONS.items():
        if headline[name] is not None and figure not in checked.used:
            raise InputError(
                "takes part in no check with the other figures given (see the relations in --help)",
                field=flag_for(name),
            )
    known_watts = checked.figures.get(rel.WATTS)
    if total_watts is not None and not (any_rate or agents or agents_per_gpu or checked.checks):
        raise InputError(
            "changes nothing without a throughput, agents or a per-MW headline",
            field="--watts-per-gpu" if watts_per_gpu is not None else "--total-watts",
        )
    if wall is not None and known_watts is None:
        raise InputError(
            "needs the GPUs' power (--watts-per-gpu, --total-watts, or headlines that imply it)",
            field="--host-watts" if wall.host_watts_per_node else "--pue",
        )
    rows = _typed_rows(decoded, rates, per_gpu, typed_gpus, watts_per_gpu, total_watts, gpus)
    rows += _headline_rows(agents_per_gpu, headline)
    typed_per_gpu = typed_rates if per_gpu else {}
    rows += _computed_rows(decoded, typed_per_gpu, hit_rate, checked, wall)
    tables = [
        figure_table(
            "Decoded (typed in)", rows, notes=_notes(decoded, gpus, typed_gpus is not None, wall)
        )
    ]
    repeated = _shown_anyway(decoded)
    shown = [c for c in checked.checks if c.stated is not None or c.figure not in repeated]
    if shown:
        check_rows = tuple(_check_row(check, None) for check in shown)
        tables.append(_checks_table(check_rows, TYPED_IN, with_point=False))
    return tables


def _refuse_unused(
    args: argparse.Namespace,
    gpus: int | None,
    any_rate: bool,
    agents: int | None,
    hit_rate: float | None,
    speed: float | None,
) -> None:
    """Options that would change nothing are refused, one line each."""
    if args.per_gpu and not any_rate:
        raise InputError("says typed tokens/s are per GPU, but none were typed", field="--per-gpu")
    if speed is not None and agents is None:
        raise InputError("needs --agents (agents × speed is the aggregate)", field="--output-speed")
    has_parts = args.cached_input_tokens_per_s is not None or (
        args.uncached_input_tokens_per_s is not None
    )
    if hit_rate is not None and has_parts:
        raise InputError(
            "give --cache-hit-rate or a cached/uncached rate, not both", field="--cache-hit-rate"
        )
    deployment_figures = any_rate or agents is not None or args.total_watts is not None
    if gpus is not None and not (deployment_figures or args.watts_per_gpu is not None):
        raise InputError(
            "changes nothing without figures for the whole deployment (rates, --agents or power)",
            field="--gpus",
        )


def _typed_rows(
    decoded: Decoded,
    rates: dict[str, float | None],
    per_gpu: bool,
    typed_gpus: int | None,
    watts_per_gpu: float | None,
    total_watts: float | None,
    gpus: int,
) -> list[tuple[str, Cell, str, str]]:
    """The deployment's figures, each marked typed in or computed (from per-GPU figures)."""
    deployment = "tok/s (all GPUs)"
    rows: list[tuple[str, Cell, str, str]] = []
    for name, label in _RATES:
        if rates[name] is not None:
            rows.append((label, rates[name], deployment, COMPUTED if per_gpu else TYPED_IN))
    rows.append(("GPUs", gpus, "GPUs", TYPED_IN if typed_gpus is not None else "default"))
    point = decoded.point
    if point.cache_hit_rate is not None:
        rows.append(("cache hit rate (of input)", point.cache_hit_rate * PERCENT, "%", TYPED_IN))
    if point.agents is not None:
        rows.append(("agents", point.agents, "agents", TYPED_IN))
    if point.p50_output_tokens_per_s is not None:
        speed = point.p50_output_tokens_per_s
        rows.append(("output speed (statistic as typed)", speed, PER_REQUEST_SHORT, TYPED_IN))
    if total_watts is not None:
        typed_per_gpu = watts_per_gpu is not None
        per_gpu_source, all_source = (TYPED_IN, COMPUTED) if typed_per_gpu else (COMPUTED, TYPED_IN)
        rows.append(("power per GPU", total_watts / gpus, "W", per_gpu_source))
        rows.append(("power, all GPUs", total_watts, "W", all_source))
    return rows


def _headline_rows(
    agents_per_gpu: float | None, headline: dict[str, float | None]
) -> list[tuple[str, Cell, str, str]]:
    rows: list[tuple[str, Cell, str, str]] = []
    if agents_per_gpu is not None:
        rows.append(("agents per GPU", agents_per_gpu, "agents/GPU", TYPED_IN))
    labels = {
        "tokens_per_s_per_mw": ("tokens/s per MW (headline)", "tok/s per MW"),
        "agents_per_mw": ("agents per MW (headline)", "agents/MW"),
        "calls_per_s_per_agent": ("calls/s per active agent", "calls/s"),
        "input_tokens_per_call": ("input tokens per call", "tokens"),
        "output_tokens_per_call": ("output tokens per call", "tokens"),
    }
    for name, value in headline.items():
        if value is not None:
            label, unit = labels[name]
            rows.append((label, value, unit, TYPED_IN))
    return rows


def _computed_rows(
    decoded: Decoded,
    typed_per_gpu: dict[str, float | None],
    hit_rate: float | None,
    checked: Checked,
    wall: WallPower | None,
) -> list[tuple[str, Cell, str, str]]:
    """Per-GPU figures (typed in where typed per GPU), then everything worked out."""

    def per_gpu_source(name: str) -> str:
        return TYPED_IN if typed_per_gpu.get(name) is not None else COMPUTED

    per_gpu_unit = "tok/s per GPU"
    mix = decoded.mix
    rows: list[tuple[str, float | None, str, str]] = [
        (
            "total tokens/s per GPU",
            decoded.total_tokens_per_s_per_gpu,
            per_gpu_unit,
            per_gpu_source("total_tokens_per_s"),
        ),
        (
            "output tokens/s per GPU",
            decoded.output_tokens_per_s_per_gpu,
            per_gpu_unit,
            per_gpu_source("output_tokens_per_s"),
        ),
    ]
    computed: list[tuple[str, float | None, str]] = []
    if mix is not None:
        rows += [
            (
                "cached input tokens/s per GPU",
                mix.cached_input,
                per_gpu_unit,
                per_gpu_source("cached_input_tokens_per_s"),
            ),
            (
                "uncached input tokens/s per GPU",
                mix.uncached_input,
                per_gpu_unit,
                per_gpu_source("uncached_input_tokens_per_s"),
            ),
        ]
        computed += [
            ("cached input share of tokens", mix.cached_share * PERCENT, "%"),
            ("uncached input share of tokens", mix.uncached_share * PERCENT, "%"),
            ("input share of tokens", mix.input_share * PERCENT, "%"),
            ("output (generated) share of tokens", mix.output_share * PERCENT, "%"),
        ]
        if hit_rate is None and mix.cache_hit_rate is not None:
            computed.append(("cache hit rate (of input)", mix.cache_hit_rate * PERCENT, "%"))
    elif decoded.output_share is not None:
        computed += [
            ("input share of tokens", (1 - decoded.output_share) * PERCENT, "%"),
            ("output (generated) share of tokens", decoded.output_share * PERCENT, "%"),
        ]
    computed += [
        (f"total tokens/s per MW ({AT_THE_GPU})", decoded.tokens_per_s_per_mw, "tok/s per MW"),
        ("output tokens/s per MW", decoded.output_tokens_per_s_per_mw, "tok/s per MW"),
        ("agents per MW", decoded.agents_per_mw, "agents per MW"),
        (
            "agents per GPU",
            decoded.agents_per_gpu if decoded.point.agents is not None else None,
            "agents/GPU",
        ),
        ("agents × speed", decoded.aggregate_output_tokens_per_s, "output tok/s (all agents)"),
        ("output GPU-equivalents", decoded.output_gpu_equivalents, "GPUs"),
        (
            "streaming duty",
            decoded.streaming_duty * PERCENT if decoded.streaming_duty is not None else None,
            "% of time",
        ),
    ]
    for figure, relation in checked.implied.items():
        if figure in _shown_anyway(decoded):
            continue
        origin = next(
            (f for f in (rel.TOKENS_PER_MW, rel.AGENTS_PER_MW) if relation.startswith(f)), ""
        )
        label = _IMPLIED_LABELS.get((figure, origin)) or _IMPLIED_NAMES.get(
            figure, f"{figure} (implied)"
        )
        computed.append((label, checked.figures[figure], _UNITS.get(figure, rel.UNITS[figure])))
    computed += _wall_rows(checked, wall)
    rows += [(label, value, unit, COMPUTED) for label, value, unit in computed]
    return [row for row in rows if row[1] is not None]


def _wall_rows(checked: Checked, wall: WallPower | None) -> list[tuple[str, float | None, str]]:
    """Per MW at the wall, from the GPU's power (typed or implied) plus host and PUE."""
    watts = checked.figures.get(rel.WATTS)
    if wall is None or not watts:
        return []
    wall_watts = wall.wall_watts_per_gpu(watts)
    total = checked.figures.get(rel.TOTAL)
    agents = checked.figures.get(rel.AGENTS)
    return [
        (f"power per GPU ({AT_THE_WALL})", wall_watts, "W"),
        (
            f"total tokens/s per MW ({AT_THE_WALL})",
            total / wall_watts * WATTS_PER_MW if total is not None else None,
            "tok/s per MW",
        ),
        (
            f"agents per MW ({AT_THE_WALL})",
            agents / wall_watts * WATTS_PER_MW if agents is not None else None,
            "agents per MW",
        ),
    ]


def _notes(
    decoded: Decoded, gpus: int, gpus_known: bool, wall: WallPower | None
) -> tuple[str, ...]:
    notes = []
    if wall is not None:
        notes.append(
            f"{AT_THE_WALL}: {wall.describe()} (typed in); {AT_THE_GPU}: "
            "accelerator power only (AgentPerf's definition)"
        )
    equivalents = decoded.output_gpu_equivalents
    if equivalents is None or decoded.aggregate_output_tokens_per_s is None:
        return tuple(notes)
    per_gpu_output = decoded.output_tokens_per_s_per_gpu or 0.0
    duty = decoded.streaming_duty or 0.0
    notes += [
        f"agents × speed = {format_number(decoded.aggregate_output_tokens_per_s)} output tok/s; "
        f"at {format_number(per_gpu_output)} output tok/s per GPU that is "
        f"{format_number(equivalents)} GPUs' worth of output.",
        "If the output speed is a mean while streaming, the deployment has at most "
        f"{math.floor(equivalents)} GPUs (agents cannot receive output more than all the time); "
        f"with {gpus} GPU{'s' if gpus != 1 else ''}"
        f"{'' if gpus_known else ' (default)'} agents receive output "
        f"{format_number(duty * PERCENT)}% of the time (the rest: waiting for the first token, "
        "running tools). A low-percentile speed raises that bound.",
    ]
    return tuple(notes)


# --- consistency checks -----------------------------------------------------------------------


def _check_row(check: rel.Check, point: str | None) -> tuple[Cell, ...]:
    cells: tuple[Cell, ...] = (
        check.relation,
        check.figure,
        check.stated,
        check.implied,
        check.unit,
        check.ratio,
        check.verdict,
    )
    return (point, *cells) if point is not None else cells


def _failure_words(row: tuple[Cell, ...], figure: int) -> str:
    """A failed check's figure and its known / relation ratio (the row's next to last cell)."""
    ratio = row[-2]
    if isinstance(ratio, int | float):
        return f"{row[figure]} (known / relation {format_number(ratio)})"
    return f"{row[figure]} (no positive value fits)"


def _checks_table(rows: tuple[tuple[Cell, ...], ...], source: str, *, with_point: bool) -> Table:
    verdict = -1
    failed = [row for row in rows if row[verdict] == "fails"]
    notes = [
        f"a known figure (given, or implied by a relation above) agrees when within "
        f"{rel.CONSISTENCY_TOLERANCE:.0%} of what this relation gives from the others; "
        "'implied': the relation's one missing figure, worked out from the others",
    ]
    if failed:
        figure = 2 if with_point else 1
        notes.insert(
            0,
            "the headline FAILS a check: "
            + "; ".join(_failure_words(row, figure) for row in failed),
        )
    return Table(
        title="Consistency checks",
        headers=(
            *(["point"] if with_point else []),
            "relation",
            "figure",
            "known value",
            "this relation gives",
            "unit",
            "known / relation (×)",
            "verdict",
        ),
        rows=rows,
        source=source,
        notes=tuple(notes),
    )


def power_note(power: PowerFigures) -> str:
    """`power source: nvml`, or `power: ASSUMED, not measured (assumed 2.2 W per ...)`."""
    if power.assumed:
        return f"power: {power_words(power)} ({power.description or power.source})"
    return f"power source: {power_words(power)}"
