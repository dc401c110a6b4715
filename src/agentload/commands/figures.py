"""What the figure verbs (decode, cost, frontier, compare) share: numbers typed on the command
line read here, not by argparse, so bad input is one line; tables printed or as JSON.
"""

from __future__ import annotations

import argparse
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError
from rich.text import Text

from agentload.analysis.cost import HostedPrices, hosted_prices
from agentload.analysis.refused import Refused
from agentload.analysis.render import print_tables, tables_json
from agentload.analysis.table import Table
from agentload.console import err_console
from agentload.errors import InputError
from agentload.option_errors import option_error
from agentload.units import PERCENT

SI_SUFFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
"""`150M` tokens/s per MW, `2.5k` agents: how headlines (and agentload's own reports) write
large figures. A lowercase `m` is refused (milli or mega?)."""
SLIP_BELOW_PERCENT = 1.0
"""A share written as under 1% (`0.88%`) is warned about: 88% was most likely meant."""
Handler = Callable[[argparse.Namespace], int]


def one_line_errors(handler: Handler) -> Handler:
    """Turn the analysis functions' errors into the CLI's one-line InputError: an input refused
    names its option (`agentload.analysis.refused`), a model's validation error the option that
    set the field (`option_error`), any other ValueError is its message."""

    @functools.wraps(handler)
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except Refused as exc:
            field = flag_for(exc.field) if exc.field is not None else None
            raise InputError(exc.words, field=field) from None
        except ValidationError as exc:
            raise option_error(exc, args) from None
        except ValueError as exc:
            raise InputError(str(exc)) from None

    return wrapped


def parse_number(text: str, flag: str, *, percent: bool = False, positive: bool = False) -> float:
    """A number typed on the command line: `185382`, `185,382`, `1.5e8`, `150M` (k, M, G), or
    `96.8%` (percent)."""
    raw = text.strip().replace(",", "").replace("_", "")
    scale = 1.0
    written_as_percent = percent and raw.endswith("%")
    if written_as_percent:
        raw, scale = raw[:-1], 1 / PERCENT
    elif raw[-1:] in SI_SUFFIXES:
        raw, scale = raw[:-1], SI_SUFFIXES[raw[-1]]
    try:
        value = float(raw) * scale
    except ValueError:
        raise InputError(f"expected a number, got {text!r}", field=flag) from None
    if written_as_percent and 0 < value * PERCENT < SLIP_BELOW_PERCENT:
        warn(
            f"{flag} {text.strip()} is {value:g} (under 1%); if you meant {raw}, write "
            f"{float(raw) * PERCENT:g}% or {raw}"
        )
    if not math.isfinite(value):
        raise InputError(f"expected a finite number, got {text!r}", field=flag)
    if value < 0 or (positive and value == 0):
        raise InputError(f"must be {'> 0' if positive else '>= 0'}, got {text}", field=flag)
    return value


def warn(message: str) -> None:
    """One warning line on stderr: the answer is still given, but the input looks like a slip."""
    err_console().print(Text(f"agentload: warning: {message}"))


def number_arg(args: argparse.Namespace, name: str, **kwargs: bool) -> float | None:
    """An optional number option (`args.<name>`), read by `parse_number`; None when not given."""
    text = getattr(args, name)
    return None if text is None else parse_number(text, flag_for(name), **kwargs)


def int_arg(args: argparse.Namespace, name: str, *, positive: bool = False) -> int | None:
    """An optional whole-number option; None when not given."""
    value = number_arg(args, name, positive=positive)
    if value is not None and value != int(value):
        raise InputError(
            f"expected a whole number, got {getattr(args, name)}", field=flag_for(name)
        )
    return None if value is None else int(value)


def fraction_arg(args: argparse.Namespace, name: str) -> float | None:
    """A share typed as 0..1 or as a percent (`88%`)."""
    value = number_arg(args, name, percent=True)
    if value is not None and value > 1:
        raise InputError(
            f"a share is 0..1 or a percent, got {getattr(args, name)}", field=flag_for(name)
        )
    return value


def flag_for(name: str) -> str:
    """The option an argparse destination comes from: `gpu_hour_price` -> `--gpu-hour-price`."""
    return "--" + name.replace("_", "-")


def add_number_option(parser: argparse.ArgumentParser, flag: str, help: str, **kwargs: Any) -> None:
    """Add an option whose value is read later by `number_arg` (as text, so errors are one line)."""
    parser.add_argument(flag, metavar="N", help=help, **kwargs)


def show_tables(args: argparse.Namespace, tables: Sequence[Table]) -> None:
    """Print the tables, or JSON with `--json`."""
    if args.json:
        print(tables_json(tables))
    else:
        print_tables(tables)


def add_hosted_price_options(parser: argparse.ArgumentParser) -> None:
    """A hosted API's list prices: input, output, and cached input (a price or a discount)."""
    add_number_option(parser, "--input-price", "hosted API: $ per M input tokens")
    add_number_option(parser, "--output-price", "hosted API: $ per M output tokens")
    add_number_option(
        parser, "--cached-discount", "hosted API: cached-input discount (0..1 or N%%)"
    )
    add_number_option(parser, "--cached-input-price", "hosted API: $ per M cached input tokens")


def hosted_prices_arg(args: argparse.Namespace) -> HostedPrices | None:
    """The hosted list prices typed, or None when none were (`analysis.cost.hosted_prices`)."""
    return hosted_prices(
        number_arg(args, "input_price"),
        number_arg(args, "output_price"),
        fraction_arg(args, "cached_discount"),
        number_arg(args, "cached_input_price"),
    )
