"""What `agentload decode` shows for a set of inputs, as one pure function: `decode_tables`.

The inputs are typed (`DecodeInputs`, each field named as the option that gives it): a results
directory, or a headline's figures typed in (for the whole deployment of `gpus` GPUs, or per GPU
with `per_gpu`). Every input changes the answer or is refused, as a `Refused` naming it. A typed
headline is decoded into one table of figures, each marked typed in or computed, and the
consistency checks its figures could be put to (`agentload.analysis.checks`).
"""

from __future__ import annotations

import math
from typing import Any

from agentload.analysis import checks as rel
from agentload.analysis.checks import Checked, run_checks
from agentload.analysis.decode import Decoded, decode_point
from agentload.analysis.decode_tables import check_row, checks_table, results_tables
from agentload.analysis.provenance import COMPUTED, TYPED_IN
from agentload.analysis.refused import Reason, Refused
from agentload.analysis.results import OperatingPoint, Results
from agentload.analysis.table import Cell, Table, figure_table, format_number
from agentload.analysis.wall import AT_THE_GPU, AT_THE_WALL, WallPower, wall_power
from agentload.frozen import Frozen
from agentload.units import PERCENT, count_words
from agentload.vocabulary import PER_REQUEST_SHORT

RATES = (
    ("total_tokens_per_s", "total tokens/s"),
    ("output_tokens_per_s", "output tokens/s"),
    ("cached_input_tokens_per_s", "cached input tokens/s"),
    ("uncached_input_tokens_per_s", "uncached input tokens/s"),
)
"""Typed token rates (whole deployment, or per GPU) and their rows' names."""
HEADLINE = {
    "tokens_per_s_per_mw": (rel.TOKENS_PER_MW, "tokens/s per MW (headline)", "tok/s per MW"),
    "agents_per_mw": (rel.AGENTS_PER_MW, "agents per MW (headline)", "agents/MW"),
    "calls_per_s_per_agent": (rel.CALLS, "calls/s per active agent", "calls/s"),
    "input_tokens_per_call": (rel.INPUT_PER_CALL, "input tokens per call", "tokens"),
    "output_tokens_per_call": (rel.OUTPUT_PER_CALL, "output tokens per call", "tokens"),
}
"""Headline figures used only by the consistency checks (each must take part in one): the
figure it is to the checks, its row's name and unit."""
TYPED_ONLY = (
    *(name for name, _ in RATES),
    "cache_hit_rate",
    "agents",
    "agents_per_gpu",
    "output_speed",
    *HEADLINE,
)
"""Inputs that describe a typed headline; a results directory has its own figures."""
IMPLIED_LABELS = {
    (rel.WATTS, rel.TOKENS_PER_MW): "power per GPU implied by the per-MW headline",
    (rel.WATTS, rel.AGENTS_PER_MW): "power per GPU implied by agents per MW",
    (rel.TOTAL, rel.TOKENS_PER_MW): "tokens/s per GPU from the per-MW headline",
}
IMPLIED_NAMES = {
    rel.AGENTS_PER_MW: f"agents per MW ({AT_THE_GPU})",
    rel.TOKENS_PER_MW: f"total tokens/s per MW ({AT_THE_GPU})",
}
IMPLIED_UNITS = {rel.WATTS: "W", rel.TOTAL: "tok/s per GPU"}
PER_GPU_UNIT = "tok/s per GPU"
Row = tuple[str, Cell, str, str]


class DecodeInputs(Frozen):
    """What `decode` decodes, as typed; None where not given."""

    results: Results | None = None
    gpus: int | None = None
    watts_per_gpu: float | None = None
    total_watts: float | None = None
    host_watts: float | None = None
    gpus_per_node: int | None = None
    pue: float | None = None
    total_tokens_per_s: float | None = None
    output_tokens_per_s: float | None = None
    cached_input_tokens_per_s: float | None = None
    uncached_input_tokens_per_s: float | None = None
    cache_hit_rate: float | None = None
    agents: int | None = None
    agents_per_gpu: float | None = None
    output_speed: float | None = None
    tokens_per_s_per_mw: float | None = None
    agents_per_mw: float | None = None
    calls_per_s_per_agent: float | None = None
    input_tokens_per_call: float | None = None
    output_tokens_per_call: float | None = None
    per_gpu: bool = False
    """Typed token rates are per GPU (the deployment's are `gpus` times them)."""

    def rates(self) -> dict[str, float | None]:
        """The typed token rates as typed (per GPU with `per_gpu`)."""
        return {name: getattr(self, name) for name, _ in RATES}

    def deployment_rates(self) -> dict[str, float | None]:
        """The typed token rates for the whole deployment."""
        scale = (self.gpus or 1) if self.per_gpu else 1
        return {k: v * scale if v is not None else None for k, v in self.rates().items()}

    def headline(self) -> dict[str, float | None]:
        """The headline figures typed for the checks alone."""
        return {name: getattr(self, name) for name in HEADLINE}

    def all_watts(self) -> float | None:
        """The power of all GPUs together, as typed (per GPU times the GPUs)."""
        if self.watts_per_gpu is not None:
            return self.watts_per_gpu * (self.gpus or 1)
        return self.total_watts


def decode_tables(inputs: DecodeInputs) -> tuple[Table, ...]:
    """The decoded figures and their consistency checks; `Refused` for an input that is half
    given, contradicts another, or changes nothing."""
    if inputs.watts_per_gpu is not None and inputs.total_watts is not None:
        raise Refused(
            "total_watts", Reason.CONFLICTS, "give --watts-per-gpu or --total-watts, not both"
        )
    wall = wall_power(inputs.host_watts, inputs.gpus_per_node, inputs.pue)
    if inputs.results is None:
        return _typed_tables(inputs, wall)
    for name in (*TYPED_ONLY, "per_gpu"):
        if getattr(inputs, name) not in (None, False):
            raise Refused(
                name,
                Reason.CONFLICTS,
                "is for typed figures; a results directory brings its own (use one or the other)",
            )
    return results_tables(
        inputs.results, inputs.gpus, inputs.watts_per_gpu, inputs.total_watts, wall
    )


def _typed_tables(inputs: DecodeInputs, wall: WallPower | None) -> tuple[Table, ...]:
    refuse_unused(inputs)
    point = typed_point(inputs)
    decoded = decode_point(point)
    if inputs.cache_hit_rate is not None and decoded.mix is None:
        raise Refused(
            "cache_hit_rate",
            Reason.NEEDS,
            "splits input into cached and uncached: give --total-tokens-per-s and "
            "--output-tokens-per-s with it",
        )
    checked = typed_checks(inputs, decoded)
    refuse_idle(inputs, checked, wall)
    rows = [*_typed_rows(inputs, decoded), *_headline_rows(inputs)]
    rows += _computed_rows(inputs, decoded, checked, wall)
    notes = _notes(decoded, inputs.gpus or 1, inputs.gpus is not None, wall)
    tables = [figure_table("Decoded (typed in)", rows, notes=notes)]
    repeated = shown_anyway(decoded)
    shown = [c for c in checked.checks if c.stated is not None or c.figure not in repeated]
    if shown:
        check_rows = tuple(check_row(check, None) for check in shown)
        tables.append(checks_table(check_rows, TYPED_IN, with_point=False))
    return tuple(tables)


def refuse_unused(inputs: DecodeInputs) -> None:
    """`Refused` for typed figures that say nothing, or that need another one given with them."""
    agents = inputs.agents
    if agents is not None and inputs.agents_per_gpu is not None:
        raise Refused(
            "agents_per_gpu", Reason.CONFLICTS, "give --agents or --agents-per-gpu, not both"
        )
    any_rate = any(v is not None for v in inputs.rates().values())
    typed = (agents, inputs.agents_per_gpu, inputs.output_speed, *inputs.headline().values())
    if not any_rate and all(v is None for v in typed):
        raise Refused(
            None,
            Reason.NOTHING_TO_SHOW,
            "give a results directory or some figures to decode (see --help)",
        )
    if inputs.per_gpu and not any_rate:
        raise Refused(
            "per_gpu", Reason.NEEDS, "says typed tokens/s are per GPU, but none were typed"
        )
    if inputs.output_speed is not None and agents is None:
        raise Refused(
            "output_speed", Reason.NEEDS, "needs --agents (agents × speed is the aggregate)"
        )
    has_parts = (inputs.cached_input_tokens_per_s, inputs.uncached_input_tokens_per_s) != (
        None,
        None,
    )
    if inputs.cache_hit_rate is not None and has_parts:
        raise Refused(
            "cache_hit_rate",
            Reason.CONFLICTS,
            "give --cache-hit-rate or a cached/uncached rate, not both",
        )
    whole = any_rate or agents is not None or inputs.total_watts is not None
    if inputs.gpus is not None and not (whole or inputs.watts_per_gpu is not None):
        raise Refused(
            "gpus",
            Reason.CHANGES_NOTHING,
            "changes nothing without figures for the whole deployment (rates, --agents or power)",
        )


def typed_point(inputs: DecodeInputs) -> OperatingPoint:
    """The typed headline as one operating point of the whole deployment."""
    watts = inputs.all_watts()
    rates: dict[str, Any] = inputs.deployment_rates()
    return OperatingPoint(
        label="typed in",
        kind="typed",
        agents=inputs.agents,
        gpus=inputs.gpus or 1,
        gpus_known=inputs.gpus is not None,
        cache_hit_rate=inputs.cache_hit_rate,
        p50_output_tokens_per_s=inputs.output_speed,
        watts=watts,
        power_source=TYPED_IN,
        power_assumed=watts is not None,
        **rates,
    )


def typed_checks(inputs: DecodeInputs, decoded: Decoded) -> Checked:
    """The consistency checks on the typed figures (per GPU); `Refused` for a headline figure
    that takes part in none."""
    agents = inputs.agents_per_gpu
    point_watts = decoded.point.watts_per_gpu
    checked = run_checks(
        {
            rel.TOTAL: decoded.total_tokens_per_s_per_gpu,
            rel.AGENTS: agents if agents is not None else decoded.agents_per_gpu,
            rel.OUTPUT_SHARE: decoded.output_share,
            rel.WATTS: inputs.watts_per_gpu if inputs.watts_per_gpu is not None else point_watts,
            **{HEADLINE[name][0]: value for name, value in inputs.headline().items()},
        }
    )
    for name, value in inputs.headline().items():
        if value is not None and HEADLINE[name][0] not in checked.used:
            raise Refused(
                name,
                Reason.CHANGES_NOTHING,
                "takes part in no check with the other figures given (see the relations in --help)",
            )
    return checked


def refuse_idle(inputs: DecodeInputs, checked: Checked, wall: WallPower | None) -> None:
    """`Refused` for power that changes nothing, or wall power with no GPU power to add to."""
    any_rate = any(v is not None for v in inputs.rates().values())
    figures = any_rate or inputs.agents or inputs.agents_per_gpu or checked.checks
    if inputs.all_watts() is not None and not figures:
        raise Refused(
            "watts_per_gpu" if inputs.watts_per_gpu is not None else "total_watts",
            Reason.CHANGES_NOTHING,
            "changes nothing without a throughput, agents or a per-MW headline",
        )
    if wall is not None and checked.figures.get(rel.WATTS) is None:
        raise Refused(
            "host_watts" if wall.host_watts_per_node else "pue",
            Reason.NEEDS,
            "needs the GPUs' power (--watts-per-gpu, --total-watts, or headlines that imply it)",
        )


def shown_anyway(decoded: Decoded) -> frozenset[str]:
    """Per-MW figures the decoded table computes anyway: implying them again would repeat it."""
    shown = {
        rel.AGENTS_PER_MW: decoded.agents_per_mw,
        rel.TOKENS_PER_MW: decoded.tokens_per_s_per_mw,
    }
    return frozenset(figure for figure, value in shown.items() if value is not None)


def _typed_rows(inputs: DecodeInputs, decoded: Decoded) -> list[Row]:
    """The deployment's figures, each marked typed in or computed (from per-GPU figures)."""
    rows: list[Row] = []
    rates = inputs.deployment_rates()
    rate_source = COMPUTED if inputs.per_gpu else TYPED_IN
    for name, label in RATES:
        if rates[name] is not None:
            rows.append((label, rates[name], "tok/s (all GPUs)", rate_source))
    gpus = inputs.gpus or 1
    rows.append(("GPUs", gpus, "GPUs", TYPED_IN if inputs.gpus is not None else "default"))
    point = decoded.point
    if point.cache_hit_rate is not None:
        rows.append(("cache hit rate (of input)", point.cache_hit_rate * PERCENT, "%", TYPED_IN))
    if point.agents is not None:
        rows.append(("agents", point.agents, "agents", TYPED_IN))
    if point.p50_output_tokens_per_s is not None:
        speed = point.p50_output_tokens_per_s
        rows.append(("output speed (statistic as typed)", speed, PER_REQUEST_SHORT, TYPED_IN))
    watts = inputs.all_watts()
    if watts is not None:
        typed = inputs.watts_per_gpu is not None
        per_gpu_source, all_source = (TYPED_IN, COMPUTED) if typed else (COMPUTED, TYPED_IN)
        rows.append(("power per GPU", watts / gpus, "W", per_gpu_source))
        rows.append(("power, all GPUs", watts, "W", all_source))
    return rows


def _headline_rows(inputs: DecodeInputs) -> list[Row]:
    rows: list[Row] = []
    if inputs.agents_per_gpu is not None:
        rows.append(("agents per GPU", inputs.agents_per_gpu, "agents/GPU", TYPED_IN))
    for name, value in inputs.headline().items():
        if value is not None:
            _, label, unit = HEADLINE[name]
            rows.append((label, value, unit, TYPED_IN))
    return rows


def _computed_rows(
    inputs: DecodeInputs, decoded: Decoded, checked: Checked, wall: WallPower | None
) -> list[Row]:
    """Per-GPU figures (typed in where typed per GPU), then everything worked out."""
    typed = inputs.rates() if inputs.per_gpu else {}

    def source(name: str) -> str:
        return TYPED_IN if typed.get(name) is not None else COMPUTED

    mix = decoded.mix
    rows: list[tuple[str, float | None, str, str]] = [
        (
            "total tokens/s per GPU",
            decoded.total_tokens_per_s_per_gpu,
            PER_GPU_UNIT,
            source("total_tokens_per_s"),
        ),
        (
            "output tokens/s per GPU",
            decoded.output_tokens_per_s_per_gpu,
            PER_GPU_UNIT,
            source("output_tokens_per_s"),
        ),
    ]
    if mix is not None:
        rows += [
            (
                "cached input tokens/s per GPU",
                mix.cached_input,
                PER_GPU_UNIT,
                source("cached_input_tokens_per_s"),
            ),
            (
                "uncached input tokens/s per GPU",
                mix.uncached_input,
                PER_GPU_UNIT,
                source("uncached_input_tokens_per_s"),
            ),
        ]
    computed = [
        *_share_rows(inputs, decoded),
        *_per_mw_rows(decoded),
        *_implied_rows(decoded, checked),
        *_wall_rows(checked, wall),
    ]
    rows += [(label, value, unit, COMPUTED) for label, value, unit in computed]
    return [row for row in rows if row[1] is not None]


def _share_rows(inputs: DecodeInputs, decoded: Decoded) -> list[tuple[str, float | None, str]]:
    """The token mix as shares (and the cache hit rate, when not typed)."""
    mix = decoded.mix
    if mix is None:
        share = decoded.output_share
        if share is None:
            return []
        return [
            ("input share of tokens", (1 - share) * PERCENT, "%"),
            ("output (generated) share of tokens", share * PERCENT, "%"),
        ]
    rows: list[tuple[str, float | None, str]] = [
        ("cached input share of tokens", mix.cached_share * PERCENT, "%"),
        ("uncached input share of tokens", mix.uncached_share * PERCENT, "%"),
        ("input share of tokens", mix.input_share * PERCENT, "%"),
        ("output (generated) share of tokens", mix.output_share * PERCENT, "%"),
    ]
    if inputs.cache_hit_rate is None and mix.cache_hit_rate is not None:
        rows.append(("cache hit rate (of input)", mix.cache_hit_rate * PERCENT, "%"))
    return rows


def _per_mw_rows(decoded: Decoded) -> list[tuple[str, float | None, str]]:
    duty = decoded.streaming_duty
    return [
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
        ("streaming duty", duty * PERCENT if duty is not None else None, "% of time"),
    ]


def _implied_rows(decoded: Decoded, checked: Checked) -> list[tuple[str, float | None, str]]:
    """Figures the checks implied, named by what implied them, unless shown already."""
    rows: list[tuple[str, float | None, str]] = []
    for figure, origin in checked.implied_by.items():
        if figure in shown_anyway(decoded):
            continue
        label = IMPLIED_LABELS.get((figure, origin)) or IMPLIED_NAMES.get(
            figure, f"{figure} (implied)"
        )
        unit = IMPLIED_UNITS.get(figure, rel.UNITS[figure])
        rows.append((label, checked.figures[figure], unit))
    return rows


def _wall_rows(checked: Checked, wall: WallPower | None) -> list[tuple[str, float | None, str]]:
    """Per MW at the wall, from the GPU's power (typed or implied) plus host and PUE."""
    watts = checked.figures.get(rel.WATTS)
    if wall is None or not watts:
        return []
    total = checked.figures.get(rel.TOTAL)
    agents = checked.figures.get(rel.AGENTS)
    return [
        (f"power per GPU ({AT_THE_WALL})", wall.wall_watts_per_gpu(watts), "W"),
        (f"total tokens/s per MW ({AT_THE_WALL})", wall.per_mw(total, watts), "tok/s per MW"),
        (f"agents per MW ({AT_THE_WALL})", wall.per_mw(agents, watts), "agents per MW"),
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
        f"{count_words(math.floor(equivalents), 'GPU')} (agents cannot receive output more than "
        f"all the time); with {count_words(gpus, 'GPU')}"
        f"{'' if gpus_known else ' (default)'} agents receive output "
        f"{format_number(duty * PERCENT)}% of the time (the rest: waiting for the first token, "
        "running tools). A low-percentile speed raises that bound.",
    ]
    return tuple(notes)
