"""`agentload compare`: results side by side per tier, with ratios to the first (terminal, JSON
and HTML).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agentload.analysis.compare import compare, unique_labels
from agentload.analysis.render import tables_html
from agentload.analysis.results import TYPED_IN, OperatingPoint, Results, load_results
from agentload.commands.figures import one_line_errors, parse_number, show_tables
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
    "speed": "p25 output tokens/s per agent",
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
            f"--system LABEL key=value ... with keys {keys}."
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
    for spec in args.system or []:
        result, price = _typed_system(spec)
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
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _typed_system(spec: list[str]) -> tuple[Results, float | None]:
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

    def number(key: str, *, percent: bool = False) -> float | None:
        text = values.get(key)
        return None if text is None else parse_number(text, f"--system {key}", percent=percent)

    gpus = number("gpus")
    agents = number("agents")
    watts = number("watts")
    per_gpu_watts = number("watts_per_gpu")
    if per_gpu_watts is not None:
        watts = per_gpu_watts * (gpus or 1)
    name = values.get("tier", "typed")
    tier = OperatingPoint(
        label=f"tier {name}",
        kind="typed",
        tier=name,
        agents=int(agents) if agents is not None else None,
        gpus=int(gpus) if gpus else 1,
        gpus_known=bool(gpus),
        total_tokens_per_s=number("total"),
        output_tokens_per_s=number("output"),
        cached_input_tokens_per_s=number("cached"),
        uncached_input_tokens_per_s=number("uncached"),
        cache_hit_rate=number("hit", percent=True),
        p25_output_tokens_per_s=number("speed"),
        p95_ttft_s=number("ttft"),
        watts=watts,
        power_source=TYPED_IN,
        power_assumed=watts is not None,
    )
    results = Results(
        label=label,
        gpus=int(gpus) if gpus else None,
        power=PowerFigures(
            source=TYPED_IN, mean_watts=watts, assumed=watts is not None, valid=watts is not None
        ),
        tiers=(tier,),
    )
    return results, number("price")
