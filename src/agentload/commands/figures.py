"""What the figure verbs (decode, cost, frontier, compare) share: numbers typed on the command
line read here (`agentload.analysis.numbers`), not by argparse, so bad input is one line; tables
printed or as JSON.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import ValidationError

from agentload.analysis.cost import HostedPrices, hosted_prices
from agentload.analysis.numbers import parse_number
from agentload.analysis.refused import Refused
from agentload.analysis.render import print_tables, tables_json
from agentload.analysis.table import Table
from agentload.errors import InputError
from agentload.option_errors import option_error

Handler = Callable[[argparse.Namespace], int]
Inputs = TypeVar("Inputs")


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


class Typed:
    """The figure options of parsed arguments, each read by `parse_number` when asked for (by
    its destination, `gpu_hour_price`): None (or empty) when not given, one line naming the
    option when bad."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args

    def number(self, name: str, **kwargs: bool) -> float | None:
        """An optional number option."""
        text = getattr(self.args, name)
        return None if text is None else parse_number(text, flag_for(name), **kwargs)

    def numbers(self, name: str) -> tuple[float, ...]:
        """A repeatable number option (`action="append"`), each value > 0."""
        texts = getattr(self.args, name) or []
        return tuple(parse_number(text, flag_for(name), positive=True) for text in texts)

    def whole(self, name: str, *, positive: bool = False) -> int | None:
        """An optional whole-number option."""
        value = self.number(name, positive=positive)
        if value is not None and value != int(value):
            raise InputError(
                f"expected a whole number, got {getattr(self.args, name)}", field=flag_for(name)
            )
        return None if value is None else int(value)

    def share(self, name: str) -> float | None:
        """A share typed as 0..1 or as a percent (`88%`)."""
        value = self.number(name, percent=True)
        if value is not None and value > 1:
            raise InputError(
                f"a share is 0..1 or a percent, got {getattr(self.args, name)}",
                field=flag_for(name),
            )
        return value

    def hosted_prices(self) -> HostedPrices | None:
        """The hosted list prices typed, or None when none were (`analysis.cost.hosted_prices`)."""
        return hosted_prices(
            self.number("input_price"),
            self.number("output_price"),
            self.share("cached_discount"),
            self.number("cached_input_price"),
        )


def flag_for(name: str) -> str:
    """The option an argparse destination comes from: `gpu_hour_price` -> `--gpu-hour-price`."""
    return "--" + name.replace("_", "-")


def add_number_option(parser: argparse.ArgumentParser, flag: str, help: str, **kwargs: Any) -> None:
    """Add an option whose value is read later by `Typed` (as text, so errors are one line)."""
    parser.add_argument(flag, metavar="N", help=help, **kwargs)


def tables_verb(
    inputs: Callable[[Typed], Inputs], tables: Callable[[Inputs], Sequence[Table]]
) -> Handler:
    """A verb that reads its options into typed `inputs`, makes their `tables` and prints them
    (or JSON), each error one line."""

    @one_line_errors
    def handle(args: argparse.Namespace) -> int:
        show_tables(args, tables(inputs(Typed(args))))
        return 0

    return handle


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
