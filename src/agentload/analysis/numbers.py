"""A figure typed by a person, as headlines and agentload's own reports write them (`185382`,
`185,382`, `1.5e8`, `150M`, `96.8%`): `parse_number`, one `InputError` line naming the option
(or `--system` key) it came from; a share written as under 1% is warned about on stderr.
"""

from __future__ import annotations

import math

from rich.text import Text

from agentload.console import err_console
from agentload.errors import InputError
from agentload.units import PERCENT

SI_SUFFIXES = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
"""`150M` tokens/s per MW, `2.5k` agents: how headlines (and agentload's own reports) write
large figures. A lowercase `m` is refused (milli or mega?)."""
SLIP_BELOW_PERCENT = 1.0
"""A share written as under 1% (`0.88%`) is warned about: 88% was most likely meant."""


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
