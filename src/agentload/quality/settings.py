"""What the quality checks do and the gate's thresholds: the defaults, why, and the
`--quality-file` that sets them.

The file is TOML with two tables, each optional, each key optional (the defaults below):

    [checks]
    share = 0.05              # check calls per agent call
    conversations = 8         # check conversations shaped like the workload's calls
    tasks = 0                 # task questions among them (analogies: up to 280)
    task_api = "completions"  # "chat" for an instruction-tuned model
    max_output_tokens = 128
    top_logprobs = 5
    seed = 1234

    [gate]
    min_checks = 5
    max_diverged_share = 0.10
    tie_margin_nats = 0.5
    max_logprob_drift_nats = 0.25
    max_task_drop = 0.05
    confidence = 0.95

Why these defaults (docs/quality.md has the measurements):
- `share` 0.05: one check call for twenty agent calls adds a twentieth to the load, which the
  report states; a window needs about 100 agent calls for the gate to judge it (the demo, whose
  windows are short, checks a quarter of its calls: `agentload.run.presets.DEMO_CHECK_SHARE`).
- `min_checks` 5: at 5 of 5 diverging the Wilson lower bound (95%) is 57%, far above the
  allowance, while 1 of 5 (a lower bound of 4%) passes; fewer calls leave a window that is all
  wrong undecided.
- `max_diverged_share` 0.10 beyond the share alone, on the lower bound: a deployment whose
  replies diverge from their references for more than one check call in ten, other than by
  flipping a near tie, is serving different tokens than it does alone.
- `tie_margin_nats` 0.5: numerics that change with the batch flipped Gemma 3 270M's greedy
  choices on llama.cpp where the runner-up was 0.02 to 0.18 nats behind alone
  (`bench/quality_batch.py`); 0.5 excuses flips of ties almost three times as wide, and a token
  the reference did not nearly choose is not excused.
- `max_logprob_drift_nats` 0.25: the same numerics drifted the reference tokens by 0.01 to 0.06
  nats per token on average per call; 0.25 (a quarter more or less probability for every
  reference token) is four times the most seen.
- `max_task_drop` 0.05 on the upper bound: the task score may not be clearly more than five
  points below its score alone (InferenceX holds accuracy to a floor per task likewise).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentload.errors import InputError, first_problem
from agentload.files import read_parsed
from agentload.frozen import Frozen
from agentload.results.quality import CheckSettings, QualityThresholds

TABLES = ("checks", "gate")


class QualityFile(Frozen):
    """A `--quality-file`'s contents."""

    checks: CheckSettings = CheckSettings()
    gate: QualityThresholds = QualityThresholds()


@dataclass(frozen=True)
class QualityOptions:
    """Quality under load as a run or search was asked for it."""

    settings: CheckSettings = field(default_factory=CheckSettings)
    thresholds: QualityThresholds = field(default_factory=QualityThresholds)
    references: Path | None = None
    """A references file to check against instead of recording them here."""
    reference_url: str | None = None
    """Record the references on this server (same model name and API) instead of the one
    under test."""
    source: str | None = None
    """The `--quality-file`, when one was given."""


def load_quality_file(path: Path) -> QualityFile:
    """Read a `--quality-file`; a problem is one line naming the file, the line and the key."""
    text = read_parsed(
        path, lambda raw: raw.decode(), UnicodeDecodeError, "UTF-8 text", missing="no such file"
    )
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", path=path) from None
    unknown = sorted(set(data) - set(TABLES))
    if unknown:
        raise InputError(
            f"not a table of a quality file (tables: {', '.join(TABLES)})",
            path=path,
            line=_line_of(text, None, unknown[0]),
            field=unknown[0],
        )
    try:
        return QualityFile.model_validate(data)
    except ValidationError as exc:
        where, words = first_problem(exc)
        parts = (where or "").split(".")
        line = _line_of(text, parts[0], parts[1]) if len(parts) > 1 else None
        raise InputError(words, path=path, line=line, field=where) from None


def quality_options(
    path: Path | None, *, share: float | None = None, **given: Any
) -> QualityOptions:
    """The options from a `--quality-file` (or the defaults, with `share` when given: a
    preset's) and the other options given."""
    loaded = load_quality_file(path) if path is not None else QualityFile()
    if path is None and share is not None:
        loaded = loaded.model_copy(
            update={"checks": loaded.checks.model_copy(update={"share": share})}
        )
    return QualityOptions(
        settings=loaded.checks,
        thresholds=loaded.gate,
        source=str(path) if path is not None else None,
        **given,
    )


def _line_of(text: str, table: str | None, key: str) -> int | None:
    """The line (1-based) where `key` is set in `table` (None: the top level), or a table of
    that name starts; None when it cannot be told."""
    current: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        header = re.fullmatch(r"\[\s*([^\]]+?)\s*\]", stripped)
        if header:
            current = header.group(1)
            if table is None and current == key:
                return number
            continue
        if current == table and re.match(rf"{re.escape(key)}\s*=", stripped):
            return number
    return None
