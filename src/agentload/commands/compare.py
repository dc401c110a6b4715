"""`agentload compare`: results side by side per tier, with ratios to the first (terminal, JSON
and HTML). A typed system repeated under one label holds one tier per `--system`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.text import Text

from agentload.analysis.compare import compare, unique_labels
from agentload.analysis.render import tables_html
from agentload.analysis.results import TYPED_IN, OperatingPoint, Results, load_results
from agentload.commands.figures import one_line_errors, parse_number, show_tables
from agentload.console import err_console
from agentload.errors import InputError
from agentload.results.summary import PowerFigures

_SYSTEM_KEYS = {
    "gpus": "GPUs in the deployment",
    "tier": "tier name (default: typed)",
    "agents": "max agents at the tier",
    "total": "total tokens/s (whole deployment)",
    "output": "output tokens/s (whole deployment)",
    "cached": "cached input tokens/s (whole deployment)",
    "uncached": "uncached input tokens/s (whole deployment)",
    "hit": "cache hit rate of input (0..1 or N%)",
    "speed": "output speed, tokens/s per request, statistic not stated",
    "p25": "p25 output speed, tokens/s per request",
    "p50": "median output speed, tokens/s per request",
    "ttft": "p95 time to first token (s)",
    "watts": "mean power of all GPUs (W)",
    "watts_per_gpu": "mean power per GPU (W)",
    "price": "$ per GPU-hour",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `compare` verb."""
    keys = ", ".join(_SYSTEM_KEYS)
    parser = subparsers.add_parser(
        "compare",
        help="two or more results side by side, with ratio columns (terminal and HTML)",
        description=(
            "Results side by side per tier: agents, per-GPU and per-MW figures, $/M tokens, and "
            "each result's ratio to the first. Results directories and/or typed systems: "
            f"--system LABEL key=value ... with keys {keys}. Repeat a label to give the same "
            "system at another tier (gpus and price are the system's, the rest the tier's)."
        ),
    )
    parser.add_argument("results", nargs="*", metavar="RESULTS_DIR", help="results directories")
    parser.add_argument(
        "--system",
        action="append",
        nargs="+",
        metavar="LABEL KEY=VALUE",
        help="a typed system: a label then key=value figures (repeatable)",
    )
    parser.add_argument(
        "--gpu-hour-price",
        action="append",
        metavar="[LABEL=]PRICE",
        help="$ per GPU-hour: bare for every result, LABEL=PRICE for one (repeatable)",
    )
    parser.add_argument("--html", metavar="OUT", help="also write a self-contained HTML page")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.set_defaults(func=_compare)


@one_line_errors
def _compare(args: argparse.Namespace) -> int:
    results = [load_results(path) for path in args.results]
    typed_prices: dict[int, float] = {}
    for result, price in _typed_systems(args.system or []):
        if price is not None:
            typed_prices[len(results)] = price
        results.append(result)
    if len(results) < 2:
        raise InputError("compare needs two or more results (directories or --system)")
    labels = unique_labels(results)
    prices: dict[str, float] = {}
    labelled: dict[str, float] = {}
    for text in args.gpu_hour_price or []:
        label, _, value = text.rpartition("=")
        price = parse_number(value, "--gpu-hour-price")
        if not label:
            prices.update({name: price for name in labels})
        elif label in labels:
            labelled[label] = price
        else:
            raise InputError(f"no result labelled {label!r}", field="--gpu-hour-price")
    # A bare price is the default; a system's own price= and LABEL=PRICE override it.
    prices.update({labels[index]: price for index, price in typed_prices.items()})
    prices.update(labelled)
    tables = list(compare(results, prices))
    show_tables(args, tables)
    if args.html:
        out = Path(args.html)
        try:
            out.write_text(tables_html("agentload compare", tables), encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror}", path=out) from None
        err_console().print(Text(f"wrote {out}"))
    return 0


_SYSTEM_LEVEL = ("gpus", "price")
"""Keys that describe the system, not one of its tiers: a repeated label must agree on them."""


def _typed_systems(specs: list[list[str]]) -> list[tuple[Results, float | None]]:
    """Typed systems, one per label, each holding the tiers its `--system` options gave."""
    by_label: dict[str, list[dict[str, str]]] = {}
    for spec in specs:
        label, values = _system_values(spec)
        by_label.setdefault(label, []).append(values)
    systems = []
    for label, tiers in by_label.items():
        shared: dict[str, str] = {}
        for key in _SYSTEM_LEVEL:
            given = {values[key] for values in tiers if key in values}
            if len(given) > 1:
                raise InputError(
                    f"system {label!r} is given {key}= {' and '.join(sorted(given))}; a system has "
                    "one (repeat the label for another tier, not another system)",
                    field="--system",
                )
            if given:
                shared[key] = given.pop()
        names = [values.get("tier", "typed") for values in tiers]
        for name in names:
            if names.count(name) > 1:
                raise InputError(f"system {label!r} gives tier {name!r} twice", field="--system")
        systems.append(_typed_system(label, shared, tiers))
    return systems


def _system_values(spec: list[str]) -> tuple[str, dict[str, str]]:
    label, *pairs = spec
    if "=" in label:
        raise InputError(f"a system starts with its label, got {label!r}", field="--system")
    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in _SYSTEM_KEYS:
            raise InputError(
                f"expected KEY=VALUE with KEY one of {', '.join(_SYSTEM_KEYS)}, got {pair!r}",
                field="--system",
            )
        values[key] = value
    speeds = [key for key in ("speed", "p25", "p50") if key in values]
    if len(speeds) > 1:
        raise InputError(
            f"give one output speed per tier ({' or '.join(speeds)}), got both", field="--system"
        )
    return label, values


def _typed_system(
    label: str, shared: dict[str, str], tiers: list[dict[str, str]]
) -> tuple[Results, float | None]:
    def number(values: dict[str, str], key: str, *, percent: bool = False) -> float | None:
        text = values.get(key)
        return None if text is None else parse_number(text, f"--system {key}", percent=percent)

    gpus = number(shared, "gpus")
    points = []
    for values in tiers:
        agents = number(values, "agents")
        watts = number(values, "watts")
        per_gpu_watts = number(values, "watts_per_gpu")
        if per_gpu_watts is not None:
            watts = per_gpu_watts * (gpus or 1)
        name = values.get("tier", "typed")
        points.append(
            OperatingPoint(
                label=f"tier {name}",
                kind="typed",
                tier=name,
                agents=int(agents) if agents is not None else None,
                gpus=int(gpus) if gpus else 1,
                gpus_known=bool(gpus),
                total_tokens_per_s=number(values, "total"),
                output_tokens_per_s=number(values, "output"),
                cached_input_tokens_per_s=number(values, "cached"),
                uncached_input_tokens_per_s=number(values, "uncached"),
                cache_hit_rate=number(values, "hit", percent=True),
                typed_speed=number(values, "speed"),
                p25_output_tokens_per_s=number(values, "p25"),
                p50_output_tokens_per_s=number(values, "p50"),
                p95_ttft_s=number(values, "ttft"),
                watts=watts,
                power_source=TYPED_IN,
                power_assumed=watts is not None,
            )
        )
    any_watts = [p.watts for p in points if p.watts is not None]
    results = Results(
        label=label,
        gpus=int(gpus) if gpus else None,
        power=PowerFigures(
            source=TYPED_IN,
            mean_watts=any_watts[0] if len(any_watts) == 1 and len(points) == 1 else None,
            assumed=bool(any_watts),
            valid=bool(any_watts),
        ),
        tiers=tuple(points),
    )
    return results, number(shared, "price")
