"""What one check found (`Finding`: the preflight's and `agentload doctor`'s): a name,
pass/warn/fail/skip, one line of detail, and its figures. The word `Check` is kept for the
quality gate's checks (to come)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from agentload.frozen import Frozen

Status = Literal["pass", "warn", "fail", "skip"]
STATUS_STYLES: dict[str, str] = {
    "pass": "green",
    "warn": "yellow",
    "fail": "bold red",
    "skip": "dim",
}
NAME_WIDTH = 14
"""Check names are padded to this many characters in the one-line form."""


class Finding(Frozen):
    """What one check found."""

    name: str
    status: Status
    detail: str
    """One line: what was asked, what came back, and what to do when it is not a pass."""
    figures: dict[str, Any] = Field(default_factory=dict)
    """The numbers behind the line, units in the keys (for --json)."""

    def line(self) -> str:
        """`PASS  streaming       16 tokens in 0.21 s, first after 0.05 s`."""
        return f"{self.status.upper():<4}  {self.name:<{NAME_WIDTH}}{self.detail}"


def passed(name: str, detail: str, **figures: Any) -> Finding:
    return Finding(name=name, status="pass", detail=detail, figures=figures)


def warned(name: str, detail: str, **figures: Any) -> Finding:
    return Finding(name=name, status="warn", detail=detail, figures=figures)


def failed(name: str, detail: str, **figures: Any) -> Finding:
    return Finding(name=name, status="fail", detail=detail, figures=figures)


def skipped(name: str, detail: str) -> Finding:
    return Finding(name=name, status="skip", detail=detail)


def any_failed(checks: Sequence[Finding]) -> bool:
    return any(c.status == "fail" for c in checks)
