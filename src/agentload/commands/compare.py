"""`agentload compare`: results side by side per tier, with ratios to the first (terminal, JSON
and HTML). A typed system repeated under one label holds one tier per `--system`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.text import Text

from agentload.analysis.compare import compare, unique_labels
from agentload.analysis.render import tables_html
from agentload.analysis.results import Results, load_results
from agentload.analysis.typed_system import (
    DEFAULT_TIER,
    PERCENT_KEYS,
    SYSTEM_KEYS,
    SYSTEM_LEVEL,
    TypedTier,
    gpu_hour_prices,
    typed_system,
)
from agentload.commands.figures import one_line_errors, parse_number, show_tables
from agentload.console import err_console
from agentload.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `compare` verb."""
    keys = ", ".join(SYSTEM_KEYS)
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
    own: dict[int, float] = {}
    for result, price in _typed_systems(args.system or []):
        if price is not None:
            own[len(results)] = price
        results.append(result)
    if len(results) < 2:
        raise InputError("compare needs two or more results (directories or --system)")
    labels = unique_labels(results)
    every: float | None = None
    by_label: dict[str, float] = {}
    for text in args.gpu_hour_price or []:
        label, _, value = text.rpartition("=")
        price = parse_number(value, "--gpu-hour-price")
        if label:
            by_label[label] = price
        else:
            every = price
    prices = gpu_hour_prices(labels, every, by_label, {labels[i]: p for i, p in own.items()})
    tables = compare(results, prices)
    show_tables(args, tables)
    if args.html:
        out = Path(args.html)
        try:
            out.write_text(tables_html("agentload compare", tables), encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror}", path=out) from None
        err_console().print(Text(f"wrote {out}"))
    return 0


def _typed_systems(specs: list[list[str]]) -> list[tuple[Results, float | None]]:
    """Typed systems, one per label, each holding the tiers its `--system` options gave, and
    its $ per GPU-hour when given."""
    by_label: dict[str, list[dict[str, str]]] = {}
    for spec in specs:
        label, values = _system_values(spec)
        by_label.setdefault(label, []).append(values)
    systems = []
    for label, tiers in by_label.items():
        shared: dict[str, str] = {}
        for key in SYSTEM_LEVEL:
            given = {values[key] for values in tiers if key in values}
            if len(given) > 1:
                raise InputError(
                    f"system {label!r} is given {key}= {' and '.join(sorted(given))}; a system has "
                    "one (repeat the label for another tier, not another system)",
                    field="--system",
                )
            if given:
                shared[key] = given.pop()
        names = [values.get("tier", DEFAULT_TIER) for values in tiers]
        for name in names:
            if names.count(name) > 1:
                raise InputError(f"system {label!r} gives tier {name!r} twice", field="--system")
        typed = [
            TypedTier(name=name, figures=_numbers(values))
            for name, values in zip(names, tiers, strict=True)
        ]
        numbers = _numbers(shared)
        systems.append((typed_system(label, numbers.get("gpus"), typed), numbers.get("price")))
    return systems


def _system_values(spec: list[str]) -> tuple[str, dict[str, str]]:
    label, *pairs = spec
    if "=" in label:
        raise InputError(f"a system starts with its label, got {label!r}", field="--system")
    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in SYSTEM_KEYS:
            raise InputError(
                f"expected KEY=VALUE with KEY one of {', '.join(SYSTEM_KEYS)}, got {pair!r}",
                field="--system",
            )
        values[key] = value
    speeds = [key for key in ("speed", "p25", "p50") if key in values]
    if len(speeds) > 1:
        raise InputError(
            f"give one output speed per tier ({' or '.join(speeds)}), got both", field="--system"
        )
    return label, values


def _numbers(values: dict[str, str]) -> dict[str, float]:
    """A system's or a tier's figures, each read as a number (the tier's name aside)."""
    return {
        key: parse_number(text, f"--system {key}", percent=key in PERCENT_KEYS)
        for key, text in values.items()
        if key != "tier"
    }
