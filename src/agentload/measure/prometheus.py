"""A small parser for the Prometheus text exposition format (version 0.0.4), pure.

What it reads: `# HELP` and `# TYPE` lines (other comments are skipped), samples
`name{label="value",...} value [timestamp_ms]` with escapes in label values (`\\\\`, `\\"`,
`\\n`) and in help text (`\\\\`, `\\n`), values as Go writes them (`NaN`, `+Inf`, `-Inf`,
exponents), optional trailing commas and blanks around labels, quoted (UTF-8) metric names
inside the braces, and OpenMetrics `# EOF` and exemplars (ignored). Histograms and summaries
are left as their plain series (`_bucket{le=...}`, `_sum`, `_count`).

A malformed line raises `InputError` naming the source and the line.

Why not `prometheus_client.parser` (0.26): on what both read alike the two agree sample for
sample (a test checks it), but the library, by its own word "laxer than the main Go parser",
renames the samples of a counter declared without the `_total` suffix (DCGM's
`DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` becomes `..._total`, so the energy counter would go
unseen), takes an exemplar's timestamp for the sample's, accepts `metric 1 2 3` (timestamp
0.003 s) and unknown escapes, names no line in its errors, and took 1.6-1.9x as long on a
vLLM-sized exposition (`bench/prometheus_parse.py`). Its OpenMetrics parser is strict but
refuses what servers send in the 0.0.4 format (blanks in label sets, free comments, no
`# EOF`). An adapter fixing all that would have to split each line itself, quote-aware: most of
this module.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from agentload.errors import InputError

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_BLANK = " \t"
_LABEL_ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}
_HELP_ESCAPES = {"\\": "\\", "n": "\n"}
_FLOAT_WORDS = {"nan": math.nan, "+inf": math.inf, "inf": math.inf, "-inf": -math.inf}
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


@dataclass(frozen=True, slots=True)
class Sample:
    """One series value: metric name, labels, value and the optional timestamp (ms)."""

    name: str
    labels: tuple[tuple[str, str], ...]
    """Label pairs in the order the exposition gave them."""
    value: float
    timestamp_ms: int | None = None

    @property
    def label_map(self) -> dict[str, str]:
        """The labels as a dict."""
        return dict(self.labels)

    def label(self, name: str) -> str | None:
        """The value of one label, or None when the series has no such label."""
        for key, value in self.labels:
            if key == name:
                return value
        return None

    def matches(self, filters: Mapping[str, str | Iterable[str]] | None) -> bool:
        """Whether every filter label is present with its value (or one of its values)."""
        if not filters:
            return True
        for key, wanted in filters.items():
            have = self.label(key)
            if have is None:
                return False
            if isinstance(wanted, str):
                if have != wanted:
                    return False
            elif have not in wanted:
                return False
        return True


@dataclass(frozen=True)
class Exposition:
    """Everything one scrape returned: samples in order, and the declared types and help."""

    samples: tuple[Sample, ...]
    types: Mapping[str, str] = field(default_factory=dict)
    help: Mapping[str, str] = field(default_factory=dict)

    def names(self) -> set[str]:
        """Distinct metric names among the samples."""
        return {s.name for s in self.samples}

    def series(
        self, name: str, filters: Mapping[str, str | Iterable[str]] | None = None
    ) -> list[Sample]:
        """The samples of one metric whose labels match the filters."""
        return [s for s in self.samples if s.name == name and s.matches(filters)]

    def value(
        self,
        name: str,
        filters: Mapping[str, str | Iterable[str]] | None = None,
        combine: Callable[[list[float]], float] = math.fsum,
    ) -> float | None:
        """The series of one metric combined into one number (summed by default); None if none."""
        values = [s.value for s in self.series(name, filters)]
        return combine(values) if values else None


def parse(text: str, *, source: str | None = None) -> Exposition:
    """Parse a text exposition; `source` (a URL or file) names it in errors."""
    samples: list[Sample] = []
    types: dict[str, str] = {}
    helps: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip(_BLANK + "\r")
        if not line:
            continue
        try:
            if line.startswith("#"):
                _comment(line, types, helps)
            else:
                samples.append(_sample(line))
        except _Malformed as exc:
            raise InputError(f"bad Prometheus line: {exc}", path=source, line=number) from None
    return Exposition(samples=tuple(samples), types=types, help=helps)


class _Malformed(ValueError):
    """One line does not follow the format."""


def _comment(line: str, types: dict[str, str], helps: dict[str, str]) -> None:
    parts = line[1:].lstrip(_BLANK).split(None, 2)
    if len(parts) < 2 or parts[0] not in ("HELP", "TYPE"):
        return  # a plain comment (or OpenMetrics `# EOF`)
    keyword, name = parts[0], parts[1]
    rest = parts[2] if len(parts) > 2 else ""
    if keyword == "TYPE":
        types[name] = rest.strip().lower()
    else:
        helps[name] = _unescape_help(rest)


def _sample(line: str) -> Sample:
    pos = 0
    name = ""
    if line[0] != "{":
        match = _NAME.match(line)
        if match is None:
            raise _Malformed(f"expected a metric name at {line[:20]!r}")
        name = match.group()
        pos = match.end()
    labels: list[tuple[str, str]] = []
    brace = _skip_blank(line, pos)
    if brace < len(line) and line[brace] == "{":
        pos, quoted_name = _labels(line, brace + 1, labels)
        if quoted_name is not None:
            if name:
                raise _Malformed("metric name given twice")
            name = quoted_name
    if not name:
        raise _Malformed("sample without a metric name")
    rest = line[pos:]
    if rest and rest[0] not in _BLANK:
        raise _Malformed(f"expected a blank before the value of {name}")
    fields = rest.split("#", 1)[0].split()  # an OpenMetrics exemplar follows a '#'; drop it
    if not fields:
        raise _Malformed(f"no value for {name}")
    if len(fields) > 2:
        raise _Malformed(f"unexpected text after the value of {name}: {fields[2]!r}")
    value = _float(fields[0])
    timestamp = None
    if len(fields) == 2:
        try:
            timestamp = int(fields[1])
        except ValueError:
            raise _Malformed(f"bad timestamp {fields[1]!r} for {name}") from None
    return Sample(name=name, labels=tuple(labels), value=value, timestamp_ms=timestamp)


def _labels(line: str, pos: int, out: list[tuple[str, str]]) -> tuple[int, str | None]:
    """Read labels after `{`; return the position after `}` and a quoted metric name if any."""
    quoted_name: str | None = None
    while True:
        pos = _skip_blank(line, pos)
        if pos >= len(line):
            raise _Malformed("unclosed label set")
        if line[pos] == "}":
            return pos + 1, quoted_name
        if line[pos] == '"':
            key, pos = _quoted(line, pos)
            pos = _skip_blank(line, pos)
            if pos < len(line) and line[pos] != "=":
                if quoted_name is not None or out:
                    raise _Malformed("a quoted metric name must come first in the braces")
                quoted_name = key
                pos = _after_label(line, pos)
                continue
        else:
            match = _LABEL_NAME.match(line, pos)
            if match is None:
                raise _Malformed(f"bad label name at {line[pos : pos + 20]!r}")
            key, pos = match.group(), match.end()
            pos = _skip_blank(line, pos)
        if pos >= len(line) or line[pos] != "=":
            raise _Malformed(f"expected '=' after label {key}")
        pos = _skip_blank(line, pos + 1)
        if pos >= len(line) or line[pos] != '"':
            raise _Malformed(f"label {key}: value must be quoted")
        value, pos = _quoted(line, pos)
        out.append((key, value))
        pos = _after_label(line, pos)


def _after_label(line: str, pos: int) -> int:
    pos = _skip_blank(line, pos)
    if pos < len(line) and line[pos] == ",":
        return pos + 1
    if pos < len(line) and line[pos] == "}":
        return pos
    raise _Malformed("expected ',' or '}' after a label")


def _quoted(line: str, pos: int) -> tuple[str, int]:
    """The unescaped string starting at the quote at `pos`, and the position after it."""
    out: list[str] = []
    i = pos + 1
    while i < len(line):
        ch = line[i]
        if ch == '"':
            return "".join(out), i + 1
        if ch == "\\":
            if i + 1 >= len(line):
                break
            nxt = line[i + 1]
            if nxt not in _LABEL_ESCAPES:
                raise _Malformed(f"unknown escape '\\{nxt}' in a label value")
            out.append(_LABEL_ESCAPES[nxt])
            i += 2
            continue
        out.append(ch)
        i += 1
    raise _Malformed("unterminated quoted string")


def _unescape_help(text: str) -> str:
    """Help text with `\\\\` and `\\n` unescaped; other backslashes kept as they are."""
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in _HELP_ESCAPES:
            out.append(_HELP_ESCAPES[text[i + 1]])
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def _skip_blank(line: str, pos: int) -> int:
    while pos < len(line) and line[pos] in _BLANK:
        pos += 1
    return pos


def _float(text: str) -> float:
    word = _FLOAT_WORDS.get(text.lower())
    if word is not None:
        return word
    if _FLOAT.fullmatch(text) is None:
        raise _Malformed(f"bad value {text!r}")
    return float(text)
