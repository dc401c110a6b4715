"""A pool has joined when every agent has finished a call it sent since its start (its first
call, a full-context prefill when it started mid-session); a probe's window waits for that."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from agentload import clock
from agentload.measure.joins import Join, pool_join
from agentload.measure.metrics import RecordTable
from agentload.results.record import RequestRecord
from agentload.results.tiers import Tier
from agentload.run import probe
from agentload.run.probe import measure_probe
from agentload.run.search_settings import SearchSettings
from agentload.search.plan import ProbeChoice


def _record(agent: int, sent: float, done: float, *, error: str | None = None) -> RequestRecord:
    return RequestRecord(
        id=f"{agent}-{sent}",
        agent=agent,
        session="s",
        turn=0,
        t_send=sent,
        t_first=None if error else sent + 0.01,
        t_last=None if error else done,
        t_done=done,
        intended_prompt_tokens=100,
        intended_output_tokens=10,
        completion_tokens=None if error else 10,
        error=error,
    )


def _table(records: Sequence[RequestRecord]) -> RecordTable:
    return RecordTable.from_records(list(records))


def test_a_pool_has_joined_when_each_agent_finished_a_call_since_its_start() -> None:
    starts = {0: 100.0, 1: 100.0, 7: 105.0}
    records = [_record(0, 100.0, 103.0), _record(1, 100.0, 110.0), _record(0, 104.0, 106.0)]
    assert pool_join(starts, _table(records)) == Join(waiting=1, done_at=None)  # 7 is joining
    records.append(_record(7, 105.0, 130.0, error="http_500"))  # a failed call ends it too
    assert pool_join(starts, _table(records)) == Join(waiting=0, done_at=130.0)


def test_a_call_sent_before_the_agents_start_does_not_count() -> None:
    """A resumed run's agent may reuse an index whose earlier life left records."""
    earlier = [_record(3, 10.0, 12.0)]
    assert pool_join({3: 50.0}, _table(earlier)).waiting == 1


class _SlowJoin:
    """Two agents started at `t0`: agent 0 answers every 0.05 s, agent 1's first call (its
    join) finishes at `t0 + join_s`, then every 0.05 s."""

    def __init__(self, join_s: float) -> None:
        self.t0 = clock.now()
        self.join_s = join_s

    async def resize(self, agents: int, ramp_s: float, phase: str, **_: object) -> None:
        return None

    def last_start(self) -> float | None:
        return self.t0

    def running_starts(self) -> dict[int, float]:
        return {0: self.t0, 1: self.t0}

    async def arrive(self, offsets_s: Sequence[float], phase: str) -> None:
        return None

    async def records(self) -> Sequence[RequestRecord]:
        now = clock.now()
        done = [
            _record(0, self.t0 + k * 0.05, self.t0 + (k + 1) * 0.05)
            for k in range(int((now - self.t0) / 0.05))
        ]
        first = self.t0 + self.join_s
        if now >= first:
            done.append(_record(1, self.t0, first))
            done += [
                _record(1, first + k * 0.05, first + (k + 1) * 0.05)
                for k in range(int((now - first) / 0.05))
            ]
        return done


SETTINGS = SearchSettings(
    tiers=(Tier(name="t", output_speed_floor_tokens_per_s=1.0, ttft_ceiling_s=5.0),),
    settle_s=0.1,
    window_s=0.3,
    max_window_s=0.6,
    min_samples=1,
)


@pytest.mark.slow
@pytest.mark.parametrize(("join_s", "opens_after_join"), [(0.5, True), (2.0, False)])
def test_a_probes_window_opens_once_the_pool_has_joined_or_says_it_did_not(
    monkeypatch: pytest.MonkeyPatch, join_s: float, opens_after_join: bool
) -> None:
    monkeypatch.setattr(probe, "JOIN_CHECK_S", 0.02)
    load = _SlowJoin(join_s)
    outcome = asyncio.run(measure_probe(load, SETTINGS, ProbeChoice(agents=2), 0, "p"))
    assert outcome is not None
    start = outcome.figures.window_start
    if opens_after_join:  # settled at 0.1 s, joined at 0.5 s
        assert load.t0 + join_s <= start < load.t0 + join_s + 0.1
        assert not any("first call" in note for note in outcome.figures.notes)
    else:  # waited the most a window may extend (0.6 s), then opened and said so
        assert start == pytest.approx(load.t0 + 0.1 + 0.6, abs=0.1)
        assert any("1 agent still in their first call" in n for n in outcome.figures.notes)
