"""A check call's record from its reply and its reference (pure): the comparison, and for a
task question whether the answer was right."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from agentload.quality.call import CheckReply
from agentload.quality.compare import compare
from agentload.quality.reference import Reference
from agentload.quality.tasks import correct
from agentload.results.quality import CheckRecord


def check_record(
    call_id: str, reference: Reference, reply: CheckReply, *, agents: int, tie_margin_nats: float
) -> CheckRecord:
    """The record of one check call of `reference`'s conversation (the comparison's figures
    under their own names)."""
    conversation = reference.conversation
    common: dict[str, Any] = {
        "id": call_id,
        "reference": conversation.id,
        "kind": conversation.kind,
        "agents": agents,
        "t_send": reply.t_send,
        "t_done": reply.t_done,
    }
    if reply.reply is None:
        return CheckRecord(error=reply.error or "no reply", **common)
    seen = compare(reference.reply, reply.reply, tie_margin_nats=tie_margin_nats)
    answer = conversation.answer
    return CheckRecord(
        correct=correct(reply.reply.text, answer) if answer is not None else None,
        **asdict(seen),
        **common,
    )
