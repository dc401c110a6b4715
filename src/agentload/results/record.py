"""The request record: everything measured about one model call, written when it finishes.

Times are Unix epoch seconds from one monotonic clock per run (see `agentload.clock`), so
records from several processes on one machine line up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import ConfigDict, Field

from agentload.frozen import Frozen
from agentload.results.jsonl import Loaded, read_jsonl

RECORD_SCHEMA_VERSION = 1


class RequestRecord(Frozen):
    """One model call: when it was sent, when tokens came, what the server said it counted."""

    model_config = ConfigDict(extra="ignore")  # records of other versions may hold more fields

    v: int = RECORD_SCHEMA_VERSION
    id: str
    """Unique within a run: `<agent>-<sequence>`."""
    agent: int = Field(ge=0)
    session: str
    """The session instance (workload session id plus the agent's salt)."""
    turn: int = Field(ge=0)
    phase: str = "run"
    """What part of the run sent it: `run`, or a probe label during a search."""

    t_send: float
    """When the client issued the request (taken just before the HTTP call starts, so it
    includes connection set-up and writing the body)."""
    t_first: float | None = None
    """When the first output token arrived: the read carrying the first SSE event with
    content, reasoning or tool-call text."""
    t_last: float | None = None
    """When the last output token arrived."""
    t_done: float
    """When the response closed (or failed)."""
    t_headers: float | None = None
    """When the response headers arrived (None when no response came)."""
    chunks: int = Field(default=0, ge=0)
    """Network reads that carried stream data."""
    token_events: int = Field(default=0, ge=0)
    """SSE events that carried output text."""
    gaps_s: tuple[float, ...] = ()
    """Gaps between consecutive output-token events, seconds."""
    bytes_in: int = Field(default=0, ge=0)
    """Response body bytes received while streaming."""

    intended_prompt_tokens: int = Field(ge=0)
    intended_output_tokens: int = Field(ge=0)
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    """Of the completion tokens, those spent reasoning (when the server reports it)."""
    finish_reason: str | None = None

    status: int | None = None
    """HTTP status, when a response came at all."""
    error: str | None = None
    """Failure cause, one of `agentload.client.errors` kinds; None when the call succeeded."""
    error_detail: str | None = None
    reconnects: int = Field(default=0, ge=0)
    """Times the request was re-sent on a new connection because the pooled one had been
    closed by the server before the request reached it (timing still runs from `t_send`)."""

    flat_dump: ClassVar[bool] = True
    """Every field is a JSON scalar or a tuple of them: `__dict__` dumps as `model_dump()` does
    (`agentload.results.jsonl.JsonlAppender` writes it so)."""

    @classmethod
    def trusted(cls, **values: Any) -> RequestRecord:
        """What `model_construct(**values)` makes (no validation: values the caller checked), in
        a fraction of its time: the defaults are copied once, not looked up field by field. A
        simulated search makes one a call (`agentload.sim.target`)."""
        record = cls.__new__(cls)
        object.__setattr__(record, "__dict__", {**_defaults(), **values})
        object.__setattr__(record, "__pydantic_fields_set__", set(values))
        object.__setattr__(record, "__pydantic_extra__", None)
        object.__setattr__(record, "__pydantic_private__", None)
        return record

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def ttft_s(self) -> float | None:
        return None if self.t_first is None else self.t_first - self.t_send

    @property
    def output_tokens_per_s(self) -> float | None:
        """(completion tokens - 1) / (last - first token time): decode speed after the first."""
        if self.t_first is None or self.t_last is None or not self.completion_tokens:
            return None
        span = self.t_last - self.t_first
        if span <= 0 or self.completion_tokens < 2:
            return None
        return (self.completion_tokens - 1) / span


_DEFAULTS: dict[str, Any] = {}


def _defaults() -> dict[str, Any]:
    """Every field of a record with its default, in field order (required ones as None until
    given), as `model_construct` lays them out."""
    if not _DEFAULTS:
        _DEFAULTS.update(
            (name, None if info.is_required() else info.get_default(call_default_factory=True))
            for name, info in RequestRecord.model_fields.items()
        )
    return _DEFAULTS


def load_records(path: str | Path, *, skip_bad_lines: bool = False) -> Loaded[RequestRecord]:
    """Read `records.jsonl` (`agentload.results.jsonl`'s policy for bad and torn lines)."""
    return read_jsonl(path, RequestRecord, skip_bad_lines=skip_bad_lines)
