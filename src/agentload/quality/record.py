"""Recording references: each check conversation sent alone, greedily, twice (I/O).

The first reply is the reference; the second, compared with it, is the engine's repeatability
alone (what the gate compares a window with: a deployment whose replies differ alone is not
failed for differing under load by as much). Calls go one at a time, so each is the only
request the server is serving (on a deployment that nothing else is using: the run's agents
have not started). A conversation whose call fails is left out, said in a note; none answered
is an error.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence

from agentload import __version__
from agentload.errors import AgentloadError
from agentload.quality.call import CheckClient, greedy_fields
from agentload.quality.checked import check_record
from agentload.quality.reference import CheckConversation, Reference, ReferenceSet
from agentload.results.quality import ReferenceOrigin, ReferenceSource

REPEAT_PREFIX = "alone-"


async def record_references(
    client: CheckClient,
    conversations: Sequence[CheckConversation],
    *,
    origin: ReferenceOrigin,
    engine: str | None = None,
    tie_margin_nats: float,
    notes: list[str],
    progress: Callable[[int, int], None] | None = None,
) -> ReferenceSet:
    """Each conversation's reference and its repeat alone; `notes` gets what was left out."""
    references: list[Reference] = []
    failed: list[str] = []
    for index, conversation in enumerate(conversations):
        if progress is not None:
            progress(index, len(conversations))
        first = await client.send(conversation)
        if first.reply is None:
            failed.append(f"{conversation.id} ({first.error})")
            continue
        reference = Reference(conversation=conversation, reply=first.reply)
        again = await client.send(conversation)
        repeat = check_record(
            f"{REPEAT_PREFIX}{conversation.id}",
            reference,
            again,
            agents=0,
            tie_margin_nats=tie_margin_nats,
        )
        references.append(reference.model_copy(update={"repeat": repeat}))
    if not references:
        raise AgentloadError(
            f"quality: no check conversation could be recorded at {client.endpoint.base_url}: "
            f"{failed[0] if failed else 'none to record'}"
        )
    if failed:
        notes.append(f"references: left out {len(failed)} that failed alone: {', '.join(failed)}")
    return ReferenceSet(
        source=_source(client, references, origin, engine),
        settings=client.settings,
        references=tuple(references),
    )


def _source(
    client: CheckClient,
    references: Sequence[Reference],
    origin: ReferenceOrigin,
    engine: str | None,
) -> ReferenceSource:
    settings = client.settings
    greedy = greedy_fields("chat", settings)
    return ReferenceSource(
        url=client.endpoint.base_url,
        model=client.endpoint.model,
        engine=engine,
        recorded_at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        settings={
            "temperature": greedy["temperature"],
            "top_p": greedy["top_p"],
            "seed": settings.seed,
            "top_logprobs": settings.top_logprobs,
        },
        logprobs=all(r.reply.has_logprobs for r in references),
        tool_version=__version__,
        origin=origin,
    )
