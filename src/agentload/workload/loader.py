"""What the file loaders share: parsing lines with skipping, counted notes, the Workload made.

A loader parses each line of a JSON-lines file with `parsed_lines` (a bad line goes to the
`LineSkipper`), counts what it had to change in a `Tally` (a clipped prompt, an output raised
to one token, a capped gap), and returns `loaded`: the sessions with the tally's notes and
the skipper's note last.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from agentload.errors import InputError
from agentload.units import fix_plurals
from agentload.workload.lines import Fields, LineSkipper, iter_objects
from agentload.workload.model import Session, Workload

MIN_OUTPUT_TOKENS = 1
"""A recorded output of 0 tokens is raised to this (a call must generate something)."""
CLIPPED = "clipped_calls"
"""The tally kind of calls whose new input was negative and clipped to 0."""
CLIPPED_TOKENS = "clipped_tokens"
"""The tally kind of the tokens those clipped calls add, in all."""
RAISED = "raised_outputs"
"""The tally kind of outputs raised to `MIN_OUTPUT_TOKENS`."""

T = TypeVar("T")


class Tally:
    """Counts of what a loader changed in its input, read out as one note line a kind.

    `templates` maps a kind to its note, a format string over every count by name
    (`{clipped_calls}`); a kind's note is written when its count is not zero, in the order of
    `templates`. Counting a kind that has no template (and is not `CLIPPED_TOKENS`) is a bug.
    """

    def __init__(self, templates: Mapping[str, str]) -> None:
        self._templates = templates
        self._counts: Counter[str] = Counter()

    def add(self, kind: str, count: int = 1) -> None:
        """Count `count` more of `kind`."""
        if kind not in self._templates and kind != CLIPPED_TOKENS:
            raise KeyError(f"no note for {kind!r}")
        self._counts[kind] += count

    def new_input(self, tokens: int) -> int:
        """`tokens` of new input, or 0 where negative (counted as clipped, with the tokens)."""
        if tokens >= 0:
            return tokens
        self.add(CLIPPED)
        self.add(CLIPPED_TOKENS, -tokens)
        return 0

    def output(self, tokens: int) -> int:
        """`tokens` of output, or `MIN_OUTPUT_TOKENS` where fewer (counted as raised)."""
        if tokens >= MIN_OUTPUT_TOKENS:
            return tokens
        self.add(RAISED)
        return MIN_OUTPUT_TOKENS

    def lines(self) -> list[str]:
        """One note line for each kind counted, in the order of the templates (a template's
        `call(s)` read as `1 call` or `2 calls`)."""
        counts = {kind: self._counts[kind] for kind in (*self._templates, CLIPPED_TOKENS)}
        return [
            fix_plurals(template.format_map(counts))
            for kind, template in self._templates.items()
            if self._counts[kind]
        ]


def parsed_lines(
    path: Path, skipper: LineSkipper, parse: Callable[[Fields[int]], T]
) -> Iterator[T]:
    """`parse` of each JSON line's fields; a bad line (unreadable, or refused by `parse`) goes
    to the skipper."""
    for number, data in iter_objects(path, skipper):
        try:
            yield parse(Fields(data, path, number))
        except InputError as error:
            skipper.handle(error)


def loaded(
    name: str,
    source: str | Path,
    sessions: Sequence[Session],
    notes: Iterable[str],
    skipper: LineSkipper | None = None,
) -> Workload:
    """The Workload a loader made (`name`, from `source`), the skipper's note last."""
    lines = list(notes)
    if skipper is not None and (skipped := skipper.note()):
        lines.append(skipped)
    return Workload(
        name=name,
        source=str(source),
        sessions=tuple(sessions),
        skipped_lines=skipper.skipped if skipper is not None else 0,
        notes=tuple(lines),
    )
