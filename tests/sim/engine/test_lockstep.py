"""Attention-DP lockstep: the ranks of one model copy step together (hand-checked timings)."""

from __future__ import annotations

import pytest

from agentload.sim import SimRequest, SimResult, StepTable
from tests.sim.conftest import deployment
from tests.sim.engine.test_sim_engine import drain, run_until

CHUNKY = StepTable.tabulate(
    batch=(1, 2), context=(0, 1), chunk=(1, 2000),
    decode=lambda b, c: 0.01, shared=lambda p, b: 0.01,
    decode_attention=lambda b, c: 0.0, chunk_attention=lambda p, c: 0.04,
    source="10 ms decode steps, 40 ms of attention a chunk",
)  # fmt: skip
"""A decode step takes 10 ms; a step with a chunk of prefill 10 ms plus the chunk's 40 ms."""

BY_BATCH = StepTable.tabulate(
    batch=(1, 2, 3, 4), context=(0, 1e6), chunk=(1, 2000),
    decode=lambda b, c: 0.02 + 0.001 * b, shared=lambda p, b: 0.02,
    decode_attention=lambda b, c: 0.001 * b, chunk_attention=lambda p, c: 0.0,
    source="decode 20 ms plus 1 ms of attention a sequence",
)  # fmt: skip


def _by_id(results: list[SimResult]) -> dict[str, SimResult]:
    return {str(r.id): r for r in results}


@pytest.mark.parametrize("group", [1, 2])
def test_a_ranks_decode_steps_wait_for_its_siblings_prefill_chunks(group: int) -> None:
    """A (100-token prompt, 50 tokens out) on rank 0, B (3,000 tokens, three 1,000-token
    chunks) on rank 1, both at 0. In lockstep A's second and third tokens come from B's mixed
    steps (50 ms each: the chunk's 40 ms of attention on rank 1 holds rank 0's decode step),
    the other 47 from 10 ms decode steps: last token at 0.15 + 0.47. Alone, A decodes at 10 ms
    a step from its first token on: 0.05 + 0.49."""
    engine = deployment(
        ranks=2, routing="round_robin", max_batch_tokens=1000, block=1, group_size=group,
        steps=CHUNKY,
    )  # fmt: skip
    engine.submit(SimRequest("A", "a", [("a", 100)], 50), 0.0)
    engine.submit(SimRequest("B", "b", [("b", 3000)], 1), 0.0)
    done = _by_id(drain(engine))
    assert (done["A"].rank, done["B"].rank) == (0, 1)
    assert done["A"].t_first == pytest.approx(0.05)
    assert done["A"].t_last == pytest.approx(0.62 if group == 2 else 0.54)
    assert done["B"].t_first == pytest.approx(0.15)


@pytest.mark.parametrize("group", [1, 2])
def test_an_arrival_on_an_idle_sibling_cuts_the_groups_decode_run(group: int) -> None:
    """A decodes on rank 0 from 0.05 in 10 ms steps; B arrives on rank 1 at 0.105. In lockstep
    the group's run ends with the step in progress (at 0.11), B's three chunks take three 50 ms
    group steps (B's first token at 0.26, A gets one token each) and A's last 40 tokens follow
    at 10 ms: 0.66. Alone, rank 1 prefills B from 0.105 (first token at 0.255) while A runs
    on to 0.54."""
    engine = deployment(
        ranks=2, routing="round_robin", max_batch_tokens=1000, block=1, group_size=group,
        steps=CHUNKY,
    )  # fmt: skip
    engine.submit(SimRequest("A", "a", [("a", 100)], 50), 0.0)
    out = run_until(engine, 0.105)
    engine.submit(SimRequest("B", "b", [("b", 3000)], 1), 0.105)
    done = _by_id(out + drain(engine))
    assert done["B"].t_first == pytest.approx(0.26 if group == 2 else 0.255)
    assert done["A"].t_last == pytest.approx(0.66 if group == 2 else 0.54)


@pytest.mark.parametrize("group", [1, 2])
def test_a_group_decode_step_lasts_as_long_as_its_busiest_ranks(group: int) -> None:
    """Rank 0 decodes three sequences, rank 1 one (B, 101 tokens out). A decode step is 20 ms
    plus 1 ms a sequence. In lockstep the group's step is the mean rank's (2 sequences: 22 ms)
    plus the busiest rank's extra attention (1 ms): B's 100 decode steps take 2.3 s. Alone,
    rank 1's steps take 21 ms: 2.1 s."""
    engine = deployment(ranks=2, routing="affinity", block=1, group_size=group, steps=BY_BATCH)
    engine.submit(SimRequest("A", "s1", [("a", 10)], 300), 0.0)
    engine.submit(SimRequest("B", "s2", [("b", 10)], 101), 0.0)
    engine.submit(SimRequest("C", "s1", [("c", 10)], 300), 0.0)
    engine.submit(SimRequest("D", "s1", [("d", 10)], 300), 0.0)
    done = _by_id(drain(engine))
    assert [done[k].rank for k in "ABCD"] == [0, 1, 0, 0]
    assert done["B"].t_first == pytest.approx(0.02)
    assert done["B"].t_last - done["B"].t_first == pytest.approx(2.3 if group == 2 else 2.1)
